"""Load test: N simulated students on one Attention Lab server, over Streamlit's own websocket protocol.

    python benchmarks/load_test.py                          # starts `streamlit run app.py` on a free port
    python benchmarks/load_test.py --sessions 60 --think 5 --duration 60
    python benchmarks/load_test.py --url http://127.0.0.1:8080 --server-pid 1234   # an already running server
    python benchmarks/load_test.py --sessions 60 --join-window 10 --think 5 --duration 60   # a class joining at once
    python benchmarks/load_test.py --page real_model --own-text --first-page-only --sessions 60 --join-window 10 \
        --duration 20 --solo 0   # a class opening the real-model page, each on a sentence of its own
    python benchmarks/load_test.py --class-mode --processes 2 --sessions 100 --join-window 10 --restart
        # a live class: a lecturer edits, 100 students follow (starts its own servers)

Each student does what a browser tab does, in the same order as Streamlit 1.67's frontend:

1. ``GET /<page>``, ``GET /_stcore/health`` (sets the ``_streamlit_xsrf`` cookie), ``GET /_stcore/host-config``;
   the cookies it is given (the XSRF one, and a load balancer's sticky cookie) go on every later request.
   With ``--assets`` it first fetches the frontend files the page's index.html names (``./static/...``),
   six at a time, as a browser with an empty cache does; without, as if the browser had them cached.
2. Opens ``ws://HOST/_stcore/stream`` with subprotocols ``["streamlit", <xsrf cookie or
   "PLACEHOLDER_AUTH_TOKEN">]``: the frontend repurposes the subprotocol list to carry its XSRF token
   (and, on a reconnect, a third entry with its last session id). The server selects ``streamlit``.
3. Sends ``BackMsg(rerun_script=ClientState(page_name="playground", page_script_hash=""))`` — the
   first run names the page by its URL path — and reads binary ``ForwardMsg`` frames until
   ``script_finished``. On the way it keeps what a tab keeps: the page's script hash (``new_session``,
   ``navigation``), the query string (``page_info_changed``), the widget protos in the deltas (their
   ids end in ``-<user key>``, e.g. ``$$ID-1f…-playground_temperature``), and every ``cacheable``
   message by hash, so it can answer a ``ref_hash`` message and report ``cached_message_hashes``.
4. Every ``--think`` seconds (±50 %, seeded) changes a control: alternately the temperature slider
   (``WidgetState.double_array_value``) and the mask selectbox (``string_value``, the displayed option),
   in a ``rerun_script`` with ``page_script_hash`` set, and times it from the send to ``script_finished``.

With ``--own-text`` each student's link carries a sentence of its own (``state=...``, 40-63 tokens of the real
model; the query string goes on the GET and on the first run, as a browser sends it), and with ``--first-page-only``
the students open the page and change nothing, so the server's CPU divided by the first pages is the cost of one.

Students arrive evenly over ``--ramp`` seconds, or, with ``--join-window N``, each at a random (seeded)
moment within N seconds, as a class opening a link the lecturer just shared. The *first page* is timed
from a student's arrival (the first HTTP request) to the first run's ``script_finished``; *later*
interactions from each change's send to its ``script_finished``. Both are reported as p50 / p95 / max.

With ``--class-mode`` one lecturer and N students run a live class instead (``benchmarks/class_load.py`` says how
and what it measures): the lecturer starts a class and edits, the students join by its link and follow.

An ``exception`` element, a compile error, a refused or dropped connection, a missing widget or a
timeout counts as an error. Loopback only: the target must be a 127.0.0.0/8 or localhost URL, and every
loop stops at ``--duration`` (plus bounded time-outs).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import random
import re
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ClientState_pb2 import ClientState, ContextInfo
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
from streamlit.proto.WidgetStates_pb2 import WidgetState, WidgetStates
from websockets.asyncio.client import connect  # a dependency of Streamlit 1.67 itself (its server is uvicorn)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script from anywhere

from deploy import devserver  # noqa: E402

FINISHED_OK = {ForwardMsg.FINISHED_SUCCESSFULLY, ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY}
NO_XSRF_TOKEN = "PLACEHOLDER_AUTH_TOKEN"  # what the frontend sends when it has no _streamlit_xsrf cookie
LOOPBACK = ("127.", "localhost", "[::1]", "::1")
HEALTHY_WITHIN_S = 60.0
SETTLE_CORE, SETTLE_QUIET_S, SETTLE_LIMIT_S = 0.05, 3, 180.0  # --settle: under 5 % of a core for 3 s, at most 3 min


# ---------------------------------------------------------------- messages a browser tab sends


def context_info(url: str) -> ContextInfo:
    """The browser facts every rerun carries (timezone, locale, URL, theme)."""
    return ContextInfo(
        timezone="UTC", timezone_offset=0, locale="en-US", url=url, is_embedded=False, color_scheme="light"
    )


def rerun_msg(
    *,
    url: str,
    page_name: str = "",
    page_script_hash: str = "",
    query_string: str = "",
    widgets: list[WidgetState] | None = None,
    fragment_id: str = "",
    cached_hashes: list[str] | None = None,
    auto_rerun: bool = False,
) -> bytes:
    """A serialized ``BackMsg.rerun_script``: the first run names the page, later ones carry its hash."""
    state = ClientState(
        query_string=query_string,
        page_script_hash=page_script_hash,
        page_name=page_name,
        widget_states=WidgetStates(widgets=widgets or []),
        fragment_id=fragment_id,
        is_auto_rerun=auto_rerun,
        cached_message_hashes=cached_hashes or [],
        context_info=context_info(url),
    )
    return BackMsg(rerun_script=state).SerializeToString()


def slider_state(widget_id: str, value: float) -> WidgetState:
    """st.slider with one float: the frontend sends ``double_array_value=[value]``."""
    state = WidgetState(id=widget_id)
    state.double_array_value.data.append(value)
    return state


def radio_state(widget_id: str, option: str) -> WidgetState:
    """st.radio and st.selectbox in 1.67: the frontend sends the displayed (formatted) option as ``string_value``."""
    return WidgetState(id=widget_id, string_value=option)


# ---------------------------------------------------------------- what a tab reads from the server


@dataclass
class Widget:
    """A widget as its element proto arrived, and the fragment it was drawn in ("" when none)."""

    kind: str  # "slider", "radio", ...
    proto: object
    fragment_id: str


def user_key(widget_id: str) -> str | None:
    """``$$ID-<hash>-<key>`` -> ``key``; None for a widget without a user key."""
    if not widget_id.startswith("$$ID-"):
        return None
    parts = widget_id.split("-", 2)
    return parts[2] if len(parts) == 3 and parts[2] else None


def widget_in(msg: ForwardMsg) -> tuple[str, Widget] | None:
    """The (user key, widget) a delta draws, or None when it draws something else. A keyed expander is a widget
    too (kind "expander": its open state, ``bool_value``), and so is any other keyed container (kind "block")."""
    if msg.WhichOneof("type") != "delta":
        return None
    if msg.delta.WhichOneof("type") == "add_block" and msg.delta.add_block.WhichOneof("type") == "expandable":
        kind, proto = "expander", msg.delta.add_block.expandable
    elif msg.delta.WhichOneof("type") == "add_block":  # a keyed container: its key is the block's id
        kind, proto = "block", msg.delta.add_block
    elif msg.delta.WhichOneof("type") == "new_element":
        kind = msg.delta.new_element.WhichOneof("type")
        proto = getattr(msg.delta.new_element, kind) if kind else None
    else:
        return None
    key = user_key(getattr(proto, "id", "") or "") if proto is not None else None
    return (key, Widget(kind, proto, msg.delta.fragment_id)) if key else None


def exception_in(msg: ForwardMsg) -> str | None:
    """The text of an exception element the script drew, or None."""
    if msg.WhichOneof("type") == "delta" and msg.delta.new_element.WhichOneof("type") == "exception":
        exc = msg.delta.new_element.exception
        return f"{exc.type}: {exc.message}"[:200]
    return None


def next_state(widget: Widget, rng: random.Random) -> WidgetState:
    """A different value for ``widget``: another step of the slider, another option of the radio or selectbox."""
    p = widget.proto
    if widget.kind == "slider":
        steps = round((p.max - p.min) / p.step)
        current = p.value[0] if p.value else p.default[0]
        value = current
        while abs(value - current) < p.step / 2:
            value = round(p.min + rng.randint(0, steps) * p.step, 6)
        p.value[:] = [value]  # the tab now shows this value
        return slider_state(p.id, value)
    if widget.kind in ("radio", "selectbox"):  # both send the displayed option
        current = p.raw_value if p.HasField("raw_value") else p.options[p.default]
        option = rng.choice([o for o in p.options if o != current])
        p.raw_value = option
        return radio_state(p.id, option)
    if widget.kind == "number_input":  # an integer input sends int_value, a float one double_value
        current = p.value if p.HasField("value") else p.default
        low, high = (p.min if p.has_min else current - 10), (p.max if p.has_max else current + 10)
        steps = round((high - low) / (p.step or 1))
        value = current
        while abs(value - current) < (p.step or 1) / 2:
            value = low + rng.randint(0, steps) * (p.step or 1)
        p.value = value
        if p.data_type == p.INT:
            return WidgetState(id=p.id, int_value=int(value))
        return WidgetState(id=p.id, double_value=float(value))
    raise ValueError(
        f"the load test cannot change a {widget.kind} widget; choose a slider, radio, selectbox or number input key"
    )


SHOWN_FIELDS = {"slider": "value", "number_input": "value", "radio": "raw_value", "selectbox": "raw_value"}


def keep_shown(new: Widget, old: Widget) -> None:
    """A widget drawn again without ``set_value`` keeps the value the tab shows, as the frontend's widget state does;
    with ``set_value`` (the script set it) the new value is shown."""
    name = SHOWN_FIELDS.get(new.kind)
    if name is None or new.proto.set_value or new.proto.id != old.proto.id:
        return
    if new.kind == "slider":
        new.proto.value[:] = old.proto.value
    elif old.proto.HasField(name):
        setattr(new.proto, name, getattr(old.proto, name))


# ---------------------------------------------------------------- each student's own sentence

WORDS = (
    "the teacher gave a short talk about how small models read a sentence and which words each head looks at "
    "when it guesses the next one while students in the back row took notes on their laptops and asked why "
    "attention spreads over earlier tokens before the answer appears at the end of a long line of text"
).split()


def own_text_links(n: int, page: str, seed: int) -> list[str]:
    """``n`` query strings (``state=...``), each opening the real-model page on a sentence of its own: seeded words
    until the model's tokenizer counts 40 to 63 tokens, as a class typing their own sentences would."""
    import attention_models as am  # the model's tokenizer: only this mode needs it
    from attention_views.pure import links
    from attention_views.pure.lab import DEFAULT_SCENARIO, new_lab

    model, rng, made = am.load(), random.Random(f"text-{seed}"), []
    for i in range(n):
        want, words = rng.randint(40, 63), [f"Student {i} wrote:"]
        while len(model.tokenize(" ".join(words), control_tokens=False)) < want:
            words.append(rng.choice(WORDS))
        if len(model.tokenize(" ".join(words), control_tokens=False)) > 63:  # the last word took two tokens
            words.pop()
        lab = new_lab(DEFAULT_SCENARIO)
        lab.model.text, lab.model.preset = " ".join(words), "custom"
        made.append("state=" + links.encode(lab, page))
    return made


