"""Property tests: random editor edits pushed through the editor-to-core path, as the pages push them.

Every table edit, shape change and control change a student can make (and many they cannot, such as
deltas for rows that do not exist) goes through :func:`attention_views.pure.tables.apply_delta`,
:func:`attention_views.pure.single_head.resize_model_dims` / ``resize_head_width``, then
:func:`attention_views.pure.single_head.run_single_head` (playground, step by step) and
:func:`attention_views.pure.multi_head.run_multi` (multi-head). Each run either

- computes: every weight is finite, in [0, 1], and every row sums to 1 (0 for a row the mask blinds);
- or raises ``TableError`` (naming the table) or ``AttentionInputError`` (naming a table or argument).

Nothing else may escape, and a failed edit never loses the last valid state: the table objects kept
from the last run that computed are unchanged, and running them again gives the same weights.

``FUZZ_EXAMPLES`` (default 120) sets hypothesis's examples per property, for a longer run:
``FUZZ_EXAMPLES=2000 python -m pytest tests/fuzz/test_fuzz_edits.py``.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, event, given, note, settings
from hypothesis import strategies as st

import attention_core as ac
from attention_views.pure import multi_head
from attention_views.pure.lab import HEAD_MODES, MASK_KINDS, MAX_DIMS, MAX_HEADS, MAX_TOKENS, SCALE_MODES, new_lab
from attention_views.pure.single_head import resize_head_width, resize_model_dims, run_single_head
from attention_views.pure.tables import (
    TOKEN,
    Delta,
    TableError,
    apply_delta,
    parse_number,
    table_to_matrix,
    value_columns,
)

SCENARIOS = tuple(ac.list_scenarios())
FUZZ = settings(
    max_examples=int(os.environ.get("FUZZ_EXAMPLES", "120")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# ---- what a student (or a damaged link, or a CSV) can put into a cell ----------------------------

SPECIAL_FLOATS = (
    1e308,
    -1e308,
    1.7976931348623157e308,
    1e-308,
    -1e-308,
    5e-324,
    -0.0,
    0.0,
    math.nan,
    math.inf,
    -math.inf,
)
ODD_TEXT = (
    "1e400",
    "-1e400",
    "nan",
    "NaN",
    "inf",
    "-Infinity",
    "−2.5",
    " 3 ",
    "1,5",
    "0x10",
    "1_000",
    "∞",
    "١٢",
    "1e-400",
    "",
    "   ",
    "\t",
    "None",
    "null",
    "[1]",
    "True",
)
finite_numbers = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),  # huge, tiny, subnormal, -0.0
    st.sampled_from([v for v in SPECIAL_FLOATS if math.isfinite(v)]),
    st.floats(-10.0, 10.0),
    st.integers(min_value=-(10**20), max_value=10**20),
)
cell_values = st.one_of(
    finite_numbers,
    finite_numbers,  # twice: most edits are numbers, so many sequences get to compute
    st.sampled_from(SPECIAL_FLOATS),
    st.sampled_from([10**308, 10**309, -(10**400), 2**1024]),  # JSON integers have no limit
    st.none(),
    st.just(pd.NA),
    st.booleans(),
    st.sampled_from(ODD_TEXT),
    st.text(max_size=30),
)
# Labels as the editor's text column sends them: unicode (any category but surrogates), empty, very long,
# repeated, or None for a cleared cell.
token_labels = st.one_of(
    st.text(max_size=12),
    st.just(""),
    st.text(min_size=200, max_size=2000),
    st.sampled_from(["Emma", "the", "the", "🙂", "a\u0301", "\u202eRTL", "\x00", "token", "d0", "nan", "None"]),
    st.none(),
)
ERROR_NAMES = re.compile(
    r"\b(Q|K|V|X|X_q|X_kv|W_q|W_k|W_v|W_o|mask|scale|temperature|tokens?|heads?|n_heads|"
    r"d_model|dims?)\b"
)


# ---- the checks ---------------------------------------------------------------------------------


def run(fn, lab: dict) -> tuple[object, Exception | None]:
    """(result, None) or (None, the TableError / AttentionInputError); anything else propagates."""
    try:
        return fn(lab), None
    except (TableError, ac.AttentionInputError) as err:
        return None, err


def check_error(err: Exception, lab: dict) -> None:
    """The message names the table it is about (TableError) or a table or argument (AttentionInputError)."""
    text = str(err)
    assert text.strip(), f"{type(err).__name__} with an empty message"
    if isinstance(err, TableError):
        known = set(lab.tables) | {multi_head.HEADS, multi_head.N_HEADS}
        assert err.table in known, f"TableError about unknown table {err.table!r}: {text}"
        assert err.table.split("_")[0] in text or "head" in text, f"message does not name {err.table!r}: {text}"
    else:
        assert ERROR_NAMES.search(text), f"AttentionInputError names no table or argument: {text}"


def check_weights(weights: np.ndarray, what: str) -> None:
    """Finite, in [0, 1], each row summing to 1 (or 0 for a fully masked row)."""
    assert np.all(np.isfinite(weights)), f"{what}: non-finite weights\n{weights}"
    assert np.all((weights >= 0) & (weights <= 1 + 1e-12)), f"{what}: weights outside [0, 1]\n{weights}"
    sums = weights.sum(axis=1)
    ok = np.isclose(sums, 1.0, atol=1e-9) | (sums == 0)
    assert np.all(ok), f"{what}: row sums {sums}"


def check_single(head, lab: dict) -> None:
    r = head.result
    check_weights(r.weights, "single head")
    assert np.all(np.isfinite(r.output)), f"single head: non-finite output (weights @ V)\n{r.output}"
    assert len(head.query_tokens) == r.weights.shape[0] and len(head.key_tokens) == r.weights.shape[1]


def check_multi(view, lab: dict) -> None:
    for name, w in zip(view.names, view.weights, strict=True):
        check_weights(w, f"head {name!r}")
    check_weights(view.single.weights, "multi-head page's single head")
    assert np.all(np.isfinite(view.output)), f"multi-head: non-finite output\n{view.output}"
    assert view.output.shape[0] == len(view.query_tokens)


def frames_equal(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    try:
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    except AssertionError:
        return False
    return True


def snapshot(lab: dict) -> dict[str, pd.DataFrame]:
    return {name: frame.copy(deep=True) for name, frame in lab.tables.items()}


# ---- random edits, as the pages make them -------------------------------------------------------


@st.composite
def deltas(draw, frame: pd.DataFrame, dynamic: bool = True) -> Delta:
    """An editor delta for ``frame``: cells by position (some out of range, unknown columns), rows added, deleted."""
    n = frame.shape[0]
    columns = [*frame.columns, "no-such-column"]
    cell = lambda col: token_labels if col == TOKEN else cell_values  # noqa: E731
    rows = draw(st.lists(st.integers(-2, n + 2), max_size=4, unique=True))
    edited = {}
    for i in rows:
        cols = draw(st.lists(st.sampled_from(columns), min_size=1, max_size=3, unique=True))
        edited[i] = {c: draw(cell(c)) for c in cols}
    added, deleted = [], []
    if dynamic:
        for _ in range(draw(st.integers(0, 3))):
            cols = draw(st.lists(st.sampled_from(columns), max_size=len(columns), unique=True))
            added.append({c: draw(cell(c)) for c in cols})
        deleted = draw(st.lists(st.integers(-1, n + 1), max_size=3))
    state = {
        "edited_rows": {str(i) if k % 2 else i: v for k, (i, v) in enumerate(edited.items())},
        "added_rows": added,
        "deleted_rows": deleted,
    }
    return Delta.from_state(state)


@st.composite
def control_changes(draw) -> dict:
    """The values the attention controls and multi-head controls allow (their widget ranges)."""
    return draw(
        st.fixed_dictionaries(
            {},
            optional={
                "mask": st.sampled_from(MASK_KINDS),
                "mask_pad": st.integers(0, MAX_TOKENS),
                "mask_window": st.integers(1, MAX_TOKENS),
                "mask_prefix": st.integers(0, MAX_TOKENS),
                "mask_custom": st.one_of(
                    st.none(),
                    st.integers(1, 12).flatmap(
                        lambda r: st.integers(1, 12).flatmap(
                            lambda c: st.lists(st.booleans(), min_size=r * c, max_size=r * c).map(
                                lambda cells: np.array(cells, dtype=bool).reshape(r, c)
                            )
                        )
                    ),
                ),
                "scale_mode": st.sampled_from(SCALE_MODES),
                "scale_custom": st.one_of(
                    st.floats(-100.0, 100.0), st.sampled_from([0.0, -0.0, 1e-308, -100.0, 100.0])
                ),
                "temperature": st.one_of(st.floats(0.1, 5.0), st.sampled_from([0.1, 5.0])),
                "heads_mode": st.sampled_from(HEAD_MODES),
                "n_heads": st.integers(1, MAX_HEADS),
                "use_W_o": st.booleans(),
            },
        )
    )


def edit_step(draw, lab: dict) -> str:
    """Apply one random change to ``lab`` as the pages would; returns a description for the failure note."""
    tables = lab.tables
    kind = draw(
        st.sampled_from(
            ["edit", "edit", "edit", "controls", "heads", "width"] + (["model_dims"] if "X" in tables else [])
        )
    )
    if kind == "edit":
        name = draw(st.sampled_from(sorted(tables)))
        delta = draw(deltas(tables[name], dynamic=name in ("X", "Q", "K", "V")))
        tables[name] = apply_delta(tables[name], delta)
        return f"edit {name}: {delta}"
    if kind == "controls":
        changes = draw(control_changes())
        for field, value in changes.items():
            setattr(lab, field, value)
        return f"controls {changes}"
    if kind == "heads":
        delta = draw(deltas(lab.heads))
        lab.heads = multi_head.apply_heads_delta(lab.heads, delta)
        return f"heads {delta}"
    if kind == "model_dims":
        n = draw(st.one_of(st.integers(1, 8), st.just(MAX_DIMS)))
        resize_model_dims(lab, n)
        return f"resize_model_dims {n}"
    names = draw(st.sampled_from([("Q", "K"), ("V",)] if "Q" in tables else [("W_q", "W_k"), ("W_v",)]))
    n = draw(st.one_of(st.integers(1, 8), st.just(MAX_DIMS)))
    resize_head_width(lab, names, n, "k" if names[0] in ("W_q", "W_k") else "d" if names[0] == "Q" else "v")
    return f"resize_head_width {names} -> {n}"


def run_multi_as_page(lab: dict):
    """What pages/multi_head.py does before running: sync W_O when it is used."""
    if lab.use_W_o:
        multi_head.sync_W_o(lab)
    return multi_head.run_multi(lab)


# ---- the properties -----------------------------------------------------------------------------


@FUZZ
@given(scenario=st.sampled_from(SCENARIOS), data=st.data())
def test_random_edit_sequences_compute_or_explain_and_keep_the_last_valid_state(scenario, data):
    lab = new_lab(scenario)
    last_single = last_multi = None  # (tables kept, their snapshot, controls, weights) of the last run that computed
    for step in range(data.draw(st.integers(1, 8), label="steps")):
        note(f"step {step}: {edit_step(data.draw, lab)}")
        before = snapshot(lab)
        for fn, check in ((run_single_head, check_single), (run_multi_as_page, check_multi)):
            result, err = run(fn, lab)
            event(f"{fn.__name__}: {'computed' if err is None else type(err).__name__}")
            if err is not None:
                check_error(err, lab)
                continue
            check(result, lab)
            weights = result.result.weights if fn is run_single_head else result.weights
            kept = (dict(lab.tables), snapshot(lab), replace(lab), weights)  # a shallow copy: tables are replaced
            if fn is run_single_head:
                last_single = kept
            else:
                last_multi = kept
        for name, frame in before.items():  # running never edits the canonical tables (W_o may be added)
            assert frames_equal(lab.tables[name], frame) or name == multi_head.W_O, f"running changed table {name}"
        for kept, fn in ((last_single, run_single_head), (last_multi, multi_head.run_multi)):
            if kept is None:
                continue
            tables, frozen, controls, weights = kept
            for name, frame in tables.items():
                assert frames_equal(frame, frozen[name]), f"the last valid table {name} was changed by a later edit"
            again = fn(replace(controls, tables=dict(tables), last_single=None, last_multi=None))
            again_w = again.result.weights if fn is run_single_head else again.weights
            np.testing.assert_array_equal(
                np.asarray(again_w), np.asarray(weights), err_msg="the last valid state no longer gives its weights"
            )


@FUZZ
@given(
    name=st.sampled_from(["X", "Q", "K", "V", "W_q", "W_o"]),
    shape=st.tuples(st.integers(0, 5), st.integers(0, 5)),
    tokens=st.booleans(),
    data=st.data(),
)
def test_table_to_matrix_gives_finite_numbers_or_names_the_cell(name, shape, tokens, data):
    rows, cols = shape
    cells = [[data.draw(cell_values) for _ in range(cols)] for _ in range(rows)]
    frame = pd.DataFrame(cells, columns=[f"d{j}" for j in range(cols)], dtype=object)
    labels = [data.draw(token_labels) for _ in range(rows)]
    if tokens:
        frame.insert(0, TOKEN, labels)
    else:
        frame.index = [str(label) for label in labels]
    frozen = frame.copy(deep=True)
    try:
        got_labels, M = table_to_matrix(frame, name)
    except TableError as err:
        assert err.table == name and str(err).startswith(name), str(err)
        assert "row" in str(err) or "rows" in str(err) or "columns" in str(err), str(err)
    else:
        assert M.shape == (rows, cols) and np.all(np.isfinite(M))
        assert len(got_labels) == rows and all(isinstance(label, str) for label in got_labels)
    assert frames_equal(frame, frozen), "table_to_matrix changed its input"


@given(value=cell_values)
def test_parse_number_returns_a_finite_float_or_a_value_error(value):
    try:
        number = parse_number(value)
    except ValueError as err:
        assert str(err).startswith("is "), str(err)
    else:
        assert isinstance(number, float) and math.isfinite(number)


@pytest.mark.parametrize("value", [10**309, -(10**400), 2**1024], ids=["1e309", "-1e400", "2**1024"])
def test_huge_integer_cell_is_refused_not_an_overflow(value):
    """A JSON file or link may carry an integer beyond float range (JSON integers have no limit)."""
    frame = pd.DataFrame([[value, 1.0]], columns=["d0", "d1"], dtype=object)
    frame.insert(0, TOKEN, ["big"])
    with pytest.raises(TableError, match=r"X row 0 \('big'\), column 'd0'"):
        table_to_matrix(frame, "X")


@FUZZ
@given(scenario=st.sampled_from(SCENARIOS), data=st.data())
def test_apply_delta_never_changes_the_table_it_was_given(scenario, data):
    lab = new_lab(scenario)
    name = data.draw(st.sampled_from(sorted(lab.tables)))
    frame = lab.tables[name]
    frozen = frame.copy(deep=True)
    delta = data.draw(deltas(frame))
    out = apply_delta(frame, delta)
    assert frames_equal(frame, frozen), "apply_delta changed the canonical table in place"
    assert value_columns(out) == value_columns(frame)
    kept = [i for i in range(frame.shape[0]) if i not in set(delta.deleted_rows)]
    assert out.shape[0] == len(kept) + len(delta.added_rows)


EXTREMES = (1e308, -1e308, 1.7976931348623157e308, 1e154, -1e154, 1e-308, 5e-324, -0.0, 0.0, 1.0, -1.0)


@FUZZ
@given(scenario=st.sampled_from(SCENARIOS), controls=control_changes(), data=st.data())
def test_tables_of_extreme_finite_numbers_compute_or_explain(scenario, controls, data):
    """Every cell huge, tiny or signed zero: overflow is named (AttentionInputError), never a NaN weight."""
    lab = new_lab(scenario)
    for field, value in controls.items():
        setattr(lab, field, value)
    if lab.use_W_o:
        multi_head.sync_W_o(lab)  # W_o too gets extreme entries
    for name, frame in lab.tables.items():
        filled = frame.copy()
        for col in value_columns(frame):
            filled[col] = [data.draw(st.sampled_from(EXTREMES)) for _ in range(frame.shape[0])]
        lab.tables[name] = filled.astype({c: object for c in value_columns(frame)})
    for fn, check in ((run_single_head, check_single), (run_multi_as_page, check_multi)):
        result, err = run(fn, lab)
        event(f"{fn.__name__}: {'computed' if err is None else type(err).__name__}")
        if err is None:
            check(result, lab)
        else:
            check_error(err, lab)


@FUZZ
@given(scenario=st.sampled_from(SCENARIOS), data=st.data())
def test_a_W_o_of_extreme_entries_computes_or_explains(scenario, data):
    """Only W_O extreme (the heads are fine): concat @ W_O may overflow, which must be named, not drawn as inf."""
    lab = new_lab(scenario)
    lab.use_W_o = True
    multi_head.sync_W_o(lab)
    W_o = lab.tables[multi_head.W_O].copy()
    for col in value_columns(W_o):
        W_o[col] = [data.draw(st.sampled_from(EXTREMES)) for _ in range(W_o.shape[0])]
    lab.tables[multi_head.W_O] = W_o.astype(object)
    view, err = run(multi_head.run_multi, lab)
    if err is None:
        check_multi(view, lab)
    else:
        check_error(err, lab)
