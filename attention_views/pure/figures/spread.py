"""The spread of a class's answers to one question: a bar per option (or per bin of a number), the right answers
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


def spread_title(tally: Tally, rounds: int = 1) -> str:
    """ "12 answers" live; "12 answers · 7 right (58%)" once revealed; "Round 2 · ..." when the question had two
    rounds (the title carries no user text)."""
    n = tally.n_answers
    counted = "No answers yet" if n == 0 else f"{n} answer{'s' if n != 1 else ''}"
    if tally.revealed and n:
        counted = f"{counted} · {tally.n_right} right ({tally.share_right:.0%})"
    return f"Round {tally.round} · {counted}" if rounds > 1 else counted


def right_bar(tally: Tally) -> int:
    """The bar holding the right answer itself: its option, or the bin of ``bin_edges`` it falls in."""
    if tally.kind is QuestionKind.NUMBER:
        return min(bisect_right(tally.bin_edges, tally.correct) - 1, len(tally.counts) - 1)
    return int(tally.correct)


def answer_spread(tally: Tally, names: Sequence[str], *, projector: bool = False, rounds: int = 1) -> go.Figure:
    """One bar per option of ``names`` (``askable.option_names``: user text, shown literally) with its count of
    answers written above it; after the reveal, and only then, each bar's right answers are its lower part in the
    right colour (a number's bin may hold right and wrong answers: within the tolerance is right, wherever the bin
    edge falls), and the right answer's own bar is annotated. ``rounds``: how many rounds the question had (named in
    the title when more than one)."""
    s = theme.style(projector)
    counts = np.array(tally.counts, dtype=np.int64)  # (n_options,) or (n_bins,)
    labels = base.as_labels(names, counts.size, "names", "bars of the spread")
    x = np.arange(counts.size)
    revealed = tally.revealed and len(tally.right_counts) == counts.size
    right = np.array(tally.right_counts, dtype=np.int64) if revealed else np.zeros_like(counts)

    def hover(what: str) -> str:
        return "%{x}<br>%{y} " + what + "<extra></extra>"

    bars = [
        base.make_trace(
            go.Bar, x=x, y=right, name="right", marker={"color": RIGHT_COLOR}, hovertemplate=hover("right")
        ),
        base.make_trace(
            go.Bar,
            x=x,
            y=counts - right,
            name="not right" if revealed else "answers",
            marker={"color": OTHER_COLOR},
            hovertemplate=hover("not right" if revealed else "answers"),
        ),
        base.make_trace(  # each bar's count, above it
            go.Scatter,
            x=x,
            y=counts,
            mode="text",
            text=[str(c) for c in counts],
            textposition="top center",
            textfont={"size": s.cell_font},
            cliponaxis=False,
            hoverinfo="skip",
            name="counts",
        ),
    ]
    top = max(1, int(counts.max()))
    note = right_bar(tally) if revealed else None
    layout = {
        "barmode": "stack",
        "xaxis": {
            **base.bar_axis(labels, ""),  # the options name themselves; a title would sit on the upright labels
            "tickangle": -90,
            "automargin": True,
        },  # upright: none overflows a side
        "yaxis": {
            "title": {"text": "answers"},
            "range": [0, top * (1.5 if note is not None else 1.2)],  # room above the bars for the right one's note
            "tickformat": "d",
            **({"dtick": 1} if top <= 10 else {}),
        },
        "showlegend": False,
    }
    if note is not None:
        layout["annotations"] = [
            {
                "x": note,
                "y": int(counts[note]),
                "yshift": 2.2 * s.font,
                "text": RIGHT_NOTE,
                "showarrow": False,
                "font": {"size": s.font, "color": RIGHT_COLOR},
                "name": "right",
            }
        ]
    return base.finish_figure(bars, layout, spread_title(tally, rounds), s, height=300 if projector else 240)
