"""Benchmark: "Learn it" playing in Chromium: learn steps drawn per second, and what a rerun of the page costs.

Run from the repository root (Debian's Chromium at /usr/bin/chromium, as the browser tests)::

    python benchmarks/bench_learning_browser.py [--seconds 8] [--speeds 5 10 15] [--repeats 5]

It starts its own ``streamlit run app.py`` and, at 1280x720 on /exercises, picks "6. it -> dog, she -> Maria" (ten
tokens), presses *Random start* (seed 0), sets the learning rate to 0.1 (960 steps to solve, so the run outlasts
the measurement) and the steps per tick, and presses *Play*. A requestAnimationFrame loop in the page records when
the loss curve's drawn length changes; steps drawn per second = (last length - first length) / (time between
them). The timer ticks every learning.TICK_SECONDS, each tick takes "steps per tick" learn steps (goal: at least
20 steps/s drawn at the default steps per tick, ``session.Learning.speed``).

Then, paused, the time from a click until its rerun has finished and a frame is painted: *Step* (reruns only the
learning fragment) and *Hint* (reruns the whole page, the rest of which is unchanged). The machine may be
shared: the load average is printed. It prints figures and never fails.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "e2e"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_browser import CHROMIUM, CHROMIUM_ARGS, timed_rerun  # noqa: E402
from streamlit_browser import choose_option, wait_idle  # noqa: E402

from attention_views.pure.lab import Learning  # noqa: E402
from attention_views.ui.learning import TICK_SECONDS  # noqa: E402
from deploy import devserver  # noqa: E402

_RECORD_JS = """() => {
  window.__drawn = [];
  const probe = () => {
    const gd = document.querySelector('.st-key-exercises_loss .js-plotly-plot');
    const full = gd && gd._fullData && gd._fullData[0];  // the drawn trace (its y decoded from base64)
    const n = full && full.y ? full.y.length : 0;
    const last = window.__drawn[window.__drawn.length - 1];
    if (!last || last[1] !== n) window.__drawn.push([performance.now(), n]);
    if (!window.__stop) requestAnimationFrame(probe);
  };
  window.__stop = false;
  requestAnimationFrame(probe);
}"""


def steps_drawn_per_second(page, speed: int, seconds: float) -> tuple[float, int]:
    """Steps drawn per second while playing at ``speed`` steps a tick, and the number of redraws seen."""
    slider = page.locator(".st-key-exercises_speed input[type=range]")
    for _ in range(60):
        now = int(float(slider.input_value()))
        if now == speed:
            break
        slider.focus()
        page.keyboard.press("ArrowRight" if now < speed else "ArrowLeft")
        wait_idle(page)
    page.get_by_role("button", name="Random start").click()
    wait_idle(page)
    page.evaluate(_RECORD_JS)
    page.get_by_role("button", name="Play").click()
    page.wait_for_timeout(int(seconds * 1000))
    drawn = page.evaluate("() => { window.__stop = true; return window.__drawn; }")
    for _ in range(5):  # a click that lands while a tick redraws the button is lost: press until Play is back
        pause = page.get_by_role("button", name="Pause")
        if not pause.count():  # paused, or a fast run solved the exercise and stopped by itself
            break
        pause.click()
        wait_idle(page)
    moving = [d for d in drawn if d[1] > 1]
    if len(moving) < 2:
        return 0.0, len(moving)
    (t0, n0), (t1, n1) = moving[0], moving[-1]
    return (n1 - n0) / ((t1 - t0) / 1000), len(moving)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--speeds", type=int, nargs="+", default=sorted({5, 10, Learning().speed}))
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; timer tick {TICK_SECONDS} s")
    server = devserver.start()
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            page = browser.new_context(viewport={"width": 1280, "height": 720}, base_url=server.url).new_page()
            page.goto("/exercises", wait_until="domcontentloaded")
            wait_idle(page)
            choose_option(page, "exercises_pick", "6. it -> dog, she -> Maria")
            page.locator(".st-key-exercises_lr input[type=range]").focus()
            for _ in range(2):  # 1.0 -> 0.3 -> 0.1
                page.keyboard.press("ArrowLeft")
                wait_idle(page)
            print("\n| steps per tick | nominal steps/s | drawn steps/s | redraws seen |")
            print("|---:|---:|---:|---:|")
            for speed in args.speeds:
                rate, redraws = steps_drawn_per_second(page, speed, args.seconds)
                print(f"| {speed} | {speed / TICK_SECONDS:.0f} | {rate:.1f} | {redraws} |", flush=True)
            print("\n| click (paused) | median ms | slowest ms | runs |")
            print("|---|---:|---:|---:|")
            for label in ("Step", "Hint"):
                button = page.get_by_role("button", name=label, exact=False).first
                times = [timed_rerun(page, button.click) for _ in range(args.repeats)]
                what = "learning fragment only" if label == "Step" else "whole page, the rest unchanged"
                print(f"| {label} ({what}) | {statistics.median(times):.0f} | {max(times):.0f} | {len(times)} |")
            browser.close()
    finally:
        devserver.stop_server(server)
    print(f"\nload average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
