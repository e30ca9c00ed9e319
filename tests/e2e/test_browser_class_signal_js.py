"""The class signal component's script (classroom.SIGNAL_JS) in Chromium, with the room's file played by the test
(``fetch`` replaced): it asks for a rerun when the version moves; when the file stops beating (a signal folder the
server cannot write) it asks the app itself every fallback_ms, and stops once the file beats again; it keeps the
browser's seat in a cookie the next page load sends."""

from __future__ import annotations

import pytest

from attention_views.ui.classroom import SEAT_COOKIE, SIGNAL_JS

pytestmark = pytest.mark.e2e
ORIGIN = "http://lab.test"

HARNESS = """
async ({ js, data }) => {
  window.file = { version: 1, beat: 1 };
  window.events = [];
  window.beating = (on) => {  // the server writing the file: a new beat every 0.1 s, or none
    clearInterval(window.beater);
    if (on) window.beater = setInterval(() => { window.file.beat += 1; }, 100);
  };
  window.fetches = [];
  window.fetch = async () => (window.fetches.push(performance.now()), window.file === null)
    ? { ok: false, json: async () => ({}) }
    : { ok: true, json: async () => ({ ...window.file }) };
  const url = URL.createObjectURL(new Blob([js], { type: "text/javascript" }));
  const component = (await import(url)).default;
  const host = document.createElement("div");
  document.body.appendChild(host);
  component({ parentElement: host, data, setTriggerValue: (name, value) => window.events.push([name, value]) });
  window.rerun = (version) => component({  // the app's next run: the page drew ``version``
    parentElement: host, data: { ...data, version }, setTriggerValue: (n, v) => window.events.push([n, v]) });
}
"""


SIGNAL_DATA = {"url": "/app/static/class/x.json", "version": 1, "every_ms": 50}  # a page drawn at version 1


def signal_page(context):
    """A blank page at the app's origin (every request answered by the test), where the script runs."""
    page = context.new_page()
    page.route(f"{ORIGIN}/**", lambda route: route.fulfill(content_type="text/html", body="<!doctype html><body>"))
    page.goto(f"{ORIGIN}/playground")
    return page


def events(page, name: str) -> int:
    return page.evaluate(f"window.events.filter(e => e[0] === {name!r}).length")


def test_the_signal_follows_the_file_falls_back_when_it_stops_beating_and_keeps_the_seat(browser):
    context = browser.new_context()
    page = signal_page(context)
    data = {
        **SIGNAL_DATA,
        "reclaim": "ABCDEF",
        "seat": {"name": SEAT_COOKIE, "token": "seat-token-0123456789", "max_age": 600},
        "fallback": False,
        "stale_ms": 500,
        "fallback_ms": 200,
    }
    page.evaluate(HARNESS, {"js": SIGNAL_JS, "data": data})
    page.evaluate("window.beating(true)")  # the file beats every 0.1 s, as the watcher's every 2 s
    assert f"{SEAT_COOKIE}=seat-token-0123456789" in page.evaluate("document.cookie")
    page.wait_for_timeout(1000)
    assert page.evaluate("window.events") == [], "a beating file with an unchanged version asks for nothing"
    page.evaluate("window.file.version = 2")
    page.wait_for_function("window.events.some(e => e[0] === 'moved' && e[1] === 2)", timeout=10_000)
    page.evaluate("window.beating(false)")  # the server stops writing the file
    page.wait_for_function("window.events.filter(e => e[0] === 'stale').length >= 2", timeout=10_000)
    page.evaluate("window.beating(true)")  # it writes again: the page stops asking
    page.wait_for_timeout(300)
    settled = events(page, "stale")
    page.wait_for_timeout(1000)
    assert events(page, "stale") == settled, "a file beating again ends the fallback"
    page.evaluate("window.beating(false); window.file = null")  # no file at all (a 404): the fallback too
    page.wait_for_function(f"window.events.filter(e => e[0] === 'stale').length > {settled}", timeout=10_000)
    assert page.evaluate("window.events.filter(e => e[0] === 'moved').length") == 1
    context.close()


# the median time between the polls in the last ``ms`` of the page's clock (null with fewer than 3 polls): the period
# the page polls at, whatever a busy machine does to single timers
_PERIOD_IN = """(ms) => {
  const at = window.fetches.filter((t) => t > performance.now() - ms);
  const gaps = at.slice(1).map((t, i) => t - at[i]).sort((a, b) => a - b);
  return gaps.length >= 2 ? gaps[Math.floor(gaps.length / 2)] : null;
}"""


def test_the_signal_polls_less_once_the_class_is_quiet_and_fast_again_once_it_moves(browser):
    context = browser.new_context()
    page = signal_page(context)
    data = {
        **SIGNAL_DATA,
        "idle_ms": 250,
        "idle_after_ms": 1000,
        "fallback": False,
        "stale_ms": 60_000,
        "fallback_ms": 60_000,
    }
    page.evaluate(HARNESS, {"js": SIGNAL_JS, "data": data})
    page.wait_for_timeout(800)
    busy = page.evaluate(_PERIOD_IN, 700)
    page.wait_for_timeout(1700)  # nothing moved for more than idle_after_ms
    quiet = page.evaluate(_PERIOD_IN, 1200)
    page.evaluate("window.file.version = 2")
    page.wait_for_function("window.events.some(e => e[0] === 'moved')", timeout=5000)
    page.evaluate("window.rerun(2)")  # the run that took the move
    page.wait_for_timeout(800)
    again = page.evaluate(_PERIOD_IN, 600)
    print(f"\npolls every {busy} ms while moving, {quiet} ms when quiet, {again} ms after a move (medians)")
    assert busy is not None and busy < 150, "every 50 ms while the class moves"  # a late timer stretches a few
    assert quiet is not None and 200 <= quiet < 600, "every 250 ms once quiet"
    assert again is not None and again < 150, "a move brings the fast polls back"
    context.close()
