"""The live class around every page: the sidebar's "Live class" section, following the lecturer, the signal.

frame.run calls, in this order: :func:`join_from_link` and :func:`follow` (in frame.start, before the page: a
student on ``?class=CODE`` joins; a following student takes the lecturer's view when the room moved),
:func:`section` (the sidebar's place for the class, and the signal a student's page watches), the page, then
:func:`after_page` (the lecturer publishes a changed view; a following student who changed the view breaks
away) and :func:`fill_section` (the class controls, drawn after the page so they say what the page did).

The signal: a student's page holds :data:`signal`, a small component that fetches the static file
``static/class/<CODE>.json`` every POLL_MS and reruns the app only when the room's version there is newer than
any it has seen. The lecturer's run writes the file as soon as it moves the room (:func:`signal_now`); every
process's :class:`Watcher` thread writes it too from the store's version every WATCH_EVERY_S, for what moved the
room elsewhere (another machine's lecturer on a Redis store, an expiry) (docs/classroom.md, "Running a class").
Polling a static file costs the server no script run.

Only a seat holding the lecturer key publishes, brings back or ends a class; the key is never written to the
address bar or a link (the address bar holds ``?class=CODE``, the student link).
"""

from __future__ import annotations

import contextlib
import copy
import functools
import gzip
import ipaddress
import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path

import streamlit as st

from attention_rooms import (
    LimitError,
    NoSuchClassError,
    RefusedError,
    RoomError,
    Store,
    format_code,
    new_student_id,
    normalise_code,
    throttle,
)
from attention_rooms.address import StudentBase, student_base_here
from attention_rooms.codes import signal_name
from attention_rooms.errors import StoreUnavailableError
from attention_rooms.limits import ADDRESS, ROOM_TTL_S, SESSION
from attention_rooms.links import CLASS_PARAM, qr_svg, student_link
from attention_views.pure import links, theme
from attention_views.pure.formats import message, plain
from attention_views.pure.lab import ClassSeat, Lab, Session
from attention_views.pure.navigation import PAGES
from attention_views.pure.single_head import table_errors
from attention_views.pure.tables import PROJECTOR_DECIMALS, SHOWN_DECIMALS, display_table
from attention_views.ui import class_questions, followed, static
from attention_views.ui.class_store import store
from attention_views.ui.components.served import HERE as COMPONENTS
from attention_views.ui.components.served import served
from attention_views.ui.controls import projector
from attention_views.ui.sections import model_runs

STATIC = static.FOLDER / "class"  # the rooms' signal files, served as /app/static/class/
WATCH_EVERY_S = 0.2  # the watcher reads the version of every room watched in this process this often
BEAT_S = 2.0  # ... and writes each watched room's file at least this often, moved or not (its beat)
STALE_MS = 15_000  # a page whose file has not beaten for this long (7 beats missed: not a busy moment) asks the app ...
FALLBACK_MS = 5000  # ... itself this often (a whole rerun that reads the store), until the file beats again
SWEEP_EVERY_S = 60.0  # the watcher removes the files of gone rooms this often
ENDED_KEEP_S = 60.0  # a gone room's file (-1) is kept this long, for its pages' polls to see it, then removed
STALE_FILE_S = 600.0  # a file no process has written for this long belongs to no watched room: removed
FAULT_RETRY_S = 2.0  # while the store fails, the lecturer's page tries it this often, and publishes once it answers
FALLBACK_SHOWN = f"{FALLBACK_MS // 1000} s"
FOLDER_FAULT = f"The class's signal files cannot be written; the students' pages ask the app every {FALLBACK_SHOWN}."
POLL_MS = 250  # a student's page fetches its room's file this often (served by nginx or Streamlit, no script run)
IDLE_POLL_MS = 400  # ... and this often once the room has not moved for IDLE_AFTER_MS (fewer bytes on the Wi-Fi)
IDLE_AFTER_MS = 30_000
PANEL = "sidebar_class_panel"  # the "Live class" expander's open state (no class yet)
# Streamlit's sidebar, open, and its close button (its DOM, not an API: tests/e2e/test_browser_phone.py fails when an
# upgrade changes it); a phone's width
SIDEBAR = {
    "open": '[data-testid="stSidebar"][data-collapsed="false"]',
    "close": '[data-testid="stSidebarCollapseButton"] button',
    "phone_px": theme.PHONE_PX,
}
FOLLOWING_BAR = "class_following"  # a following student's class bar above the page (shown on a phone only)
SEAT_COOKIE = "lab_seat"  # the browser's seat (codes.new_student_id), kept ROOM_TTL_S: a reload keeps the seat
_TOKEN = re.compile(r"[A-Za-z0-9_-]{16,64}")  # what a seat cookie may hold (anything else: a new seat)
ENDED = -1  # the version a room's file holds once the room is gone (closed or expired)
VIEW_SUFFIX = ".view.json"  # a room's view's main chart, beside its signal file (Watcher.draw)
LOG = logging.getLogger(__name__)
# The followers of a process that take a new view run the page one at a time (turn): under Python's GIL their runs
# share one core however many run, and one at a time the first is on its screen after one run, not after all.
_TURNS = threading.Lock()
_DECODING = threading.Lock()  # lecturer_view's
ReplaceLab = Callable[..., None]  # frame.replace_lab: makes a lab the session's and restarts the page's widgets