# ---------------------------------------------------------------- one student

BROWSER_CONNECTIONS = 6  # a browser's parallel HTTP/1.1 connections to one host


def asset_paths(html: bytes) -> list[str]:
    """The frontend files (``./static/...``) an index.html loads or preloads, in order, each once."""
    found = re.findall(rb'(?:src|href)="\./(static/[^"]+)"', html)
    return list(dict.fromkeys(ref.decode() for ref in found))


class ProtocolError(Exception):
    """The server answered in a way a browser tab would show as an error."""


@dataclass
class Run:
    seconds: float
    messages: int
    bytes: int


class Student:
    """One browser tab: cookies, a websocket, the tab's message cache and the widgets it shows."""

    def __init__(self, base: str, page: str, timeout: float, assets: bool = False, query: str = "") -> None:
        self.base, self.page, self.timeout, self.assets = base.rstrip("/"), page, timeout, assets
        self.asset_bytes = 0
        self.cookies: dict[str, str] = {}
        self.cache: dict[str, ForwardMsg] = {}
        self.widgets: dict[str, Widget] = {}
        self.page_hash = ""
        self.query = query  # the link's query string ("state=..."); the app may rewrite it (page_info_changed)
        self.codes: list[str] = []  # the st.code blocks of the last run (a class's link and lecturer key)
        self.delta_fragments: list[str] = []  # the fragment id of each delta of the last run ("": not in a fragment)
        self.alerts: list[str] = []  # the texts of the last run's st.error/warning/info/success boxes
        self.blocks: dict[str, tuple[int, ...]] = {}  # a keyed container's user key -> its place (delta path)
        self.texts: dict[tuple[int, ...], str] = {}  # place -> the markdown drawn there
        self.auto_reruns: dict[str, float] = {}  # fragment id -> seconds: the st.fragment(run_every=...) timers
        self.ws = None
        self.kept: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None  # fetch()'s kept-alive connection

    async def open(self) -> None:
        """The HTTP requests a tab makes before the websocket, then the websocket itself."""
        html = await self._get(f"/{self.page}" + (f"?{self.query}" if self.query else ""))
        if self.assets:
            await self.fetch_assets(html)
        for path in ("/_stcore/health", "/_stcore/host-config"):
            await self._get(path)
        xsrf = self.cookies.get("_streamlit_xsrf", NO_XSRF_TOKEN)
        split = urlsplit(self.base)
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        self.ws = await connect(
            f"ws://{split.netloc}/_stcore/stream",
            subprotocols=["streamlit", xsrf],
            origin=f"{split.scheme}://{split.netloc}",
            max_size=None,
            additional_headers={"Cookie": cookie} if cookie else None,
            open_timeout=self.timeout,
        )
        if self.ws.subprotocol != "streamlit":
            raise ProtocolError(f"server selected subprotocol {self.ws.subprotocol!r}")

    async def fetch_assets(self, html: bytes) -> None:
        """The frontend files the page's index.html names, six at a time as a browser does (empty cache)."""
        paths = [f"/{ref}" for ref in asset_paths(html)]
        for i in range(0, len(paths), BROWSER_CONNECTIONS):
            bodies = await asyncio.gather(*(self._get(path) for path in paths[i : i + BROWSER_CONNECTIONS]))
            self.asset_bytes += sum(len(body) for body in bodies)

    async def _get(self, path: str) -> bytes:
        """A minimal HTTP/1.1 GET on loopback that keeps the cookies it is given; the body."""
        split = urlsplit(self.base)
        reader, writer = await asyncio.open_connection(split.hostname, split.port or 80)
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: {split.netloc}\r\nConnection: close\r\n"
            f"{f'Cookie: {cookie}' + chr(13) + chr(10) if cookie else ''}\r\n".encode()
        )
        try:
            raw = await asyncio.wait_for(reader.read(), self.timeout)
        finally:
            writer.close()
        head, _, body = raw.partition(b"\r\n\r\n")
        head = head.decode("latin-1").split("\r\n")
        if " 200 " not in head[0] + " ":
            raise ProtocolError(f"GET {path}: {head[0]}")
        for line in head[1:]:
            name, _, value = line.partition(":")
            if name.strip().lower() == "set-cookie":
                k, _, v = value.strip().split(";", 1)[0].partition("=")
                self.cookies[k] = v
        return body

    async def load(self) -> Run:
        """The first run of the page, named by its URL path as the frontend does."""
        url = f"{self.base}/{self.page}" + (f"?{self.query}" if self.query else "")
        return await self._run(
            rerun_msg(url=url, page_name=self.page, query_string=self.query, cached_hashes=list(self.cache))
        )

    async def change(self, key: str, rng: random.Random) -> Run:
        """Move the widget with user key ``key`` to another value and rerun as the frontend does."""
        widget = self.widgets.get(key)
        if widget is None:
            raise ProtocolError(f"no widget with key {key!r} on /{self.page}")
        return await self.send([next_state(widget, rng)], widget.fragment_id)

    async def send(self, states: list[WidgetState], fragment_id: str = "", auto_rerun: bool = False) -> Run:
        """A rerun of the page carrying ``states`` (a button's trigger, a component's trigger, typed text); with
        ``auto_rerun``, a fragment's timer firing, as the frontend sends it."""
        return await self._run(
            rerun_msg(
                url=f"{self.base}/{self.page}",
                page_script_hash=self.page_hash,
                query_string=self.query,
                widgets=states,
                fragment_id=fragment_id,
                cached_hashes=list(self.cache),
                auto_rerun=auto_rerun,
            )
        )

    async def _run(self, backmsg: bytes) -> Run:
        """Send one rerun and read ForwardMsgs until the run finishes; time it."""
        start = time.perf_counter()
        self.codes, self.delta_fragments, self.alerts = [], [], []
        await self.ws.send(backmsg)
        count = size = 0
        async with asyncio.timeout(self.timeout):
            while True:
                raw = await self.ws.recv()
                count, size = count + 1, size + len(raw)
                status = self._read(raw)
                if status in FINISHED_OK:
                    return Run(time.perf_counter() - start, count, size)
                if status == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                    raise ProtocolError("script finished with a compile error")

    def _read(self, raw: bytes) -> int | None:
        """Take in one ForwardMsg as a tab does; its script_finished status, or None."""
        msg = ForwardMsg()
        msg.ParseFromString(raw)
        if msg.WhichOneof("type") == "ref_hash":
            if msg.ref_hash not in self.cache:
                raise ProtocolError("server referred to a message this tab never cached")
            msg = self.cache[msg.ref_hash]
        elif msg.metadata.cacheable and msg.hash:
            self.cache[msg.hash] = msg
        kind = msg.WhichOneof("type")
        if kind == "script_finished":
            return msg.script_finished
        if kind in ("new_session", "navigation") and getattr(msg, kind).page_script_hash:
            self.page_hash = getattr(msg, kind).page_script_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "auto_rerun":
            self.auto_reruns[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
        elif (error := exception_in(msg)) is not None:
            raise ProtocolError(error)
        elif (found := widget_in(msg)) is not None:
            key, widget = found
            if key in self.widgets:
                keep_shown(widget, self.widgets[key])
            self.widgets[key] = widget
            if widget.kind == "block":
                self.blocks[key] = tuple(msg.metadata.delta_path)
        elif kind == "delta" and msg.delta.new_element.WhichOneof("type") == "code":
            self.codes.append(msg.delta.new_element.code.code_text)
        elif kind == "delta" and msg.delta.new_element.WhichOneof("type") == "markdown":
            self.texts[tuple(msg.metadata.delta_path)] = msg.delta.new_element.markdown.body
        if kind == "delta":
            self.delta_fragments.append(msg.delta.fragment_id)
            if msg.delta.new_element.WhichOneof("type") == "alert":
                self.alerts.append(msg.delta.new_element.alert.body)
        return None

    async def fetch(self, path: str) -> bytes | None:
        """A GET as a page's ``fetch`` does it, on a connection kept alive between calls as a browser keeps one:
        the body, or None for a 404 (no such file yet). A connection the server closed is opened again, once."""
        for attempt in (1, 2):
            try:
                return await self._fetch_once(path)
            except (ConnectionError, asyncio.IncompleteReadError):
                self._drop_kept()
                if attempt == 2:
                    raise
        return None

    async def _fetch_once(self, path: str) -> bytes | None:
        split = urlsplit(self.base)
        if self.kept is None:
            self.kept = await asyncio.open_connection(split.hostname, split.port or 80)
        reader, writer = self.kept
        cookie = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: {split.netloc}\r\nConnection: keep-alive\r\n"
            f"{f'Cookie: {cookie}' + chr(13) + chr(10) if cookie else ''}\r\n".encode()
        )
        async with asyncio.timeout(self.timeout):
            head = (await reader.readuntil(b"\r\n\r\n")).decode("latin-1").split("\r\n")
            fields = {name.strip().lower(): value.strip() for name, _, value in (h.partition(":") for h in head[1:])}
            if "content-length" not in fields:
                raise ProtocolError(f"GET {path}: a reply without Content-Length ({head[0]})")
            body = await reader.readexactly(int(fields["content-length"]))
        if fields.get("connection", "").lower() == "close":
            self._drop_kept()
        if " 404 " in head[0] + " ":
            return None
        if " 200 " not in head[0] + " ":
            raise ProtocolError(f"GET {path}: {head[0]}")
        return body

    def _drop_kept(self) -> None:
        if self.kept is not None:
            self.kept[1].close()
            self.kept = None

    async def close(self) -> None:
        self._drop_kept()
        if self.ws is not None:
            await self.ws.close()


