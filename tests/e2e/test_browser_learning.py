"""Learning in a real browser: Play on the exercises page changes the weights and grows the loss curve while the
timer runs (only the learning fragment reruns), and Pause stops it at once, even on a busy server."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np
import pytest
from streamlit_browser import assert_clean, choose_option, figures, open_page, screenshot, wait_idle, wait_until

import attention_core as ac
from attention_core.learning import STOP_MAX_STEPS
from attention_views.pure.figures.base import LIGHT_TEXT  # the layer writing the dark cells' digits
from attention_views.ui import learning

pytestmark = [pytest.mark.e2e, pytest.mark.looks_only]  # never types into a grid: conftest.page

EXERCISE, TITLE, SEED = "friend-emma", "5. friend -> Emma", 0  # nine tokens; the app's default seed
SLOWEST = 0.03  # the smallest learning rate (session.LEARNING_RATES), one step a tick: the run cannot solve
WINDOW_S = 120  # the test plays for less than this (asserted), so the timer takes fewer steps than it needs
STILL_FOR_S = 2.0  # Pause: once the Play button is back, nothing changes for this long

# Records in the page, on its own clock: when the Pause button was clicked, when the Play button was drawn again
# after it (the click's run done), and every change of the step counter (the status caption "Step N · loss ...") as
# drawn. The click is timed where the page gets it, not where the test asked for it: on a busy machine the browser
# may take seconds to act on a click.
RECORD_JS = """() => {
  window.__steps = []; window.__pausedAt = null; window.__playBackAt = null;
  document.addEventListener('click', e => {
    if (e.target.closest('button')?.innerText.trim().endsWith('Pause')) window.__pausedAt ??= performance.now();
  }, true);
  const read = () => {
    const shown = Array.from(document.querySelectorAll('[data-testid="stCaptionContainer"]'), e => e.innerText)
      .map(text => /^Step (\\d+) ·/.exec(text)).find(m => m);
    const step = shown ? Number(shown[1]) : null;
    if (window.__steps.at(-1)?.[1] !== step) window.__steps.push([performance.now(), step]);
    const play = Array.from(document.querySelectorAll('button'), b => b.innerText.trim()).some(t => t.endsWith('Play'));
    if (window.__pausedAt !== null && window.__playBackAt === null && play) window.__playBackAt = performance.now();
  };
  new MutationObserver(read).observe(document.body, {subtree: true, childList: true, characterData: true});
  read();
}"""


def drawn(page) -> tuple[list | None, list | None]:
    """(your weights, head 1: the comparison's second heatmap; the loss curve's losses) as drawn, or None."""
    charts = {f["key"]: f["traces"] for f in figures(page)}
    comparison, loss = charts.get("exercises_weights"), charts.get("exercises_loss")
    yours = (
        [t["z"] for t in comparison if t["type"] == "heatmap" and t.get("name") != LIGHT_TEXT][1]
        if comparison
        else None
    )
    return yours, (loss[0]["y"] if loss else None)


@contextmanager
def busy_core() -> Iterator[None]:
    """Another process spinning on a core while the block runs (a machine running other work)."""
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def slowest_settings(page) -> None:
    """The smallest learning rate and one step per tick (each slider's first stop, chosen from the keyboard)."""
    for key, shown in (("exercises_lr", str(SLOWEST)), ("exercises_speed", "1")):
        page.locator(f".st-key-{key} input[type=range]").press("Home")
        wait_idle(page)
        thumb = page.locator(f'.st-key-{key} [data-testid="stSliderThumbValue"]').inner_text()
        assert thumb == shown, f"{key} shows {thumb!r}, not {shown!r}"


def assert_cannot_solve() -> None:
    """From the test's start, at its rate, the steps the timer can take within the test's window neither solve nor
    stall the exercise: the run is still playing when Pause is pressed."""
    ex = ac.load_exercise(EXERCISE)
    start = ac.start_learning(ex, ac.random_start(ex, np.random.default_rng(SEED)))
    most = int(WINDOW_S / learning.TICK_SECONDS)  # one step a tick
    assert ac.learn_until_solved(start, lr=SLOWEST, max_steps=most).stopped == STOP_MAX_STEPS


def test_play_changes_the_weights_and_the_loss_curve_and_pause_stops_it_at_once(page):
    open_page(page, "/exercises")
    choose_option(page, "exercises_pick", TITLE)
    slowest_settings(page)
    page.get_by_role("button", name="Random start").click()
    wait_idle(page)
    start_weights, start_losses = wait_until(page, lambda: (d := drawn(page))[1] and d, "the loss curve's first point")
    assert len(start_losses) == 1
    page.evaluate(RECORD_JS)

    began = time.monotonic()
    with busy_core():
        page.get_by_role("button", name="Play", exact=True).click()
        first = wait_until(page, lambda: (d := drawn(page))[1] and len(d[1]) > 1 and d, "the loss curve to grow")
        later = wait_until(page, lambda: (d := drawn(page))[1] and len(d[1]) > len(first[1]) and d, "it to grow again")
        assert later[0] != start_weights, "your weights are redrawn while learning plays"
        assert later[1][-1] < start_losses[0], f"the loss fell: {later[1][:3]} ... {later[1][-1]}"
        assert later[1][: len(first[1])] == first[1], "the curve grows; the steps already drawn stay"
        screenshot(page, "exercises_learning")

        assert_cannot_solve()
        page.get_by_role("button", name="Pause").click()
        page.wait_for_function(
            f"() => window.__playBackAt !== null && performance.now() > window.__playBackAt + {STILL_FOR_S * 1000}",
            polling=100,
        )
        paused_at, back_at, steps = page.evaluate("() => [window.__pausedAt, window.__playBackAt, window.__steps]")
    assert time.monotonic() - began < WINDOW_S, "the test played longer than the window its settings are made for"

    played = [step for t, step in steps if t <= paused_at]
    assert len(set(played)) >= 3, f"the step counter went on while playing: {played}"
    # one step a tick: the tick under way when Pause was clicked may still draw its step (Streamlit runs the click's
    # callback after it), and so may one tick the browser's timer had already sent (the click reaches the app behind
    # it), no other; once the Play button is back nothing changes
    in_flight = [(round((t - paused_at) / 1000, 2), step) for t, step in steps if paused_at < t <= back_at]
    assert [step for _, step in in_flight] in ([], [played[-1] + 1], [played[-1] + 1, played[-1] + 2]), (
        f"after the Pause click more than the ticks already sent were drawn (s after the click, step): {in_flight}"
    )
    late = [(round((t - paused_at) / 1000, 2), step) for t, step in steps if t > back_at]
    assert not late, f"after Pause took effect the step counter still changed (s after the click, step): {late}"
    assert page.get_by_role("button", name="Play", exact=True).count() == 1, "the Play button back"
    wait_idle(page)
    assert drawn(page)[1] is not None and len(drawn(page)[1]) - 1 == steps[-1][1], "the curve ends at the step shown"
    assert_clean(page)


def test_after_learning_the_editor_cells_show_at_most_four_decimals(page):
    """ "Until solved" on the first exercise learns Q and K with float noise next to zero (1e-17): the editor's cells
    read "0", never "-5.4121427545938816e-18" or a row of zeros cut off by the column."""
    open_page(page, "/exercises")
    page.get_by_role("button", name="Until solved").click()
    wait_idle(page)
    wait_until(page, lambda: "solved" in page.inner_text("body"), "the run to be solved")
    for tab in ("Q (queries)", "K (keys)"):
        page.get_by_role("tab", name=tab).click()
        wait_idle(page)

        def cells() -> list[str] | None:  # the grid of a tab just opened draws its cells a moment later
            rows = page.locator('[class*="st-key-exercises_editor_"] [role=row]').all()
            numbers = [c for r in rows for c in r.locator("[role=gridcell]").all_inner_texts()[1:]]  # label first
            return numbers if len(numbers) == 15 else None

        numbers = wait_until(page, cells, f"{tab}: five rows of three numbers")
        bad = [c for c in numbers if not re.fullmatch(r"-?\d+(\.\d{1,4})?", c) or c == "-0"]
        assert not bad, f"{tab}: cells written past four decimals or as -0: {bad}"
        assert "0" in numbers, f"{tab}: the learned noise next to zero shows as 0: {numbers}"
    assert_clean(page)
