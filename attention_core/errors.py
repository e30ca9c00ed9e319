"""AttentionInputError and the boundary checks that raise it.

Every public function validates its inputs here, once, before any arithmetic. Messages name the
argument and, where it applies, the row and column (counted from 0, as NumPy does).
"""

from __future__ import annotations

import numbers

import numpy as np


class AttentionInputError(ValueError):
    """An input to attention_core is unusable; the message says what, where and how to fix it."""


def _first_bad_entry(rows: list, name: str) -> str:
    """Describe the first entry of a nested list that is not a number."""
    for i, row in enumerate(rows):
        for j, value in enumerate(np.atleast_1d(np.asarray(row, dtype=object))):
            if isinstance(value, bool) or not isinstance(value, numbers.Real):
                return f"{name} row {i}, column {j} is {value!r}, not a number"
    return f"{name} contains entries that are not numbers"


def as_matrix(x: object, name: str) -> np.ndarray:
    """Return ``x`` as a finite float64 array of shape (rows, cols), or raise AttentionInputError."""
    try:
        arr = np.array(x, dtype=np.float64)  # a copy: callers' arrays are never modified
    except (TypeError, ValueError):
        if isinstance(x, (list, tuple)) and all(isinstance(r, (list, tuple, np.ndarray)) for r in x):
            lengths = {len(r) for r in x}
            if len(lengths) > 1:
                raise AttentionInputError(
                    f"{name} has rows of different lengths {sorted(lengths)}; "
                    "every row needs the same number of columns"
                ) from None
            raise AttentionInputError(_first_bad_entry(list(x), name)) from None
        raise AttentionInputError(f"{name} must contain only numbers") from None
    if arr.ndim != 2:
        raise AttentionInputError(
            f"{name} must be a 2-D matrix (one row per token), "
            f"but it has {arr.ndim} dimension(s) with shape {arr.shape}"
        )
    if arr.size == 0:
        raise AttentionInputError(f"{name} is empty (shape {arr.shape}); it needs at least one row and one column")
    check_finite(arr, name)
    return arr


def as_vector(x: object, name: str) -> np.ndarray:
    """Return ``x`` as a finite, non-empty float64 vector, or raise AttentionInputError."""
    try:
        arr = np.array(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise AttentionInputError(f"{name} must contain only numbers") from None
    if arr.ndim != 1 or arr.size == 0:
        raise AttentionInputError(f"{name} must be a non-empty 1-D vector, but it has shape {arr.shape}")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise AttentionInputError(f"{name} entry {bad[0]} is {_describe(arr[bad[0]])}; use a finite number")
    return arr


def check_finite(arr: np.ndarray, name: str) -> None:
    """Raise if any entry of a 2-D array is NaN or infinite, naming its row and column."""
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
