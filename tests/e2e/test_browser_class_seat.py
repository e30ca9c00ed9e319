"""One seat per student on a real server: a raw websocket student (the load test's tab) leaves and rejoins REJOINS
times, answering through the answer form each time (tests/benchmarks/test_class_seats.py does it 100 times); then a
student in Chromium answers, reloads the page (the seat's cookie comes back with it) and still reads their own
answer. Two seats, two answers (issue 56, "Done when")."""

from __future__ import annotations

import asyncio
import random
from concurrent.futures import ThreadPoolExecutor

import pytest
from streamlit_browser import new_context, open_page, wait_idle, wait_until

from attention_rooms import choice_question, open_store
from benchmarks import class_load as cl
from benchmarks import load_test as lt
from deploy import devserver
from tests.benchmarks.test_class_seats import answer

pytestmark = pytest.mark.e2e
OPTIONS = ["mat", "dog", "hat"]
REJOINS = 10


async def raw_student(url: str, code: str) -> str:
    """The websocket student: REJOINS times answer, Leave, open the link again; its seat."""
    tab = lt.Student(url, "playground", 60, query=f"class={code}")
    await tab.open()
    await tab.load()
    seat = cl.signal_data(tab)["seat"]["token"]
    rng = random.Random(0)
    for _ in range(REJOINS):
        await answer(tab, rng)
        await tab.send([cl.press(tab.widgets["sidebar_class_leave"])])
        tab.widgets.clear()
        tab.query = f"class={code}"
        await tab.load()
    await tab.close()
    return seat


def own_answer(page) -> str:
    box = page.locator(".st-key-class_question")
    return box.inner_text() if box.count() else ""


def test_a_student_rejoining_and_a_browser_student_who_reloads_count_once_each(browser, tmp_path):
    server = devserver.start(env={"LAB_DATA_DIR": str(tmp_path)})
    store = open_store({"LAB_DATA_DIR": str(tmp_path)})
    context = None
    try:
        room, key = store.create_room("Seats")
        store.ask(room.code, key, choice_question("Which token comes next?", OPTIONS, 0))
        with ThreadPoolExecutor(1) as thread:  # Playwright's sync API holds this thread's event loop
            raw_seat = thread.submit(asyncio.run, raw_student(server.url, room.code)).result()
        assert store.tally(room.code, 1, key).n_answers == 1, f"{REJOINS} rejoins of one seat are one answer"

        context = new_context(browser, server.url)
        page = context.new_page()
        open_page(page, f"/playground?class={room.code}")
        box = page.locator(".st-key-class_question")
        box.get_by_text("dog", exact=True).click()
        box.get_by_role("button", name="Answer", exact=True).click()
        wait_idle(page)
        wait_until(page, lambda: "Answered: dog" in own_answer(page), "the browser student's answer")
        cookie = {c["name"]: c["value"] for c in context.cookies()}.get("lab_seat")
        assert cookie and cookie != raw_seat, "the browser keeps its own seat in a cookie"
        page.reload()
        wait_idle(page)
        wait_until(page, lambda: "Answered: dog" in own_answer(page), "the same seat's answer after a reload")
        tally = store.tally(room.code, 1, key)
        assert (tally.n_answers, store.room(room.code).n_seats) == (2, 2), "two students: two seats, two answers"
        assert tally.counts[OPTIONS.index("dog")] >= 1
    finally:
        if context is not None:
            context.close()
        store.disconnect()
        devserver.stop_server(server)


def sidebar_text(page) -> str:
    return page.locator('[data-testid="stSidebar"]').inner_text()


def test_a_lecturer_who_locked_the_class_still_leads_it_after_a_reload(browser, tmp_path):
    """The lecturer's browser holds a seat from the start, so a reload of the lecturer's tab (which joins its class
    as a student, then takes it back with the key its tab kept) gets past the lock; a new student does not."""
    server = devserver.start(env={"LAB_DATA_DIR": str(tmp_path)})
    store = open_store({"LAB_DATA_DIR": str(tmp_path)})
    context = newcomer = None
    try:
        context = new_context(browser, server.url)
        lecturer = context.new_page()
        open_page(lecturer, "/playground")
        lecturer.get_by_text("Live class").first.click()
        lecturer.get_by_role("button", name="Start a class").click()
        wait_until(lecturer, lambda: "Lock the class" in sidebar_text(lecturer), "the lecturer's lock")
        lecturer.get_by_role("button", name="Lock the class (no new students)").click()
        wait_until(lecturer, lambda: "locked: no new students" in sidebar_text(lecturer), "the class locked")
        code = lecturer.locator(".st-key-sidebar_class_code").inner_text().strip().replace("-", "")
        assert store.room(code).locked
        lecturer.reload()
        wait_until(lecturer, lambda: "Bring everyone back" in sidebar_text(lecturer), "the lecturer's controls")
        assert "locked: no new students" in sidebar_text(lecturer)
        newcomer = new_context(browser, server.url)
        late = newcomer.new_page()
        open_page(late, f"/playground?class={code}")
        wait_until(late, lambda: "locked this class" in late.locator("body").inner_text(), "the lock's refusal")
        assert store.room(code).n_seats == 1
    finally:
        for made in (context, newcomer):
            if made is not None:
                made.close()
        store.disconnect()
        devserver.stop_server(server)
