// The one HTML escape for text put into markup, as element text or as an attribute value (quoted with " or ').
const ENTITIES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** `s` (null and undefined as "") with & < > " ' as entities. */
export const esc = (s) => String(s ?? "").replace(/[&<>"']/g, (c) => ENTITIES[c]);
