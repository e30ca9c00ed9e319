"""The spread of a class's answers to one question: a bar per option (or per bin of a number), the right one
marked once the answer is revealed, the count and the share right in the title."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence

import numpy as np
import plotly.graph_objects as go

from attention_rooms.questions import QuestionKind, Tally
from attention_views.pure import theme
from attention_views.pure.figures import base

RIGHT_COLOR = theme.series_color(2)  # bluish green: the right answer's bar
OTHER_COLOR = theme.series_color(0)
RIGHT_NOTE = "✓ right answer"


def spread_title(tally: Tally) -> str:
    """ "12 answers" live; "12 answers · 7 right (58%)" once revealed (the title carries no user text)."""
    n = tally.n_answers
    counted = "No answers yet" if n == 0 else f"{n} answer{'s' if n != 1 else ''}"
    if not tally.revealed or n == 0:
        return counted
    return f"{counted} · {tally.n_right} right ({tally.share_right:.0%})"


def right_bar(tally: Tally) -> int:
    """The bar holding the right answer: its option, or the bin of ``bin_edges`` it falls in (a bin holds its
    lower edge, the last bin also 1.0)."""
    if tally.kind is QuestionKind.NUMBER:
        return min(bisect_right(tally.bin_edges, tally.correct) - 1, len(tally.counts) - 1)
    return int(tally.correct)


def answer_spread(tally: Tally, names: Sequence[str], *, projector: bool = False) -> go.Figure:
    """One bar per option of ``names`` (``askable.option_names``: user text, shown literally) with its count of
    answers; after the reveal, and only then, the right answer's bar is coloured and annotated."""
    s = theme.style(projector)
    counts = np.array(tally.counts, dtype=np.int64)  # (n_options,) or (n_bins,)
    labels = base.as_labels(names, counts.size, "names", "bars of the spread")
    right = right_bar(tally) if tally.revealed else None
    colors = [RIGHT_COLOR if k == right else OTHER_COLOR for k in range(counts.size)]
    bar = base.make_trace(
        go.Bar,
        x=np.arange(counts.size),
        y=counts,
        text=[str(c) for c in counts],
        textposition="outside",
        cliponaxis=False,
        textfont={"size": s.cell_font},
        marker={"color": colors},
        hovertemplate="%{x}<br>%{y} answers<extra></extra>",
    )
    top = max(1, int(counts.max()))
    layout = {
        "xaxis": {
            **base.bar_axis(labels, ""),  # the options name themselves; a title would sit on the upright labels
            "tickangle": -90,
            "automargin": True,
        },  # upright: none overflows a side
        "yaxis": {
            "title": {"text": "answers"},
            "range": [0, top * (1.5 if right is not None else 1.2)],  # room above the bars for the right one's note
            "tickformat": "d",
            **({"dtick": 1} if top <= 10 else {}),
        },
        "showlegend": False,
    }
    if right is not None:
        layout["annotations"] = [
            {
                "x": right,
                "y": int(counts[right]),
                "yshift": 2.2 * s.font,
                "text": RIGHT_NOTE,
                "showarrow": False,
                "font": {"size": s.font, "color": RIGHT_COLOR},
                "name": "right",
            }
        ]
    return base.finish_figure([bar], layout, spread_title(tally), s, height=300 if projector else 240)
