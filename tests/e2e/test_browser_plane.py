"""The playground's vector plane in a real browser: the mouse drags the query mammal's handle, arrow keys move it;
the weights drawn are attention_core's for the vector the Q table then holds, and the plane is never remounted."""

from __future__ import annotations

import numpy as np
import pytest
from streamlit_browser import assert_clean, chart, open_page, wait_idle, wait_until

import attention_core as ac
from attention_views.pure.lab import new_lab

pytestmark = pytest.mark.e2e

HANDLE = '[aria-label="query mammal"]'  # Playwright's CSS reaches into the component's open shadow root
LAB = new_lab("mammal-query")
Q0, K, V = (LAB.tables[n].iloc[:, 1:].to_numpy(float) for n in "QKV")
REACH, PAD, SIZE = 15.0, 36, 400  # the plane's reach for mammal-query (pure/plane.extent), plane.js's viewBox


def open_plane(page):
    open_page(page, "/playground?scenario=mammal-query")
    handle = page.locator(HANDLE)
    handle.scroll_into_view_if_needed()
    wait_until(page, lambda: bars(page)[0] != "", "the plane's weights")
    page.locator(".plane").evaluate("e => e.setAttribute('data-probe', 'first mount')")
    return handle


def bars(page) -> list[str]:
    """The weights the plane's bar list draws, as text."""
    return page.locator(".plane .bar .value").all_text_contents()


def table_q(page) -> np.ndarray:
    """The Q table as the page draws it (the Queries, keys and values tab's Q heatmap holds the table's numbers)."""
    page.get_by_role("tab", name="Queries, keys and values").click()
    return np.array(wait_until(page, lambda: chart(page, "playground_Q_fig"), "the Q heatmap")["z"])


def core_weights(q: np.ndarray) -> list[str]:
    w = ac.scaled_dot_product_attention(np.vstack([q, Q0[1]]), K, V).weights[0]
    return [f"{x:.3f}" for x in w]


def assert_same_plane(page):
    assert page.locator(".plane").get_attribute("data-probe") == "first mount", "the plane was drawn anew"


def test_dragging_the_query_with_the_mouse_draws_the_cores_weights_and_writes_q(page):
    handle = open_plane(page)
    box = handle.bounding_box()
    units = page.locator(".plane svg").bounding_box()["width"] / SIZE * (SIZE / 2 - PAD) / REACH  # px per unit
    x0, y0 = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    dx, dy = -8.0 * units, 4.0 * units  # 8 units left and 4 down, toward the lizard... through many moves
    page.mouse.move(x0, y0)
    page.mouse.down()
    for k in range(1, 21):
        page.mouse.move(x0 + dx * k / 20, y0 + dy * k / 20)
        page.wait_for_timeout(30)
    page.mouse.up()
    wait_idle(page)
    expected_q = Q0[0] + [-8.0, -4.0, 0.0]
    shown = wait_until(page, lambda: bars(page) if bars(page) != core_weights(Q0[0]) else None, "new weights")
    assert_clean(page)
    q = table_q(page)[0]
    np.testing.assert_allclose(q[:2], expected_q[:2], atol=0.21)  # where the mouse let go, to the plane's grid
    assert q[2] == 4.1  # the dimension not drawn is held
    assert shown == core_weights(q)
    assert_same_plane(page)


def test_arrow_keys_move_the_focused_query_a_step_each(page):
    handle = open_plane(page)
    handle.focus()
    for _ in range(3):
        handle.press("ArrowLeft")
        wait_idle(page)
    handle.press("ArrowUp")
    wait_idle(page)
    expected_q = Q0[0] + [-3.0, 1.0, 0.0]  # a step is 1 on a plane that reaches 15
    wait_until(page, lambda: bars(page) == core_weights(expected_q), "the weights of the moved query")
    assert handle.evaluate("e => e.getRootNode().activeElement === e"), "the handle lost the focus"
    np.testing.assert_allclose(table_q(page)[0], expected_q, atol=1e-12)
    assert_same_plane(page)
