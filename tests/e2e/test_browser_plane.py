"""The playground's vector plane in a real browser: the mouse drags the query mammal's handle, arrow keys move it;
the weights drawn are attention_core's for the vector the Q table then holds, and the plane is never remounted."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit_browser import assert_clean, chart, open_page, wait_idle, wait_until

import attention_core as ac
from attention_views.pure.lab import HEAD_SCENARIO, new_lab
from attention_views.pure.links import encode_payload
from attention_views.pure.plane import AHEAD_STEPS

pytestmark = pytest.mark.e2e

HANDLE = '[aria-label="query mammal"]'  # Playwright's CSS reaches into the component's open shadow root
LAB = new_lab("mammal-query")
Q0, K, V = (LAB.tables[n].iloc[:, 1:].to_numpy(float) for n in "QKV")
REACH, PAD, SIZE = 15.0, 36, 400  # the plane's reach for mammal-query (pure/plane.extent), plane.js's viewBox
PLANE_JS = (Path(__file__).resolve().parents[2] / "attention_views/ui/components/plane.js").read_text()
REST_MS, STALLED_MS, LOOK_MS = (
    int(re.search(rf"const {name} = (\d+);", PLANE_JS)[1]) for name in ("REST_MS", "STALLED_MS", "LOOK_MS")
)


def open_plane_tab(page):
    """Open the tables' tab that holds the vector plane."""
    page.get_by_role("tab", name="Vector plane").click()
    wait_idle(page)


def open_plane(page):
    open_page(page, "/playground?scenario=mammal-query")
    open_plane_tab(page)
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


class Wire:
    """The page's Streamlit WebSocket, relayed by Playwright: the plane's reports as the page sends them, the
    answers (which report a run computed) as the server sends them, and the server's messages held while
    ``hold`` is set (released in order by :meth:`release`)."""

    REPORT = re.compile(rb'\{"kind":"Q".*?"done":(?:true|false),"seq":\d+,"lead":\[[^\]]*\]\}')
    ANSWER = re.compile(rb'"answered": ?\{"id": ?"[^"]*", ?"seq": ?(\d+)\}')

    def __init__(self, page):
        self.reports: list[dict] = []  # each report the page sent, with the answers it had had by then
        self.answers: list[int] = []  # the seq of each answer the server sent
        self.hold, self.held = False, []
        page.route_web_socket(re.compile(r".*/_stcore/stream"), self._route)

    def _route(self, ws) -> None:
        server = ws.connect_to_server()
        ws.on_message(lambda m: self._sent(m, server))
        server.on_message(self._received(ws))

    def _sent(self, message, server) -> None:
        for raw in self.REPORT.findall(message if isinstance(message, bytes) else message.encode()):
            self.reports.append({**json.loads(raw), "answered_by_then": max(self.answers, default=0)})
        server.send(message)

    def _received(self, ws):
        def on(message) -> None:
            if self.hold:
                self.held.append(message)
                return
            self.answers += [int(n) for n in self.ANSWER.findall(message if isinstance(message, bytes) else b"")]
            ws.send(message)

        self.ws = ws
        return on

    def release(self) -> None:
        self.hold, held, self.held = False, self.held, []
        for message in held:
            self.answers += [int(n) for n in self.ANSWER.findall(message if isinstance(message, bytes) else b"")]
            self.ws.send(message)


# On the page's own clock (performance.now()): the last pointer move's time, and the time each report of the
# plane left through the websocket, so that a wait the page keeps is measured where it is kept.
PAGE_CLOCK = """() => {
    window.lastMoveAt = 0;
    window.reportsSentAt = [];
    addEventListener("pointermove", (e) => { window.lastMoveAt = e.timeStamp; }, true);
    const send = WebSocket.prototype.send;
    WebSocket.prototype.send = function (data) {
        if (new TextDecoder().decode(data).includes('"kind":"Q"')) window.reportsSentAt.push(performance.now());
        return send.call(this, data);
    };
}"""


def clock(page) -> dict:
    """On the page's own clock (ms): now, the last pointer move, and when each report of the plane left."""
    return page.evaluate("() => ({now: performance.now(), moved: window.lastMoveAt, sent: window.reportsSentAt})")


def settled(page, wire, at_least: int, rest: float = 2 * REST_MS) -> dict:
    """Wait until the page has sent ``at_least`` reports, every one has reached the server (the wire), and the
    pointer has rested ``rest`` ms on the page's clock (by default twice REST_MS: a rest report, due after REST_MS,
    has left by then, its timer late by up to REST_MS on a busy core); the page's clock."""

    def probe():
        c = clock(page)
        at_rest = c["now"] - c["moved"] >= rest
        return len(c["sent"]) >= at_least and len(wire.reports) == len(c["sent"]) and at_rest and c

    return wait_until(page, probe, f"{at_least} reports sent and the pointer at rest {rest:.0f} ms")