SIGNAL_KEY = "class_signal"  # the signal's element (frame.py's CSS hides it)
SIGNAL_MODULE = COMPONENTS / "signal.js"  # the signal component's code
SIGNAL_JS = SIGNAL_MODULE.read_text()
signal = st.components.v2.component("attention_lab_class_signal", js=served(SIGNAL_MODULE), isolate_styles=False)

_CSS = """<style>
.st-key-sidebar_class_code p { font-size: 2.2rem !important; font-weight: 700; letter-spacing: 0.08em;
  line-height: 1.2; }
.st-key-class_big_code p { font-size: clamp(3rem, 8vw, 6rem) !important; font-weight: 800; letter-spacing: 0.1em;
  line-height: 1.1; }
.st-key-class_big_qr img { width: 100%; max-height: calc(100dvh - 10rem); object-fit: contain; }
</style>"""


# -- the signal's file -------------------------------------------------------------------------------------------


class Watcher:
    """Writes each watched room's signal file ``<folder>/<name>.json`` (``{"version": n, "beat": t}``, version -1
    once the room is gone; ``name`` from codes.signal_name, not the code) when the store's version of the room moved,
    and at least every BEAT_S (the beat: a page whose file stops beating asks the app itself, see SIGNAL_JS). When
    the room's view moved, it first writes the view's main chart beside it (``<name>.view.json``, followed.py, with a
    gzipped copy for nginx's ``gzip_static``), and the signal says so: ``"view"``, the view's version (absent when
    the view's page has no such chart).
    ``written`` is only a cache of which rooms to look at (the store holds the truth), so every process's watcher
    writes the same file, and the file follows a Redis store across machines. The write is atomic (a temporary file,
    then os.replace): a page never reads half a file. A store or a folder that fails is a state (``fault``), logged
    once: the watcher keeps trying and says when it writes again."""

    def __init__(self, source: Store, folder: Path, clock: Callable[[], float] = time.time) -> None:
        self.store, self.folder, self.clock = source, folder, clock
        self.written: dict[str, int | None] = {}  # code -> the version in its file (None: not written yet)
        self.beaten: dict[str, float] = {}  # code -> when its file was last written
        self.drawn: dict[str, tuple[int, bool]] = {}  # code -> (view version, whether its chart's file was written)
        self.ended: dict[str, float] = {}  # file name -> when -1 was written in it (removed ENDED_KEEP_S later)
        self.fault = ""  # why the folder cannot be written ("" while it can)
        self.secret = ""  # the store's signal secret, read once
        self.swept = 0.0  # when the folder was last swept
        self.lock = threading.Lock()  # guards written and beaten
        self.looking = threading.Lock()  # one look at a time
        self._stopped = threading.Event()

    def watch(self, code: str) -> None:
        with self.lock:
            self.written.setdefault(code, None)

    def name(self, code: str) -> str:
        """The file name of room ``code``'s signal (raises StoreUnavailableError while the store cannot be read)."""
        if not self.secret:
            self.secret = self.store.signal_secret()
        return f"{signal_name(self.secret, code)}.json"

    def tick(self) -> None:
        """One look at every watched room, and a sweep of the folder every SWEEP_EVERY_S."""
        with self.lock:
            watched = list(self.written)
        for code in watched:
            self.look(code)
        if self.clock() - self.swept >= SWEEP_EVERY_S:
            self.sweep()

    def look(self, code: str) -> None:
        """Read the room's version and write its file when it moved or its beat is due; a gone room is written ENDED
        and dropped. One look at a time in a process, so its file never goes back to an older version it read. The
        store unreachable, nothing is written: the file keeps its version and stops beating."""
        with self.looking:
            try:
                try:
                    version = self.store.version(code)
                except NoSuchClassError:
                    version = ENDED
                name = self.name(code)
            except StoreUnavailableError:
                return  # the store's guard logged it and the pages show it
            with self.lock:
                written, beaten = self.written.get(code), self.beaten.get(code, -BEAT_S)
            if version != written and version != ENDED:
                self.draw(code, name)
            now = self.clock()
            if (version != written or now - beaten >= BEAT_S) and self.write(name, version, self.drawn.get(code)):
                with self.lock:
                    self.beaten[code] = now
                    if version == ENDED:
                        self.ended[name] = now
                    self.written[code] = version
            with self.lock:
                if version == ENDED:
                    self.written.pop(code, None)
                    self.beaten.pop(code, None)
                    self.drawn.pop(code, None)

    def draw(self, code: str, name: str) -> None:
        """Write the main chart of the room's view (followed.figure_file) beside its signal, when the view moved since
        this process last drew it. A store that fails leaves the last one named (the pages' reruns draw the view);
        a figure that cannot be built is a bug, logged: the signal is written all the same."""
        try:
            room = self.store.room(code)
            if self.drawn.get(code, (None,))[0] == room.view_version:
                return
            view_version, payload = self.store.view(code)
            text = None
            if payload:
                lab, page, _ = lecturer_view(payload)
                text = followed.figure_file(view_version, lab, page, class_questions.room_taps(self.store, code))
        except (RoomError, links.ShareError):
            return
        except Exception:  # noqa: BLE001 (a chart that fails must not stop the class's signal)
            LOG.exception("the class watcher could not draw the view's chart; the pages' reruns will")
            return
        figure = view_file(name)
        written = text is not None and self.put(figure + ".gz", _gzipped(text)) and self.put(figure, text)
        self.drawn[code] = (view_version, written)

    def write(self, name: str, version: int, drawn: tuple[int, bool] | None = None) -> bool:
        """Write the signal file (with the view's chart ``drawn``, see :meth:`draw`); False (the fault logged once)
        when the folder cannot be written."""
        signal = {"version": version, "beat": round(self.clock(), 1)}
        if drawn is not None and drawn[1] and version != ENDED:
            signal["view"] = drawn[0]
        return self.put(name, json.dumps(signal))

    def put(self, name: str, text: str | bytes) -> bool:
        """Write the file ``name`` whole (a temporary file, then renamed); False (the fault logged once) when the
        folder cannot be written."""
        temporary = self.folder / f".{name}.{os.getpid()}.{threading.get_ident()}.tmp"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            temporary.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8"))
            os.replace(temporary, self.folder / name)
        except OSError as err:
            with contextlib.suppress(OSError):
                temporary.unlink(missing_ok=True)
            if not self.fault:
                LOG.warning(
                    "the class signal folder %s cannot be written (%s); pages ask the app instead", self.folder, err
                )
            self.fault = FOLDER_FAULT
            return False
        if self.fault:
            LOG.warning("the class signal folder %s can be written again", self.folder)
            self.fault = ""
        return True

    def sweep(self) -> None:
        """Remove the files of rooms gone ENDED_KEEP_S ago, and files no process has written for STALE_FILE_S (rooms
        that expired, or ended while no process watched them)."""
        self.swept = now = self.clock()
        with self.lock:
            gone = [name for name, when in self.ended.items() if now - when >= ENDED_KEEP_S]
            for name in gone:
                del self.ended[name]
        for name in gone:
            figure = view_file(name)
            for path in (self.folder / name, self.folder / figure, self.folder / f"{figure}.gz"):
                with contextlib.suppress(OSError):
                    path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            for path in [*self.folder.glob("*.json"), *self.folder.glob("*.json.gz")]:
                with contextlib.suppress(OSError):
                    if now - path.stat().st_mtime >= STALE_FILE_S:
                        path.unlink()

    def stop(self) -> None:
        """End :meth:`run` at its next tick (this watcher was released: another one watches from now on)."""
        self._stopped.set()

    def run(self) -> None:
        """Tick until stopped (a daemon thread). A look never raises for a store or folder that fails (a state,
        logged once); anything else is a bug, logged, and the next tick tries again."""
        while not self._stopped.wait(WATCH_EVERY_S):
            try:
                self.tick()
            except Exception:  # noqa: BLE001 (a thread that dies would silently stop every class in the process)
                LOG.exception("the class watcher failed; trying again")


