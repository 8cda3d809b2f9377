// Runs layouts in the worker (graph/layout_worker.js). Only the newest request matters: when requests pile
// up (holding an arrow key), the ones overtaken before the worker got to them are dropped unanswered.

export class LayoutClient {
  constructor() {
    this.worker = new Worker(new URL("../graph/layout_worker.js", import.meta.url), { type: "module" });
    this.worker.onmessage = (e) => this.reply(e.data);
    this.worker.onerror = (e) => this.fail(new Error(e.message || "layout worker failed"));
    this.nextId = 1;
    this.busy = null;      // {id, resolve, reject} sent to the worker
    this.queued = null;    // the newest request not yet sent
  }

  /** Lay out {nodes: [{id, width, height}], edges: [[from, to]]}; resolves to the layout result (+ ms). */
  layout(nodes, edges, prev = null, options = {}) {
    return new Promise((resolve, reject) => {
      const flat = new Float64Array(edges.length * 2);  // ids may be negative or large: float64 holds them
      edges.forEach(([a, b], i) => { flat[2 * i] = a; flat[2 * i + 1] = b; });
      const req = { id: this.nextId++, msg: { nodes: nodes.map((u) => ({ id: u.id, width: u.width, height: u.height })), edges: flat, prev, options }, resolve, reject };
      if (this.queued) this.queued.reject(Object.assign(new Error("superseded"), { superseded: true }));
      this.queued = req;
      this.pump();
    });
  }

  pump() {
    if (this.busy || !this.queued) return;
    this.busy = this.queued;
    this.queued = null;
    this.worker.postMessage({ id: this.busy.id, ...this.busy.msg }, [this.busy.msg.edges.buffer]);
  }

  reply(data) {
    const req = this.busy;
    this.busy = null;
    if (req && data.id === req.id) data.error ? req.reject(new Error(data.error)) : req.resolve(data);
    this.pump();
  }

  fail(err) {
    this.busy?.reject(err);
    this.busy = null;
    this.pump();
  }
}
