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
        "question_banner",
        "run_page",
        "publish_class",
        "fill_class_banner",
        "fill_class_section",
        "sync_link",
        "editor_commits",
        "end_editors",
        "end_turn",
        "settle",
    ]


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
    setter = {"page": "run", "exits": "run"}  # run() makes these
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