# ---------------------------------------------------------------- the class of students


@dataclass
class Stats:
    loads: list[float] = field(default_factory=list)  # the first run alone: send -> script_finished
    first_pages: list[float] = field(default_factory=list)  # arrival -> first run finished (HTTP, websocket, run)
    latencies: list[float] = field(default_factory=list)  # per interaction: send -> script_finished
    done_at: list[float] = field(default_factory=list)  # monotonic completion time of each interaction
    errors: Counter = field(default_factory=Counter)
    bytes: int = 0
    asset_bytes: int = 0  # frontend files fetched by first visits (--assets)
    loaded_at: list[float] = field(default_factory=list)


def arrival_times(args: argparse.Namespace) -> list[float]:
    """Seconds after the start at which each student opens the link: evenly over --ramp, or at random
    (seeded) moments within --join-window."""
    if args.join_window is None:
        return [args.ramp * i / max(args.sessions, 1) for i in range(args.sessions)]
    rng = random.Random(f"join-{args.seed}")
    return [rng.uniform(0, args.join_window) for _ in range(args.sessions)]


async def student(i: int, args: argparse.Namespace, stats: Stats, deadline: float, arrive: float) -> None:
    """Arrive after ``arrive`` seconds, open the page, then change a control every think time until the deadline."""
    rng = random.Random(args.seed * 1000 + i)
    await asyncio.sleep(arrive)
    tab = Student(args.url, args.page, args.timeout, args.assets, args.links[i] if args.links else "")
    try:
        arrived = time.perf_counter()
        await tab.open()
        run = await tab.load()
        stats.first_pages.append(time.perf_counter() - arrived)
        stats.asset_bytes += tab.asset_bytes
        stats.loads.append(run.seconds)
        stats.loaded_at.append(time.monotonic())
        if args.first_page_only:  # the tab stays open and still
            await asyncio.sleep(max(0.0, deadline - time.monotonic()))
            return
        for n in itertools.count():
            await asyncio.sleep(args.think * rng.uniform(0.5, 1.5))
            if time.monotonic() >= deadline:
                break
            run = await tab.change(args.controls[n % len(args.controls)], rng)
            stats.latencies.append(run.seconds)
            stats.done_at.append(time.monotonic())
            stats.bytes += run.bytes
    except Exception as err:  # any failure (refused, closed, timed out, an exception element) is one error
        stats.errors[f"{type(err).__name__}: {err}"[:160]] += 1
    finally:
        with contextlib.suppress(Exception):
            await tab.close()