def press_on_query(page) -> tuple[Wire, object, float, float, float]:
    """The plane opened with its websocket relayed (a :class:`Wire`) and the page's clock set (PAGE_CLOCK), and the
    mouse pressed on the chosen query's handle: (the wire, the handle, its centre x and y, pixels per plane unit)."""
    wire = Wire(page)
    handle = open_plane(page)
    page.evaluate(PAGE_CLOCK)
    box = handle.bounding_box()
    units = page.locator(".plane svg").bounding_box()["width"] / SIZE * (SIZE / 2 - PAD) / REACH
    x0, y0 = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    page.mouse.move(x0, y0)
    page.mouse.down()
    return wire, handle, x0, y0, units


def test_a_fast_drag_keeps_two_reports_unanswered_and_its_end_is_computed_and_written(page):
    """While the server has not answered, the plane sends two reports of a drag and holds the newest position; the
    pointer's last position, let go without a pause, is the one computed, drawn and written into Q."""
    wire, handle, x0, y0, units = press_on_query(page)
    wire.hold = True  # the server's answers wait
    for k in range(1, 5):
        page.mouse.move(x0 - k * units, y0)
    c = settled(page, wire, 2)
    assert c["now"] - c["sent"][1] < STALLED_MS, f"judged {c['now'] - c['sent'][1]:.0f} ms after the second report"
    assert [r["seq"] for r in wire.reports] == [1, 2], "two reports unanswered, the newest position held back"
    wire.release()
    for k in range(1, 31):  # no pause between moves: reports wait for answers
        page.mouse.move(x0 - (4 + k / 5) * units, y0 + k / 5 * units)
    assert len(wire.reports) > 3, "the waiting position is sent once an answer arrives"
    wire.hold = True  # the last moves' reports wait, and the pointer is let go before an answer comes
    for k in range(1, 6):
        page.mouse.move(x0 - (10 + k / 5) * units, y0 + 6 * units)
    page.mouse.up()
    wait_until(page, lambda: wire.reports[-1]["done"], "the drag's end reported without waiting for an answer")
    wire.release()
    wait_idle(page)
    last = wire.reports[-1]
    assert [r for r in wire.reports if r["done"]] == [last], "the end is reported once, last"
    assert all(r["seq"] - r["answered_by_then"] <= 2 for r in wire.reports[:-1]), wire.reports
    expected_q = Q0[0] + [-11.0, -6.0, 0.0]  # 4 + 30/5 + 1 units left, 30/5 down
    np.testing.assert_allclose([last["x"], last["y"]], expected_q[:2], atol=0.21)  # the pointer's end, reported
    q = table_q(page)[0]
    np.testing.assert_allclose(q[:2], [round(last["x"], 1), round(last["y"], 1)], atol=1e-9)  # snapped to 0.1
    assert q[2] == 4.1
    wait_until(page, lambda: bars(page) == core_weights(q), "the weights of the drag's end")
    assert_clean(page)
    assert_same_plane(page)


def test_a_move_the_answer_in_hand_covers_is_drawn_at_once_and_reported_only_once_the_pointer_rests(page):
    """Each answer during a drag holds the weights of the grid points around it: a move onto one is drawn with
    attention_core's weights for that point at once, while the server's answers are held back, and is not reported
    at the move (each report reruns the page's plane) but once the pointer has rested (plane.js's REST_MS, 120 ms),
    so that the heatmap follows it."""
    wire, handle, x0, y0, units = press_on_query(page)
    page.mouse.move(x0 - 2 * units, y0)
    wait_until(page, lambda: wire.answers and wire.answers[-1] >= 1, "the first report answered")
    first = wire.reports[-1]
    wait_until(page, lambda: bars(page) == core_weights(snapped(first)), "the first report's weights")
    # The pointer rests until every report is answered and long enough that the covered move's lead stays within
    # the square of AHEAD_STEPS grid steps the first report's answer holds (a report sent before any answer has no
    # lead): plane.js's lead of a lone move after a rest of t ms is the move times LOOK_MS / t, so with the move of
    # 5 steps the point ahead stays covered for t >= LOOK_MS * 5 / (AHEAD_STEPS - 5); twice that, on the page's clock.
    rest = 2 * LOOK_MS * 5 / (AHEAD_STEPS - 5)
    c = settled(page, wire, 1, rest)
    wait_until(page, lambda: wire.answers and wire.answers[-1] >= len(c["sent"]), "every report answered")
    wire.hold = True  # no answer reaches the page from here on
    answers, reports = len(wire.answers), len(wire.reports)
    page.mouse.move(x0 - 2.5 * units, y0 + 0.3 * units)  # 0.5 left and 0.3 down: within the eight grid steps sent
    cx, cy = (float(handle.get_attribute(c)) for c in ("cx", "cy"))  # where plane.js placed the handle
    s = (SIZE / 2 - PAD) / REACH
    q = np.array([round(round((cx - SIZE / 2) / s / 0.1) * 0.1, 1), round(round((SIZE / 2 - cy) / s / 0.1) * 0.1, 1)])
    q = np.append(q, 4.1)
    assert q[:2].tolist() != snapped(first)[:2].tolist()
    wait_until(page, lambda: bars(page) == core_weights(q), "the weights of the point under the pointer")
    wait_until(page, lambda: len(wire.reports) > reports, "the resting pointer's point reported")
    rested = page.evaluate(f"window.reportsSentAt[{reports}] - window.lastMoveAt")  # ms, on the page's clock
    assert rested >= 100, f"a covered move is reported only after the pointer rested ({rested:.0f} ms)"
    assert snapped(wire.reports[reports]).tolist() == q.tolist()
    wait_until(page, lambda: wire.held, "the server's answer to the resting pointer, held back")
    at_rest = f"window.reportsSentAt[{reports}] + {2 * REST_MS}"  # a second rest report would have left by then
    wait_until(page, lambda: page.evaluate(f"performance.now() >= {at_rest}"), "the pointer at rest")
    assert len(wire.reports) == reports + 1, "one report for the resting pointer"
    assert len(wire.answers) == answers, "an answer reached the page"
    wire.release()
    page.mouse.up()
    wait_idle(page)
    np.testing.assert_allclose(table_q(page)[0], q, atol=1e-12)
    wait_until(page, lambda: bars(page) == core_weights(q), "the drag's end drawn with the same weights")
    assert_clean(page)
    assert_same_plane(page)


