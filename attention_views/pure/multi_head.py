r"""The multi-head view of the lab: heads from a dimension-selection table or an equal split, run together.

.. math::
    \mathrm{head}_i = \mathrm{Attention}(X W^Q_i, X W^K_i, X W^V_i), \qquad
    \mathrm{MultiHead} = \mathrm{Concat}(\mathrm{head}_1, \ldots, \mathrm{head}_h)\, W^O

Heads come either from the lab's heads table (a name and the input dims it selects, as the apple/orange
notebook does: its W^Q = W^K = W^V pick those dims) or from cutting the lab's full W_q, W_k, W_v (or,
for scenarios given as direct Q, K, V, their columns) into ``h`` equal blocks. No Streamlit here:
every function takes the lab of lab.py, and errors name the head row, table and entry.
"""

from __future__ import annotations

import numbers
import re

import numpy as np
import pandas as pd

import attention_core as ac
from attention_views.pure.lab import MAX_DIMS, MAX_HEADS, MAX_TOKENS, Lab, MultiHeadView
from attention_views.pure.single_head import (
    check_output_lengths,
    checked_product,
    lab_mask,
    project,
)
from attention_views.pure.tables import (
    Delta,
    TableError,
    apply_delta,
    cell_text,
    matrix_table,
    remembered,
    table_to_matrix,
    value_columns,
)

HEADS = "heads"  # where an error belongs: the heads table ...
N_HEADS = "n_heads"  # ... or the number-of-heads input of the equal split
W_O = "W_o"
_SEPARATORS = re.compile(r"[,;\s]+")


class HeadsError(TableError):
    """The heads are unusable; ``table`` is ``"heads"`` (a row of the heads table) or ``"n_heads"``."""


def is_direct(lab: Lab) -> bool:
    """True when the lab's scenario gives Q, K, V directly (its heads can only be column splits)."""
    return "Q" in lab.tables


def head_mode(lab: Lab) -> str:
    """ "selection" or "split"; direct Q/K/V scenarios always split."""
    return "split" if is_direct(lab) else lab.heads_mode


def d_model(lab: Lab) -> int:
    """Width of the embeddings X (the dims a selection head may pick from)."""
    return len(value_columns(lab.tables["X"]))


# ---- the heads table ------------------------------------------------------------------------------


def parse_dims(text: object, d_model: int) -> list[int]:
    """'2, 5' -> [2, 5]: whole numbers from 0 to d_model - 1, separated by commas or spaces.

    Raises ValueError whose message names the bad entry (to be prefixed with the head).
    """
    if isinstance(text, numbers.Integral) and not isinstance(text, bool):
        text = str(int(text))
    entries = [e for e in _SEPARATORS.split(cell_text(text).strip().strip("[]()")) if e]
    if not entries:
        raise ValueError("dims is empty")
    if len(entries) > MAX_DIMS:
        raise ValueError(f"dims lists {len(entries)} entries; a head may select at most {MAX_DIMS}")
    dims = []
    for entry in entries:
        if not re.fullmatch(r"[+-]?\d+", entry):
            raise ValueError(f"dims entry {entry[:20]!r} is not a whole number")
        if not 0 <= int(entry) < d_model:
            raise ValueError(f"dims entry {int(entry)} is not a dimension of the embeddings")
        dims.append(int(entry))
    return dims


def head_name(name: object, row: int) -> str:
    """The head's name from its table cell, or "Head <row + 1>" when the cell is empty."""
    return cell_text(name).strip() or f"Head {row + 1}"


def head_dims(frame: pd.DataFrame, d_model: int) -> list[tuple[str, list[int]]]:
    """(name, dims) for every row of the heads table; HeadsError naming the row, the head and the bad entry."""
    if frame.shape[0] == 0:
        raise HeadsError(HEADS, "the heads table is empty; add a row with a head name and its dims, like '0, 1'")
    if frame.shape[0] > MAX_HEADS:
        raise HeadsError(HEADS, f"the heads table has {frame.shape[0]} rows; use at most {MAX_HEADS} heads")
    out = []
    for row, (name, dims) in enumerate(zip(frame["head"].tolist(), frame["dims"].tolist(), strict=True)):
        label = head_name(name, row)
        try:
            out.append((label, parse_dims(dims, d_model)))
        except ValueError as err:
            raise HeadsError(
                HEADS,
                f"heads row {row} ({label!r}): {err}; list dimensions from 0 to {d_model - 1} "
                "separated by commas, like '1, 3'",
            ) from None
    return out