# ---------------------------------------------------------------- the server's memory and CPU


def stat_fields(stat: Path) -> list[str]:
    """The fields of a ``/proc/PID/stat`` (or a thread's ``task/TID/stat``) after the command's name, which may hold
    spaces and parentheses itself: the state first, then the parent (proc(5)'s fields 3 on)."""
    return stat.read_text().rsplit(")", 1)[1].split()


def process_tree(pid: int) -> list[int]:
    """``pid`` and all its descendants, from /proc (psutil is not installed)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat_fields(stat)
            children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo.extend(children.get(p, []))
    return tree


def rss_mib(pids: list[int]) -> float:
    """Sum of VmRSS over the given processes and their descendants, in MiB."""
    total_kib = 0
    for p in (p for root in pids for p in process_tree(root)):
        with contextlib.suppress(OSError, ValueError):
            status = Path(f"/proc/{p}/status").read_text()
            total_kib += int(status.split("VmRSS:", 1)[1].split()[0])
    return total_kib / 1024


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU time used so far by the given processes and their descendants."""
    ticks = 0
    for p in (p for root in pids for p in process_tree(root)):
        with contextlib.suppress(OSError, ValueError, IndexError):
            fields = stat_fields(Path(f"/proc/{p}/stat"))
            ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of proc(5))
    return ticks / os.sysconf("SC_CLK_TCK")


