"""A whole live class in Chromium on deploy/'s topology: two app processes behind nginx (sticky by cookie), one
SQLite store. A lecturer tab starts a class; three student tabs (each a browser context of its own, on both
processes) open the student link; the lecturer edits a table cell and switches pages and every student follows;
one student breaks away, edits, rejoins; the lecturer asks "which key?", the students answer, the lecturer sees
the spread and reveals; every tab shows the answer (issue 43, "Done when"; docs/classroom.md)."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import OUTPUT, REPO_ROOT
from playwright.sync_api import BrowserContext, Page
from streamlit_browser import (
    SIDEBAR_ROOT,
    assert_clean,
    edit_last_column_cell,
    figures,
    heatmaps,
    new_context,
    open_page,
    screenshot,
    wait_idle,
    wait_until,
    wire_of,
)

from attention_rooms import open_store
from attention_rooms.codes import signal_name
from deploy import devserver, run_local

pytestmark = pytest.mark.e2e

EDITOR = '[data-testid="stDataFrame"]'
SIGNAL = "attention_lab_class_signal"  # the class signal's component (classroom.signal)
GOAL_S = 2.0  # issue 43: a lecturer's edit is on every follower's page within 2 s
# What the test asserts. The chain is: the watcher of each process reads the store every 0.2 s and rewrites the
# room's static file, a student's page fetches it every poll, then one rerun (about 1 s of a busy core) draws the
# view; a page switch is two runs (the view, then the page); the followers of one process run one at a time. The
# margin: the test's looks at four tabs in turn (a figure is late by up to 0.4 s), and two processes, four tabs and
# a second CI worker on 2 cores (measured with the machine at a load of 8 to 17: 2.3-4.2 s for an edit or a switch).
# A poll period of 6 s (students following in 8-19 s) fails both this and POLL_BOUND_MS.
MARGIN_S = 4.0
BOUND_S = GOAL_S + MARGIN_S
# The students' poll period, on their pages' own clock: at most a quarter of the goal, leaving the rest of it for the
# watcher's tick and the rerun (the app polls every 250 ms).
POLL_BOUND_MS = GOAL_S * 1000 / 4
FIRST_LOAD_WAIT_S = 40.0  # how long a page's first load in four tabs is waited for (15 s measured in CI)
NOT_FOLLOWED_POLLS = 3  # after every other student followed: this many more polls of a broken-away student's page
ASK_PANEL = '[data-testid="stSidebar"] .st-key-sidebar_class'
LECTURER_ONLY = ("Ask", "Bring everyone back", "End the class", "Reveal the answer", "Show answers", "Vote again")


@pytest.fixture(scope="module")
def nginx_class(tmp_path_factory) -> Iterator[tuple[run_local.Topology, Path]]:
    """deploy/run_local.py's topology (2 replicas, nginx in front; its run folder holds the access log), every
    process on one fresh class store (SQLite in a temporary folder); yields it and the store's folder."""
    data = tmp_path_factory.mktemp("class-data")
    OUTPUT.mkdir(exist_ok=True)
    with pytest.MonkeyPatch.context() as mp:  # the replicas inherit this process's environment
        mp.setenv("LAB_DATA_DIR", str(data))
        try:
            with run_local.topology(2, devserver.free_port(), REPO_ROOT) as top:
                mp.delenv("LAB_DATA_DIR")
                yield top, data
        except devserver.ServerError as err:
            pytest.fail(str(err), pytrace=False)


# -- reading the page ---------------------------------------------------------------------------------------------


def grids(page: Page) -> list[tuple[str, list]]:
    """Every heatmap on the page: its chart's key and its numbers."""
    return [(h["key"], h["z"]) for h in heatmaps(page)]


def figure_keys(page: Page) -> list:
    return [(f["key"], [t["type"] for t in f["traces"]]) for f in figures(page)]


def playground(page: Page) -> list | None:
    return next((z for key, z in grids(page) if key == "playground_heatmap"), None)