def view_file(signal: str) -> str:
    """The name (or URL) of the view's chart file beside the signal file ``signal`` (Watcher.draw)."""
    return signal.removesuffix(".json") + VIEW_SUFFIX


def _gzipped(text: str) -> bytes:
    return gzip.compress(text.encode("utf-8"), compresslevel=9, mtime=0)


@st.cache_resource(on_release=Watcher.stop)
def watcher() -> Watcher:
    """This process's watcher, its thread started once and stopped when the cache releases it (a cleared cache
    starts another: never two threads writing the same files)."""
    made = Watcher(store(), STATIC)
    threading.Thread(target=made.run, name="class-watcher", daemon=True).start()
    return made


def signal_now(code: str) -> None:
    """The lecturer moved the room: its file is written at once (this process's watcher also looks at it from now
    on), so the students' next poll sees the move without waiting for a watcher's tick."""
    watcher().watch(code)
    watcher().look(code)


def signal_url(code: str) -> str:
    """Where the browser fetches the room's file: Streamlit's static folder under the app's base path ("" while the
    store cannot name it)."""
    try:
        name = watcher().name(code)
    except StoreUnavailableError:
        return ""
    base = str(st.get_option("server.baseUrlPath") or "").strip("/")
    return f"{'/' + base if base else ''}/{static.URL}/class/{name}"


