"""A seeded random walk through every page with Streamlit's AppTest: no exception, no traceback, ever.

For each scenario the app (app.py, so the lab state follows the student from page to page) is opened
on that scenario, then it visits every page file under pages/ in a seeded order and makes random
actions among the widgets actually on the page: radios, sliders, number inputs, selectboxes,
toggles, checkboxes, buttons, segmented controls, multiselects, text inputs, data-editor edits
(cells set to random numbers, huge and tiny floats, NaN/inf, text, empty; rows added and deleted;
token labels and head names in any script, empty, very long or hostile: tests/hostile_text.py),
clicks on selectable charts and switches of the lazy tabs, expanders and popovers (only what is open
is drawn, so edits reach every table, and the CSV and share panels are opened). After every action
the page must show no exception element, no "Traceback" text, and no user text as markup.

Environment variables:

- ``FUZZ_ACTIONS``: actions per scenario (default 70: 5-7 s a scenario on the 2-core machine, beside the rest
  of the suite on its other workers). Longer runs scale linearly:
  ``FUZZ_ACTIONS=2000 python -m pytest tests/fuzz/test_fuzz_pages.py``.
- ``FUZZ_SEED``: the base seed (default 2024); scenario ``k`` uses ``FUZZ_SEED + k``. A failure message
  prints the seed, the scenario and the last actions; run it again with the same two variables to
  replay it exactly (the walk depends only on the seed and the app's code).
"""

from __future__ import annotations

import base64
import copy
import json
import math
import os
import random
from pathlib import Path

import numpy as np
import pytest
from streamlit.proto.WidgetStates_pb2 import WidgetState
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.element_tree import user_key_from_element_id

import attention_core as ac
from tests.hostile_text import HOSTILE, markup_problems

ROOT = Path(__file__).resolve().parents[2]
PAGES = tuple(sorted(p.stem for p in (ROOT / "pages").glob("*.py")))
SCENARIOS = tuple(ac.list_scenarios())
ACTIONS = int(os.environ.get("FUZZ_ACTIONS", "70"))
BASE_SEED = int(os.environ.get("FUZZ_SEED", "2024"))
TEXT_ELEMENTS = ("markdown", "error", "warning", "info", "success", "caption", "code", "text", "latex")
WIDGETS = (
    "radio",
    "slider",
    "number_input",
    "selectbox",
    "toggle",
    "checkbox",
    "button",
    "button_group",
    "multiselect",
    "text_input",
    "text_area",
    "select_slider",
)
RESETS = ("sidebar_reset", "sidebar_scenario", "home_open_")  # widgets that start the lab afresh
SET_BY_STATE = ("radio", "selectbox", "button_group", "multiselect", "select_slider")  # formatted labels

NUMBERS = (
    0.0,
    -0.0,
    1.0,
    -1.0,
    0.5,
    2.0,
    -3.25,
    10.0,
    1e308,
    -1e308,
    1.7976931348623157e308,
    1e-308,
    5e-324,
    1e154,
    123456789.0,
    math.nan,
    math.inf,
    -math.inf,
)
BAD_CELLS = (None, "", "   ", "abc", "1e400", "-inf", "nan", "−2", "1,5", "🙂", "0x1F")
LABELS = (
    "",
    " ",
    "the",
    "Emma",
    "🙂",
    "a\u0301",
    "\u202eRTL",
    "日本語",
    "x" * 500,
    "token",
    "d0",
    "<b>",
    "$x$",
    *HOSTILE,
)
# token labels and head names (text cells of the editors), the real model's text box: also every hostile string


def test_fuzz_covers_every_page():
    assert {"home", "playground", "multi_head", "step_by_step", "scaling", "similarity"} <= set(PAGES), PAGES
    assert ACTIONS >= 1


@pytest.mark.parametrize("index", range(len(SCENARIOS)), ids=SCENARIOS)
def test_random_actions_never_raise(index):
    scenario, seed = SCENARIOS[index], BASE_SEED + index
    Walk(scenario, seed).run(ACTIONS)


