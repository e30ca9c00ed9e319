"""A live class under load: one lecturer and N following students, over Streamlit's websocket protocol.

    python benchmarks/load_test.py --class-mode --processes 2 --sessions 100 --join-window 10 --think 5 \
        --duration 60 --idle 30 --restart

``load_test.py --class-mode`` runs this. It starts the app itself (``--processes 1``: one ``streamlit run app.py``;
more: ``deploy/run_local.py``'s replicas behind nginx), each process with ``LAB_DATA_DIR`` in a fresh temporary
folder (the class store's SQLite file), or uses a running one (``--url``; then there is no restart phase).

The lecturer is a tab on ``/<page>`` that opens the sidebar's *Live class* panel (the expander's ``bool_value``),
presses *Start a class* (the button's ``trigger_value``) and learns the room's code and lecturer key from the deltas
of that run: the student link ``...?class=CODE`` and the key are ``st.code`` blocks of the lecturer's sidebar (so
the store is never read, and a Redis store works the same). It then moves one control (``--class-control``, the
page's temperature slider) every ``--think`` seconds.

Each student opens ``/<page>?class=CODE`` within ``--join-window`` seconds (first run: the app joins the class and
applies the lecturer's view) and then does what the page's signal component does (``classroom.SIGNAL_JS``): every
``every_ms`` of the component's data (``classroom.POLL_MS``), on its own phase, ``GET`` the data's ``url`` (the file);
when the version there is newer than the one the page was drawn with (the component's ``data.version``, read from
its delta) and than any asked for already (:func:`moved`), it sets the component's trigger: a ``rerun_script`` whose
one widget state is the component's trigger aggregator
(``$$STREAMLIT_INTERNAL_KEY_<component id>__events``, ``json_trigger_value=[{"event": "moved", "value": v}]``), as the
frontend's ``setTriggerValue`` sends it. The tab's other widgets are not re-sent: the server keeps their last
values, as for the plain load test's changes. The polls reuse one kept-alive connection per tab, as a browser's
``fetch`` does (``Student.fetch``); the page's own requests open a connection each (``Connection: close``).

Figures:

- **edit -> followers**: per lecturer edit and follower, from the lecturer's send to the end of the follower's first
  run whose control shows the edit's value (an edit a follower never showed, because the next one came first, is
  timed to the run that showed the newer one); p50 / p95 / max over all (edit, follower) pairs; an edit not shown by
  the end of the phase is an error.
- **server CPU per pair**: the servers' CPU seconds (app processes and nginx) over the follow phase divided by its
  (edit, follower) pairs: what one follower's taking one edit costs, polls included; unlike the latencies it hardly
  depends on what else the machine runs. **load generator**: this process's own CPU over the follow phase, in cores
  (it runs on the servers' machine; a real class's browsers do not).
- **answers** (``--answer-window``, after the idle phase): the lecturer presses *Ask* (the panel's first kind: which
  key a query attends to most); each follower polls until its page shows the question's form, then picks an option
  and presses *Answer* at a seeded moment within the window from the Ask; the lecturer's tab reruns its live spread
  fragment on the fragment's own timer (``auto_rerun``, as the frontend does) and reads the count from the spread's
  bar labels: **answers counted** is the last answer's send -> the end of the lecturer's first fragment run that
  counts every answer.
- **idle**: the class changes nothing for ``--idle`` seconds, the students still polling: the server's CPU seconds
  (app processes and nginx) over that wall time, in cores.
- **restart** (``--restart``, own servers only): every app process is killed (SIGKILL) and started again on its port;
  each student's tab, told its websocket closed, reconnects as a fresh tab on the same link (cookies kept) every
  ``RECONNECT_EVERY_S`` until a first run succeeds; timed from the processes healthy again (and from the kill) to
  that first run, which must show the lecturer's last value. The lecturer takes the class back (*Take a class back*,
  code and key) and edits once more; the followers must show it.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import multiprocessing
import os
import random
import re
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from streamlit.proto.WidgetStates_pb2 import WidgetState

from benchmarks import load_test as lt
from deploy import devserver, run_local

SLACK_S = 3.0  # after the last edit, followers keep polling this long to show it
RECONNECT_EVERY_S = 1.0  # a tab whose websocket closed tries again this often
CODE_IN_LINK = re.compile(r"[?&]class=([A-Z0-9]{6})\b")
LECTURER_KEY = re.compile(r"^[A-Za-z0-9_-]{32}$")  # secrets.token_urlsafe(24)
SIGNAL_KEY = "class_signal"
PANEL_KEY = "sidebar_class_panel"  # the folded "Live class" expander (classroom.PANEL)
ASK_KEY = "sidebar_class_ask"  # the lecturer's Ask button (class_questions.ASK)
SPREAD_KEY = "class_spread"  # the lecturer's live spread of answers, once shown (class_questions.SPREAD)
COUNT_KEY = "class_count"  # the lecturer's live count of answers while hidden (class_questions.COUNT)
ANSWER_KEY = re.compile(r"class_answer_(\d+)")  # a question's answer widget; its form's button is class_send_<id>


# ---------------------------------------------------------------- what a class tab sends and reads


def press(widget: lt.Widget) -> WidgetState:
    """A button click: ``trigger_value`` on the button's id."""
    return WidgetState(id=widget.proto.id, trigger_value=True)


def open_expander(widget: lt.Widget) -> WidgetState:
    """A click that opens a keyed expander drawn with ``on_change``: its state, ``bool_value`` True."""
    return WidgetState(id=widget.proto.id, bool_value=True)