_SPREAD_JS = """() => {
  const gd = document.querySelector('.st-key-class_spread .js-plotly-plot');
  if (!gd || !gd.data) return null;
  // charts.chart shows a figure's title as bold page text above the chart: "N answers" (· R right (P%))
  const titles = Array.from(document.querySelectorAll('.st-key-class_question strong'), (b) => b.textContent.trim())
    .filter((t) => /^(No answers yet|\\d+ answers?( · .*)?)$/.test(t));
  // plotly's decoded values (the figure sends typed arrays): the right answers' bars under the others', stacked
  const [right, other] = [0, 1].map((i) => (gd._fullData || [])[i]?.y);
  const y = right && other ? Array.from(right, (r, i) => Number(r) + Number(other[i])) : null;
  const rightY = right ? Array.from(right, Number) : null;
  return {title: titles.length === 1 ? titles[0] : null, y, right: rightY};
}"""


def spread(page: Page) -> dict | None:
    """The spread of answers drawn in the question banner: its title and its bars' counts."""
    return page.evaluate(_SPREAD_JS)


_POLLS_JS = """([file, since]) => performance.getEntriesByType('resource')
  .filter((e) => e.name.includes(`/class/${file}.json`) && e.startTime >= since).map((e) => e.startTime)"""


def poll_starts(page: Page, file: str, since_ms: float = 0.0) -> list[float]:
    """When the page fetched its room's signal file ``file`` (codes.signal_name: ms on the page's own clock,
    ``performance.now()``), since ``since_ms``: the signal's polls, as the browser's resource timing records them."""
    return page.evaluate(_POLLS_JS, [file, since_ms])


def page_now(page: Page) -> float:
    return page.evaluate("() => performance.now()")