def parse_heads(frame: pd.DataFrame, d_model: int) -> list[ac.Head]:
    """One selection head per row of the heads table: W_q = W_k = W_v (d_model, len(dims)) pick its dims."""
    return [ac.selection_head(dims, d_model, name) for name, dims in head_dims(frame, d_model)]


def apply_heads_delta(frame: pd.DataFrame, delta: Delta) -> pd.DataFrame:
    """The heads table with an editor's delta applied (rows by position; text kept exactly as typed).

    A delta that changes nothing gives back ``frame`` itself, as :func:`apply_delta` does.
    """
    out = apply_delta(frame, delta)
    return frame if out is frame else out.reset_index(drop=True).astype(object)


def heads_display(frame: pd.DataFrame, memo: dict | None = None) -> pd.DataFrame:
    """What the heads editor shows: both columns as text (an empty cell as ""). ``memo``: a lab's ``read``; while
    ``frame`` is the same object the shown table is not made again (tables.remembered)."""
    return remembered(memo, ("shown", HEADS), frame, lambda: frame.map(cell_text))


def heads_error(lab: Lab) -> str | None:
    """The heads table's error message, or None when every row is usable (or the heads are a split)."""
    if head_mode(lab) != "selection":
        return None
    try:
        parse_heads(lab.heads, d_model(lab))
    except HeadsError as err:
        return str(err)
    return None


# ---- the equal split ------------------------------------------------------------------------------


def split_widths(lab: Lab) -> dict[str, int]:
    """The widths the split cuts: columns of W_q, W_k, W_v (or of Q, K, V), by table name."""
    names = ("Q", "K", "V") if is_direct(lab) else ("W_q", "W_k", "W_v")
    return {name: len(value_columns(lab.tables[name])) for name in names}


def split_counts(widths: dict[str, int]) -> list[int]:
    """The head counts (at most MAX_HEADS) that cut every width into equal blocks: their common divisors."""
    return [h for h in range(1, MAX_HEADS + 1) if all(w % h == 0 for w in widths.values())]


def check_split(widths: dict[str, int], n_heads: int) -> None:
    """Raise HeadsError unless every width divides into ``n_heads`` equal blocks, suggesting counts that do."""
    for name, width in widths.items():
        if width % n_heads:
            fits = split_counts(widths)
            raise HeadsError(
                N_HEADS,
                f"{name} has {width} columns, which do not split evenly into {n_heads} heads; "
                f"choose a head count that divides every width ({', '.join(map(str, fits))})",
            )


def kv_head_counts(n_heads: int) -> list[int]:
    """The key/value head counts a split into ``n_heads`` query heads allows: the divisors of ``n_heads``."""
    return [k for k in range(1, n_heads + 1) if n_heads % k == 0]