async def open_class_panel(tab: lt.Student) -> None:
    """Open the sidebar's folded "Live class" panel, as a lecturer clicks it: its form is drawn only while open (an
    app whose panel has no key, before 2026-11-28, draws the form anyway: nothing to click)."""
    if PANEL_KEY in tab.widgets:
        await tab.send([open_expander(tab.widgets[PANEL_KEY])])


def signal_trigger(component_id: str, version: int) -> WidgetState:
    """The signal component's ``setTriggerValue("moved", version)`` as the frontend sends it: the component's trigger
    aggregator widget, a JSON list of ``{event, value}`` payloads."""
    return WidgetState(
        id=f"$$STREAMLIT_INTERNAL_KEY_{component_id}__events",
        json_trigger_value=json.dumps([{"event": "moved", "value": version}]),
    )


def shown_value(widget: lt.Widget) -> float | str:
    """The value a tab shows for a slider, number input, radio or selectbox (its set value, else its default)."""
    p = widget.proto
    if widget.kind == "slider":
        return p.value[0] if p.value else p.default[0]
    if widget.kind == "number_input":
        return p.value if p.HasField("value") else p.default
    if widget.kind in ("radio", "selectbox"):
        return p.raw_value if p.HasField("raw_value") else p.options[p.default]
    raise ValueError(f"cannot read the value of a {widget.kind} widget")


def same(a: float | str, b: float | str) -> bool:
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    return abs(a - b) <= 1e-9 * max(1.0, abs(a))


def class_from(codes: list[str]) -> tuple[str, str]:
    """The room's code and the lecturer key among the ``st.code`` blocks of the lecturer's run."""
    code = next((m.group(1) for text in codes if (m := CODE_IN_LINK.search(text))), None)
    key = next((text for text in codes if LECTURER_KEY.match(text)), None)
    if code is None or key is None:
        raise lt.ProtocolError("the lecturer's page shows no student link and lecturer key after Start a class")
    return code, key


def signal_data(tab: lt.Student) -> dict:
    """The signal component's data as the page's last run drew it: the file's url, the version the page was drawn
    with, the poll interval (``every_ms``)."""
    widget = tab.widgets.get(SIGNAL_KEY)
    if widget is None:
        raise lt.ProtocolError("the student's page holds no class signal component")
    return json.loads(widget.proto.json)


def signal_version(tab: lt.Student) -> int:
    return int(signal_data(tab)["version"])


def moved(seen: int, drawn: int, asked: int | None) -> bool:
    """SIGNAL_JS's test: the room ended (and that was not asked for yet), or a version newer than the page's and
    than any asked for already (a file written a moment late by another process may hold an older one)."""
    if seen == -1:
        return asked != -1
    return seen > max(drawn, -1 if asked is None else asked)


def spread_count(tab: lt.Student) -> int:
    """The answers the lecturer's live count shows while the round's spread is hidden ("**12 answers**", the first
    text in the container COUNT_KEY), or, once shown, the sum of its spread's bar labels (each bar's count)."""
    widget = tab.widgets.get(SPREAD_KEY)
    if widget is not None and widget.kind == "plotly_chart":
        return sum(int(text) for text in json.loads(widget.proto.spec)["data"][-1]["text"])
    place = tab.blocks.get(COUNT_KEY)
    text = tab.texts.get((*place, 0), "") if place is not None else ""
    if counted := re.fullmatch(r"\*\*(No answers yet|(\d+) answers?)\*\*( in round \d)?", text):
        return int(counted[2] or 0)
    raise lt.ProtocolError(f"the lecturer's page shows no count of answers ({COUNT_KEY}) nor their spread")


def question_on(tab: lt.Student) -> int | None:
    """The id of the newest question whose answer form the tab shows, or None."""
    ids = [int(m.group(1)) for key in tab.widgets if (m := ANSWER_KEY.fullmatch(key))]
    return max(ids, default=None)


def answer_states(tab: lt.Student, question: int, rng: random.Random) -> list[WidgetState]:
    """A student picks an option of the question's select box (or radio) and presses the form's Answer button."""
    widget = tab.widgets[f"class_answer_{question}"]
    if widget.kind not in ("selectbox", "radio"):
        raise lt.ProtocolError(f"the answer widget is a {widget.kind}; the load test answers option questions only")
    return [
        lt.radio_state(widget.proto.id, rng.choice(widget.proto.options)),
        press(tab.widgets[f"class_send_{question}"]),
    ]


# ---------------------------------------------------------------- the figures


@dataclass
class Edit:
    sent: float  # perf_counter at the lecturer's send
    value: float | str
    sent_at: float  # ... and the system clock's time (a browser's clock: _PHONE_JS)
    heatmap: str = ""  # the lecturer's in-place heatmap after the edit (heatmap_shown), "" on a page without one


@dataclass
class ClassStats:
    edits: list[Edit] = field(default_factory=list)
    first_pages: list[float] = field(default_factory=list)
    follow: list[float] = field(default_factory=list)  # edit send -> follower's run showing it
    phone_follow: list[float] = field(default_factory=list)  # edit send -> a phone browser's heatmap showing it
    follow_after_restart: list[float] = field(default_factory=list)
    question_shown: list[float] = field(default_factory=list)  # Ask sent -> a follower's run showing the question
    answer_runs: list[float] = field(default_factory=list)  # a student's answer: send -> finished
    answers_counted: float = float("nan")  # the last answer sent -> the lecturer's screen counts every answer
    signal_runs: list[float] = field(default_factory=list)  # a signal rerun: send -> finished
    polls: int = 0
    reconnect_from_healthy: list[float] = field(default_factory=list)
    reconnect_from_kill: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)

    def error(self, what: str) -> None:
        self.errors[what[:160]] = self.errors.get(what[:160], 0) + 1