# -- following ---------------------------------------------------------------------------------------------------


def view_payload(lab: Lab, page: str) -> str:
    """The view a class shares: the lab (tables, controls, the real model's input) and the page, as the JSON a
    saved view holds; projector mode is each screen's own, so it is never part of it."""
    return links.to_json(replace(lab, projector=False), page)


def join_from_link(s: Session) -> None:
    """Join the class of ``?class=CODE`` as a student, unless this session sits in it already; a code of no class
    says so and the app opens normally."""
    asked = st.query_params.get(CLASS_PARAM)
    if not asked or (s.seat is not None and s.seat.code == _normalised(asked)):
        return
    try:
        _join(s, asked)
    except StoreUnavailableError as err:
        st.warning(f"{plain(message(str(err)))} The app opens without a class: open the class link again in a moment.")
    except RoomError as err:
        st.warning(f"{plain(message(str(err)))} The app opens without a class.")


def _normalised(code: str) -> str | None:
    try:
        return normalise_code(code)
    except NoSuchClassError:
        return None


def _join(s: Session, code: str) -> None:
    """Take this browser's seat in the class ``code`` (the same seat however often it leaves and joins again). A
    code of no class counts against this session and address (attention_rooms.throttle); past the limit no code is
    tried (LimitError)."""
    token, who = seat_token(s), client(s)
    if why := throttle.refused(store(), "code", who):
        raise LimitError(why)
    try:
        room = store().join(code, token)
    except NoSuchClassError:
        throttle.spend(store(), "code", who)
        raise
    s.seat = ClassSeat(room.code, student_id=token, name=room.name)
    s.class_error = ""


def client(s: Session) -> dict[str, str]:
    """Who is asking, for the limits: this browser's seat, and the client's address (behind a proxy on this machine
    or its private network, nginx's last X-Forwarded-For entry: the address nginx saw)."""
    peer = st.context.ip_address or ""
    forwarded = (st.context.headers or {}).get("X-Forwarded-For", "")
    try:
        behind_proxy = not peer or ipaddress.ip_address(peer).is_loopback or ipaddress.ip_address(peer).is_private
    except ValueError:
        behind_proxy = False
    address = forwarded.split(",")[-1].strip() if behind_proxy and forwarded else peer
    return {SESSION: seat_token(s), ADDRESS: address[:64] or "unknown"}


def seat_token(s: Session) -> str:
    """This browser's seat: the session's, else the one its cookie kept (a reload), else a new one. The signal
    component writes it into the cookie (SIGNAL_JS), so a reload keeps the seat and its answers."""
    if not s.seat_token:
        kept = (st.context.cookies or {}).get(SEAT_COOKIE, "")
        s.seat_token = kept if _TOKEN.fullmatch(kept) else new_student_id()
    return s.seat_token


def follow(s: Session, replace_lab: ReplaceLab) -> bool:
    """A student's look at the room (one version read; more only when it moved): a new view is applied while
    following; "Bring everyone back" makes them follow again. The class gone, the seat is given up. True when this
    run took the lecturer's view."""
    seat = s.seat
    if seat is None or seat.lecturer:
        return False
    try:
        if store().version(seat.code) == seat.version:
            return False
        room = store().room(seat.code)
        seat.version = room.version
        brought_back = room.bring_back != seat.bring_back
        if brought_back:
            seat.following, seat.bring_back = True, room.bring_back
        if seat.following and (room.view_version != seat.view_version or brought_back):
            seat.view_version, payload = store().view(seat.code)
            if payload:
                return _apply(s, payload, replace_lab)
    except NoSuchClassError:
        _leave(s, "The class has ended; the app goes on without it.")
    except StoreUnavailableError:
        pass  # a state: the page keeps its view, fault_banner says so, and the next run looks again
    return False


def lecturer_view(payload: str) -> tuple[Lab, str, str]:
    """A published view decoded once per process, whichever of its followers asks first: (lab, page, the view's
    payload as :func:`view_payload` makes it). The lab is shared: a follower takes a deep copy of it. Followers
    signalled together ask together: one decodes, the others wait for it and take its result."""
    with _DECODING:
        return _decoded(payload)


@functools.lru_cache(maxsize=8)
def _decoded(payload: str) -> tuple[Lab, str, str]:
    lab, page = links.from_json(payload, model_runs.head_lab)
    _read_tables(lab)
    return lab, page, view_payload(lab, page)


