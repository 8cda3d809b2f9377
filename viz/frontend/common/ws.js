// The websocket client: connects to /ws, reconnects with backoff, and after a reconnect asks the server for
// what it missed (`resume` per run from the last seq seen). `SeqTracker` is the pure part: which messages
// are new, which are repeats a resume sent again, and when a gap means the page must refetch a run.

/** Per-run sequence numbers of `events` messages. */
export class SeqTracker {
  constructor() { this.seq = new Map(); }
  /**
   * Classify an `events` message: "new" (the next one: apply it), "dup" (already applied: drop it),
   * "gap" (messages were lost: refetch the run, then continue from this seq).
   * The first message seen for a run is "new" when its seq is 0 or 1, else "gap" (it started before we joined).
   */
  observe(run, seq) {
    const last = this.seq.get(run);
    if (last !== undefined && seq <= last) return "dup";
    this.seq.set(run, seq);
    if (last === undefined) return seq <= 1 ? "new" : "gap";
    return seq === last + 1 ? "new" : "gap";
  }
  /** Set the seq the page is up to date with (after a full fetch of the run). */
  reset(run, seq) { this.seq.set(run, seq); }
  /** The messages to send after a reconnect, one per run that had events. */
  resumeMessages(liveRuns = null) {
    const out = [];
    for (const [run, seq] of this.seq) if (!liveRuns || liveRuns.has(run)) out.push({ type: "resume", run, seq });
    return out;
  }
}

/** Delay before reconnect attempt `n` (0-based): 250 ms doubling up to 5 s. */
export const backoff = (n) => Math.min(5000, 250 * 2 ** n);

/**
 * A websocket to `url` that stays connected. `onMessage(msg)` gets each JSON message, `onStatus(s)` gets
 * "connecting" | "open" | "closed". Messages of type "events" are filtered through a SeqTracker: a repeat is
 * dropped, a gap is passed on with `msg.gap = true`.
 */
export class LiveClient {
  constructor(url, { onMessage, onStatus = () => {}, WebSocketImpl = globalThis.WebSocket, schedule = (fn, ms) => setTimeout(fn, ms) } = {}) {
    Object.assign(this, { url, onMessage, onStatus, WebSocketImpl, schedule });
    this.tracker = new SeqTracker();
    this.attempt = 0;
    this.stopped = false;
    this.ws = null;
  }
  start() { this.stopped = false; this.connect(); return this; }
  stop() { this.stopped = true; this.ws?.close(); }
  send(msg) { if (this.ws?.readyState === 1) this.ws.send(JSON.stringify(msg)); }

  connect() {
    this.onStatus("connecting");
    const ws = this.ws = new this.WebSocketImpl(this.url);
    ws.onopen = () => {
      this.attempt = 0;
      this.onStatus("open");
      for (const m of this.tracker.resumeMessages()) this.send(m);
    };
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch { return; }
      if (msg.type === "events") {
        const kind = this.tracker.observe(msg.run, msg.seq);
        if (kind === "dup") return;
        if (kind === "gap") msg.gap = true;
      }
      this.onMessage(msg);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.onStatus("closed");
      if (!this.stopped) this.schedule(() => this.connect(), backoff(this.attempt++));  // schedule wraps setTimeout: called as a method it would throw
    };
    ws.onerror = () => {};  // onclose follows
  }
}

/** ws:// or wss:// URL of `path` on the page's own host. */
export function wsURL(path, loc = globalThis.location) {
  return `${loc.protocol === "https:" ? "wss" : "ws"}://${loc.host}${path}`;
}