class Follower:
    """One student's tab and the edits it has shown."""

    def __init__(self, i: int, args: argparse.Namespace, code: str) -> None:
        self.i, self.args, self.code = i, args, code
        self.query = f"class={code}"
        self.tab: lt.Student | None = None
        self.cookies: dict[str, str] = {}
        self.asked: int | None = None  # the version the component last asked a rerun for (SIGNAL_JS's state.asked)
        self.credited = 0  # edits[:credited] have been shown by this tab

    async def connect(self) -> lt.Student:
        tab = lt.Student(self.args.url, self.args.page, self.args.timeout, query=self.query)
        tab.cookies = dict(self.cookies)  # the browser keeps its cookies (nginx's sticky one) across a reconnect
        self.tab = tab
        await tab.open()
        await tab.load()
        self.cookies, self.query, self.asked = dict(tab.cookies), tab.query, None
        return tab

    def credit(self, stats: ClassStats, into: list[float]) -> None:
        """The tab's control shows an edit's value: that edit and every earlier one not yet shown are on its page."""
        now, shown = time.perf_counter(), shown_value(self.tab.widgets[self.args.class_control])
        for n in range(len(stats.edits) - 1, self.credited - 1, -1):
            if same(stats.edits[n].value, shown) and stats.edits[n].sent <= now:
                into.extend(now - e.sent for e in stats.edits[self.credited : n + 1])
                self.credited = n + 1
                return

    async def poll(self, stats: ClassStats, into: list[float]) -> None:
        """One look at the room's file; a rerun when its version moved, as SIGNAL_JS does."""
        body = await self.tab.fetch(signal_data(self.tab)["url"])  # the file's name is the app's, not the code
        stats.polls += 1
        if body is None:
            return
        seen = json.loads(body)["version"]
        if moved(seen, signal_version(self.tab), self.asked):
            self.asked = seen
            signal = self.tab.widgets[SIGNAL_KEY]  # a rerun of the fragment it is drawn in, as the browser asks
            run = await self.tab.send([signal_trigger(signal.proto.id, seen)], signal.fragment_id)
            stats.signal_runs.append(run.seconds)
            self.credit(stats, into)


# ---------------------------------------------------------------- the servers


@dataclass
class Servers:
    url: str
    processes: list[devserver.Server]  # the app processes
    pids: list[int]  # every server process to count CPU of (app processes and nginx)
    ports: list[int]
    env: dict[str, str]


@contextlib.contextmanager
def servers(args: argparse.Namespace) -> Iterator[Servers]:
    """The app on ``--processes`` processes (one: a plain ``streamlit run``; more: behind nginx), with the class
    store in a fresh temporary folder; everything stopped and removed on the way out."""
    data = Path(tempfile.mkdtemp(prefix="attention-lab-class-"))
    env = {"LAB_DATA_DIR": str(data)}
    try:
        if args.processes == 1:
            server = devserver.start(args.app_dir, env=env)
            try:
                yield Servers(server.url, [server], [server.process.pid], [int(server.url.rsplit(":", 1)[1])], env)
            finally:
                devserver.stop_server(server)
            return
        os.environ.update(env)  # run_local's replicas inherit this process's environment
        with run_local.topology(args.processes, devserver.free_port(), args.app_dir) as top:
            ports = [int(r.url.rsplit(":", 1)[1]) for r in top.replicas]
            yield Servers(top.url, top.replicas, top.pids, ports, env)
    finally:
        shutil.rmtree(data, ignore_errors=True)


def restart(box: Servers, app_dir: Path) -> float:
    """Kill every app process (SIGKILL, as a crash) and start it again on its port; the kill's perf_counter."""
    killed = time.perf_counter()
    for server in box.processes:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(server.process.pid, signal.SIGKILL)
        server.process.wait(10)
    for n, port in enumerate(box.ports):
        old = box.processes[n]
        new = devserver.launch(app_dir, port, box.env, log=None if old.own_log else old.log)
        if old.own_log:
            old.log.unlink(missing_ok=True)
        old.process, old.log, old.own_log = new.process, new.log, new.own_log  # the caller's handle stops the new one
    for server in box.processes:
        server.wait_healthy()
    box.pids[: len(box.processes)] = [s.process.pid for s in box.processes]
    return killed


# ---------------------------------------------------------------- the class


async def lecturer_starts(args: argparse.Namespace) -> tuple[lt.Student, str, str]:
    """A tab opens the page and presses Start a class; the room's code and lecturer key, from its deltas."""
    tab = lt.Student(args.url, args.page, args.timeout)
    await tab.open()
    await tab.load()
    await open_class_panel(tab)
    if "sidebar_class_start" not in tab.widgets:
        raise lt.ProtocolError("no Start a class button (sidebar_class_start) on the lecturer's page")
    await tab.send([press(tab.widgets["sidebar_class_start"])])
    code, key = class_from(tab.codes)
    return tab, code, key


async def lecturer_edits(tab: lt.Student, args: argparse.Namespace, stats: ClassStats, until: float) -> None:
    """Move the class control every think time (±50 %, seeded) until ``until``; each edit's send is recorded."""
    rng = random.Random(f"lecturer-{args.seed}")
    while True:
        await asyncio.sleep(args.think * rng.uniform(0.5, 1.5))
        if time.monotonic() >= until:
            return
        await edit_once(tab, args, stats, rng)