def _read_tables(lab: Lab) -> None:
    """Read the lab's tables into its memo (``lab.read``) as every follower's page will, its editors in either
    projector mode: a follower's copy keeps what was read (:func:`_take_view`)."""
    for name, frame in lab.tables.items():
        for decimals in (PROJECTOR_DECIMALS, SHOWN_DECIMALS):
            display_table(frame, lab.read, name, decimals)
    table_errors(lab.tables, lab.read)  # a table the lecturer is still typing: each follower's page says so


def _apply(s: Session, payload: str, replace_lab: ReplaceLab) -> bool:
    """Make the lecturer's view this session's and open the lecturer's page; False when it could not be opened."""
    page = _take_view(s, payload, replace_lab)
    if page is None:
        return False
    if page in PAGES and page != s.page:
        st.switch_page(f"pages/{page}.py", query_params={"scenario": s.lab.scenario, CLASS_PARAM: s.seat.code})
    return True


def _take_view(s: Session, payload: str, replace_lab: ReplaceLab) -> str | None:
    """The room's view ``payload`` made this session's (a copy of the process's decoding, its own projector mode
    kept) and the seat's published view; its page, or None (the seat told why) when it could not be opened."""
    try:
        shared, page, published = lecturer_view(payload)
    except links.ShareError as err:
        s.seat.notice = f"The lecturer's view could not be opened: {err}."
        return None
    lab = copy.deepcopy(shared, {id(made): made for _, made in shared.read.values()})  # read once, never changed
    lab.projector = s.lab.projector
    replace_lab(lab, keep_editors=True)
    s.seat.published = published
    return page


@contextlib.contextmanager
def turn(took: bool) -> Iterator[None]:
    """The rest of a run that ``took`` the lecturer's view, run when no other follower's is running in this
    process; any other run at once."""
    if not took:
        yield
        return
    with _TURNS:
        yield


def after_page(s: Session, took: bool = False) -> None:
    """After the page: the lecturer publishes the view when it changed, and the room's file is brought up to date
    (whatever this run or its callbacks moved: the view, a question, a reveal, bring back); a following student
    whose view is no longer the lecturer's (an edit, another page) breaks away, and is told so. ``took``: this run
    took the lecturer's view (:func:`follow`), so it is the lecturer's (the page's widgets restarted from it) and
    is not encoded again to compare."""
    seat = s.seat
    if seat is None:
        return
    if seat.lecturer:
        _publish(s, seat)
        if s.seat is not None:
            signal_now(seat.code)
        return
    if seat.following and seat.published and not took and view_payload(s.lab, s.page) != seat.published:
        seat.following = False
        seat.notice = "You changed the view, so you left the lecturer's: this copy is yours. Rejoin to follow again."


def _publish(s: Session, seat: ClassSeat) -> None:
    payload = view_payload(s.lab, s.page)
    if payload == seat.published:
        return
    try:
        seat.view_version = store().set_view(seat.code, seat.lecturer_key, payload)
        seat.published = payload
    except NoSuchClassError:
        _leave(s, "The class has ended (it expired or was ended elsewhere).")
    except StoreUnavailableError:
        pass  # kept unpublished (seat.published is the last view sent): the first run after the fault sends it
    except RoomError as err:
        seat.notice = f"The students did not get this view: {err}"


# -- the sidebar -------------------------------------------------------------------------------------------------


def section(s: Session):
    """The sidebar's place for the class (filled by :func:`fill_section` after the page). Drawn before the page, so
    a page that stops early still keeps it."""
    return st.sidebar.container(key="sidebar_class")


def class_signal(s: Session, replace_lab: ReplaceLab, whole: bool) -> None:
    """The class's signal, drawn first in the page's fragment (nothing to see: frame.py's CSS hides it), so that its
    rerun is the fragment's alone (a component's trigger reruns the fragment it is drawn in).

    The signal of a student's page polls the room's file; a move reruns the page's fragment, which takes the
    lecturer's view. The lecturer's page gives its signal the code and key to keep in the tab's ``sessionStorage``
    (that tab only, kept across a reload, never sent anywhere else); after a reload the tab joins its own class as a
    student, and its signal hands the kept key back (:func:`_on_reclaim`), so the tab leads the class again without
    typing the key.

    A rerun of the page's fragment alone (``whole`` False) draws a student's signal as the last whole run did, so the
    browser already holds the element and Streamlit sends a reference to it (``global.minCachedMessageSize``), not
    its 1.6 kB: the version it was drawn with changes only at whole runs. The signal's own record of the version it
    asked for keeps it from asking twice; a version the fragment took by another rerun is asked for once more."""
    seat = s.seat
    if seat is None:
        return
    if seat.lecturer:
        data = {"remember": {"code": seat.code, "key": seat.lecturer_key}, "seat": _seat_cookie(seat_token(s))}
        _signal(data, _nothing)
        return
    watcher().watch(seat.code)
    url = signal_url(seat.code)
    if whole:
        seat.drawn, seat.drawn_view = seat.version, seat.view_version
    data = {
        "url": url,
        "version": seat.drawn,
        "view": seat.drawn_view,
        "in_place": seat.following and not projector(),  # draws the view's main chart from its file (followed.py)
        "figure": view_file(url) if url else "",
        "actions": seat.actions,
        "sidebar": SIDEBAR,
        "every_ms": POLL_MS,
        "idle_ms": IDLE_POLL_MS,
        "idle_after_ms": IDLE_AFTER_MS,
        "reclaim": seat.code,
        "seat": _seat_cookie(seat.student_id),
        "fallback": not url or bool(watcher().fault),  # ask the app from the start: the file is not written
        "stale_ms": STALE_MS,
        "fallback_ms": FALLBACK_MS,
    }
    _signal(data, lambda: _on_reclaim(s, replace_lab))


