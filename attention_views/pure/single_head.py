"""What the pages do with the lab (lab.Lab): its mask and scale, resizing and presets, one head's run.

Plain functions of a Lab, never a Streamlit call, so they are tested as ordinary code. Tables hold raw
editor values; turning them into arrays validates them (tables.py) and the core validates shapes
(AttentionInputError).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TypeVar

import numpy as np
import pandas as pd

import attention_core as ac
from attention_views.pure.lab import DIRECT_TABLES, EMBED_TABLES, MAX_TOKENS, Lab, SingleHead, Vectors
from attention_views.pure.tables import (
    TableError,
    matrix_table,
    resize_columns,
    resize_rows,
    row_labels,
    table_to_matrix,
)

T = TypeVar("T")


def scale_value(lab: Lab, d_k: int) -> float:
    """The number the scores are multiplied by under the lab's scale mode."""
    if lab.scale_mode == "none":
        return 1.0
    if lab.scale_mode == "custom":
        return float(lab.scale_custom)
    return 1.0 / math.sqrt(d_k)


def table_errors(tables: dict[str, pd.DataFrame], memo: dict | None = None) -> dict[str, str]:
    """The message for every table that does not parse, by table name (``memo``: table_to_matrix's)."""
    errors = {}
    for name, frame in tables.items():
        try:
            table_to_matrix(frame, name, memo)
        except TableError as err:
            errors[name] = str(err)
    return errors


def run_single_head(lab: Lab) -> SingleHead:
    """Parse the lab's tables and run one head; raises TableError or AttentionInputError."""
    mats = {
        name: table_to_matrix(frame, name, lab.read)
        for name, frame in lab.tables.items()
        if name in DIRECT_TABLES + EMBED_TABLES
    }  # not W_o: the multi-head page's, and only there
    if "Q" in mats:
        (q_tokens, Q), (k_tokens, K), (v_labels, V) = mats["Q"], mats["K"], mats["V"]
        dims, X = list(lab.tables["Q"].columns[1:]), None
    else:
        (q_tokens, X), W_q, W_k, W_v = mats["X"], mats["W_q"][1], mats["W_k"][1], mats["W_v"][1]
        _check_projections(X, {"W_q": W_q, "W_k": W_k, "W_v": W_v})
        Q, K, V = (
            project(X, W, name, q_tokens, list(lab.tables[name].columns))
            for name, W in (("W_q", W_q), ("W_k", W_k), ("W_v", W_v))
        )
        k_tokens, v_labels, dims = q_tokens, q_tokens, list(lab.tables["W_q"].columns)
    _check_token_count(q_tokens, k_tokens)
    mask = lab_mask(lab, len(q_tokens), len(k_tokens))
    result = ac.scaled_dot_product_attention(
        Q, K, V, mask=mask, scale=scale_value(lab, Q.shape[1]), temperature=lab.temperature
    )
    check_output_lengths(result.output, "the output (weights · V)", q_tokens, "V" if "V" in mats else "W_v")
    return SingleHead(q_tokens, k_tokens, dims, v_labels, result, X)


def run_or_last(lab: Lab, run: Callable[[Lab], T], last: str) -> tuple[T | None, Exception | None]:
    """(``run(lab)``, None), kept in ``lab.<last>``; on an input error, (the last valid result or None, the error).

    The one way a page runs the core: an invalid table or shape never blanks the page, it keeps showing the
    last result that computed (pages say so with the error).
    """
    try:
        result = run(lab)
    except (TableError, ac.AttentionInputError) as err:
        return getattr(lab, last), err
    setattr(lab, last, result)
    return result, None


def checked_product(A: np.ndarray, B: np.ndarray, message: Callable[[int, int], str]) -> np.ndarray:
    """A @ B (n, k) @ (k, m) -> (n, m); AttentionInputError(message(i, j)) for the first entry too large for a float."""
    with np.errstate(over="ignore", invalid="ignore"):
        P = A @ B  # (n, k) @ (k, m) -> (n, m)
    bad = np.argwhere(~np.isfinite(P))
    if bad.size:
        raise ac.AttentionInputError(message(int(bad[0][0]), int(bad[0][1])))
    return P


def project(X: np.ndarray, W: np.ndarray, name: str, tokens: list[str], columns: list[str]) -> np.ndarray:
    """X @ W (n, d_model) @ (d_model, d) -> (n, d), naming the row (from 0), token and column that overflows."""
    return checked_product(
        X,
        W,
        lambda i, j: (
            f"X · {name} is too large for a float at row {i} ({tokens[i]!r}), column {columns[j]!r}; "
            f"use smaller entries in X or {name}"
        ),
    )