async def edit_once(tab: lt.Student, args: argparse.Namespace, stats: ClassStats, rng: random.Random) -> None:
    widget = tab.widgets[args.class_control]
    state = lt.next_state(widget, rng)
    edit = Edit(time.perf_counter(), shown_value(widget), time.time())
    stats.edits.append(edit)
    await tab.send([state], widget.fragment_id)
    edit.heatmap = heatmap_shown(tab, PHONE_HEATMAP.format(page=args.page))


def heatmap_shown(tab: lt.Student, key: str) -> str:
    """The numbers of the in-place heatmap ``key`` as the tab's last run drew it: its z as plotly's typed array
    sends it (base64 of the float64s), "" when the page has no such heatmap."""
    widget = tab.widgets.get(key)
    if widget is None:
        return ""
    z = json.loads(json.loads(widget.proto.json)["spec"])["data"][0]["z"]
    return z["bdata"] if isinstance(z, dict) else json.dumps(z)


async def follow_until(f: Follower, stats: ClassStats, until: float, into: list[float], stop: asyncio.Event) -> None:
    """Poll every ``every_ms`` of the page's signal data, on the follower's own phase, until ``until`` or ``stop``."""
    rng = random.Random(f"phase-{f.args.seed}-{f.i}")
    every = signal_data(f.tab)["every_ms"] / 1000
    next_poll = time.monotonic() + rng.uniform(0, every)
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), max(0.0, next_poll - time.monotonic()))
        if stop.is_set() or time.monotonic() >= until:
            return
        next_poll += every
        await f.poll(stats, into)


async def student_joins(f: Follower, stats: ClassStats, arrive: float, lecturer_value) -> None:
    await asyncio.sleep(arrive)
    arrived = time.perf_counter()
    await f.connect()
    stats.first_pages.append(time.perf_counter() - arrived)
    f.credited = len(stats.edits)  # a joining student starts from the view as it is
    if not same(shown_value(f.tab.widgets[f.args.class_control]), lecturer_value()):
        stats.error("a joining student's first page does not show the lecturer's view")


async def reconnects(f: Follower, stats: ClassStats, healthy: asyncio.Future, killed: float, value) -> None:
    """A tab whose websocket closed: a fresh tab on the same link every RECONNECT_EVERY_S until a first run."""
    with contextlib.suppress(Exception):
        await f.tab.close()
    deadline = time.monotonic() + 2 * f.args.timeout
    while time.monotonic() < deadline:
        try:
            await f.connect()
            break
        except Exception:  # refused, 502 from nginx, closed: the processes are still starting
            with contextlib.suppress(Exception):
                await f.tab.close()
            await asyncio.sleep(RECONNECT_EVERY_S)
    else:
        stats.error("a student did not reconnect after the restart")
        return
    done = time.perf_counter()
    stats.reconnect_from_kill.append(done - killed)
    stats.reconnect_from_healthy.append(done - await healthy)
    if not same(shown_value(f.tab.widgets[f.args.class_control]), value):
        stats.error("a reconnected student's first run does not show the lecturer's view")


async def take_back(args: argparse.Namespace, code: str, key: str) -> lt.Student:
    """A fresh lecturer tab takes the class back with its code and key (Take a class back)."""
    tab = lt.Student(args.url, args.page, args.timeout)
    await tab.open()
    await tab.load()
    await open_class_panel(tab)
    w = tab.widgets
    states = [
        WidgetState(id=w["sidebar_class_back_code"].proto.id, string_value=code),
        WidgetState(id=w["sidebar_class_back_key"].proto.id, string_value=key),
        press(w["sidebar_class_back"]),
    ]
    await tab.send(states)
    if class_from(tab.codes)[0] != code:
        raise lt.ProtocolError("the lecturer's take-back shows another class")
    return tab


# A phone browser's page: the followed control's value as its slider shows it, how many times the in-place heatmap
# has been drawn (figure.js counts them), its numbers as heatmap_shown reads them, and when the page's last figure was
# drawn (figure.js's performance mark, set as plotly.js finished, in the same task as its numbers: on the system
# clock, in seconds), or null while it is not drawn. The page's own clock, not the moment this is asked: a page whose
# renderer is slowed answers late.
_PHONE_JS = """([control, heatmap]) => {
  const value = document.querySelector(`.st-key-${control} [data-testid="stSliderThumbValue"]`);
  const plot = document.querySelector(`.st-key-${heatmap} .figure-in-place`);
  const z = plot && plot.data && plot.data[0] ? plot.data[0].z : null;
  const numbers = z ? (z.bdata ?? JSON.stringify(z)) : "";
  const marks = performance.getEntriesByName("attention-lab:figure-drawn");
  const at = marks.length ? (performance.timeOrigin + marks[marks.length - 1].startTime) / 1000 : 0;
  return value && plot ? [value.innerText.trim(), Number(plot.dataset.drawn || 0), numbers, at] : null;
}"""
# a phone's Chromium as it names itself (the reduced User-Agent of Chrome on Android): the app tells a phone by it
PHONE_AGENT = (
    "Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Mobile Safari/537.36"
)
PHONE = {
    "viewport": {"width": 390, "height": 844},
    "is_mobile": True,
    "has_touch": True,
    "device_scale_factor": 3,
    "user_agent": PHONE_AGENT,
}
PHONE_HEATMAP = "{page}_heatmap"


