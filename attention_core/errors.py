"""AttentionInputError and the boundary checks that raise it.

Every public function validates its inputs here, once, before any arithmetic. Messages name the
argument and, where it applies, the row and column (counted from 0, as NumPy does).
"""

from __future__ import annotations

import numbers

import numpy as np


class AttentionInputError(ValueError):
    """An input to attention_core is unusable; the message says what, where and how to fix it."""


def float_array(x: object, name: str, copy: bool = True) -> np.ndarray:
    """``x`` as a float64 array, or AttentionInputError.

    Only real numbers pass: text (even "1.5"), booleans, None and complex numbers are named with
    their position, so a student sees which cell to fix. The result is a new array unless
    ``copy=False`` and ``x`` already is a float64 array (for inputs that are only read, never kept).
    """
    if not copy and type(x) is np.ndarray and x.dtype == np.float64:  # already what the caller wants
        return x
    try:
        raw = np.asarray(x)
    except ValueError:  # nested lists that do not form a table
        lengths = sorted({len(r) for r in x if hasattr(r, "__len__")}) if isinstance(x, (list, tuple)) else []
        problem = f"has rows of different lengths {lengths}" if len(lengths) > 1 else "is not a table of numbers"
        raise AttentionInputError(f"{name} {problem}; every row needs the same number of columns") from None
    if raw.dtype.kind not in "iuf":
        entries = np.asarray(x, dtype=object)  # the original Python objects, not NumPy's conversions
        bad = next(((idx, v) for idx, v in np.ndenumerate(entries) if not _is_number(v)), None)
        if bad is not None:
            idx, value = bad
            raise AttentionInputError(f"{name}{_where(idx)} is {_show(value)}, not a number; use a number there")
    return np.array(raw, dtype=np.float64, copy=True if copy else None)


def _where(idx: tuple[int, ...]) -> str:
    """' row i, column j' for a matrix entry, ' entry i' for a vector's, '' for a single value."""
    if len(idx) == 2:
        return f" row {idx[0]}, column {idx[1]}"
    return f" entry {idx[0] if len(idx) == 1 else idx}" if idx else ""


def _is_number(value: object) -> bool:
    value = value.item() if isinstance(value, np.generic) else value
    return isinstance(value, numbers.Real) and not isinstance(value, bool)


def _show(value: object) -> str:
    return repr(value.item() if isinstance(value, np.generic) else value)


def as_matrix(x: object, name: str, copy: bool = True, finite: bool = True) -> np.ndarray:
    """Return ``x`` as a finite float64 array of shape (rows, cols), or raise AttentionInputError.

    A new array unless ``copy=False`` (then ``x`` itself when it already is one; it is never written).
    ``finite=False`` leaves NaN and inf for the caller to find (check_finite names the entry).
    """
    arr = float_array(x, name, copy)
    if arr.ndim != 2:
        raise AttentionInputError(
            f"{name} must be a 2-D matrix (one row per token), "
            f"but it has {arr.ndim} dimension(s) with shape {arr.shape}"
        )
    if arr.size == 0:
        raise AttentionInputError(f"{name} is empty (shape {arr.shape}); it needs at least one row and one column")
    if finite:
        check_finite(arr, name)
    return arr


def as_vector(x: object, name: str) -> np.ndarray:
    """Return ``x`` as a finite, non-empty float64 vector, or raise AttentionInputError."""
    arr = float_array(x, name)
    if arr.ndim != 1 or arr.size == 0:
        raise AttentionInputError(f"{name} must be a non-empty 1-D vector, but it has shape {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise AttentionInputError(f"{name} entry {bad[0]} is {_describe(arr[bad[0]])}; use a finite number")
    return arr


def check_finite(arr: np.ndarray, name: str) -> None:
    """Raise if any entry of a 2-D array is NaN or infinite, naming its row and column."""
    if np.isfinite(arr).all():  # the usual case, without argwhere's index arrays
        return
    bad = np.argwhere(~np.isfinite(arr))
    if bad.size:
        i, j = bad[0]
        raise AttentionInputError(f"{name} row {i}, column {j} is {_describe(arr[i, j])}; use a finite number")


def _describe(value: float) -> str:
    return "NaN" if np.isnan(value) else ("+inf" if value > 0 else "-inf")


def check_positive(value: object, name: str) -> float:
    """Return ``value`` as a float that is finite and > 0, or raise."""
    number = check_number(value, name)
    if number <= 0:
        raise AttentionInputError(f"{name} must be greater than 0, but it is {number}")
    return number


def check_number(value: object, name: str) -> float:
    """Return ``value`` as a finite float, or raise."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise AttentionInputError(f"{name} must be a number, but it is {value!r}")
    if not np.isfinite(value):
        raise AttentionInputError(f"{name} must be a finite number, but it is {value}")
    return float(value)


def check_bias(b: object, width: int, name: str) -> np.ndarray | None:
    """Return a bias vector of length ``width`` (or None), or raise."""
    if b is None:
        return None
    vec = as_vector(b, name)
    if vec.shape[0] != width:
        raise AttentionInputError(f"{name} has {vec.shape[0]} entries but its matrix has {width} columns")
    return vec