def _signal(data: dict, on_reclaim: Callable[[], None]) -> None:
    """Mount the signal with ``data``: a move, like a stale nudge, only reruns (the run reads what moved); a
    reclaimed key goes to ``on_reclaim``."""
    signal(
        key=SIGNAL_KEY,
        data=data,
        height=0,
        on_moved_change=_nothing,
        on_stale_change=_nothing,
        on_reclaim_change=on_reclaim,
    )


def _seat_cookie(token: str) -> dict:
    """What the signal component writes into the browser's seat cookie (SIGNAL_JS)."""
    return {"name": SEAT_COOKIE, "token": token, "max_age": ROOM_TTL_S}


def _nothing() -> None:
    """A trigger's callback that only lets it rerun the app (the run reads what moved)."""


def _on_reclaim(s: Session, replace_lab: ReplaceLab) -> None:
    """The key this tab kept while it led its class: the tab leads it again if the store accepts the key; a key
    it refuses (the class ended, another class with that code) leaves the tab a student, saying nothing."""
    key = (st.session_state.get(SIGNAL_KEY) or {}).get("reclaim")
    if s.seat is None or s.seat.lecturer or not isinstance(key, str) or not key:
        return
    _take_back(s, s.seat.code, key, replace_lab, quiet=True)


def fill_section(s: Session, place, replace_lab: ReplaceLab) -> None:
    """The class controls: start, join, take back (no class); the code, link and QR code and the lecturer's
    buttons (lecturer); following, breaking away, rejoining (student)."""
    with place:
        if s.seat is None:
            _no_class(s, replace_lab)
        elif s.seat.lecturer:
            st.html(_CSS)
            if found := faults():
                _fault_banner(s.seat, found)
            _lecturer(s, s.seat)
        else:
            _student(s, s.seat)


def _no_class(s: Session, replace_lab: ReplaceLab) -> None:
    """The folded "Live class" panel; its form is drawn only while it is open (:func:`_fail` opens it)."""
    panel = st.expander("Live class", icon=":material/groups:", key=PANEL, on_change="rerun")
    if not panel.open:
        return
    with panel:
        if s.class_error:
            st.error(plain(s.class_error), icon="⚠️")
        st.text_input("Class name (optional)", key="sidebar_class_name", max_chars=100)
        st.button("Start a class", key="sidebar_class_start", on_click=_on_start, args=(s,), width="stretch")
        st.text_input("Class code", key="sidebar_class_join_code", placeholder="K7P-2QX")
        st.button("Join a class", key="sidebar_class_join", on_click=_on_join, args=(s,), width="stretch")
        st.caption("Your class, in another tab or browser:")
        st.text_input("Code of your class", key="sidebar_class_back_code")
        st.text_input("Your lecturer key", key="sidebar_class_back_key", type="password")
        st.button(
            "Take a class back",
            key="sidebar_class_back",
            on_click=_on_take_back,
            args=(s, replace_lab),
            width="stretch",
        )


def _student_base() -> StudentBase:
    """Where students open the app: never the lecturer's ``localhost`` (attention_rooms.address)."""
    return student_base_here((st.context.url or "").split("?")[0], str(st.get_option("server.baseUrlPath") or ""))


def _where(base: StudentBase) -> None:
    """Say which address the student link holds when it is not the one the lecturer's browser shows."""
    if not base.reachable:
        st.warning(plain(base.why), icon=":material/wifi_off:")
    elif base.why:
        st.caption(plain(f"The link uses {base.why}."))


