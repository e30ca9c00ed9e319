"""Where a playground cell edit's time goes in the browser: one edit's timeline, message by message.

Run from the repository root (Debian's Chromium at /usr/bin/chromium)::

    python benchmarks/cell_edit_timeline.py [--scenario emma-friend] [--edits 3]

It starts its own ``streamlit run app.py`` and types numbers into the playground's first table as
``bench_browser.py`` does. For each edit it prints, in ms from the Enter on the page's own clock: the edit sent to
the server, each message the server sent back (decoded: its kind and, for an element, its type and place on the
page), the script's run state as the page shows it, each stretch of 20 ms or more without a frame (the main thread
busy: a render of the page, the figures' drawing), the first change to the heatmap's drawing, and the frame painted
after it (the figure ``bench_browser.py`` times). A diagnostic: it prints what happened and judges nothing.
"""

from __future__ import annotations

import argparse
import base64
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

import bench_browser as bb  # noqa: E402

from deploy import devserver  # noqa: E402

KEY = "playground_heatmap"
BUSY_MS = 20  # a gap between two frames at least this long is printed as the main thread busy

# Before the app's code runs: every message the page's WebSocket receives (timed and kept, as base64) or sends
# (timed).
_RECORD_JS = """
window.__log = [];
const Socket = window.WebSocket;
window.WebSocket = function (...args) {
  const ws = new Socket(...args);
  ws.addEventListener('message', e => {
    const t = performance.now();
    const bytes = e.data instanceof ArrayBuffer ? new Uint8Array(e.data) : new Uint8Array();
    let s = '';
    for (let i = 0; i < bytes.length; i++) s += String.fromCharCode(bytes[i]);
    window.__log.push(['in', t, btoa(s)]);
  });
  const send = ws.send.bind(ws);
  ws.send = d => { window.__log.push(['out', performance.now(), '']); send(d); };
  return ws;
};
window.WebSocket.prototype = Socket.prototype;
Object.assign(window.WebSocket, Socket);
"""
# Armed before each edit: the run state's changes, the heatmap's first DOM change, the gaps between frames.
_WATCH_EDIT_JS = """(busy) => {
  window.__log = [];
  (window.__watching || []).forEach(o => o.disconnect());
  const app = document.querySelector('[data-testid=stApp]');
  const state = new MutationObserver(
    () => window.__log.push(['state', performance.now(), app.getAttribute('data-test-script-state')]));
  state.observe(app, {attributes: true, attributeFilter: ['data-test-script-state']});
  const plot = document.querySelector('.st-key-playground_heatmap .js-plotly-plot');
  let first = true;
  const drawing = new MutationObserver(() => {
    if (first) { first = false; window.__log.push(['heatmap', performance.now(), '']); }
  });
  drawing.observe(plot, {subtree: true, childList: true, attributes: true});
  window.__watching = [state, drawing];
  window.__frames = true;
  let last = performance.now();
  const frame = () => {
    const now = performance.now();
    if (now - last >= busy) window.__log.push(['busy', last, String(Math.round(now - last))]);
    last = now;
    if (window.__frames) requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}"""


EVENTS = {
    "out": "the edit sent",
    "state": "script {}",
    "busy": "no frame for {} ms (main thread busy)",
    "heatmap": "the heatmap's drawing changes",
}


def describe(data: str) -> str:
    """A server message (base64 of a ForwardMsg) as its kind and, for a delta, what it draws where."""
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    raw = base64.b64decode(data)
    msg = ForwardMsg()
    msg.ParseFromString(raw)
    kind = msg.WhichOneof("type")
    if kind != "delta":
        return f"{kind} ({len(raw)} B)"
    delta = msg.delta
    what = delta.WhichOneof("type")
    if what in ("new_element", "add_block"):
        what = f"{what}:{getattr(delta, what).WhichOneof('type')}"
    place = ".".join(map(str, msg.metadata.delta_path))
    return f"{what} at {place} ({len(raw)} B)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="emma-friend", choices=bb.SEEDS)
    parser.add_argument("--edits", type=int, default=3)
    args = parser.parse_args()

    from playwright.sync_api import sync_playwright

    server = devserver.start(ROOT)
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=bb.CHROMIUM, args=bb.CHROMIUM_ARGS)
            context = browser.new_context(viewport={"width": 1280, "height": 720}, base_url=server.url)
            context.add_init_script(_RECORD_JS)
            page = context.new_page()
            bb.open_ready(page, f"/playground?scenario={args.scenario}", KEY)
            editor = page.locator(bb.EDITOR).first
            for k in range(args.edits):
                bb.type_into_second_row(page, editor, f"{1.5 + 0.25 * k}")
                page.evaluate(_WATCH_EDIT_JS, BUSY_MS)
                painted = bb.timed_change(page, KEY, lambda: page.keyboard.press("Enter"))
                page.evaluate("() => { window.__frames = false; }")
                start, log = page.evaluate("[window.__inputAt, window.__log]")
                print(f"\n## Edit {k + 1}: the heatmap painted {painted:.0f} ms after the Enter\n")
                for kind, at, value in sorted(log, key=lambda row: row[1]):
                    if at - start > painted:
                        break
                    text = describe(value) if kind == "in" else EVENTS[kind].format(value)
                    print(f"{at - start:8.1f}  {text}")
                print(f"{painted:8.1f}  the frame after the change painted")
            browser.close()
    finally:
        devserver.stop_server(server)


if __name__ == "__main__":
    main()
