"""Editor helpers: token/matrix tables (pandas DataFrames) <-> NumPy arrays, with validation.

A table is a DataFrame. Token tables (X, Q, K) carry their row labels in a ``token`` column; value
tables (V) and projection tables (W_q, W_k, W_v, W_o) carry them in the index. Cells hold raw
editor values (numbers, ``None`` for an empty cell, or text typed into a cell), so a bad entry is
kept exactly as typed until the user fixes it; :func:`table_to_matrix` turns a table into numbers
or raises :class:`TableError` naming the table, the row and the column.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
import pandas as pd

TOKEN = "token"
T = TypeVar("T")


class TableError(ValueError):
    """A cell or the shape of an edited table is unusable; the message says where and how to fix it."""

    def __init__(self, table: str, message: str):
        super().__init__(message)
        self.table = table


def is_empty(value: object) -> bool:
    """True for a cell with nothing in it: None, pandas' NA, or a float NaN."""
    return value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value))


def cell_text(value: object) -> str:
    """A label or text cell as a string; an empty cell (:func:`is_empty`) is ""."""
    return "" if is_empty(value) else str(value)


def printable(value: object) -> object:
    """``value`` with any lone surrogate replaced by "?" when it is text (else unchanged).

    A lone surrogate (JSON's ``\\ud800``, which a browser or a crafted link can send) is a valid Python
    str but cannot be encoded as UTF-8, so the tables' Arrow serialisation would fail on it.
    """
    return value.encode("utf-8", "replace").decode("utf-8") if isinstance(value, str) else value