def check_output_lengths(output: np.ndarray, what: str, tokens: list[str], fix: str) -> None:
    """Raise if a row of ``output`` is too long for a float (its activation strength would be inf).

    The message counts rows from 0 (as every position) and names the token, as the editors do, and the
    table ``fix`` whose entries should be made smaller.
    """
    bad = np.flatnonzero(~np.isfinite(ac.activation_norms(output)))
    if bad.size:
        i = int(bad[0])
        raise ac.AttentionInputError(
            f"row {i} ({tokens[i]!r}) of {what} is longer than the largest number a float can hold; "
            f"use smaller entries in {fix}"
        )


def _check_projections(X: np.ndarray, Ws: dict[str, np.ndarray]) -> None:
    for name, W in Ws.items():
        if W.shape[0] != X.shape[1]:
            raise ac.AttentionInputError(
                f"{name} has {W.shape[0]} rows but the embeddings X have {X.shape[1]} columns; "
                f"give {name} one row per embedding dimension"
            )


def _check_token_count(q_tokens: list[str], k_tokens: list[str]) -> None:
    if len(q_tokens) > MAX_TOKENS or len(k_tokens) > MAX_TOKENS:
        raise ac.AttentionInputError(f"at most {MAX_TOKENS} tokens stay interactive; remove some rows")


def table_labels(lab: Lab, name: str) -> list[str]:
    """The row labels of one of the lab's tables."""
    return row_labels(lab.tables[name])


PRESETS = ("identity", "random", "zeros")


def preset_matrix(kind: str, rows: int, cols: int, seed: int) -> np.ndarray:
    """A (rows, cols) projection: identity (ones on the diagonal), seeded normal/sqrt(rows), or zeros."""
    if kind == "identity":
        return np.eye(rows, cols)
    if kind == "random":
        return np.random.default_rng(seed).normal(size=(rows, cols)) / math.sqrt(rows)
    if kind == "zeros":
        return np.zeros((rows, cols))
    raise ValueError(f"unknown preset {kind!r}; choose one of {', '.join(PRESETS)}")


def apply_preset(lab: Lab, kind: str, seed: int, names: tuple[str, ...] = ("W_q", "W_k", "W_v")) -> None:
    """Fill the projections ``names`` with a preset, keeping their shapes (seed + k for the k-th)."""
    for k, name in enumerate(names):
        frame = lab.tables[name]
        M = preset_matrix(kind, frame.shape[0], frame.shape[1], seed + k)
        lab.tables[name] = matrix_table(M, list(frame.index), list(frame.columns), tokens=False)


def resize_model_dims(lab: Lab, n: int) -> None:
    """Give X ``n`` embedding columns and every W ``n`` rows (new entries 0, dropped ones removed)."""
    x = lab.tables["X"]
    labels = [*list(x.columns[1 : n + 1]), *(f"d{j}" for j in range(x.shape[1] - 1, n))][:n]
    lab.tables["X"] = resize_columns(x, labels)
    for name in ("W_q", "W_k", "W_v"):
        lab.tables[name] = resize_rows(lab.tables[name], labels)


def resize_head_width(lab: Lab | Vectors, names: tuple[str, ...], n: int, prefix: str) -> None:
    """Give the tables ``names`` exactly ``n`` value columns labelled prefix0, prefix1, ..."""
    for name in names:
        frame = lab.tables[name]
        old = [c for c in frame.columns if c != "token"]
        labels = [old[j] if j < len(old) else f"{prefix}{j}" for j in range(n)]
        lab.tables[name] = resize_columns(frame, labels)


def lab_mask(lab: Lab, n_q: int, n_k: int) -> np.ndarray | None:
    """The lab's boolean (n_q, n_k) mask (True = may attend), or None for no mask."""
    kind = lab.mask
    if kind == "none":
        return None
    if kind == "causal":
        return ac.causal_mask(n_q, n_k)
    if kind == "padding":
        return ac.padding_mask(n_q, n_k, min(lab.mask_pad, n_k))
    if kind == "window":
        return ac.sliding_window_mask(n_q, n_k, lab.mask_window)
    if kind == "prefix":
        return ac.prefix_lm_mask(n_q, n_k, lab.mask_prefix)
    if kind == "streaming":
        return ac.streaming_mask(n_q, n_k, min(lab.mask_sink, n_k), lab.mask_window)
    return custom_mask(lab, n_q, n_k)


def custom_mask(lab: Lab, n_q: int, n_k: int) -> np.ndarray:
    """The painted mask fitted to (n_q, n_k): kept where it exists, new cells causal (j <= i)."""
    fitted = ac.causal_mask(n_q, n_k)
    painted = lab.mask_custom
    if painted is not None:
        rows, cols = min(n_q, painted.shape[0]), min(n_k, painted.shape[1])
        fitted[:rows, :cols] = painted[:rows, :cols]
    return fitted


def lab_tokens(lab: Lab) -> tuple[list[str], list[str]]:
    """Query and key token labels as the tables currently name them."""
    if "Q" in lab.tables:
        return table_labels(lab, "Q"), table_labels(lab, "K")
    return table_labels(lab, "X"), table_labels(lab, "X")
