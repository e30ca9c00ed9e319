"""How numbers are written on screen: every formatter of the view layer, one per kind of place.

- :func:`cell` — inside a heatmap cell: two decimals ("0.58"), never "-0.00"; "−inf" for a masked cell.
- :func:`short` — in hovers and arithmetic of the figures: up to four decimals, trailing zeros cut ("0.72").
- :func:`latex` — in the step-by-step formulas: four significant digits, ``-\\infty`` for a blocked score.
- :func:`metric` — in st.metric: two decimals while short, else scientific; past the float range, a bound.
"""

from __future__ import annotations

import numpy as np

from attention_views.theme import MINUS_INF


def cell(value: float) -> str:
    """Two decimals for a cell ("0.58"), never "-0.00"; "−inf" for a masked cell."""
    return f"{round(value, 2) + 0.0:.2f}" if np.isfinite(value) else MINUS_INF


def short(value: float) -> str:
    """A short exact-looking number for arithmetic ("1.0", "0.72", "2.42")."""
    if value == 0 or 1e-3 <= abs(value) < 1e5:
        return np.format_float_positional(value + 0.0, precision=4, trim="0")
    return f"{value:.4g}"


def latex(value: float, factor: bool = False) -> str:
    """A number for the formulas: 4 significant digits, −∞ for a blocked score, negative factors in brackets."""
    text = r"-\infty" if np.isneginf(value) else f"{value + 0.0:.4g}"
    return f"({text})" if factor and value < 0 else text


def metric(value: float) -> str:
    """A number for st.metric: two decimals while short ("2.42"), else scientific ("1.235e+200")."""
    if not np.isfinite(value):  # past the float range: the true value exists but a float cannot hold it
        return "> 1.8e308" if value > 0 else "< −1.8e308" if value < 0 else "too large"
    return f"{value:.2f}" if abs(value) < 1e6 else f"{value:.4g}"
