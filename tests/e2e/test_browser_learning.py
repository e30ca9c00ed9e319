"""Learning in a real browser: Play on the exercises page changes the weights and grows the loss curve while the
timer runs (only the learning fragment reruns), and Pause stops it."""

from __future__ import annotations

import pytest
from streamlit_browser import assert_clean, choose_option, figures, open_page, screenshot, wait_idle, wait_until

pytestmark = [pytest.mark.e2e, pytest.mark.looks_only]  # never types into a grid: conftest.page


def drawn(page) -> tuple[list | None, list | None]:
    """(your weights, head 1: the comparison's second heatmap; the loss curve's losses) as drawn, or None."""
    charts = {f["key"]: f["traces"] for f in figures(page)}
    comparison, loss = charts.get("exercises_weights"), charts.get("exercises_loss")
    yours = [t["z"] for t in comparison if t["type"] == "heatmap"][1] if comparison else None
    return yours, (loss[0]["y"] if loss else None)


def test_play_changes_the_weights_and_the_loss_curve_until_paused(page):
    open_page(page, "/exercises")
    choose_option(page, "exercises_pick", "5. friend -> Emma")  # nine tokens; from the seeded start about 115 steps
    page.get_by_role("button", name="Random start").click()
    wait_idle(page)
    start_weights, start_losses = wait_until(page, lambda: (d := drawn(page))[1] and d, "the loss curve's first point")
    assert len(start_losses) == 1

    page.get_by_role("button", name="Play").click()
    first = wait_until(page, lambda: (d := drawn(page))[1] and len(d[1]) > 1 and d, "the loss curve to grow")
    later = wait_until(page, lambda: (d := drawn(page))[1] and len(d[1]) > len(first[1]) and d, "it to grow again")
    assert later[0] != start_weights, "your weights are redrawn while learning plays"
    assert later[1][-1] < start_losses[0], f"the loss fell: {later[1][:3]} ... {later[1][-1]}"
    assert later[1][: len(first[1])] == first[1], "the curve grows; the steps already drawn stay"
    screenshot(page, "exercises_learning")

    pause = page.get_by_role("button", name="Pause")
    if pause.count():  # the run may have solved the exercise and stopped by itself already
        pause.click()
    wait_until(page, lambda: page.get_by_role("button", name="Play").count(), "the Play button back")
    wait_idle(page)

    def settled():  # ticks the server had queued before the pause may still be drawn
        before = drawn(page)
        page.wait_for_timeout(1000)
        return drawn(page) == before

    wait_until(page, settled, "the page to settle after the pause", 60)
    stopped = drawn(page)
    page.wait_for_timeout(2000)  # ten ticks' worth: nothing may change now
    assert drawn(page) == stopped, "the curve and the weights stay once paused"
    assert_clean(page)