def test_a_fast_drag_is_drawn_with_the_cores_weights_ahead_of_the_last_answered_report_along_its_lead(page):
    """Each report carries the pointer's lead (its velocity times the answer round trip): the answer holds the weights
    of the points along it, so the pointer, moved on to where the lead pointed, more than the eight grid steps of
    the square around the reported point, is drawn with attention_core's weights there while the answers wait."""
    wire, handle, x0, y0, units = press_on_query(page)
    page.mouse.move(x0 - units, y0)
    wait_until(page, lambda: wire.answers and wire.answers[-1] >= 1, "the first report answered")
    target = None
    for k in range(2, 15):  # a unit left and half down each 16 ms, until an answer's lead points past its square
        page.mouse.move(x0 - k * units, y0 + k / 2 * units)
        page.wait_for_timeout(16)
        last = next(r for r in wire.reports if r["seq"] == wire.answers[-1])
        lead = np.array(last["lead"]) * min(1.0, 3.2 / max(np.hypot(*last["lead"]), 1e-9))  # capped at 32 steps
        at = snapped(last)[:2] * 10
        if np.abs(np.round(at + lead * 10) - at).max() > 8:
            wire.hold = True  # the answer to `last` is the last to reach the page
            target = (np.round(at + lead * 10) / 10).round(1)  # where its lead points, on the grid
            break
    assert target is not None, [r["lead"] for r in wire.reports]
    assert lead[0] < 0 and lead[1] < 0, lead  # along the motion: left and down
    answers = len(wire.answers)
    page.mouse.move(x0 + (target[0] - Q0[0, 0]) * units, y0 - (target[1] - Q0[0, 1]) * units)
    cx, cy = (float(handle.get_attribute(c)) for c in ("cx", "cy"))  # where plane.js placed the handle
    s = (SIZE / 2 - PAD) / REACH
    q = np.array([round(round((cx - SIZE / 2) / s / 0.1) * 0.1, 1), round(round((SIZE / 2 - cy) / s / 0.1) * 0.1, 1)])
    assert np.abs(q - target).max() <= 0.1 + 1e-9, (q, target)  # the pointer's grid point, or one beside it
    q = np.append(q, 4.1)
    assert core_weights(q) != core_weights(snapped(last))
    wait_until(page, lambda: bars(page) == core_weights(q), "the weights of the point the lead pointed to")
    assert len(wire.answers) == answers, "an answer reached the page"
    # the pointer resting there is reported (plane.js, after 120 ms): its answer is held, and the drawing stays
    wait_until(page, lambda: wire.held, "the server's answer to the resting pointer, held back")
    assert len(wire.answers) == answers and bars(page) == core_weights(q)
    wire.release()
    page.mouse.up()
    wait_idle(page)
    assert_clean(page)
    assert_same_plane(page)


def snapped(report: dict) -> np.ndarray:
    """The query mammal at a report's position, snapped to the plane's grid of 0.1 as Python snaps it."""
    return np.array([round(round(report["x"] / 0.1) * 0.1, 1), round(round(report["y"] / 0.1) * 0.1, 1), 4.1])


# ---------------------------------------------------------------- a real model's head: a plane of two keys