def _lecturer(s: Session, seat: ClassSeat) -> None:
    base = _student_base()
    link = student_link(base.url, seat.code)
    with st.container(border=True):
        st.markdown(f"**Live class{': ' + plain(seat.name) if seat.name else ''}** (you lead it)")
        with st.container(key="sidebar_class_code"):
            st.markdown(format_code(seat.code))  # the code: only CODE_ALPHABET characters and a dash
        st.caption("Students open the link, scan the QR code, or type the code under Live class.")
        st.code(link, language=None, wrap_lines=True)
        _where(base)
        st.image(qr_svg(link), width="stretch" if projector() else 200)
        if st.button("Show the code to the room", key="sidebar_class_show"):
            _show_code(seat, link, base)  # a dialog opens from the script run, not from a callback
        _notice(seat)
        _seats(s, seat)
        st.button("Bring everyone back", key="sidebar_class_bring", on_click=_on_bring_back, args=(s,))
        st.button("End the class", key="sidebar_class_end", on_click=_on_end, args=(s,))
        class_questions.ask_panel(s)  # ask the room about the current view
        with st.expander("Your lecturer key", icon=":material/key:"):
            st.caption(
                "This tab keeps it across a reload; keep it to take the class back in another tab or browser. "
                "Never show it: it lets anyone lead the class."
            )
            st.code(seat.lecturer_key, language=None)


def _seats(s: Session, seat: ClassSeat) -> None:
    """How many students are seated, and the lock: once the class has joined, no new seats (the seated keep
    theirs, and answering)."""
    try:
        room = store().room(seat.code)
    except RoomError:
        return  # a fault (the banner says so) or the class gone (the next run leaves it)
    seated = f"{room.n_seats} seat{'s' if room.n_seats != 1 else ''} taken (your browser's included)"
    st.caption(f"{seated}; locked: no new students" if room.locked else seated)
    label = "Unlock the class" if room.locked else "Lock the class (no new students)"
    icon = ":material/lock_open:" if room.locked else ":material/lock:"
    st.button(label, key="sidebar_class_lock", icon=icon, on_click=_on_lock, args=(s, not room.locked))


def _student(s: Session, seat: ClassSeat) -> None:
    with st.container(border=True):
        name = f": {plain(seat.name)}" if seat.name else ""
        st.markdown(f"**Live class {format_code(seat.code)}{name}**")
        _notice(seat)
        if seat.following:
            st.success("Following the lecturer", icon=":material/sync:")
            st.button("Break away (try it yourself)", key="sidebar_class_break", on_click=_on_break, args=(seat,))
        else:
            st.info("On your own copy", icon=":material/edit:")
            st.button("Rejoin", key="sidebar_class_rejoin", on_click=_on_rejoin, args=(seat,), type="primary")
        st.button("Leave the class", key="sidebar_class_leave", on_click=_leave, args=(s, ""))


def _notice(seat: ClassSeat) -> None:
    if seat.notice:
        st.warning(plain(seat.notice), icon=":material/info:")


def faults() -> list[str]:
    """What is wrong with the class's store or signal files in this process now (what every seat is told)."""
    found = [store().fault] if getattr(store(), "fault", "") else []
    return found + ([watcher().fault] if watcher().fault else [])


def banner(s: Session):
    """Above the page, a student's class bar (filled by :func:`fill_banner` after the page, which may have broken
    away or met a fault of the store); None outside a class or for the lecturer (whose faults the class box in the
    sidebar shows, beside the class's controls)."""
    seat = s.seat
    return st.empty() if seat is not None and not seat.lecturer else None


def fill_banner(s: Session, place) -> None:
    """A student's class bar: a fault of the store; on their own copy, the notice and Rejoin; following, the room's
    code and Break away (that line only on a phone, frame.py's CSS: a wider screen shows the sidebar, which says the
    same)."""
    seat, found = s.seat, faults()
    if place is None or seat is None:
        return
    with place.container():
        if found or not seat.following:
            with st.container(key="class_banner"):
                _fault_banner(seat, found)
                if not seat.following:
                    with st.container(horizontal=True):
                        notice = seat.notice or "You are on your own copy, not the lecturer's view."
                        st.info(plain(notice), icon=":material/edit:")
                        st.button("Rejoin", key="class_rejoin", on_click=_on_rejoin, args=(seat,), type="primary")
        if seat.following:
            with st.container(horizontal=True, vertical_alignment="center", key=FOLLOWING_BAR):
                following = f"Following the lecturer · class {format_code(seat.code)}"
                st.success(following, icon=":material/sync:", width="stretch")
                st.button("Break away", key="class_break", on_click=_on_break, args=(seat,))


def _fault_banner(seat: ClassSeat, found: list[str]) -> None:
    """The faults, and what happens next: the lecturer's edits wait on the screen and are published once the store
    answers (the page tries it every FAULT_RETRY_S, then reruns: after_page publishes); a student keeps the view."""
    then = (
        "Your edits stay on your screen; the students get them when the store is back."
        if seat.lecturer
        else "You keep the view you have; the lecturer's next one comes when the store is back."
    )
    for fault in found:
        st.warning(plain(fault if fault == FOLDER_FAULT else f"{fault} {then}"), icon=":material/cloud_off:")
    if seat.lecturer and store().fault:
        _retry(seat.code)


