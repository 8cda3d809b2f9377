import { test } from "node:test";
import assert from "node:assert/strict";
import { SeqTracker, LiveClient, backoff, wsURL } from "../../viz/frontend/common/ws.js";

test("SeqTracker: new, dup and gap", () => {
  const t = new SeqTracker();
  assert.equal(t.observe(1, 1), "new");
  assert.equal(t.observe(1, 2), "new");
  assert.equal(t.observe(1, 2), "dup");
  assert.equal(t.observe(1, 1), "dup");
  assert.equal(t.observe(1, 5), "gap");
  assert.equal(t.observe(1, 6), "new");
  assert.equal(t.observe(2, 7), "gap", "joined a run late");
  assert.deepEqual(t.resumeMessages(), [{ type: "resume", run: 1, seq: 6 }, { type: "resume", run: 2, seq: 7 }]);
  assert.deepEqual(t.resumeMessages(new Set([2])), [{ type: "resume", run: 2, seq: 7 }]);
});

class FakeSocket {
  static all = [];
  constructor(url) { this.url = url; this.sent = []; this.readyState = 0; FakeSocket.all.push(this); }
  send(s) { this.sent.push(JSON.parse(s)); }
  open() { this.readyState = 1; this.onopen?.(); }
  recv(msg) { this.onmessage?.({ data: JSON.stringify(msg) }); }
  close() { this.readyState = 3; this.onclose?.(); }
}

test("LiveClient reconnects with backoff and resumes from the last seq; repeats are dropped", () => {
  FakeSocket.all = [];
  const got = [], statuses = [], timers = [];
  const c = new LiveClient("ws://x/ws", { onMessage: (m) => got.push(m), onStatus: (s) => statuses.push(s), WebSocketImpl: FakeSocket,
    schedule: (fn, ms) => timers.push([fn, ms]) }).start();
  const a = FakeSocket.all[0];
  a.open();
  a.recv({ type: "runs", runs: [] });
  a.recv({ type: "events", run: 3, seq: 1, contexts: [] });
  a.recv({ type: "events", run: 3, seq: 2, contexts: [] });
  a.close();
  assert.deepEqual(timers.map((t) => t[1]), [backoff(0)]);
  timers[0][0]();
  const b = FakeSocket.all[1];
  b.open();
  assert.deepEqual(b.sent, [{ type: "resume", run: 3, seq: 2 }]);
  b.recv({ type: "events", run: 3, seq: 2, contexts: [] });  // re-sent: dropped
  b.recv({ type: "events", run: 3, seq: 3, contexts: [] });
  b.recv({ type: "events", run: 3, seq: 9, contexts: [] });
  assert.deepEqual(got.map((m) => [m.type, m.seq, !!m.gap]), [["runs", undefined, false], ["events", 1, false], ["events", 2, false], ["events", 3, false], ["events", 9, true]]);
  assert.deepEqual(statuses, ["connecting", "open", "closed", "connecting", "open"]);
  c.stop();
  assert.equal(timers.length, 1, "no reconnect after stop");
});

test("backoff grows and is capped; wsURL follows the page's scheme", () => {
  assert.deepEqual([0, 1, 2, 3, 10].map(backoff), [250, 500, 1000, 2000, 5000]);
  assert.equal(wsURL("/ws", { protocol: "http:", host: "127.0.0.1:8000" }), "ws://127.0.0.1:8000/ws");
  assert.equal(wsURL("/ws", { protocol: "https:", host: "h" }), "wss://h/ws");
});
