"""Rewrite explorer speed in Chromium: layout through the Web Worker (round trip, as the page does it) and canvas
drawing (pan at a readable zoom, and at fit) on generated IR-shaped graphs. Prints a table; asserts nothing.
  python bench/render_bench.py                 1k, 5k, 10k nodes; or give sizes: python bench/render_bench.py 2000 20000
Targets (issue 6): layout 1k <= 50 ms, 5k <= 300 ms, 10k <= 1 s; pan at 60 fps at 1k nodes, 30 fps at 10k."""
from __future__ import annotations
import functools, http.server, sys, threading
from pathlib import Path
from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]

class Quiet(http.server.SimpleHTTPRequestHandler):
  def log_message(self, *a): pass

def main(sizes: list[int]) -> None:
  httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=str(ROOT)))
  threading.Thread(target=httpd.serve_forever, daemon=True).start()
  try:
    with sync_playwright() as p:
      b = p.chromium.launch(executable_path="/usr/bin/chromium", headless=True, args=CHROMIUM_ARGS)
      page = b.new_page(viewport={"width": 1400, "height": 860})
      page.goto(f"http://127.0.0.1:{httpd.server_address[1]}/bench/render_bench.html")
      page.wait_for_function("() => window.benchReady")
      rows = page.evaluate("(sizes) => window.runBench(sizes)", sizes)
      b.close()
  finally:
    httpd.shutdown()
  print("layout: worker round trip (post, lay out, transfer back), median / best of 5 after one warm-up")
  print("pan: 120 frames at zoom 1 (text drawn, culled to the view) and 60 frames at fit (every node, no text)")
  print(f"{'nodes':>7} {'drawn':>6} {'edges':>6} | {'layout ms':>15} | {'pan@1 draw p50/p95 ms':>21} {'fps':>5} | {'pan@fit draw ms':>15} {'fps':>5}")
  for r in rows:
    print(f"{r['n']:>7} {r['drawn']:>6} {r['edges']:>6} | {r['layoutMedian']:>7.1f} / {r['layoutBest']:>5.1f} | "
          f"{r['panDrawMedian']:>10.2f} / {r['panDrawP95']:>5.2f}   {r['fps']:>5.1f} | {r['fitPanDraw']:>15.2f} {r['fitFps']:>5.1f}")

if __name__ == "__main__": main([int(a) for a in sys.argv[1:]] or [1000, 5000, 10000])