def assert_polls_within_bound(tabs: list[Page], file: str) -> list[float]:
    """Over the goal's length on each page's own clock, the page polls its room's file every POLL_BOUND_MS at most
    (the median of the intervals); those medians."""
    starts = []
    for tab in tabs:
        tab.evaluate("() => { performance.clearResourceTimings(); performance.setResourceTimingBufferSize(10000); }")
        starts.append(page_now(tab))
    medians = []
    for tab, start in zip(tabs, starts, strict=True):
        wait_until(tab, lambda t=tab, s=start: page_now(t) - s >= GOAL_S * 1000, "the goal's length on the page")
        polls = poll_starts(tab, file, start)
        periods = sorted(b - a for a, b in zip(polls, polls[1:], strict=False))
        assert len(polls) >= 3, f"{len(polls)} polls in {GOAL_S} s on the page's clock (goal {GOAL_S} s)"
        medians.append(periods[len(periods) // 2])
        assert medians[-1] <= POLL_BOUND_MS, f"the page polls every {medians[-1]:.0f} ms, over {POLL_BOUND_MS:.0f} ms"
    return medians


def question_text(page: Page) -> str:
    box = page.locator(".st-key-class_question")
    return box.inner_text() if box.count() else ""


def sidebar_text(page: Page) -> str:
    return page.locator('[data-testid="stSidebar"]').inner_text()


# -- the sticky replica of a context --------------------------------------------------------------------------------


def access_lines(top: run_local.Topology) -> list[tuple[str, str, str]]:
    """nginx's access log (deploy/nginx.conf's ``sticky`` format): (request, upstream, sticky key) per line."""
    out = []
    for line in (top.run / "access.log").read_text().splitlines():
        found = re.search(r'"([^"]*)" .* up=(\S+) key=(\S+)$', line)
        if found:
            out.append(found.groups())
    return out


def upstream_of(top: run_local.Topology, key: str) -> str:
    """The one replica that served the requests carrying the sticky key ``key``."""
    ups = wait_until_value(lambda: {up for _, up, k in access_lines(top) if k == key and up != "-"}, "a logged request")
    assert len(ups) == 1, f"one browser's requests reached {ups}: nginx is not sticky"
    return ups.pop()


def wait_until_value(probe, what: str, within: float = 10):
    deadline = time.monotonic() + within
    while not (value := probe()):
        assert time.monotonic() < deadline, f"timed out after {within}s waiting for {what}"
        time.sleep(0.1)
    return value


def sticky_key(context: BrowserContext) -> str:
    return next(c["value"] for c in context.cookies() if c["name"] == "lab_replica")


def student_contexts(browser, top: run_local.Topology, n: int = 3, tries: int = 20) -> list[tuple[BrowserContext, str]]:
    """``n`` browser contexts, each a browser of its own with nginx's sticky cookie, at least one on each replica:
    each asks /_stcore/health twice (nginx hands out the cookie, then the access log names the replica of the request
    carrying it), and a context that would leave a replica without a student is closed and another is opened."""
    chosen: list[tuple[BrowserContext, str]] = []
    for _ in range(tries):
        context = new_context(browser, top.url)
        assert context.request.get("/_stcore/health").ok and context.request.get("/_stcore/health").ok
        up = upstream_of(top, sticky_key(context))
        missing = len(top.replicas) - len({u for _, u in chosen} | {up})
        if n - len(chosen) - 1 >= missing:
            chosen.append((context, up))
            if len(chosen) == n:
                return chosen
        else:
            context.close()
    for context, _ in chosen:
        context.close()
    raise AssertionError(f"{tries} browsers, and nginx did not spread {n} of them over both replicas")


# -- following, timed -----------------------------------------------------------------------------------------------


def timed_follow(
    rooms, code: str, act, lecturer: Page, students: list[Page], view, wait_s: float = BOUND_S + 4
) -> list[float]:
    """Do ``act()`` (a lecturer's action); then, for each student tab, the seconds from the store taking the new
    view (the room's ``view_version`` moved: the commit) until its page shows what ``view`` reads on the lecturer's
    page once that stops changing. Every tab is looked at in turn, each look noted with its time, so a figure is
    late by at most one round of looks (about 0.1-0.4 s here)."""
    before = rooms.room(code).view_version
    act()
    committed = wait_until_value(
        lambda: rooms.room(code).view_version != before and time.monotonic(), "the lecturer's view in the store"
    )
    seen: list[list[tuple[float, object]]] = [[] for _ in students]
    target, steady, deadline = None, 0, committed + wait_s
    while time.monotonic() < deadline:
        now = view(lecturer)
        steady, target = (steady + 1, now) if now and now == target else (0, now)
        for tab, looks in zip(students, seen, strict=True):
            looks.append((time.monotonic(), view(tab)))
        if steady >= 2 and all(looks[-1][1] == target for looks in seen):
            break
        time.sleep(0.05)
    shown = [next((t - committed for t, v in looks if v == target), None) for looks in seen]
    late = [i for i, s in enumerate(shown) if s is None]
    assert target, f"the lecturer's page never showed the view; on it: {lecturer.url}, {figure_keys(lecturer)}"
    assert not late, f"students {late} did not follow within {wait_s:.0f} s (goal {GOAL_S} s)"
    return shown


def assert_within_bound(what: str, seconds: list[float], ups: list[str]) -> None:
    figures = ", ".join(f"{s:.2f} s ({u})" for s, u in zip(seconds, ups, strict=True))
    print(f"\n{what}: commit -> student page {figures}; goal {GOAL_S} s, asserted {BOUND_S} s (margin {MARGIN_S} s)")
    assert max(seconds) <= BOUND_S, f"{what}: {figures}, over {BOUND_S} s (the goal {GOAL_S} s + {MARGIN_S} s)"


# -- the class --------------------------------------------------------------------------------------------------------


def on_steps(page: Page) -> list | None:
    """The page's heatmaps when it is Step by step (its grid first), else None."""
    g = grids(page)
    return g if g and g[0][0] == "step_by_step_grid" else None


def start_class(lecturer: Page) -> tuple[str, str, str]:
    """Start a class from the sidebar; (code, student link path, lecturer key) as the sidebar shows them."""
    lecturer.get_by_text("Live class").first.click()
    lecturer.get_by_role("button", name="Start a class").click()
    code = wait_until(
        lecturer, lambda: lecturer.locator(".st-key-sidebar_class_code").all_inner_texts(), "the class code"
    )[0].strip()
    blocks = lecturer.locator('[data-testid="stSidebar"] pre')
    link = wait_until(lecturer, lambda: [t for t in blocks.all_inner_texts() if "class=" in t], "the link")[0].strip()
    lecturer.get_by_text("Your lecturer key").click()
    key_block = lecturer.locator('[data-testid="stSidebar"] [data-testid="stExpander"]').filter(
        has_text="Your lecturer key"
    )
    key = wait_until(lecturer, lambda: [t for t in key_block.locator("pre").all_inner_texts() if t.strip()], "the key")
    lecturer.get_by_text("Your lecturer key").click()  # closed again: the key stays off the projector
    wait_idle(lecturer)
    return code, "/" + link.split("/", 3)[3], key[0].strip()


def pick_option(page: Page, key: str, index: int | None = None, text: str | None = None) -> str:
    """Open the select box with Streamlit key ``key`` and click its ``index``-th option (or the one reading
    ``text``), as a person does; the option's label."""
    page.locator(f".st-key-{key} input").click()
    options = page.get_by_role("option")
    option = options.nth(index) if text is None else options.filter(has_text=text).first
    label = option.inner_text().strip()
    option.click()
    wait_idle(page)
    return label


def pick_answer(tab: Page, qid: int, index: int) -> str:
    """Pick the ``index``-th option of question ``qid`` and send it, as a student does; the option's label."""
    label = pick_option(tab, f"class_answer_{qid}", index)
    tab.locator(".st-key-class_question").get_by_role("button", name="Answer", exact=True).click()
    wait_idle(tab)
    return label


def test_a_class_on_two_processes_behind_nginx_follows_asks_and_reveals(browser, nginx_class):
    top, data = nginx_class
    rooms = open_store({"LAB_DATA_DIR": str(data)})  # the store the app processes share, read as they do
    lecturer_context = new_context(browser, top.url)
    students_on = student_contexts(browser, top)
    contexts = [lecturer_context] + [c for c, _ in students_on]
    ups = [u for _, u in students_on]
    try:
        lecturer = lecturer_context.new_page()
        students = [c.new_page() for c, _ in students_on]
        wires = [wire_of(tab) for tab in students]
        open_page(lecturer, "/playground?scenario=emma-friend")
        before = wait_until(lecturer, lambda: playground(lecturer), "the lecturer's heatmap")
        code, link, key = start_class(lecturer)
        assert link.endswith(f"?class={code.replace('-', '')}"), (code, link)
        code = code.replace("-", "")
        assert key not in lecturer.url, "the projector's address bar never shows the lecturer key"

        # -- three students join, on both processes; none can take the lecturer's part
        for tab in students:
            open_page(tab, link)
            wait_until(tab, lambda t=tab: playground(t) == before, "the student's tab on the lecturer's playground")
            wait_until(tab, lambda t=tab: "Following the lecturer" in sidebar_text(t), "Following the lecturer")
            assert f"?class={code}" in tab.url and key not in tab.url, tab.url
            assert key not in tab.inner_text("body"), "a student's page never shows the lecturer key"
            for name in LECTURER_ONLY:
                assert tab.get_by_role("button", name=name, exact=True).count() == 0, f"a student has {name!r}"
            assert_clean(tab)
        print(f"\nstudents' replicas (nginx's sticky upstreams): {ups}")
        assert len(set(ups)) == 2, f"the students are all on {set(ups)}"
        signal = signal_name(rooms.signal_secret(), code)  # the room's file, as the pages fetch it
        periods = assert_polls_within_bound(students, signal)
        print(f"students' poll periods (median, page clock): {[f'{p:.0f} ms' for p in periods]}")

        # -- the lecturer edits a cell: every student follows
        grid = lecturer.locator(EDITOR).first
        edit = lambda text: lambda: edit_last_column_cell(lecturer, grid, 0, text)  # noqa: E731
        new = lambda old: lambda p: (z := playground(p)) != old and z  # noqa: E731
        assert all(SIDEBAR_ROOT in w["roots"] for w in wires), "a student's join drew no sidebar"
        got, asked, sent = ([len(w[part]) for w in wires] for part in ("roots", "asked", "components"))
        seconds = timed_follow(rooms, code, edit("4.25"), lecturer, students, new(before))  # Q[Emma, Adj]: was 0
        assert_within_bound("cell edit", seconds, ups)
        for w, n, k, c in zip(wires, got, asked, sent, strict=True):  # the signal reran the page's fragment alone
            assert w["asked"][k:], "a student's signal asked for no rerun after the edit"
            assert "" not in w["asked"][k:], f"a student's signal asked for a whole rerun: {w['asked'][k:]}"
            assert SIDEBAR_ROOT not in w["roots"][n:], "a student's page was sent the sidebar again for an edit"
            assert "attention_lab.figure" in w["components"][c:], "the edit's heatmap was sent (the wire is read)"
            assert SIGNAL not in w["components"][c:], "the signal was sent whole again, not as the one the page holds"
        edited = playground(lecturer)

        # -- the lecturer switches pages: every student is on Step by step with the same numbers. A tab's first visit
        # of a page also loads that page's code (Step by step: plotly's chart, KaTeX and its fonts; 5.5-11 s for four
        # tabs at once here, 15 s in CI): a page load, not a follow, waited for and printed, not held to the goal;
        # the switches after it are follows, each held to the goal plus the margin
        nav = lecturer.locator('[data-testid="stSidebarNav"] a')
        go = lambda title: nav.filter(has_text=title).first.click  # noqa: E731
        seconds = timed_follow(rooms, code, go("Step by step"), lecturer, students, on_steps, FIRST_LOAD_WAIT_S)
        print(f"\npage switch, the page's first load in each tab (not judged): {[f'{s:.2f} s' for s in seconds]}")
        back = lambda p: playground(p) == edited  # noqa: E731
        for title, view in (("Playground", back), ("Step by step", on_steps)):
            seconds = timed_follow(rooms, code, go(title), lecturer, students, view)
            assert_within_bound(f"page switch to {title}", seconds, ups)
        for tab in students:
            assert "/step_by_step?" in tab.url and f"class={code}" in tab.url and key not in tab.url, tab.url
            assert_clean(tab)

        # -- back on the Playground; one student breaks away by editing, the lecturer's next edit passes them by
        seconds = timed_follow(rooms, code, go("Playground"), lecturer, students, back)
        assert_within_bound("page switch back", seconds, ups)
        rebel, followers = students[0], students[1:]
        edit_last_column_cell(rebel, rebel.locator(EDITOR).first, row=1, text="3.5")
        own = wait_until(rebel, lambda: (z := playground(rebel)) != edited and z, "the student's own heatmap")
        banner = rebel.locator(".st-key-class_banner")
        wait_until(rebel, lambda: banner.count() and "Rejoin" in banner.inner_text(), "the break-away notice")
        assert "left the lecturer" in banner.inner_text(), banner.inner_text()
        assert "On your own copy" in sidebar_text(rebel)
        seconds = timed_follow(rooms, code, edit("1.5"), lecturer, followers, new(edited))
        assert_within_bound("edit after a break-away", seconds, ups[1:])
        second = playground(lecturer)
        since = page_now(rebel)  # the rebel's page polls on: NOT_FOLLOWED_POLLS of them see the lecturer's move
        wait_until(rebel, lambda: len(poll_starts(rebel, signal, since)) > NOT_FOLLOWED_POLLS, "the rebel's polls")
        assert playground(rebel) == own != second, "a student on their own copy keeps it"
        banner.get_by_role("button", name="Rejoin").click()
        wait_until(rebel, lambda: playground(rebel) == second, "the lecturer's view after Rejoin", BOUND_S)
        wait_until(rebel, lambda: "Following the lecturer" in sidebar_text(rebel), "following again")
        assert banner.count() == 0 or "Rejoin" not in banner.inner_text()

        # -- projector mode on the lecturer's screen; a student screen stays as it is
        lecturer.locator(".st-key-sidebar_projector").get_by_text("Projector mode").click()
        wait_idle(lecturer)

        # -- the lecturer asks "which key?"; every student sees it and answers
        kind = lecturer.locator(".st-key-sidebar_class_ask_kind")
        assert "Which key does a query attend to most?" in kind.inner_text() + kind.locator("input").input_value()
        box = lecturer.locator(".st-key-sidebar_class_ask_query input")
        box.click()
        box.fill("0: Emma")  # the list is filtered as a person types; Enter takes the one left
        box.press("Enter")
        wait_idle(lecturer)
        lecturer.locator(ASK_PANEL).get_by_role("button", name="Ask", exact=True).click()
        wait_until(lecturer, lambda: "Question 1:" in question_text(lecturer), "the lecturer's question banner")
        prompt = "Which key does query “Emma” (position 0) attend to most?"
        assert prompt in question_text(lecturer), question_text(lecturer)
        row = playground(lecturer)[0]  # the weights of query 0 as the lecturer's heatmap draws them
        right = max(range(len(row)), key=row.__getitem__)
        wrong = 0 if right else 1
        for tab in students:
            wait_until(tab, lambda t=tab: prompt in question_text(t), "the question on a student's tab", BOUND_S)
        picks = [right, right, wrong]
        labels = [pick_answer(tab, 1, pick) for tab, pick in zip(students, picks, strict=True)]
        for tab, label in zip(students, labels, strict=True):
            wait_until(tab, lambda t=tab, lab=label: f"Answered: {lab}" in question_text(t), "the student's answer")
        count = lecturer.locator(".st-key-class_count")
        wait_until(lecturer, lambda: count.count() and "3 answers" in count.inner_text(), "3 answers counted")
        assert spread(lecturer) is None, "the spread stays hidden on the projector until Show answers"
        expected = [0] * len(row)
        for pick in picks:
            expected[pick] += 1
        screenshot(lecturer, "class_nginx_lecturer_question")
        screenshot(students[1], "class_nginx_student_question")
        lecturer.locator(".st-key-class_question").get_by_role("button", name="Show answers").click()
        for tab in [lecturer, *students]:
            shown = wait_until(tab, lambda t=tab: (s := spread(t)) and s["title"] == "3 answers" and s, "the spread")
            assert shown["y"] == expected and not any(shown["right"]), shown  # nothing says which is right yet
        assert "Answer:" not in " ".join(question_text(t) for t in students), "no student sees the answer yet"

        # -- reveal: every tab shows the answer and the spread with the share right
        lecturer.locator(".st-key-class_question").get_by_role("button", name="Reveal the answer").click()
        answer = f"Answer: {labels[0]}"
        title = "3 answers · 2 right (67%)"
        for tab in [lecturer, *students]:
            wait_until(tab, lambda t=tab: answer in question_text(t), "the answer on every tab", BOUND_S)
            shown = wait_until(tab, lambda t=tab: (s := spread(t)) and s["title"] == title and s, title)
            assert shown["y"] == expected, shown
            assert_clean(tab)
        assert ", right." in question_text(students[0]) and ", not right." in question_text(students[2])
        screenshot(lecturer, "class_nginx_lecturer_revealed")
        screenshot(students[1], "class_nginx_student_revealed")

        # -- a reload: the lecturer's tab leads the class again by itself (the key its tab kept); a student's does not
        lecturer.reload()
        wait_until(
            lecturer, lambda: "Bring everyone back" in sidebar_text(lecturer), "the lecturer's controls after a reload"
        )
        assert f"class={code}" in lecturer.url and key not in lecturer.url
        assert_clean(lecturer)
        students[1].reload()
        wait_until(
            students[1], lambda: "Following the lecturer" in sidebar_text(students[1]), "a reloaded student follows"
        )
        assert "Bring everyone back" not in sidebar_text(students[1]), "a student's reload gives no lecturer controls"
        keys = [sticky_key(c) for c, _ in students_on]
    finally:
        for c in contexts:
            c.close()

    # -- after the tabs closed, nginx logged each websocket: it went where the students' pages went
    streams = wait_until_value(
        lambda: (
            (s := [(up, k) for r, up, k in access_lines(top) if "/_stcore/stream" in r and k in keys])
            and {k for _, k in s} == set(keys)  # each student's (a reloaded tab's two websockets are both logged)
            and s
        ),
        "the students' websockets in nginx's log",
    )
    for k, up in zip(keys, ups, strict=True):
        assert {u for u, kk in streams if kk == k} == {up}, f"a student's websocket left its replica {up}"