async def sample_rss(pids: list[int], peak: list[float], until: float) -> None:
    while pids and time.monotonic() < until:
        peak[0] = max(peak[0], rss_mib(pids))
        await asyncio.sleep(1.0)


# ---------------------------------------------------------------- the report


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1] if len(values) > 1 else values[0]


def summarize(args: argparse.Namespace, stats: Stats, deadline: float, rss: tuple[float, float]) -> dict:
    """The figures of one run; throughput over the steady window (every tab loaded -> deadline)."""
    window_start = max(stats.loaded_at) if len(stats.loaded_at) == args.sessions else deadline - args.duration
    window = max(deadline - window_start, 1e-9)
    in_window = sum(1 for t in stats.done_at if window_start <= t <= deadline)
    return {
        "label": args.label,
        "sessions": args.sessions,
        "think_s": args.think,
        "ramp_s": args.ramp,
        "duration_s": args.duration,
        "loaded": len(stats.loads),
        "interactions": len(stats.latencies),
        "errors": sum(stats.errors.values()),
        "p50_ms": 1000 * percentile(stats.latencies, 50),
        "p95_ms": 1000 * percentile(stats.latencies, 95),
        "max_ms": 1000 * max(stats.latencies, default=float("nan")),
        "join_window_s": args.join_window,
        "assets": args.assets,
        "asset_mib_per_first_page": stats.asset_bytes / 2**20 / max(len(stats.first_pages), 1),
        "first_page_p50_ms": 1000 * percentile(stats.first_pages, 50),
        "first_page_p95_ms": 1000 * percentile(stats.first_pages, 95),
        "first_page_max_ms": 1000 * max(stats.first_pages, default=float("nan")),
        "load_p50_ms": 1000 * percentile(stats.loads, 50),
        "load_p95_ms": 1000 * percentile(stats.loads, 95),
        "throughput_per_s": in_window / window,
        "window_s": window,
        "kib_per_interaction": stats.bytes / 1024 / max(len(stats.latencies), 1),
        "rss_idle_mib": rss[0],
        "rss_peak_mib": rss[1],
        "error_kinds": dict(stats.errors.most_common(5)),
    }


