"""A live class in a real browser: a lecturer tab starts a class, two student tabs open its link, the lecturer edits a
table cell, and both student tabs show the new numbers within seconds, moved by the class signal (a static file the
page polls; docs/classroom.md), with no click in the student tabs."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from conftest import OUTPUT, REPO_ROOT
from streamlit_browser import assert_clean, chart, edit_last_column_cell, new_context, open_page, wait_until

from deploy import devserver

pytestmark = pytest.mark.e2e

HEATMAP = "playground_heatmap"
EDITOR = '[data-testid="stDataFrame"]'
FOLLOW_WITHIN_S = 10  # the signal: the watcher looks every 0.5 s, a page polls every 1 s, then one rerun


@pytest.fixture(scope="module")
def class_url(tmp_path_factory) -> Iterator[str]:
    """A server of its own with a fresh class store (SQLite in a temporary folder)."""
    data = tmp_path_factory.mktemp("class-data")
    OUTPUT.mkdir(exist_ok=True)
    try:
        server = devserver.start(REPO_ROOT, env={"LAB_DATA_DIR": str(data)}, log=OUTPUT / "streamlit-e2e-class.log")
    except devserver.ServerError as err:
        pytest.fail(str(err), pytrace=False)
    try:
        yield server.url
    finally:
        devserver.stop_server(server)


def weights(page) -> list[list[float]] | None:
    fig = chart(page, HEATMAP)
    return fig["z"] if fig else None


def test_students_follow_a_lecturers_cell_edit_within_seconds(browser, class_url):
    contexts = [new_context(browser, class_url) for _ in range(3)]
    try:
        lecturer, *students = [c.new_page() for c in contexts]
        open_page(lecturer, "/playground?scenario=emma-friend")
        before = wait_until(lecturer, lambda: weights(lecturer), "the lecturer's heatmap")
        lecturer.get_by_text("Live class").first.click()
        lecturer.get_by_role("button", name="Start a class").click()
        code = wait_until(
            lecturer, lambda: lecturer.locator(".st-key-sidebar_class_code").all_inner_texts(), "the class code"
        )[0].strip()
        codes = lecturer.locator('[data-testid="stSidebar"] pre')
        link = wait_until(lecturer, lambda: [t for t in codes.all_inner_texts() if "class=" in t], "the link")[
            0
        ].strip()
        assert link.endswith(f"?class={code.replace('-', '')}"), (code, link)
        assert "class=" in lecturer.url and "key" not in lecturer.url.lower()
        for tab in students:
            open_page(tab, "/" + link.split("/", 3)[3])  # the link, on this test's server
            wait_until(tab, lambda t=tab: weights(t) == before, "the student's tab on the lecturer's playground")
            wait_until(tab, lambda t=tab: t.get_by_text("Following the lecturer").count(), "Following the lecturer")
            assert_clean(tab)
        editor = lecturer.locator(EDITOR).first
        opened, held = edit_last_column_cell(lecturer, editor, row=0, text="4.25")  # Q[Emma, Adj], 0 in seed 003
        assert (opened, held) == ("0", "4.25")
        after = wait_until(lecturer, lambda: (z := weights(lecturer)) != before and z, "the lecturer's new heatmap")
        for tab in students:
            shown = wait_until(tab, lambda t=tab: weights(t) == after, "the edit on a student's tab", FOLLOW_WITHIN_S)
            assert shown and tab.get_by_text("Following the lecturer").count()
            assert_clean(tab)
    finally:
        for c in contexts:
            c.close()
