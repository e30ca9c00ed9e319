"""How numbers are written on screen: every formatter of the view layer, one per kind of place.

- :func:`cell` — inside a heatmap cell: two decimals ("0.58"), never "-0.00"; "−inf" for a masked cell.
- :func:`short` — in hovers and arithmetic of the figures: up to four decimals, trailing zeros cut ("0.72").
- :func:`latex` — in the step-by-step formulas: four significant digits, ``-\\infty`` for a blocked score.
- :func:`metric` — in st.metric: two decimals while short, else scientific; past the float range, a bound.

And how user text (token labels, names, anything from a link or an upload) is written, literally:

- :func:`plain` — inside Streamlit markdown (st.markdown, captions, warnings, labels): no link, image,
  emphasis, LaTeX or colour directive can come from it.
- :func:`message` — an error or warning message for Streamlit markdown: :func:`plain`, with the
  projection tables named as the pages name them (W_Q, not the code's W_q).
- :func:`plot_text` — inside plotly text (ticks, hovers, titles, annotations), which renders a subset
  of HTML (``<a href>``, ``<b>``, ``<br>``): the markup shows as typed.
- :func:`token_choice` — a selectbox's option for a token index (plain text there): a repeated token with its
  position.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import numpy as np

from attention_views.pure.theme import MINUS_INF


def cell(value: float) -> str:
    """Two decimals for a cell ("0.58"), never "-0.00"; "−inf" for a masked cell."""
    value = float(value)  # Python's float: math.isfinite and round on it take a fraction of NumPy's time
    return f"{round(value, 2) + 0.0:.2f}" if math.isfinite(value) else MINUS_INF


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


_MARKDOWN_SPECIAL = re.compile(r"([\\`*{}\[\]<>$~|#!^]|(?<!\w)_|_(?!\w))")  # what starts markup mid-line
# ("_" inside a word such as W_k is no emphasis in CommonMark, so it stays readable)
_AUTOLINK = re.compile(r"(://|www\.|@)", re.IGNORECASE)  # GitHub markdown links these even when escaped
_LIST_START = re.compile(r"^(\d+)([.)])|^([-+=])")  # "1." / "-" at the start would make a list
WORD_JOINER = "\u2060"  # invisible and unbreakable: splits "http://" so no autolink is found


def plain(text: object) -> str:
    """User text for Streamlit markdown, shown literally: the characters that start markup backslash-escaped.

    CommonMark lets any ASCII punctuation be escaped, so ``[x](http://example.com)`` stays text, ``$...$``
    is no formula, ``:red[...]`` no colour, ``<b>`` no tag. The GitHub extension's autolinks (``http://``,
    ``www.``, e-mail addresses) are found in the text after escapes are undone, so an invisible word joiner
    splits them instead. Line breaks become spaces (a label is one line). Punctuation that is harmless
    mid-line (quotes, brackets, colons) is left alone, so messages read the same in the page's source.
    """
    one_line = " ".join(str(text).splitlines())
    escaped = _MARKDOWN_SPECIAL.sub(r"\\\1", one_line)
    escaped = _AUTOLINK.sub(lambda m: m[1][0] + WORD_JOINER + m[1][1:], escaped)
    return _LIST_START.sub(lambda m: f"{m[1]}\\{m[2]}" if m[1] else f"\\{m[3]}", escaped)


_TABLE_NAMES = re.compile(r"\bW_([qkvo])(?=\b|\d)")  # W_q, W_k, W_v, W_o, and W_q1 (an exercise's head 1)


def message(text: object) -> str:
    """An error message shown in markdown: the tables as the pages name them (W_Q ...), user text escaped."""
    return plain(_TABLE_NAMES.sub(lambda m: "W_" + m[1].upper(), str(text)))


def plot_text(text: object) -> str:
    """User text for plotly, shown literally: ``&``, ``<`` and ``>`` as HTML entities (plotly decodes them)."""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def token_choice(tokens: list[str]) -> Callable[[int], str]:
    """Selectbox labels for token indices; a repeated token gets its position so both can be told apart."""
    return lambda n: tokens[n] if tokens.count(tokens[n]) == 1 else f"{tokens[n]} (#{n})"