def print_table(r: dict) -> None:
    window = r.get("join_window_s")
    joined = f"at random within {window:g} s" if window is not None else f"evenly over {r.get('ramp_s', 0):g} s"
    assets = (
        f"fetched by each first page, {r['asset_mib_per_first_page']:.1f} MiB"
        if r.get("assets")
        else "not fetched (a warm browser cache)"
    )
    rows = [
        ("sessions (loaded)", f"{r['sessions']} ({r['loaded']})"),
        ("arrivals", joined),
        ("frontend files", assets),
        ("links", "each student's own sentence (40-63 tokens)" if r.get("own_text") else "the page's defaults"),
        ("think time", f"{r['think_s']:g} s ±50 %"),
        ("interactions completed", f"{r['interactions']}"),
        ("errors", f"{r['errors']}"),
        (
            "first page p50 / p95 / max",
            f"{r['first_page_p50_ms']:.0f} / {r['first_page_p95_ms']:.0f} / "
            f"{r['first_page_max_ms']:.0f} ms (arrival -> first run finished)",
        ),
        ("later p50 / p95 / max", f"{r['p50_ms']:.0f} / {r['p95_ms']:.0f} / {r['max_ms']:.0f} ms (change -> finished)"),
        ("one rerun, server idle", f"{r['solo_rerun_ms']:.0f} ms (median of --solo changes by a lone tab)"),
        ("first run alone p50 / p95", f"{r['load_p50_ms']:.0f} / {r['load_p95_ms']:.0f} ms (its send -> finished)"),
        ("throughput", f"{r['throughput_per_s']:.2f} interactions/s over {r['window_s']:.0f} s"),
        (
            ("server CPU per first page", f"{r['server_cpu_ms_per_interaction']:.0f} ms (no changes: first pages only)")
            if r.get("first_page_only")
            else ("server CPU per rerun", f"{r['server_cpu_ms_per_interaction']:.0f} ms (loads and changes)")
        ),
        ("CPU s server / this client", f"{r['server_cpu_s']:.0f} / {r['client_cpu_s']:.0f} s"),
        ("server cores used", f"{r['server_cores_used']:.2f} (server CPU s / wall s of the load)"),
        ("machine load average", f"{r['loadavg_1min']:.1f} (1 min, at the end; 2 cores)"),
        ("data per interaction", f"{r['kib_per_interaction']:.0f} KiB"),
        ("server RSS idle -> peak", f"{r['rss_idle_mib']:.0f} -> {r['rss_peak_mib']:.0f} MiB"),
    ]
    if r.get("settled_s") == r.get("settled_s"):  # not NaN: --settle
        rows.insert(1, ("server idle before the load", f"after {r['settled_s']:.0f} s (--settle)"))
    print(f"\n{r['label'] or 'load test'}")
    for name, value in rows:
        print(f"  {name:<26} {value}")
    for kind, n in r["error_kinds"].items():
        print(f"  error x{n}: {kind}")