@st.fragment(run_every=FAULT_RETRY_S)
def _retry(code: str) -> None:
    """While the store fails, one look at it every FAULT_RETRY_S; once it answers, the whole page runs again (and
    publishes the lecturer's view)."""
    try:
        store().version(code)
    except RoomError:
        return
    st.rerun(scope="app")


@st.dialog("Join the class", width="large")
def _show_code(seat: ClassSeat, link: str, base: StudentBase) -> None:
    """The code, the link and the QR code side by side, the QR code as tall as the window leaves (CSS): one screen
    a room can read from the back."""
    st.html(_CSS)
    words, picture = st.columns([2, 3], vertical_alignment="center")
    with words:
        with st.container(key="class_big_code"):
            st.markdown(format_code(seat.code))
        st.caption("Open the link, scan the QR code, or type the code under Live class in the sidebar.")
        st.code(link, language=None, wrap_lines=True)
        _where(base)
    with picture, st.container(key="class_big_qr"):
        st.image(qr_svg(link), width="stretch")


# -- the callbacks -----------------------------------------------------------------------------------------------


def _on_start(s: Session) -> None:
    try:
        if why := throttle.refused(store(), "room", client(s)):
            raise LimitError(why)
        throttle.spend(store(), "room", client(s))
        room, key = store().create_room(st.session_state.get("sidebar_class_name", ""))
        store().join(room.code, seat_token(s))  # the lecturer's browser: a reload rejoins a locked class too
    except RoomError as err:
        _fail(s, str(err))
        return
    s.seat, s.class_error = ClassSeat(room.code, lecturer_key=key, name=room.name), ""


def _on_join(s: Session) -> None:
    try:
        _join(s, st.session_state.get("sidebar_class_join_code", ""))
    except RoomError as err:
        _fail(s, str(err))
        return
    s.seat.actions += 1  # joined from the sidebar: a phone's sidebar closes on the class's page


def _on_take_back(s: Session, replace_lab: ReplaceLab) -> None:
    code, key = st.session_state.get("sidebar_class_back_code", ""), st.session_state.get("sidebar_class_back_key", "")
    _take_back(s, code, key, replace_lab)
    st.session_state["sidebar_class_back_key"] = ""  # the key stays in no widget


def _take_back(s: Session, code: str, key: str, replace_lab: ReplaceLab, quiet: bool = False) -> None:
    """The lecturer again after a reload: the key is checked (nothing changes in the room); the room's view becomes
    this session's, so the students see no change. ``quiet``: a refusal is not shown."""
    try:
        if why := throttle.refused(store(), "code", client(s)):
            raise LimitError(why)
        try:
            store().check_lecturer(code, key)
        except NoSuchClassError:
            throttle.spend(store(), "code", client(s))
            raise
        room = store().room(code)
        with contextlib.suppress(RefusedError):  # this browser's seat, as at the start (none while locked)
            store().join(room.code, seat_token(s))
        view_version, payload = store().view(room.code)
    except RoomError as err:
        if not quiet:
            _fail(s, f"The class was not taken back: {err}")
        return
    s.seat, s.class_error = ClassSeat(room.code, lecturer_key=key, name=room.name, view_version=view_version), ""
    if payload and (page := _take_view(s, payload, replace_lab)) in PAGES:
        s.goto = page  # a callback cannot switch pages: frame.run does


def _on_lock(s: Session, locked: bool) -> None:
    try:
        store().lock(s.seat.code, s.seat.lecturer_key, locked)
    except RoomError as err:
        s.seat.notice = str(err)


def _on_bring_back(s: Session) -> None:
    try:
        store().bring_back(s.seat.code, s.seat.lecturer_key)
        s.seat.notice = "Everyone is back on your view."
    except RoomError as err:
        s.seat.notice = str(err)


def _on_end(s: Session) -> None:
    try:
        store().close(s.seat.code, s.seat.lecturer_key)
    except NoSuchClassError:
        pass  # ended already (expired): leaving is all there is to do
    except RoomError as err:
        s.seat.notice = str(err)
        return
    signal_now(s.seat.code)  # the file says ended: the students' pages rerun and leave
    _leave(s, "")


def _on_break(seat: ClassSeat) -> None:
    seat.following, seat.notice = False, "You broke away: this copy is yours. Rejoin to follow the lecturer again."
    seat.actions += 1


def _on_rejoin(seat: ClassSeat) -> None:
    """Follow again: the next run takes the lecturer's current view (and page)."""
    seat.following, seat.notice, seat.version, seat.view_version = True, "", -1, -1
    seat.actions += 1


def _leave(s: Session, why: str) -> None:
    s.seat = None
    _fail(s, why)
    st.query_params.pop(CLASS_PARAM, None)


def _fail(s: Session, why: str) -> None:
    """Say ``why`` in the "Live class" panel, opened (before it is drawn: in a callback or ahead of the page)."""
    s.class_error = why
    if why:
        st.session_state[PANEL] = True