def kv_sources(lab: Lab) -> list[int]:
    """For each query head of the split, the head whose K and V it uses (grouped-query attention).

    ``lab.kv_heads`` key/value heads (0, or a count that does not divide the heads: one per query head)
    serve groups of ``n_heads / kv_heads`` consecutive query heads; a group shares its first head's
    K and V, as ``repeat_kv`` repeats each key/value head for its group.
    """
    n, kv = lab.n_heads, lab.kv_heads
    if kv <= 0 or n % kv:
        return list(range(n))
    group = n // kv
    return [(i // group) * group for i in range(n)]


def split_error(lab: Lab) -> str | None:
    """The split's error message for the lab's head count, or None (also when heads are selected)."""
    if head_mode(lab) != "split":
        return None
    try:
        check_split(split_widths(lab), lab.n_heads)
    except HeadsError as err:
        return str(err)
    return None


def split_names(widths: dict[str, int], n_heads: int) -> list[str]:
    """ "Head 1 (cols 0-1)", ...: which columns of the full projections each head takes."""
    d_head = next(iter(widths.values())) // n_heads
    if d_head == 1:
        return [f"Head {i + 1} (col {i})" for i in range(n_heads)]
    return [f"Head {i + 1} (cols {i * d_head}-{(i + 1) * d_head - 1})" for i in range(n_heads)]


# ---- W_O ------------------------------------------------------------------------------------------


def concat_labels(lab: Lab) -> list[str]:
    """Column labels of the concatenated heads, "h<i>·<column>"; raises HeadsError if the heads are unusable."""
    if head_mode(lab) == "selection":
        cols = value_columns(lab.tables["X"])
        heads = head_dims(lab.heads, len(cols))
        return [f"h{i + 1}·{cols[d]}" for i, (_, dims) in enumerate(heads) for d in dims]
    check_split(split_widths(lab), lab.n_heads)
    cols = value_columns(lab.tables["V" if is_direct(lab) else "W_v"])
    d_head = len(cols) // lab.n_heads
    return [f"h{j // d_head + 1}·{c}" for j, c in enumerate(cols)]


def sync_W_o(lab: Lab) -> bool:
    """Give the lab a W_O (lab.tables["W_o"]) with one row per concatenated column.

    A W_O that fits keeps its entries (rows relabelled); otherwise it becomes the identity of the
    concat width. Returns True when its shape changed (editors must restart). Unusable heads: no change.
    """
    try:
        rows = concat_labels(lab)
    except HeadsError:
        return False
    frame = lab.tables.get(W_O)
    if frame is not None and frame.shape[0] == len(rows):
        if list(frame.index) != rows:
            lab.tables[W_O] = frame.set_axis(rows, axis=0)
        return False
    width = len(rows)
    lab.tables[W_O] = matrix_table(np.eye(width), rows, [f"o{j}" for j in range(width)], tokens=False)
    return True


def mix(concat: np.ndarray, W_o: np.ndarray | None) -> np.ndarray:
    """concat (n_q, w) @ W_o (w, d_out) -> (n_q, d_out); concat itself when W_o is None."""
    if W_o is None:
        return concat
    if W_o.shape[0] != concat.shape[1]:
        raise ac.AttentionInputError(
            f"W_o has {W_o.shape[0]} rows but the concatenated heads have {concat.shape[1]} columns; "
            "W_o needs one row per concatenated column"
        )
    return checked_product(
        concat,
        W_o,
        lambda i, j: (  # (n_q, w) @ (w, d_out) -> (n_q, d_out)
            f"concat @ W_o overflowed at output row {i}, column {j}: W_o's entries are too large to multiply; "
            "use smaller numbers in W_o"
        ),
    )


def grid_shape(n_heads: int, n_q: int, n_k: int) -> tuple[int, bool | None]:
    """(columns of the head grid, cell text): 2 columns up to 4 heads, else 4; numbers only where they fit."""
    if n_heads <= 4:
        return 2, None  # None: the figure writes numbers while the matrix is small
    return 4, None if max(n_q, n_k) <= 5 else False  # narrow panels: values on hover only


# ---- running --------------------------------------------------------------------------------------


def attention_kwargs(lab: Lab, n_q: int, n_k: int) -> dict:
    """mask, scale and temperature for the core; the "sqrt" scale gives each head its own 1/sqrt(d_k)."""
    scale = {"sqrt": None, "none": 1.0}.get(lab.scale_mode, lab.scale_custom)
    return {"mask": lab_mask(lab, n_q, n_k), "scale": scale, "temperature": lab.temperature}


def run_multi(lab: Lab) -> MultiHeadView:
    """Parse the lab and run its heads and the single full-width head.

    Raises TableError (a table cell, naming table, row and column), HeadsError (the heads table or
    the split) or AttentionInputError (shapes that do not fit together).
    """
    run = _run_direct if is_direct(lab) else _run_embedded
    query_tokens, key_tokens, names, heads, single, single_name = run(lab)
    concat = np.concatenate([r.output for r in heads], axis=1)  # (n_q, sum of d_v)
    labels = tuple(concat_labels(lab))
    W_o = table_to_matrix(lab.tables[W_O], W_O, lab.read) if lab.use_W_o and W_O in lab.tables else None
    output = mix(concat, None if W_o is None else W_o[1])
    fix = "V" if is_direct(lab) else "W_v"
    check_output_lengths(single.output, "the single head's output (weights · V)", query_tokens, fix)
    check_output_lengths(output, "the multi-head output", query_tokens, "W_o" if W_o is not None else fix)
    out_labels = labels if W_o is None else tuple(value_columns(lab.tables[W_O]))
    return MultiHeadView(
        tuple(query_tokens),
        tuple(key_tokens),
        tuple(names),
        tuple(heads),
        concat,
        labels,
        output,
        out_labels,
        W_o is not None,
        single,
        single_name,
    )


def _check_tokens(query_tokens: list[str], key_tokens: list[str]) -> None:
    if max(len(query_tokens), len(key_tokens)) > MAX_TOKENS:
        raise ac.AttentionInputError(f"at most {MAX_TOKENS} tokens stay interactive; remove some rows")


def _run_embedded(lab: Lab) -> tuple:
    tokens, X = table_to_matrix(lab.tables["X"], "X", lab.read)  # X (n, d_model)
    _check_tokens(tokens, tokens)
    kwargs = attention_kwargs(lab, len(tokens), len(tokens))
    if head_mode(lab) == "selection":
        heads = parse_heads(lab.heads, X.shape[1])
        single = ac.identity_head(X.shape[1], "Single head (identity)")
    else:
        W = {name: table_to_matrix(lab.tables[name], name, lab.read)[1] for name in ("W_q", "W_k", "W_v")}
        check_split(split_widths(lab), lab.n_heads)
        names = split_names(split_widths(lab), lab.n_heads)
        split = ac.split_heads(W["W_q"], W["W_k"], W["W_v"], lab.n_heads)
        share = kv_sources(lab)  # query head i takes its key and value projections from head share[i]
        heads = [
            ac.Head(h.W_q, split[share[i]].W_k, split[share[i]].W_v, name=name)
            for i, (h, name) in enumerate(zip(split, names, strict=True))
        ]
        single = ac.Head(W["W_q"], W["W_k"], W["W_v"], name="Single head (full W)")
    try:
        result = ac.multi_head_attention(X, heads=heads, **kwargs)
        one = ac.multi_head_attention(X, heads=[single], **kwargs).heads[0]
    except ac.AttentionInputError:
        if head_mode(lab) != "selection":  # selection heads only copy entries of X: they cannot overflow
            for name in ("W_q", "W_k", "W_v"):  # name the entry of X · W too large for a float, if that is why
                project(X, W[name], name, tokens, list(lab.tables[name].columns))
        raise
    return tokens, tokens, result.names, result.heads, one, single.name


def _run_direct(lab: Lab) -> tuple:
    (q_tokens, Q), (k_tokens, K), (_, V) = (table_to_matrix(lab.tables[n], n, lab.read) for n in ("Q", "K", "V"))
    _check_tokens(q_tokens, k_tokens)
    kwargs = attention_kwargs(lab, len(q_tokens), len(k_tokens))
    one = ac.scaled_dot_product_attention(Q, K, V, **kwargs)  # validates the shapes first
    n = lab.n_heads
    check_split(split_widths(lab), n)
    Qs, Ks, Vs = np.split(Q, n, axis=1), np.split(K, n, axis=1), np.split(V, n, axis=1)  # h x (n, d_head)
    share = kv_sources(lab)  # query head i meets key/value head share[i]
    heads = [ac.scaled_dot_product_attention(q, Ks[share[i]], Vs[share[i]], **kwargs) for i, q in enumerate(Qs)]
    return q_tokens, k_tokens, split_names(split_widths(lab), n), heads, one, "Single head (full width)"