def report(result: dict, json_path: Path | None, table=None) -> None:
    """Print the table (``table``, else the plain load test's); append the figures as one JSON line when asked."""
    (table or print_table)(result)
    if json_path:
        with json_path.open("a") as f:
            f.write(json.dumps(result) + "\n")


# ---------------------------------------------------------------- entry point


# class mode's ways to slow the phones (--phone-throttle), as the report names them
PHONE_THROTTLES = {"stop": "stopped, not spinning", "chromium": "Chromium's throttle, spinning"}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--url", help="an already running app, e.g. http://127.0.0.1:8080 (loopback only)")
    p.add_argument("--app-dir", type=Path, default=ROOT, help="folder of the app.py to start without --url")
    p.add_argument(
        "--server-pid",
        type=int,
        action="append",
        default=[],
        help="a server process whose RSS (with its children) to report; repeatable",
    )
    p.add_argument("--sessions", type=int, default=60, help="concurrent students (default 60)")
    p.add_argument("--think", type=float, default=5.0, help="mean seconds between a student's changes (default 5)")
    p.add_argument("--duration", type=float, default=60.0, help="seconds of load after the start (default 60)")
    p.add_argument("--ramp", type=float, default=5.0, help="seconds over which the students arrive evenly (default 5)")
    p.add_argument(
        "--join-window",
        type=float,
        metavar="N",
        help="instead of --ramp: each student arrives at a random (seeded) moment within N seconds",
    )
    p.add_argument(
        "--assets",
        action="store_true",
        help="each first page also fetches the frontend files its index.html names, as a browser with an "
        "empty cache does (six at a time); off: as if the browser had them cached",
    )
    p.add_argument("--page", default="playground", help="URL path of the page (default playground)")
    p.add_argument(
        "--own-text",
        action="store_true",
        help="each student opens the page by a link with a sentence of its own (40-63 tokens of the real model): "
        "for --page real_model, every first page runs the model on new tokens",
    )
    p.add_argument(
        "--first-page-only",
        action="store_true",
        help="students open the page and change nothing: the server CPU per first page, as a class joining",
    )
    p.add_argument(
        "--controls",
        default="{page}_temperature,{page}_mask",
        help="comma-separated widget keys to change in turn (sliders, radios or selectboxes); {page} is --page "
        "(default: that page's temperature and mask)",
    )
    p.add_argument("--timeout", type=float, default=60.0, help="seconds one request or run may take (default 60)")
    p.add_argument(
        "--solo",
        type=int,
        default=5,
        help="changes one lone tab times before the load, to report the unloaded rerun time (default 5)",
    )
    p.add_argument(
        "--class-mode",
        action="store_true",
        help="a live class instead (benchmarks/class_load.py): a lecturer starts a class and edits, the --sessions "
        "students join by the link and follow; edit -> follower latency, idle cost, optionally a restart",
    )
    p.add_argument(
        "--processes",
        type=int,
        default=2,
        help="class mode without --url: app processes to start (1: streamlit run; more: behind nginx; default 2)",
    )
    p.add_argument(
        "--class-control",
        default="{page}_temperature",
        help="class mode: the widget key the lecturer moves every --think seconds (default {page}_temperature)",
    )
    p.add_argument(
        "--idle", type=float, default=30.0, help="class mode: seconds the class changes nothing (default 30)"
    )
    p.add_argument(
        "--phones", type=int, default=0, help="class mode: Chromium phones that also follow (their heatmap timed)"
    )
    p.add_argument(
        "--phone-cpu", type=float, default=4.0, help="class mode: how many times the phones' CPU is slowed (4)"
    )
    p.add_argument(
        "--phone-throttle",
        choices=tuple(PHONE_THROTTLES),
        default="chromium",
        help="class mode: how the phones are slowed: stopped for the slowed share of every few ms (their work costs "
        "its own CPU) or Chromium's DevTools throttle, as Lighthouse (it spins the slowed share on Linux; default)",
    )
    p.add_argument(
        "--phone-nice",
        type=int,
        default=0,
        help="class mode: the phones' browser's scheduling group at this nice (19: after the servers; default 0)",
    )
    p.add_argument(
        "--answer-window",
        type=float,
        default=5.0,
        help="class mode: the lecturer asks a question and every student answers within this many seconds of seeing "
        "it; last answer -> all counted on the lecturer's screen (0: no question; default 5)",
    )
    p.add_argument(
        "--restart",
        action="store_true",
        help="class mode, own servers: kill and restart every app process mid-class; students reconnect",
    )
    p.add_argument(
        "--settle",
        action="store_true",
        help="after the lone tab, wait until the server has been idle for 3 s (at most 3 min) before the load, so "
        "one-off work a first page starts (the real-model page's patching job) is not counted; needs the server's "
        "pid (a server started here, or --server-pid)",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the think times and new values")
    p.add_argument("--label", default="", help="title of the printed table")
    p.add_argument("--json", type=Path, help="also append the figures as one JSON line to this file")
    args = p.parse_args(argv)
    args.controls = [c for c in args.controls.format(page=args.page).split(",") if c]
    args.links = own_text_links(args.sessions, args.page, args.seed) if args.own_text else []
    if args.processes < 1:
        p.error("--processes must be 1 or more")
    if args.restart and (args.url or not args.class_mode):
        p.error("--restart needs --class-mode and servers of its own (no --url): it kills and restarts them")
    if args.join_window is not None and args.join_window < 0:
        p.error("--join-window must be 0 or more seconds")
    if args.settle and args.url and not args.server_pid:
        p.error("--settle with --url needs --server-pid (the server whose CPU to watch)")
    if args.url and not urlsplit(args.url).hostname.startswith(LOOPBACK):
        p.error("--url must be a loopback address (127.0.0.0/8, localhost or [::1])")
    if args.phones and args.page != "playground":
        p.error("--phones times the playground's heatmap, drawn in place: it needs --page playground")
    return args


async def solo_reruns(args: argparse.Namespace) -> list[float]:
    """One tab alone on the server changes controls back to back: the cost of one rerun, unloaded."""
    rng, tab, times = random.Random(args.seed), Student(args.url, args.page, args.timeout), []
    try:
        await tab.open()
        await tab.load()
        for n in range(args.solo + 1):
            run = await tab.change(args.controls[n % len(args.controls)], rng)
            times.append(run.seconds)
    finally:
        await tab.close()
    return times[1:]  # the first change warms caches the load phase finds warm too


async def warm_up(args: argparse.Namespace) -> None:
    """One tab opens the page alone, so the process has loaded what every session shares (the real model)."""
    tab = Student(args.url, args.page, args.timeout)
    try:
        await tab.open()
        await tab.load()
    finally:
        await tab.close()


async def settle(pids: list[int], quiet_s: int = SETTLE_QUIET_S, limit_s: float = SETTLE_LIMIT_S) -> float:
    """Wait until the server has used under SETTLE_CORE of a core in each of ``quiet_s`` seconds in a row (or
    ``limit_s`` passed): the seconds waited."""
    start, quiet = time.monotonic(), 0
    while quiet < quiet_s and time.monotonic() - start < limit_s:
        before = cpu_seconds(pids)
        await asyncio.sleep(1.0)
        quiet = quiet + 1 if cpu_seconds(pids) - before < SETTLE_CORE else 0
    return time.monotonic() - start


async def run_load(args: argparse.Namespace, pids: list[int]) -> dict:
    """All students at once, bounded by the duration plus one time-out; the figures of the run."""
    try:
        solo = await solo_reruns(args) if args.solo else []
        if not args.solo:
            await warm_up(args)
    except Exception as err:  # the page fails for one tab alone: a load figure would mean nothing
        raise SystemExit(f"a lone tab already fails on /{args.page}: {type(err).__name__}: {err}") from err
    settled = await settle(pids) if args.settle else float("nan")
    stats, peak = Stats(), [rss_mib(pids) if pids else float("nan")]
    idle, cpu0, own0, wall0 = peak[0], cpu_seconds(pids), time.process_time(), time.monotonic()
    deadline = time.monotonic() + args.duration
    sampler = asyncio.create_task(sample_rss(pids, peak, deadline + args.timeout))
    arrivals = arrival_times(args)
    tasks = [asyncio.create_task(student(i, args, stats, deadline, t)) for i, t in enumerate(arrivals)]
    _, pending = await asyncio.wait(tasks, timeout=args.duration + max(arrivals, default=0) + 2 * args.timeout)
    for task in pending:
        task.cancel()
        stats.errors["did not finish in time"] += 1
    sampler.cancel()
    if pids:
        peak[0] = max(peak[0], rss_mib(pids))
    cpu = cpu_seconds(pids) - cpu0
    return summarize(args, stats, deadline, (idle, peak[0])) | {
        "solo_rerun_ms": 1000 * statistics.median(solo) if solo else float("nan"),
        "server_cpu_ms_per_interaction": 1000 * cpu / max(len(stats.latencies) + len(stats.loads), 1),
        "first_page_only": args.first_page_only,
        "settled_s": settled,
        "own_text": args.own_text,
        "client_cpu_s": time.process_time() - own0,
        "server_cpu_s": cpu,
        "server_cores_used": cpu / (time.monotonic() - wall0),
        "loadavg_1min": float(Path("/proc/loadavg").read_text().split()[0]),
    }


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.class_mode:
        from benchmarks import class_load

        try:
            return class_load.main(args)
        except devserver.ServerError as err:
            raise SystemExit(str(err)) from None
    server = None
    try:
        if args.url:
            devserver.wait_healthy(args.url, timeout=HEALTHY_WITHIN_S)
        else:  # no file watcher (devserver), as in production: a tree others edit must not reload mid-test
            server = devserver.start(args.app_dir, timeout=HEALTHY_WITHIN_S)
            args.url = server.url
            args.server_pid.append(server.process.pid)
    except devserver.ServerError as err:
        raise SystemExit(str(err)) from None
    try:
        result = asyncio.run(run_load(args, args.server_pid))
    finally:
        if server is not None:
            devserver.stop_server(server)
    report(result, args.json)
    return 1 if result["errors"] else 0


if __name__ == "__main__":
    sys.exit(main())