async def phone_drawn(page, looks: list[str], within_s: float = math.inf) -> list:
    """What a phone's ``page`` shows once drawn (:data:`_PHONE_JS` of ``looks``: the control's value, the heatmap's
    drawings, its numbers, when it was last drawn), asked every 0.2 s; a RuntimeError when not drawn ``within_s``."""
    drawn_by = time.monotonic() + within_s
    while (seen := await page.evaluate(_PHONE_JS, looks)) is None:
        if time.monotonic() > drawn_by:
            raise RuntimeError(f"{page.url} drew no {looks[0]} slider and {looks[1]} heatmap in {within_s:g} s")
        await asyncio.sleep(0.2)
    return seen


async def phones_follow(args: argparse.Namespace, code: str, stats: ClassStats, joined: asyncio.Event,
                        until: float) -> None:  # fmt: skip
    """``--phones`` Chromium tabs as phones (390x844, touch, the CPU slowed ``--phone-cpu`` times through the DevTools
    protocol, as Lighthouse emulates a phone) open the student link and follow like any student, by their own
    signal component; an edit is on a phone when its heatmap has been drawn again since the last edit it showed, with
    the numbers the lecturer's heatmap showed after that edit: edit send -> the drawing, on the system clock (the
    page's record of it, _PHONE_JS; the pages are asked every 50 ms)."""
    from playwright.async_api import async_playwright

    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path="/usr/bin/chromium", args=PHONE_ARGS)
        root = chromium_root()
        if args.phone_nice:
            Path(f"/proc/{root}/autogroup").write_text(str(args.phone_nice))  # the group Playwright started it in
        slowing = contextlib.ExitStack()  # the renderers run again however the phones' loop ends
        if args.phone_throttle == "stop" and args.phone_cpu > 1:
            slowing.enter_context(renderers_slowed(root, args.phone_cpu))
        with slowing:
            pages = []
            for _ in range(args.phones):
                context = await browser.new_context(base_url=args.url, **PHONE)
                page = await context.new_page()
                if args.phone_throttle == "chromium":
                    cdp = await context.new_cdp_session(page)
                    await cdp.send("Emulation.setCPUThrottlingRate", {"rate": args.phone_cpu})
                await page.goto(f"/{args.page}?class={code}", wait_until="domcontentloaded")
                pages.append(page)
            looks = [args.class_control, PHONE_HEATMAP.format(page=args.page)]
            credited, drawn = [0] * len(pages), [0] * len(pages)
            for i, page in enumerate(pages):  # drawn, with the lecturer's view
                drawn[i] = (await phone_drawn(page, looks))[1]
            joined.set()
            while time.monotonic() < until + SLACK_S:
                for i, page in enumerate(pages):
                    seen = await page.evaluate(_PHONE_JS, looks)
                    if seen is None or seen[1] <= drawn[i]:
                        continue
                    drawn_at, shown = seen[3], seen[2]
                    for n in range(len(stats.edits) - 1, credited[i] - 1, -1):
                        if stats.edits[n].heatmap == shown and stats.edits[n].sent_at <= drawn_at:
                            stats.phone_follow.extend(drawn_at - e.sent_at for e in stats.edits[credited[i] : n + 1])
                            credited[i], drawn[i] = n + 1, seen[1]
                            break
                await asyncio.sleep(0.05)
            missed = sum(len(stats.edits) - c for c in credited)
            if missed:
                stats.error(f"{missed} (edit, phone) pairs never shown")
        await browser.close()


def chromium_root() -> int:
    """The phones' browser process (the first Chromium among this process's children)."""
    chromium = [p for p in lt.process_tree(os.getpid()) if "chromium" in Path(f"/proc/{p}/comm").read_text()]
    if not chromium:
        raise RuntimeError("the phones' Chromium was not found among this process's children")
    return min(chromium)


def renderers(root: int) -> list[int]:
    """The renderer processes (the pages' own) under the browser ``root``."""
    found = []
    for pid in lt.process_tree(root):
        with contextlib.suppress(OSError):
            if b"--type=renderer" in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.append(pid)
    return found