def is_real(value: object) -> bool:
    """True for a real number that is not a bool (JSON true/false and checkboxes are not numbers)."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def is_whole(value: object, low: int, high: int) -> bool:
    """True for a Python int (not a bool) from ``low`` to ``high``, both included."""
    return isinstance(value, int) and not isinstance(value, bool) and low <= value <= high


def matrix_table(M: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], *, tokens: bool) -> pd.DataFrame:
    """A table for matrix ``M (rows, cols)``: a ``token`` column when ``tokens``, else labels in the index."""
    frame = pd.DataFrame(np.asarray(M, dtype=float), columns=list(col_labels), dtype=object)
    if tokens:
        frame.insert(0, TOKEN, list(row_labels))
    else:
        frame.index = list(row_labels)
    return frame


def value_columns(frame: pd.DataFrame) -> list[str]:
    """The numeric columns of a table (all but ``token``)."""
    return [c for c in frame.columns.tolist() if c != TOKEN]  # a list, not the Index


SHOWN_DECIMALS = 4  # an editor's numbers are shown to this many decimals (Streamlit's grid writes up to four)
PROJECTOR_DECIMALS = 2  # ... and to this many in projector mode, as the heatmaps


def display_table(
    frame: pd.DataFrame, memo: dict | None = None, table: str = "", decimals: int = SHOWN_DECIMALS
) -> pd.DataFrame:
    """What the editor shows: numeric columns as floats rounded to ``decimals`` (a bad or empty entry shows as an
    empty cell).

    Rounded, because the grid writes a number below 1e-4 with every decimal down to its first digit: a learned
    table's float noise (1e-16, -1e-19) would read "0.0000000000000001". The table itself keeps its exact
    numbers: the editor reports only the cells a student edits (ui/editors.folded), and a cell left as it was is
    never written back. ``memo`` and ``table``: a lab's ``read`` and the table's name, as for
    :func:`table_to_matrix`; while ``frame`` is the same object the shown table is not made again (the editor
    copies what it is given)."""
    return remembered(memo, ("shown", table, decimals), frame, lambda: _display_table(frame, decimals))


def _display_table(frame: pd.DataFrame, decimals: int) -> pd.DataFrame:
    values = _value_cells(frame)  # (rows, cols) object
    block = finite_block(frame)
    if block is None:  # some cell is not a finite number: that one shows empty
        block = np.array(
            [[np.nan if (x := _number_or_none(v)) is None else x for v in row] for row in values], dtype=float
        ).reshape(values.shape)
    # + 0.0: -1e-19 shows as 0, not -0; past 1e11 a float holds no 4th decimal to round (and x * 1e4 is inexact)
    block = np.where(np.abs(block) < 1e11, np.round(block, decimals), block) + 0.0
    shown = pd.DataFrame(block, index=frame.index, columns=value_columns(frame))
    if TOKEN in frame.columns:
        tokens = frame[TOKEN].map(cell_text).astype(str)
        shown.insert(frame.columns.get_loc(TOKEN), TOKEN, tokens)
    return shown


def _number_or_none(value: object) -> float | None:
    try:
        return parse_number(value)
    except ValueError:
        return None


def parse_number(value: object) -> float:
    """A finite float from an editor cell, or ValueError with the reason (empty, text, NaN, inf)."""
    if value is None or value is pd.NA:  # the grid also sends a number past ±1.8e308 (it shows "Infinity") as null
        raise ValueError("is empty, or too large for a float (beyond ±1.8e308)")
    if isinstance(value, str) and not value.strip():
        raise ValueError("is empty")
    if isinstance(value, bool):
        raise ValueError(f"is {value!r}, not a number")
    if isinstance(value, str):
        try:
            number = float(value.strip().replace("−", "-"))
        except ValueError:
            raise ValueError(f"is {value.strip()[:40]!r}, not a number") from None
    elif isinstance(value, numbers.Real):
        try:
            number = float(value)
        except OverflowError:  # a Python int (from a JSON file or link) beyond the float range
            digits = int(math.log10(abs(int(value)))) + 1
            raise ValueError(
                f"is a {'negative ' if value < 0 else ''}{digits}-digit number, too large to compute with"
            ) from None
    else:
        raise ValueError(f"is {value!r}, not a number")
    if math.isnan(number):
        raise ValueError("is empty (NaN)")
    if math.isinf(number):
        raise ValueError(f"is {'+' if number > 0 else '-'}infinity")
    return number


def remembered(memo: dict | None, key: object, frame: pd.DataFrame, make: Callable[[], T]) -> T:
    """``make()``, kept in ``memo`` (a lab's ``read``) under ``key`` while ``frame`` is the same object: tables
    are replaced, never edited in place (lab.py), so what was made from one stays true of it."""
    if memo is None:
        return make()
    kept = memo.get(key)
    if kept is None or kept[0] is not frame:
        kept = memo[key] = (frame, make())
    return kept[1]


def table_to_matrix(frame: pd.DataFrame, table: str, memo: dict | None = None) -> tuple[list[str], np.ndarray]:
    """Row labels and the float matrix ``(rows, cols)`` of a table, or TableError naming row and column.

    ``memo``: a lab's ``read``. While ``table`` is still the same object it is not read again and its matrix
    comes back read-only (:func:`remembered`); a rerun reads each table up to three times."""
    if memo is None:
        labels, M = _read_table(frame, table)
    else:
        labels, M = remembered(memo, table, frame, lambda: _read_only(*_read_table(frame, table)))
    return list(labels), M


def _read_only(labels: list[str], M: np.ndarray) -> tuple[list[str], np.ndarray]:
    M.flags.writeable = False
    return labels, M


def _read_table(frame: pd.DataFrame, table: str) -> tuple[list[str], np.ndarray]:
    cols = value_columns(frame)
    if frame.shape[0] == 0:
        raise TableError(table, f"{table} has no rows; add at least one row")
    if not cols:
        raise TableError(table, f"{table} has no number columns; add at least one dimension")
    labels = row_labels(frame)
    M = finite_block(frame)
    if M is not None:
        return labels, M
    M = np.empty((frame.shape[0], len(cols)))  # (rows, cols)
    for j, col in enumerate(cols):
        for i, value in enumerate(frame[col].tolist()):
            try:
                M[i, j] = parse_number(value)
            except ValueError as err:
                raise TableError(
                    table, f"{table} row {i} ({labels[i]!r}), column {col!r} {err}; type a finite number there"
                ) from None
    return labels, M


PLAIN_NUMBERS = frozenset((float, int, np.float64))  # cell types read as they are (bool is not one of them)


def _value_cells(frame: pd.DataFrame) -> np.ndarray:
    """The raw cells of the numeric columns, by position: an object array (rows, cols)."""
    return frame.to_numpy(dtype=object)[:, [k for k, c in enumerate(frame.columns) if c != TOKEN]]


def finite_block(frame: pd.DataFrame) -> np.ndarray | None:
    """The numeric cells as floats (rows, cols) when every one is already a finite number, else None.

    The fast path of :func:`table_to_matrix` and :func:`display_table`: a whole clean table is
    converted at once; any other cell (text, empty, NaN, inf, an integer beyond the float range)
    gives None and the caller goes cell by cell, so its message names the first bad cell.
    """
    values = _value_cells(frame)
    if not {type(v) for v in values.flat} <= PLAIN_NUMBERS:
        return None
    try:
        block = values.astype(float)
    except OverflowError:  # a Python int beyond the float range
        return None
    return block if np.isfinite(block).all() else None


def row_labels(frame: pd.DataFrame) -> list[str]:
    """The row labels of a table: its ``token`` column, else its index."""
    raw = frame[TOKEN].tolist() if TOKEN in frame.columns else list(frame.index)
    return [cell_text(label) for label in raw]


@dataclass(frozen=True)
class Delta:
    """The change an ``st.data_editor`` reports: cells edited, rows added, row positions deleted."""

    edited_rows: Mapping[int, Mapping[str, object]]
    added_rows: Sequence[Mapping[str, object]]
    deleted_rows: Sequence[int]

    @classmethod
    def from_state(cls, state: object) -> Delta | None:
        """Read the editor's session-state value (a dict, or None before the first edit)."""
        if not isinstance(state, Mapping):
            return None
        edited = {
            int(r): {c: printable(v) for c, v in cells.items()} for r, cells in (state.get("edited_rows") or {}).items()
        }
        added = [{c: printable(v) for c, v in row.items()} for row in state.get("added_rows") or []]
        return cls(edited, added, [int(r) for r in state.get("deleted_rows") or []])

    @property
    def reshapes(self) -> bool:
        """True when rows were added or deleted (the editor must then be re-created)."""
        return bool(self.added_rows or self.deleted_rows)


def apply_delta(frame: pd.DataFrame, delta: Delta) -> pd.DataFrame:
    """A new table with the editor's delta applied: edits by position, then deletions, then additions.

    Edits for columns the table does not have are ignored. Added rows keep ``None`` where the
    editor left a cell blank, so the empty cell is reported rather than silently filled. A delta that
    changes nothing (an editor reports all its edits on every rerun) gives back ``frame`` itself, so
    an unchanged table keeps its identity (the share link's memo relies on that).
    """
    if not delta.added_rows and not delta.deleted_rows and _holds(frame, delta.edited_rows):
        return frame
    out = frame.copy()
    n = out.shape[0]
    for i, cells in delta.edited_rows.items():
        if not 0 <= i < n:
            continue
        for col, value in cells.items():
            if col in out.columns:
                out.iat[i, out.columns.get_loc(col)] = value
    keep = [i for i in range(n) if i not in set(delta.deleted_rows)]
    out = out.iloc[keep]
    if delta.added_rows:
        new = pd.DataFrame([{c: row.get(c) for c in out.columns} for row in delta.added_rows], dtype=object)
        if TOKEN not in out.columns:
            new.index = [f"row {len(keep) + k + 1}" for k in range(len(delta.added_rows))]
        out = pd.concat([out, new], ignore_index=TOKEN in out.columns)
    if TOKEN in out.columns:
        out = out.reset_index(drop=True)
    return out


def _holds(frame: pd.DataFrame, edits: Mapping[int, Mapping[str, object]]) -> bool:
    """True when every edit that applies to ``frame`` is already there (the same value of the same type)."""
    for i, cells in edits.items():
        for col, value in cells.items():
            if 0 <= i < frame.shape[0] and col in frame.columns:
                old = frame.iat[i, frame.columns.get_loc(col)]
                if not (old is value or (type(old) is type(value) and old == value)):
                    return False
    return True


def resize_columns(frame: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    """The table with exactly these value columns: kept where they exist, new ones filled with 0."""
    out = frame[[TOKEN]].copy() if TOKEN in frame.columns else pd.DataFrame(index=frame.index)
    for k, label in enumerate(labels):
        old = value_columns(frame)
        out[label] = frame[old[k]] if k < len(old) else 0.0
    return out.astype({c: object for c in labels})


def resize_rows(frame: pd.DataFrame, labels: Sequence[str]) -> pd.DataFrame:
    """A label-indexed table with exactly ``len(labels)`` rows (kept by position, new rows 0)."""
    cols = value_columns(frame)
    rows = [frame.iloc[k].tolist() if k < frame.shape[0] else [0.0] * len(cols) for k in range(len(labels))]
    return pd.DataFrame(rows, index=list(labels), columns=cols, dtype=object)


MAX_CSV_BYTES = 100_000


FORMULA_START = ("=", "+", "-", "@", "\t", "\r")  # a spreadsheet runs a cell starting with one of these


def csv_safe(value: object) -> object:
    """A cell for a CSV download: text a spreadsheet would run as a formula gets a leading ``'``.

    Numbers (and text that reads as a number, such as "-1.5") are left alone. Text that already starts
    with ``'`` before such a character gets one more, so :func:`csv_unsafe` always gives back the original.
    """
    if not isinstance(value, str) or not value.lstrip("'").startswith(FORMULA_START):
        return value
    try:
        float(value)
    except ValueError:
        return "'" + value
    return value


def csv_unsafe(value: object) -> object:
    """A cell read from a CSV upload: undoes :func:`csv_safe`."""
    if isinstance(value, str) and value.startswith("'") and value[1:].lstrip("'").startswith(FORMULA_START):
        return value[1:]
    return value


def csv_text(frame: pd.DataFrame, *, index: bool) -> str:
    """``frame`` as CSV with every label and text cell made safe for spreadsheets (:func:`csv_safe`)."""
    safe = frame.rename(columns=csv_safe, index=csv_safe if index else None)
    return safe.map(csv_safe).to_csv(index=index, lineterminator="\r\n")  # RFC 4180: a \r in a label is quoted


def table_to_csv(frame: pd.DataFrame) -> str:
    """A table as CSV: the row labels first (``token`` column or the index), then the numbers."""
    return csv_text(frame, index=TOKEN not in frame.columns)


def table_from_csv(data: bytes, like: pd.DataFrame, table: str, *, max_rows: int, max_cols: int) -> pd.DataFrame:
    """A table read from CSV, shaped like ``like`` (labels first, then numbers); TableError on anything bad.

    Every cell must be a finite number, so a file that is not CSV, has text in a number column, or is
    too large changes nothing.
    """
    import io

    if len(data) > MAX_CSV_BYTES:
        raise TableError(table, f"the file is larger than {MAX_CSV_BYTES // 1000} kB, the limit for a table")
    try:
        raw = pd.read_csv(io.BytesIO(data), dtype=object, keep_default_na=False)
    except (ValueError, UnicodeDecodeError, pd.errors.ParserError):
        raise TableError(table, f"the file is not a CSV table; download {table} as CSV to see the format") from None
    if raw.shape[1] < 2 or raw.shape[0] < 1:
        raise TableError(table, "the CSV needs a label column and at least one number column and one row")
    if raw.shape[0] > max_rows or raw.shape[1] - 1 > max_cols:
        raise TableError(
            table, f"the CSV is {raw.shape[0]} x {raw.shape[1] - 1}; the app allows at most {max_rows} x {max_cols}"
        )
    if TOKEN not in like.columns and raw.shape[0] != like.shape[0]:
        raise TableError(table, f"the CSV has {raw.shape[0]} rows but {table} needs {like.shape[0]}")
    raw = raw.rename(columns=csv_unsafe).map(csv_unsafe)  # the app's own downloads escape formula-like text
    labels = [str(v) for v in raw.iloc[:, 0]]
    cols = [str(c) for c in raw.columns[1:]]
    frame = pd.DataFrame(raw.iloc[:, 1:].to_numpy(), columns=cols, dtype=object)
    if TOKEN in like.columns:
        frame.insert(0, TOKEN, labels)
    else:
        frame.index = labels
    table_to_matrix(frame, f"{table} (from the CSV)")  # every cell must be a number
    return _numbers(frame)


def _numbers(frame: pd.DataFrame) -> pd.DataFrame:
    out = frame.copy()
    for col in value_columns(out):
        out[col] = [parse_number(v) for v in out[col]]
    return out.astype({c: object for c in value_columns(out)})
