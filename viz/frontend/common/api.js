// Fetch helpers for the server's HTTP API (docs/server-api.md). Every call is same-origin, so the auth cookie
// the server set on the first visit goes along.

export class ApiError extends Error {
  constructor(status, url, body) {
    super(`${status} ${url}${body ? ": " + body.slice(0, 200) : ""}`);
    this.status = status;
    this.url = url;
  }
}

async function get(url, signal) {
  const res = await fetch(url, { signal, credentials: "same-origin" });
  if (!res.ok) throw new ApiError(res.status, url, await res.text().catch(() => ""));
  return res;
}

export const getJSON = async (url, signal) => (await get(url, signal)).json();
export const getBinary = async (url, signal) => (await get(url, signal)).arrayBuffer();

const q = (params) => {
  const s = Object.entries(params).filter(([, v]) => v !== undefined && v !== null).map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join("&");
  return s ? "?" + s : "";
};

/** One function per endpoint; `signal` (an AbortSignal) is optional everywhere. */
export const api = {
  runs: (signal) => getJSON("/api/runs", signal),
  contexts: (run, signal) => getJSON(`/api/runs/${run}/contexts`, signal),
  schedule: (run, ctx, signal) => getJSON(`/api/runs/${run}/contexts/${ctx}/schedule`, signal),
  patterns: (run, file, signal) => getJSON(`/api/runs/${run}/patterns${q({ file })}`, signal),
  step: (run, rw, k, signal) => getJSON(`/api/runs/${run}/rewrites/${rw}/step/${k}`, signal),
  kernel: (run, id, signal) => getJSON(`/api/runs/${run}/kernels/${id}`, signal),
  uop: (run, id, signal) => getJSON(`/api/runs/${run}/uops/${id}`, signal),
  tracks: (run, signal) => getJSON(`/api/runs/${run}/tracks`, signal),
  spans: (run, track, start, end, signal) => getBinary(`/api/runs/${run}/spans${q({ track, start, end })}`, signal),
  span: (run, track, index, signal) => getJSON(`/api/runs/${run}/spans/${encodeURIComponent(track)}/${index}`, signal),
  counter: (run, id, signal) => getJSON(`/api/runs/${run}/counters/${id}`, signal),
  flows: (run, signal) => getJSON(`/api/runs/${run}/flows`, signal),
};

/** A small LRU cache of promises: repeated requests for one key share the first request. */
export class PromiseCache {
  constructor(limit = 64) { this.limit = limit; this.map = new Map(); }
  get(key, make) {
    let p = this.map.get(key);
    if (p) { this.map.delete(key); this.map.set(key, p); return p; }
    p = make();
    p.catch(() => this.map.get(key) === p && this.map.delete(key));  // a failed request is retried next time
    this.map.set(key, p);
    while (this.map.size > this.limit) this.map.delete(this.map.keys().next().value);
    return p;
  }
  clear() { this.map.clear(); }
}