def signal_all(pids: list[int], sig: int) -> None:
    """Send ``sig`` to each of ``pids`` that is still there."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)


@contextlib.contextmanager
def renderers_slowed(root: int, rate: float) -> Iterator[None]:
    """The renderers under the browser ``root`` slowed ``rate`` times (:func:`slow_renderers`, in a process of its
    own, so the load generator's event loop never stretches a stop) while the block runs; then they run again."""
    slowing = multiprocessing.get_context("spawn").Process(target=slow_renderers, args=(root, rate), daemon=True)
    slowing.start()
    try:
        yield
    finally:
        slowing.terminate()
        slowing.join()
        signal_all(renderers(root), signal.SIGCONT)  # one stopped when the throttle ended


def running(pids: list[int]) -> bool:
    """Whether a thread of one of ``pids`` is running or waiting for a core (state R in its ``/proc`` stat)."""
    for pid in pids:
        for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
            with contextlib.suppress(OSError):
                if lt.stat_fields(stat)[0] == "R":
                    return True
    return False


def slow_renderers(root: int, rate: float, run_s: float = 0.005) -> None:
    """Slow the phones' pages ``rate`` times without spinning: the renderers run for about ``run_s``, then are stopped
    (SIGSTOP) for (rate - 1) times as long as they could run (an overslept stop is taken off the next one), so a
    page's work of w ms takes about rate x w ms and costs w ms of CPU. A run lasts until no thread of theirs is left
    running: a stop takes hold only when the thread next gets a core, which on cores the servers keep busy is
    milliseconds later. Chromium's own throttle (``--phone-throttle chromium``, as Lighthouse) spins instead on
    Linux: blink's ThreadCPUThrottler interrupts the main thread every 200 us with a signal whose handler busy-waits
    for the slowed share, so each slowed page keeps about 0.9 of a core busy even with nothing to do (measured here),
    on the servers' cores, which a real phone's never are."""
    pids, scanned, owed = renderers(root), time.monotonic(), 0.0
    while True:
        started = time.monotonic()
        signal_all(pids, signal.SIGCONT)
        time.sleep(run_s)
        signal_all(pids, signal.SIGSTOP)
        while running(pids) and time.monotonic() - started < 0.1:
            time.sleep(0.0005)
        stopped = time.monotonic()
        if stopped - scanned > 0.5:  # a new page's renderer is slowed within half a second
            pids, scanned = renderers(root), stopped
        owed += (stopped - started) * (rate - 1)
        time.sleep(max(owed - (time.monotonic() - stopped), 0.0))
        owed -= time.monotonic() - stopped


PHONE_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update"]


async def run_class(args: argparse.Namespace, box: Servers | None) -> dict:
    """Join, follow, idle and (own servers, --restart) restart: the figures of one class."""
    stats, stop = ClassStats(), asyncio.Event()
    lecturer, code, key = await lecturer_starts(args)
    followers = [Follower(i, args, code) for i in range(args.sessions)]
    current = lambda: shown_value(lecturer.widgets[args.class_control])  # noqa: E731
    pids = box.pids if box else args.server_pid
    cpu0, wall0 = lt.cpu_seconds(pids), time.monotonic()
    arrivals = lt.arrival_times(args)
    await gather_errors(stats, [student_joins(f, stats, t, current) for f, t in zip(followers, arrivals, strict=True)])
    joined = [f for f in followers if f.tab is not None and f.tab.widgets.get(SIGNAL_KEY)]

    phones_joined, phones = asyncio.Event(), None
    if args.phones:  # their pages joined before the follow phase; they follow until its end
        phones = asyncio.create_task(phones_follow(args, code, stats, phones_joined, time.monotonic() + 3600))
        await asyncio.wait([phones, asyncio.create_task(phones_joined.wait())], return_when=asyncio.FIRST_COMPLETED)
    reference = [cpu_reference()]  # how fast the machine runs Python just before the follow phase ...
    until = time.monotonic() + args.duration
    client0, follow0 = time.process_time(), time.monotonic()  # the load generator's own CPU (it shares the cores)
    server0 = lt.cpu_seconds(pids)
    await gather_errors(
        stats,
        [lecturer_edits(lecturer, args, stats, until)]
        + [follow_until(f, stats, until + SLACK_S, stats.follow, stop) for f in joined],
    )
    if phones is not None:
        phones.cancel()  # the phones' own loop runs to the hour: the follow phase's end stops it
        with contextlib.suppress(asyncio.CancelledError):
            await phones
    client = (time.process_time() - client0) / max(time.monotonic() - follow0, 1e-9)
    per_pair = (lt.cpu_seconds(pids) - server0) / max(len(stats.follow), 1)  # polls and idle time included
    missed = sum(len(stats.edits) - f.credited for f in joined)
    if missed:
        stats.error(f"{missed} (edit, follower) pairs never shown")
    cores = (lt.cpu_seconds(pids) - cpu0) / (time.monotonic() - wall0)
    reference.append(cpu_reference())  # ... and just after it

    apps = [s.process.pid for s in box.processes] if box else pids  # without nginx
    idle_cpu0, idle_apps0, idle0 = lt.cpu_seconds(pids), lt.cpu_seconds(apps), time.monotonic()
    await gather_errors(stats, [follow_until(f, stats, idle0 + args.idle, [], stop) for f in joined])
    wall = max(time.monotonic() - idle0, 1e-9)
    idle = ((lt.cpu_seconds(pids) - idle_cpu0) / wall, (lt.cpu_seconds(apps) - idle_apps0) / wall)
    if not args.idle:
        idle = (float("nan"), float("nan"))  # no idle phase: no figure

    if args.answer_window:
        await gather_errors(stats, [answers_phase(args, stats, lecturer, joined)])
    result = {"code": code, "restart": False}
    if args.restart and box is not None:
        result |= await restart_phase(args, box, stats, lecturer, joined, code, key, current())
    with contextlib.suppress(Exception):
        await lecturer.close()
    for f in joined:
        with contextlib.suppress(Exception):
            await f.tab.close()
    return (
        result
        | summary(args, stats, idle, cores)
        | {"client_cores_follow": client, "server_ms_per_pair": 1000 * per_pair, "reference_ms": reference}
    )


REFERENCE_LOOP = 3_000_000  # additions


def cpu_reference(tries: int = 3) -> float:
    """Milliseconds of this process's CPU for a fixed pure-Python loop of REFERENCE_LOOP additions, the best of
    ``tries``: the machine's speed just now, as the app processes meet it (a machine whose cores are slowed by other
    work runs the same loop slower; about 90 ms on this project's 2-core machine when quiet)."""
    best = float("inf")
    for _ in range(tries):
        start, total = time.process_time(), 0
        for i in range(REFERENCE_LOOP):
            total += i
        best = min(best, time.process_time() - start)
    return 1000 * best


async def restart_phase(args, box, stats, lecturer, joined, code, key, value) -> dict:
    await lecturer.close()
    loop = asyncio.get_running_loop()
    healthy, kill_at = loop.create_future(), [0.0]

    async def restart_servers() -> None:
        kill_at[0] = time.perf_counter()
        await asyncio.to_thread(restart, box, args.app_dir)
        healthy.set_result(time.perf_counter())

    server_task = asyncio.create_task(restart_servers())
    await asyncio.sleep(0.2)  # the kill happens first; the tabs see their websockets close
    await gather_errors(stats, [server_task] + [reconnects(f, stats, healthy, kill_at[0], value) for f in joined])
    restart_s = (await healthy) - kill_at[0]
    lecturer = await take_back(args, code, key)
    rng, stop = random.Random(f"after-{args.seed}"), asyncio.Event()
    for f in joined:
        f.credited = len(stats.edits)
    await edit_once(lecturer, args, stats, rng)
    until = time.monotonic() + SLACK_S + 2
    await gather_errors(stats, [follow_until(f, stats, until, stats.follow_after_restart, stop) for f in joined])
    if missed := sum(len(stats.edits) - f.credited for f in joined):
        stats.error(f"{missed} followers did not show the lecturer's edit after the restart")
    await lecturer.close()
    return {"restart": True, "restart_s": restart_s}


async def answers_phase(args: argparse.Namespace, stats: ClassStats, lecturer: lt.Student, joined: list) -> None:
    """The lecturer asks (the panel's first question kind: which key a query attends to most); each follower polls
    until its page shows the question, then answers within ``--answer-window`` s of the Ask; the lecturer's tab
    runs its live spread fragment on the fragment's own timer (``auto_rerun``) until it counts every answer."""
    rng = random.Random(f"answers-{args.seed}")
    asked = time.perf_counter()
    await lecturer.send([press(lecturer.widgets[ASK_KEY])])
    spread_count(lecturer)  # the live spread is on the lecturer's screen
    fragment = lecturer.widgets[COUNT_KEY].fragment_id
    every = lecturer.auto_reruns.get(fragment)
    if every is None:
        raise lt.ProtocolError("the lecturer's spread has no fragment timer (st.fragment run_every)")
    last_sent, answered = [0.0], [0]
    deadline = time.monotonic() + args.answer_window + 2 * args.timeout

    async def student(f: Follower, delay: float) -> None:
        while (question := question_on(f.tab)) is None:
            if time.monotonic() > deadline:
                raise lt.ProtocolError("a follower's page never showed the question")
            await f.poll(stats, [])
            await asyncio.sleep(signal_data(f.tab)["every_ms"] / 1000)
        stats.question_shown.append(time.perf_counter() - asked)
        await asyncio.sleep(max(0.0, asked + delay - time.perf_counter()))
        sent = time.perf_counter()
        last_sent[0] = max(last_sent[0], sent)
        form = f.tab.widgets[f"class_send_{question}"].fragment_id  # the answer form's fragment, as the frontend sends
        run = await f.tab.send(answer_states(f.tab, question, rng), form)
        stats.answer_runs.append(run.seconds)
        answered[0] += 1

    async def lecturer_watches() -> None:
        tick = time.perf_counter()
        while time.monotonic() < deadline:
            tick += every
            await asyncio.sleep(max(0.0, tick - time.perf_counter()))
            await lecturer.send([], fragment, auto_rerun=True)
            if answered[0] == len(joined) and spread_count(lecturer) >= len(joined):
                stats.answers_counted = time.perf_counter() - last_sent[0]
                return
        stats.error(f"the lecturer's screen counted {spread_count(lecturer)} of {len(joined)} answers")

    delays = [rng.uniform(0, args.answer_window) for _ in joined]
    await gather_errors(stats, [lecturer_watches()] + [student(f, d) for f, d in zip(joined, delays, strict=True)])


async def gather_errors(stats: ClassStats, coroutines) -> None:
    for outcome in await asyncio.gather(*coroutines, return_exceptions=True):
        if isinstance(outcome, BaseException):
            stats.error(f"{type(outcome).__name__}: {outcome}")


def ms(values: list[float], q: int) -> float:
    return 1000 * lt.percentile(values, q)


def summary(args: argparse.Namespace, stats: ClassStats, idle_cores: tuple[float, float], cores: float) -> dict:
    return {
        "label": args.label,
        "mode": "class",
        "page": args.page,
        "processes": args.processes if not args.url_given else None,
        "sessions": args.sessions,
        "joined": len(stats.first_pages),
        "join_window_s": args.join_window,
        "think_s": args.think,
        "answer_window_s": args.answer_window,
        "edits": len(stats.edits),
        "first_page_p50_ms": ms(stats.first_pages, 50),
        "first_page_p95_ms": ms(stats.first_pages, 95),
        "first_page_max_ms": 1000 * max(stats.first_pages, default=float("nan")),
        "follow_pairs": len(stats.follow),
        "follow_p50_ms": ms(stats.follow, 50),
        "follow_p95_ms": ms(stats.follow, 95),
        "follow_max_ms": 1000 * max(stats.follow, default=float("nan")),
        "phones": args.phones,
        "phone_cpu": args.phone_cpu,
        "phone_throttle": args.phone_throttle,
        "phone_nice": args.phone_nice,
        "phone_follow_pairs": len(stats.phone_follow),
        "phone_follow_p50_ms": ms(stats.phone_follow, 50),
        "phone_follow_p95_ms": ms(stats.phone_follow, 95),
        "phone_follow_max_ms": 1000 * max(stats.phone_follow, default=float("nan")),
        "signal_run_p50_ms": ms(stats.signal_runs, 50),
        "polls": stats.polls,
        "idle_s": args.idle,
        "idle_cores": idle_cores[0],
        "idle_cores_app_processes": idle_cores[1],
        "server_cores_join_follow": cores,
        "answers": len(stats.answer_runs),
        "question_shown_p95_ms": ms(stats.question_shown, 95),
        "answer_run_p50_ms": ms(stats.answer_runs, 50),
        "answer_run_p95_ms": ms(stats.answer_runs, 95),
        "answers_counted_ms": 1000 * stats.answers_counted,
        "reconnect_from_healthy_p50_ms": ms(stats.reconnect_from_healthy, 50),
        "reconnect_from_healthy_p95_ms": ms(stats.reconnect_from_healthy, 95),
        "reconnect_from_healthy_max_ms": 1000 * max(stats.reconnect_from_healthy, default=float("nan")),
        "reconnect_from_kill_max_ms": 1000 * max(stats.reconnect_from_kill, default=float("nan")),
        "follow_after_restart_max_ms": 1000 * max(stats.follow_after_restart, default=float("nan")),
        "errors": sum(stats.errors.values()),
        "error_kinds": dict(sorted(stats.errors.items(), key=lambda kv: -kv[1])[:5]),
        "loadavg_1min": float(Path("/proc/loadavg").read_text().split()[0]),
    }


def print_table(r: dict) -> None:
    where = f"{r['processes']} process(es)" if r["processes"] else "the server at --url"
    rows = [
        ("students (joined)", f"{r['sessions']} ({r['joined']}) on /{r['page']}, {where}"),
        ("first page p50 / p95 / max", f"{r['first_page_p50_ms']:.0f} / {r['first_page_p95_ms']:.0f} / "
         f"{r['first_page_max_ms']:.0f} ms (arrival -> first run, joined within {r['join_window_s']:g} s)"),
        ("lecturer edits", f"{r['edits']} (every {r['think_s']:g} s ±50 %)"),
        ("edit -> follower p50/p95/max", f"{r['follow_p50_ms']:.0f} / {r['follow_p95_ms']:.0f} / "
         f"{r['follow_max_ms']:.0f} ms over {r['follow_pairs']} (edit, follower) pairs"),
        ("a signal rerun p50", f"{r['signal_run_p50_ms']:.0f} ms (send -> finished); {r['polls']} polls"),
        *([("edit -> phone heatmap p50/p95/max", f"{r['phone_follow_p50_ms']:.0f} / {r['phone_follow_p95_ms']:.0f} / "
            f"{r['phone_follow_max_ms']:.0f} ms over {r['phone_follow_pairs']} (edit, phone) pairs; "
            f"{r['phones']} Chromium phones, CPU slowed {r['phone_cpu']:g}x ({lt.PHONE_THROTTLES[r['phone_throttle']]}"
            f"{', nice ' + str(r['phone_nice']) if r['phone_nice'] else ''})")] if r.get("phones") else []),
        ("idle class", f"{r['idle_cores']:.3f} cores over {r['idle_s']:g} s, app processes and nginx "
         f"({r['idle_cores_app_processes']:.3f} the app processes)"),
        ("server cores, join + follow", f"{r['server_cores_join_follow']:.2f}"),
        ("server CPU per pair", f"{r['server_ms_per_pair']:.1f} ms (the follow phase's server CPU / pairs)"),
        ("load generator, follow", f"{r['client_cores_follow']:.2f} cores (this process, on the same machine)"),
        ("machine speed reference", " / ".join(f"{v:.0f}" for v in r["reference_ms"]) + " ms (a fixed Python loop, "
         "before / after the follow phase: the same code runs this much slower on a slowed machine)"),
    ]  # fmt: skip
    if r["answers"]:
        rows += [
            ("question shown p95", f"{r['question_shown_p95_ms']:.0f} ms (Ask sent -> a follower's run showing it)"),
            ("answer run p50 / p95", f"{r['answer_run_p50_ms']:.0f} / {r['answer_run_p95_ms']:.0f} ms "
             f"({r['answers']} answers within {r['answer_window_s']:g} s)"),
            ("answers counted", f"{r['answers_counted_ms']:.0f} ms (last answer sent -> the lecturer's spread "
             "counts them all)"),
        ]  # fmt: skip
    if r.get("restart"):
        rows += [
            ("restart (kill -> healthy)", f"{r['restart_s']:.1f} s"),
            ("reconnect p50/p95/max", f"{r['reconnect_from_healthy_p50_ms']:.0f} / "
             f"{r['reconnect_from_healthy_p95_ms']:.0f} / {r['reconnect_from_healthy_max_ms']:.0f} ms "
             f"(healthy -> first run showing the view; max from the kill {r['reconnect_from_kill_max_ms']:.0f} ms)"),
            ("edit after restart, max", f"{r['follow_after_restart_max_ms']:.0f} ms (lecturer took the class back)"),
        ]  # fmt: skip
    rows += [("errors", f"{r['errors']}"), ("machine load average", f"{r['loadavg_1min']:.1f} (1 min, at the end)")]
    print(f"\n{r['label'] or 'class load test'} (class {r['code']})")
    for name, value in rows:
        print(f"  {name:<30} {value}")
    for kind, n in r["error_kinds"].items():
        print(f"  error x{n}: {kind}")


def main(args: argparse.Namespace) -> int:
    """Run the class against ``--url`` or servers of its own; print (and append as JSON) the figures."""
    args.class_control = args.class_control.format(page=args.page)
    args.url_given = bool(args.url)
    if args.url:
        devserver.wait_healthy(args.url, timeout=lt.HEALTHY_WITHIN_S)
        result = asyncio.run(run_class(args, None))
    else:
        with servers(args) as box:
            args.url = box.url
            result = asyncio.run(run_class(args, box))
    lt.report(result, args.json, print_table)
    return 1 if result["errors"] else 0