class Walk:
    """One seeded random walk; ``log`` keeps every action so a failure says what led to it."""

    def __init__(self, scenario: str, seed: int):
        self.scenario, self.seed, self.rng, self.log, self.actions = scenario, seed, random.Random(seed), [], 0
        self.at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
        self.at.query_params["scenario"] = scenario

    def run(self, actions: int) -> None:
        self.step("open app.py", self.at.run)
        pages = list(PAGES)
        self.rng.shuffle(pages)
        per_page = [actions // len(pages) + (k < actions % len(pages)) for k in range(len(pages))]
        for page, count in zip(pages, per_page, strict=True):
            self.step(f"switch to {page}", lambda p=page: self.at.switch_page(f"pages/{p}.py").run())
            for _ in range(count):
                steps = len(self.log)
                self.random_action()
                if len(self.log) == steps:  # the chosen widget offered nothing to do: rerun instead
                    self.step("rerun", self.at.run)
                self.actions += 1
        assert self.actions == actions, f"made {self.actions} actions, not {actions}\n{self.replay()}"

    # ---- checking ---------------------------------------------------------------------------------

    def replay(self) -> str:
        tail = "\n  ".join(self.log[-12:])
        return (
            f"replay: FUZZ_SEED={BASE_SEED} FUZZ_ACTIONS={ACTIONS} (seed {self.seed}, scenario "
            f"{self.scenario!r}, action {len(self.log)}); last actions:\n  {tail}"
        )

    def step(self, what: str, action) -> None:
        self.log.append(what)
        try:
            action()
        except Exception as err:  # a time-out or a refused interaction: report it with the replay
            raise AssertionError(f"{what} raised {type(err).__name__}: {err}\n{self.replay()}") from err
        at = self.at
        shown = [e.value for e in at.exception]
        assert not shown, f"exception shown after {what}:\n{shown[0]}\n{self.replay()}"
        for kind in TEXT_ELEMENTS:
            for el in at.get(kind):
                value = str(getattr(el, "value", ""))
                assert "Traceback" not in value, f"traceback text in {kind} after {what}:\n{value}\n{self.replay()}"
        live = markup_problems(at)  # a hostile label typed anywhere is shown as text, never as markup
        assert not live, f"user text shown as markup after {what}:\n{live[:3]}\n{self.replay()}"

    # ---- choosing an action -----------------------------------------------------------------------

    def random_action(self) -> None:
        at, rng = self.at, self.rng
        widgets = [w for kind in WIDGETS for w in at.get(kind) if not getattr(w.proto, "disabled", False)]
        editors = [e for e in at.get("data_editor") if not e.proto.disabled]
        charts = [c for c in at.get("plotly_chart") if len(c.proto.selection_mode)]
        tabs = lazy_panels(at._tree)
        choices = [("widget", w) for w in widgets] + [("editor", e) for e in editors] + [("chart", c) for c in charts]
        choices += [("tabs", t) for t in tabs]
        if not choices:
            self.step("rerun (no widget on the page)", at.run)
            return
        # Edits are what students do most; actions that throw the state away (reset, another scenario)
        # are kept rare so that edits pile up on each other.
        share = {
            "widget": 0.45 / max(1, len(widgets)),
            "editor": 0.35 / max(1, len(editors)),
            "chart": 0.1 / max(1, len(charts)),
            "tabs": 0.1 / max(1, len(tabs)),
        }
        weights = [
            share[kind] * (0.15 if kind == "widget" and (w.key or "").startswith(RESETS) else 1.0)
            for kind, w in choices
        ]
        kind, target = rng.choices(choices, weights=weights)[0]
        if kind == "editor":
            self.edit(target)
        elif kind == "tabs":
            key, labels = target
            label = rng.choice(labels)
            self.at.session_state[key] = label  # what a click on the tab, expander or popover sends
            self.step(f"open {key} = {label!r}", self.at.run)
        elif kind == "chart":
            self.click_chart(target)
        else:
            self.use(target)

    def use(self, w) -> None:
        """One interaction with widget ``w``, with a value the browser could send."""
        rng, label = self.rng, f"{w.type} {w.key or w.id}"
        if w.type in SET_BY_STATE:
            self.set_by_state(w)
        elif w.type == "slider":
            p = w.proto
            steps = max(0, round((p.max - p.min) / p.step)) if p.step else 0
            value = p.min + p.step * rng.randint(0, steps)
            value = int(round(value)) if p.data_type == p.INT else round(value, 10)
            self.step(f"{label} = {value}", lambda: w.set_value(value).run())
        elif w.type == "number_input":
            value = self.number_for(w.proto)
            self.step(f"{label} = {value}", lambda: w.set_value(value).run())
        elif w.type in ("toggle", "checkbox"):
            self.step(f"{label} = {not w.value}", lambda: w.set_value(not w.value).run())
        elif w.type == "button":
            self.step(f"click {label}", lambda: w.click().run())
        elif w.type in ("text_input", "text_area"):
            text = rng.choice(LABELS)[: w.proto.max_chars or None]
            self.step(f"{label} = {text!r}", lambda: w.set_value(text).run())

    def number_for(self, p) -> float | int:
        """A value inside the input's range (the browser clamps to it), usually small, sometimes at a bound."""
        rng = self.rng
        low = p.min if p.has_min else -1e6
        high = p.max if p.has_max else 1e6
        near = rng.choice([low, high, low + (high - low) * rng.random(), low + rng.random() * min(8, high - low)])
        if p.data_type == p.INT:
            return int(min(high, max(low, round(near))))
        return float(min(high, max(low, round(near, 4))))

    def set_by_state(self, w) -> None:
        """Pick an option by its displayed label, as the browser sends it (these widgets serialise labels)."""
        rng, options = self.rng, list(w.options)
        if not options:
            return
        ws = WidgetState(id=w.id)
        if w.type in ("radio", "selectbox"):
            ws.string_value = rng.choice(options)
            what = ws.string_value
        elif w.type == "button_group" and w._is_single_select:
            ws.string_array_value.data[:] = [rng.choice(options)]
            what = list(ws.string_array_value.data)
        else:
            ws.string_array_value.data[:] = rng.sample(options, rng.randint(0, len(options)))
            what = list(ws.string_array_value.data)
        self.step(f"{w.type} {w.key or w.id} = {what!r}", lambda: self.run_with(ws))

    def run_with(self, ws: WidgetState) -> None:
        states = self.at._tree.get_widget_states()
        kept = [s for s in states.widgets if s.id != ws.id]
        del states.widgets[:]
        states.widgets.extend([*kept, ws])
        self.at._run(states)

    # ---- data editors and charts ------------------------------------------------------------------

    def edit(self, editor) -> None:
        """Add one random change to the editor's cumulative delta (as the grid does) and rerun."""
        rng, frame, key = self.rng, editor.value, editor.key
        config = json.loads(editor.proto.columns or "{}")
        columns = [c for c in frame.columns if not config.get(str(c), {}).get("disabled")]
        state = copy.deepcopy(self.at.session_state[key]) if key in self.at.session_state else {}
        state = {"edited_rows": {}, "added_rows": [], "deleted_rows": []} | state
        dynamic = editor.editing_mode == "dynamic"
        op = rng.choice(["cell"] * 6 + (["add", "delete"] if dynamic else []))
        if op == "cell" and frame.shape[0] and columns:
            row, col = rng.randrange(frame.shape[0]), rng.choice(columns)
            value = self.cell_value(config.get(str(col), {}), frame[col].dtype)
            state["edited_rows"].setdefault(row, {})[col] = value
            what = f"[{row}, {col!r}] = {value!r}"
        elif op == "add" or not frame.shape[0]:
            new = {c: self.cell_value(config.get(str(c), {}), frame[c].dtype) for c in columns if rng.random() < 0.8}
            state["added_rows"].append(new)
            what = f"add row {new!r}"
        else:
            row = rng.randrange(frame.shape[0])
            state["deleted_rows"] = sorted({*state["deleted_rows"], row})
            what = f"delete row {row}"
        self.at.session_state[key] = state
        self.step(f"edit {key} {what}"[:300], self.at.run)

    def cell_value(self, column: dict, dtype) -> object:
        """What the grid sends for a column: text (or None) for text, True/False for checkboxes, else a number."""
        rng, kind = self.rng, column.get("type_config", {}).get("type")
        if kind == "checkbox" or str(dtype) == "bool":
            return rng.random() < 0.5
        if kind == "text" or (kind is None and str(dtype) in ("object", "str", "string")):
            return rng.choice([*LABELS, None, f"t{rng.randint(0, 99)}"])
        roll = rng.random()
        if roll < 0.55:
            return round(rng.uniform(-5, 5), rng.choice([0, 1, 3]))
        if roll < 0.8:
            return rng.choice(NUMBERS)
        return rng.choice(BAD_CELLS)

    def click_chart(self, chart) -> None:
        """A click on a selectable chart: one of its own points, with its customdata, as plotly reports it."""
        spec, rng = json.loads(chart.proto.spec), self.rng
        points = [
            (t, k, trace)
            for t, trace in enumerate(spec.get("data", []))
            for k in range(len(_array(trace.get("customdata")) or []))
        ]
        if not points:
            return
        t, k, trace = rng.choice(points)
        point = {"curve_number": t, "point_number": k, "point_index": k, "customdata": _array(trace["customdata"])[k]}
        for axis in ("x", "y"):
            values = _array(trace.get(axis))
            if values is not None and k < len(values):
                point[axis] = values[k]
        event = {"selection": {"points": [point], "point_indices": [k], "box": [], "lasso": []}}
        ws = WidgetState(id=chart.proto.id, string_value=json.dumps(event))
        self.step(f"click chart {chart.proto.id[-40:]} point {point['customdata']!r}", lambda: self.run_with(ws))


def lazy_panels(node) -> list[tuple[str, list]]:
    """(key, the states a click can give it) of every keyed st.tabs (its labels), st.expander and st.popover (open
    or closed) on the page: the ones that rerun when switched, and draw only what is open."""
    found = []
    for child in node.children.values() if isinstance(getattr(node, "children", None), dict) else ():
        kind = getattr(child, "type", "")
        if kind in ("tab_container", "expander", "popover"):
            key = user_key_from_element_id(getattr(child.proto, "id", "") or "")
            if key:
                if kind == "tab_container":
                    found.append((key, [tab.label for tab in child.children.values()]))
                else:  # an open panel is drawn on every later rerun: closed twice as often, to keep the walk's time
                    found.append((key, [True, False, False]))
        found += lazy_panels(child)
    return found


def _array(value: object) -> list | None:
    """A plotly array as a list: plain lists as they are, typed arrays ({"dtype", "bdata", "shape"}) decoded."""
    if isinstance(value, dict) and "bdata" in value:
        raw = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]))
        if "shape" in value:
            raw = raw.reshape([int(s) for s in str(value["shape"]).split(",")])
        return raw.tolist()
    return value if isinstance(value, list) else None
