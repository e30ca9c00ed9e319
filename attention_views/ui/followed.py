"""A following student's main chart, drawn from the lecturer's view as soon as the class moves.

When the lecturer edits, every following student's page reruns (its tables, controls and charts follow), and in a
hall those reruns queue on the server: a phone waited seconds for the heatmap. So each process's class watcher
builds the main chart of the lecturer's view once (:func:`figure_file`) and writes it beside the room's signal file;
a following page's signal fetches it and draws it in place (``components/figure.js``) before its own rerun arrives,
and the rerun then draws the same figure (``tests/pages/test_classroom.py`` holds the two equal). A page has such a
chart when its main chart is drawn in place: :data:`MAIN_FIGURES`.
"""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

import attention_core as ac
from attention_views.pure import figures
from attention_views.pure.lab import Lab, SingleHead
from attention_views.pure.single_head import run_single_head
from attention_views.pure.tables import TableError
from attention_views.ui.components.figure import spec
from attention_views.ui.controls import STAGE_LABELS

PLAYGROUND_HEATMAP = "playground_heatmap"
MAIN_FIGURES = {"playground": PLAYGROUND_HEATMAP}  # page -> the key of its main chart drawn in place
Taps = tuple[int, Sequence[int]] | None  # a revealed tap question's row and its count per key (class_questions)


def stage_heatmap(
    result: ac.AttentionResult, head: SingleHead, stage: str, *, taps: Taps = None, projector: bool = False
) -> go.Figure:
    """The playground's heatmap of ``stage`` (one of STAGES) of ``result`` (the head's, or the vector plane's while a
    handle is dragged): the weights on their 0-1 scale, a score stage on a scale diverging around 0."""
    kind = {} if stage == "weights" else {"value_name": "score", "zmin": None, "zmax": None, "zmid": 0.0}
    return figures.attention_heatmap(
        getattr(result, stage),
        head.query_tokens,
        head.key_tokens,
        title=STAGE_LABELS[stage],
        taps=taps,
        projector=projector,
        **kind,
    )


def main_figure(lab: Lab, page: str, taps: Taps = None) -> tuple[str, go.Figure] | None:
    """(key, figure) of the main chart a following student's ``page`` draws in place from the lecturer's ``lab``
    (off a projector), or None: the page has none, or the lab's tables do not run (the page then shows its error
    beside its last valid result, which only its own run knows)."""
    key = MAIN_FIGURES.get(page)
    if key is None:
        return None
    try:
        head = run_single_head(lab)
    except (TableError, ac.AttentionInputError):
        return None
    return key, stage_heatmap(head.result, head, lab.stage, taps=taps)


def figure_file(view_version: int, lab: Lab, page: str, taps: Taps = None) -> str | None:
    """The text of the file a following page draws from: ``{"view": the view's version, "key": the chart's key,
    "figure": plotly's JSON of it, its title out as the page shows titles}``; None when the page has no such chart."""
    made = main_figure(lab, page, taps)
    if made is None:
        return None
    key, fig = made
    fig.layout.title.text = None
    return f'{{"view":{int(view_version)},"key":"{key}","figure":{spec(fig)}}}'
