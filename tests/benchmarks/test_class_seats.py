"""One seat per student, on a real server through Streamlit's own protocol (the load test's websocket tab): a
student who leaves and rejoins 100 times, answering each time through the answer form, is counted once; a reload
that brings the seat's cookie keeps the seat; another student's answer is counted beside it."""

import random

from attention_rooms import open_store
from benchmarks import class_load as cl
from benchmarks import load_test as lt
from deploy import devserver
from tests import event_loop

ROUNDS = 100


def test_a_student_who_leaves_and_rejoins_100_times_answering_each_time_is_counted_once(tmp_path):
    server = devserver.start(env={"LAB_DATA_DIR": str(tmp_path)})
    try:
        args = lt.parse_args(["--class-mode", "--url", server.url, "--sessions", "2"])
        args.class_control, args.url_given = "playground_temperature", True
        code, key, seats, answers = event_loop.run(leaving_and_rejoining(args))
    finally:
        devserver.stop_server(server)
    store = open_store({"LAB_DATA_DIR": str(tmp_path)})
    tally = store.tally(code, 1, key)
    assert answers[0] == store.my_answer(code, 1, seats[0]), "the seat's last answer is the one kept"
    assert tally.n_answers == 2, f"{ROUNDS} rejoins and a reload are one seat; with the other student, 2 answers"
    assert store.room(code).n_seats == 3, "the lecturer's browser, the student who rejoined, the other student"
    store.disconnect()


async def answer(tab: lt.Student, rng: random.Random) -> int:
    """Answer the question the tab shows through its form (the form's fragment, as the frontend sends it); the
    option's index."""
    question = cl.question_on(tab)
    assert question == 1, f"the tab shows question {question}"
    states = cl.answer_states(tab, question, rng)
    options = list(tab.widgets[f"class_answer_{question}"].proto.options)
    await tab.send(states, tab.widgets[f"class_send_{question}"].fragment_id)
    return options.index(states[0].string_value)


async def leaving_and_rejoining(args) -> tuple[str, str, list[str], list[int]]:
    lecturer, code, key = await cl.lecturer_starts(args)
    await lecturer.send([cl.press(lecturer.widgets[cl.ASK_KEY])])  # which key does the query attend to most?
    rng = random.Random(0)
    pupil = cl.Follower(0, args, code)
    tab = await pupil.connect()
    seat = cl.signal_data(tab)["seat"]["token"]
    chosen = 0
    for _ in range(ROUNDS):
        chosen = await answer(tab, rng)
        await tab.send([cl.press(tab.widgets["sidebar_class_leave"])])
        assert "class=" not in tab.query, "Leave takes the class out of the address bar"
        tab.widgets.clear()  # what the page draws after the rejoin
        tab.query = f"class={code}"  # the student link again, in the same tab
        await tab.load()
        assert cl.signal_data(tab)["seat"]["token"] == seat, "the same seat after Rejoin"
    reloaded = lt.Student(args.url, args.page, args.timeout, query=f"class={code}")
    reloaded.cookies = {**tab.cookies, "lab_seat": seat}  # the cookie the signal component wrote
    await reloaded.open()
    await reloaded.load()
    assert cl.signal_data(reloaded)["seat"]["token"] == seat, "a reload keeps the seat"
    chosen = await answer(reloaded, rng)
    other = cl.Follower(1, args, code)
    other_tab = await other.connect()
    other_seat = cl.signal_data(other_tab)["seat"]["token"]
    assert other_seat != seat
    await answer(other_tab, rng)
    for t in (lecturer, tab, reloaded, other_tab):
        await t.close()
    return code, key, [seat, other_seat], [chosen]
