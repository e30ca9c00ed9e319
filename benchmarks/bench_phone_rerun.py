"""Benchmark: what a followed lecturer edit costs a phone's browser, the phone's page beside the desktop page.

Run from the repository root (Debian's Chromium at /usr/bin/chromium, as the browser tests)::

    python benchmarks/bench_phone_rerun.py [--edits 6] [--cpu 1]

It starts its own ``streamlit run app.py``, a lecturer tab (the load test's protocol client) starts a class on the
playground (the page whose heatmap is drawn in place, which the measure watches), and a Chromium tab at 390x844 (touch,
mobile) follows it by its own signal component, once naming itself as a phone (``class_load.PHONE_AGENT``: the phone's
page) and once as desktop Chromium at the same size (the desktop page's content; the layout is the same). For each
lecturer edit (the class control, as in the class load test) it reads the page's main-thread time from the DevTools
protocol (``Performance.getMetrics``: TaskDuration, ScriptDuration, and LayoutDuration + RecalcStyleDuration) over 2.5 s
after the edit, less the same over 2.5 s with no edit (the signal's polls), and the time from the edit's send to the
heatmap showing the lecturer's numbers after it. ``--cpu N`` slows the page's CPU N times (Chromium's throttle, as
Lighthouse). Medians over ``--edits``; it prints figures, and stops with an error only when the page is never drawn.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from attention_views.ui.controls import PHONE_MARK  # noqa: E402
from benchmarks import class_load as cl  # noqa: E402
from benchmarks import load_test as lt  # noqa: E402

WINDOW_S = 2.5  # an edit's rerun is drawn well within it on an idle machine
DRAWN_WITHIN_S = 60  # a page's first drawing, on an idle machine
DESKTOP_AGENT = cl.PHONE_AGENT.replace("Linux; Android 10; K", "X11; Linux x86_64").replace(" Mobile", "")
if PHONE_MARK not in cl.PHONE_AGENT or PHONE_MARK in DESKTOP_AGENT:  # else both tabs would get the same page
    raise RuntimeError(f"the phone's and the desktop's User-Agent no longer differ by {PHONE_MARK!r}")


async def main_thread(cdp) -> tuple[float, float, float]:
    """(task, script, layout and style) seconds the page's main thread has spent so far."""
    got = {m["name"]: m["value"] for m in (await cdp.send("Performance.getMetrics"))["metrics"]}
    return got["TaskDuration"], got["ScriptDuration"], got["LayoutDuration"] + got["RecalcStyleDuration"]


async def follow(args: argparse.Namespace, browser, lecturer: lt.Student, code: str, agent: str) -> dict:
    """One phone-sized tab naming itself ``agent`` follows ``--edits`` edits: the medians, in ms."""
    context = await browser.new_context(base_url=args.url, **(cl.PHONE | {"user_agent": agent}))
    page = await context.new_page()
    await page.goto(f"/{args.page}?class={code}")
    looks = [args.class_control, cl.PHONE_HEATMAP.format(page=args.page)]
    await cl.phone_drawn(page, looks, DRAWN_WITHIN_S)
    cdp = await context.new_cdp_session(page)
    await cdp.send("Performance.enable")
    if args.cpu > 1:
        await cdp.send("Emulation.setCPUThrottlingRate", {"rate": args.cpu})
    await asyncio.sleep(2)
    stats, rng = cl.ClassStats(), random.Random(args.seed)
    edits, quiet, shown = [], [], []
    for _ in range(args.edits):
        before = await main_thread(cdp)
        await asyncio.sleep(WINDOW_S)
        quiet.append([b - a for a, b in zip(before, await main_thread(cdp), strict=True)])
        before = await main_thread(cdp)
        await cl.edit_once(lecturer, args, stats, rng)
        edit, seen = stats.edits[-1], None
        while time.perf_counter() - edit.sent < WINDOW_S:
            if seen is None and (found := await page.evaluate(cl._PHONE_JS, looks))[2] == edit.heatmap:
                seen = found[3] - edit.sent_at  # when the page drew it, by its own record (class_load._PHONE_JS)
            await asyncio.sleep(0.02)
        edits.append([b - a for a, b in zip(before, await main_thread(cdp), strict=True)])
        shown.append(seen if seen is not None else float("nan"))
    await context.close()

    def ms(rows: list, i: int) -> float:
        return 1000 * statistics.median(r[i] for r in rows)

    return {
        "task": ms(edits, 0) - ms(quiet, 0),
        "script": ms(edits, 1) - ms(quiet, 1),
        "layout": ms(edits, 2) - ms(quiet, 2),
        "shown": 1000 * statistics.median(shown),
    }


async def run(args: argparse.Namespace) -> dict:
    from playwright.async_api import async_playwright

    lecturer, code, _ = await cl.lecturer_starts(args)
    try:
        async with async_playwright() as pw:
            browser = await pw.chromium.launch(executable_path="/usr/bin/chromium", args=cl.PHONE_ARGS)
            found = {}
            for name, agent in (("phone", cl.PHONE_AGENT), ("desktop", DESKTOP_AGENT)):
                found[name] = await follow(args, browser, lecturer, code, agent)
            await browser.close()
        return found
    finally:
        await lecturer.close()


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--edits", type=int, default=6, help="lecturer edits followed by each page")
    parser.add_argument("--cpu", type=float, default=1, help="slow the page's CPU this many times (Chromium's)")
    parser.add_argument("--seed", type=int, default=1)
    own = parser.parse_args(argv)
    args = lt.parse_args(["--class-mode", "--processes", "1"])
    args.class_control = args.class_control.format(page=args.page)
    for name in ("edits", "cpu", "seed"):
        setattr(args, name, getattr(own, name))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with cl.servers(args) as box:
        args.url = box.url
        found = asyncio.run(run(args))
    print(f"a followed edit on /{args.page}, 390x844, CPU {args.cpu:g}x, medians of {args.edits} edits")
    print(f"{'page':<10}{'main thread':>14}{'script':>10}{'layout+style':>15}{'edit -> heatmap':>18}")
    for name, r in found.items():
        print(f"{name:<10}{r['task']:>11.0f} ms{r['script']:>7.0f} ms{r['layout']:>12.0f} ms{r['shown']:>15.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
