"""A run is one ordered list (frame.STEPS): the steps around a page, each a named function with its reason, each
after the steps it needs."""

from __future__ import annotations

import ast
import contextlib
import inspect
import textwrap

from attention_views.ui import frame

NAMES = [step.do.__name__ for step in frame.STEPS]


def test_the_run_is_this_list_in_this_order():
    assert NAMES == [
        "open_session",
        "fold_edits",
        "follow_class",
        "go_to",
        "take_turn",
        "draw_sidebar",
        "class_section",
        "class_banner",
        "class_signal",
        "question_banner",
        "run_page",
        "publish_class",
        "address_bar",
        "editor_commits",
        "end_editors",
        "fill_class_banner",
        "fill_class_section",
        "sync_link",
        "end_turn",
        "settle",
    ]
    page = [step.do.__name__ for step in frame.STEPS if step.page]  # frame.page_part's: a fragment
    assert page == NAMES[NAMES.index("class_signal") : NAMES.index("end_editors") + 1], "one run of steps"


def test_each_step_has_its_reason_and_comes_after_its_prerequisites():
    assert len(set(NAMES)) == len(NAMES)
    for at, step in enumerate(frame.STEPS):
        assert (step.do.__doc__ or "").strip(), f"{step.do.__name__} says why it is there"
        for needed in step.after:
            assert needed in NAMES, f"{step.do.__name__} needs {needed}, which is no step"
            assert NAMES.index(needed) < at, f"{step.do.__name__} runs before {needed}, which it needs"


def _fields(fn) -> tuple[set[str], set[str]]:
    """The fields of the run state ``r`` that step ``fn`` reads and sets, from its source."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(fn)))
    read, set_ = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "r":
            (set_ if isinstance(node.ctx, ast.Store) else read).add(node.attr)
    return read, set_


def _before(name: str) -> set[str]:
    """The steps that must run before step ``name``: its prerequisites, theirs, and so on."""
    after = {s.do.__name__: s.after for s in frame.STEPS}
    found, todo = set(), list(after[name])
    while todo:
        if (got := todo.pop()) not in found:
            found.add(got)
            todo.extend(after[got])
    return found


def test_a_step_reads_only_what_a_prerequisite_set():
    setter = {"page": "run", "exits": "run", "whole": "run"}  # run() makes these
    for step in frame.STEPS:
        read, set_ = _fields(step.do)
        name = step.do.__name__
        assert read <= setter.keys(), f"{name} reads {sorted(read - setter.keys())} before any step sets it"
        needed = {setter[f] for f in read} - {"run"}
        assert needed <= _before(name), f"{name} reads what {sorted(needed - _before(name))} set: a prerequisite"
        setter |= dict.fromkeys(set_, name)
    assert {"s", "took", "slot", "place", "top"} <= setter.keys()


def test_the_check_sees_a_read_before_its_step(monkeypatch):
    def early(r):
        """reads the banner's place."""
        r.s = r.top

    assert _fields(early) == ({"top"}, {"s"})


def test_run_does_every_step_in_order_and_a_step_that_raises_ends_it_releasing_the_turn(monkeypatch):
    done, released = [], []

    class Turn:  # released only by its exit (a generator's finally would also run when it is collected)
        def __enter__(self):
            return self

        def __exit__(self, *exc):
            released.append(True)

    def step(name, raises=False):
        def do(r):
            done.append(name)
            if name == "take":
                r.exits.enter_context(Turn())
            if raises:
                raise RuntimeError(name)

        return frame.Step(do)

    monkeypatch.setattr(frame, "STEPS", (step("a"), step("take"), step("b"), step("c")))
    frame.run(object())
    assert done == ["a", "take", "b", "c"] and released == [True]

    done.clear(), released.clear()
    monkeypatch.setattr(frame, "STEPS", (step("a"), step("take"), step("b", raises=True), step("c")))
    with contextlib.suppress(RuntimeError):
        frame.run(object())
    assert done == ["a", "take", "b"] and released == [True]


def _page_steps(done: list, changes=None) -> tuple:
    def step(name):
        def do(r):
            done.append(name)
            if changes and name == "b":
                changes(r)

        return frame.Step(do, page=True)

    return (step("a"), step("b"))


class _Slot:
    open = False


def _ran_alone(monkeypatch, changes=None) -> tuple[list, list]:
    """frame.page_part's body run as a rerun of the fragment alone (after a whole run): the steps it ran, then
    the whole reruns it asked for."""
    from types import SimpleNamespace

    done, whole = [], []
    monkeypatch.setattr(frame.editors, "fold_last_runs_edits", lambda s: done.append("fold"))
    monkeypatch.setattr(frame.st, "rerun", lambda: whole.append(True))
    monkeypatch.setattr(frame.classroom, "faults", lambda: [])
    monkeypatch.setattr(frame.classroom, "follow", lambda s, replace: done.append("follow") or False)
    s = SimpleNamespace(lab=SimpleNamespace(scenario="x", origin=None, projector=False), goto="", seat=None)
    r = frame.Run(object(), s=s, slot=_Slot(), took=True)
    frame.page_part.__wrapped__(r, _page_steps(done))  # the whole run's
    r.whole = False
    done.clear()
    frame.page_part.__wrapped__(r, _page_steps(done, changes))
    assert r.took is False, "the rerun of the page alone took what classroom.follow said, not the whole run's"
    return done, whole


def test_the_page_rerun_alone_folds_the_edits_and_takes_the_class_view_first_and_runs_only_its_steps(monkeypatch):
    done, whole = _ran_alone(monkeypatch)
    assert done == ["fold", "follow", "a", "b"] and whole == []


def test_the_page_rerun_alone_is_followed_by_a_whole_one_when_it_changed_what_lies_outside(monkeypatch):
    def asks_for_a_page(r):
        r.s.goto = "step_by_step"  # a callback asked for another page: go_to, outside the fragment, switches

    def takes_the_projector(r):
        r.s.lab.projector = True  # the sidebar's toggle and the page's CSS are outside

    for changes in (asks_for_a_page, takes_the_projector):
        _, whole = _ran_alone(monkeypatch, changes)
        assert whole == [True], changes.__name__
