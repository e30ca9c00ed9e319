"""Exercise views: the comparison figure (target left, yours right), the per-head differences, the titles."""

import numpy as np
import plotly.graph_objects as go
import pytest

import attention_core as ac
from attention_views.pure.figures.base import LIGHT_TEXT  # the layer writing the dark cells' digits
from attention_views.ui import exercises as xv
from tests.plotly_axes import drawn_axis


def heatmaps(fig: go.Figure) -> list[np.ndarray]:
    """The z matrices of a figure's heatmaps, in trace order."""
    return [np.asarray(t.z, dtype=float) for t in fig.data if t.type == "heatmap" and t.name != LIGHT_TEXT]


def test_titles_are_every_exercise_in_order():
    assert list(xv.titles()) == ac.list_exercises()
    assert xv.titles()["two-heads"] == ac.load_exercise("two-heads").title


@pytest.mark.parametrize("eid", ["self", "two-heads"])
def test_comparison_puts_target_left_and_yours_right_a_row_per_head(eid):
    ex = ac.load_exercise(eid)
    weights = ac.grade(ex, ex.start).weights  # (h, n, n)
    fig = xv.comparison(ex, weights, big=False)
    shown = heatmaps(fig)
    assert len(shown) == 2 * ex.n_heads
    for h in range(ex.n_heads):
        np.testing.assert_allclose(shown[2 * h], ex.target[h], atol=1e-12, err_msg=f"head {h + 1}: target, left")
        np.testing.assert_allclose(shown[2 * h + 1], weights[h], atol=1e-12, err_msg=f"head {h + 1}: yours, right")
    layout = fig.layout
    assert layout.title.text.replace("<br>", " ") == xv.COMPARISON_TITLE, "the title, in lines that fit the column"
    assert layout.title.font.size > 0, "the builder's title font is kept"
    axes = layout.to_plotly_json()
    for h in range(ex.n_heads):
        left, right = ("yaxis" if h == 0 else f"yaxis{2 * h + 1}"), f"yaxis{2 * h + 2}"
        assert drawn_axis(axes, right)["showticklabels"] is False, f"{right}: the right column repeats the queries"
        assert drawn_axis(axes, left).get("showticklabels") is not False, f"{left}: the left column names the queries"


def test_differences_are_yours_minus_target_per_head():
    ex = ac.load_exercise("two-heads")
    weights = ac.grade(ex, ex.start).weights  # (h, n, n)
    figs = xv.differences(ex, weights, big=True)
    assert len(figs) == ex.n_heads
    for h, fig in enumerate(figs):
        np.testing.assert_allclose(heatmaps(fig)[0], weights[h] - ex.target[h], atol=1e-12)