IOI_IDS = [2427, 5099, 284, 2322, 3514, 288, 260, 4249, 28, 2322, 4502, 253, 5968, 288]  # SmolLM2's tokens of
# "When Mary and John went to the store, John gave a drink to" (presets.DEFAULT_SENTENCE)
HEAD_LINK = "/playground?state=" + encode_payload(
    {"v": "1", "s": HEAD_SCENARIO, "og": {"l": 23, "h": 3, "i": IOI_IDS, "pb": False}}
)
TO, JOHN, MARY = 13, 9, 1
HEAD_REACH = 30.0  # the plane of ' John' and ' Mary' reaches 30 (' John' is 16.8 long: pure/plane.extent)


def heatmap_of(page, name: str) -> np.ndarray:
    page.get_by_role("tab", name="Queries, keys and values").click()
    return np.array(wait_until(page, lambda: chart(page, f"playground_{name}_fig"), f"the {name} heatmap")["z"])


def qr_basis(K: np.ndarray, first: int, second: int) -> np.ndarray:
    """The plane of two keys by NumPy's QR, signs turned so e1 points along the first and e2 to the second's side."""
    basis, R = np.linalg.qr(K[[first, second]].T)  # (d, 2), (2, 2)
    return (basis * np.sign(np.diag(R))).T  # (2, d)


def test_dragging_a_real_heads_query_toward_mary_draws_the_cores_weights_and_writes_the_whole_row(page):
    open_page(page, HEAD_LINK)
    wait_until(page, lambda: "Playground: SmolLM2-135M layer 23, head 3" in page.inner_text("body"), "the head")
    Q0, K = heatmap_of(page, "Q"), heatmap_of(page, "K")
    assert Q0.shape == (14, 64)
    open_plane_tab(page)
    box = page.locator(f".st-key-playground_plane_k2_{TO}")
    box.scroll_into_view_if_needed()
    box.click()
    page.get_by_role("option", name="Mary", exact=True).click()
    wait_idle(page)
    handle = page.locator('.plane [aria-label="query  to"]')  # the token ' to': its space kept
    wait_until(page, lambda: page.locator(".plane .axes text").first.text_content() == "e1: ' John'", "the plane")
    wait_until(page, lambda: "e2: ' Mary' ⟂ e1" in page.locator(".plane .axes").text_content(), "the Mary plane")
    page.locator(".plane").evaluate("e => e.setAttribute('data-probe', 'first mount')")
    svg = page.locator(".plane svg").bounding_box()
    s = svg["width"] / SIZE  # px per viewBox unit
    units = (SIZE / 2 - PAD) / HEAD_REACH  # viewBox units per unit of the plane
    target = (svg["x"] + s * SIZE / 2, svg["y"] + s * (SIZE / 2 - 20.0 * units))  # (0, 20): toward ' Mary'
    hb = handle.bounding_box()
    x0, y0 = hb["x"] + hb["width"] / 2, hb["y"] + hb["height"] / 2
    page.mouse.move(x0, y0)
    page.mouse.down()
    for k in range(1, 21):
        page.mouse.move(x0 + (target[0] - x0) * k / 20, y0 + (target[1] - y0) * k / 20)
        page.wait_for_timeout(30)
    page.mouse.up()
    wait_idle(page)
    wait_until(page, lambda: not np.array_equal(heatmap_of(page, "Q")[TO], Q0[TO]), "the Q table to change")
    assert_clean(page)
    # the Q heatmap draws a 14 x 64 table as float32 (figures.base.heatmap_values); the model's own Q and K are
    # float32 numbers, so Q0 and K are read exactly, and the dragged row to float32's precision
    drawn = heatmap_of(page, "Q")[TO]
    E = qr_basis(K, JOHN, MARY)
    a, b = np.round(drawn @ E.T, 1)  # the plane's grid is 0.1 (pure/plane.resolution(30))
    np.testing.assert_allclose([a, b], [0.0, 20.0], atol=0.35)  # where the mouse let go (a handle's radius)
    np.testing.assert_allclose(drawn @ E.T, [a, b], atol=1e-5)  # on the grid, to float32's precision
    q = Q0[TO] - (Q0[TO] @ E.T) @ E + a * E[0] + b * E[1]  # held + a e1 + b e2, in float64 as the table holds it
    np.testing.assert_array_max_ulp(drawn.astype(np.float32), q.astype(np.float32), maxulp=1)
    Q = np.vstack([Q0[:TO], q])
    w = ac.scaled_dot_product_attention(Q, K, K, mask=ac.causal_mask(14, 14)).weights[TO]
    wait_until(page, lambda: bars(page) == [f"{x:.3f}" for x in w], "the weights of the final vector")
    assert float(bars(page)[MARY]) > 0.9, bars(page)  # the query now looks at ' Mary'
    assert_same_plane(page)
