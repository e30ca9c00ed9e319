"""Every number or word written in a heatmap cell keeps WCAG 2.2 AA's 4.5:1 against that cell's colour, in every
colour scale and in projector mode, on sweeps of values through each figure builder that writes in its cells
(tests/cell_contrast.py computes each ratio from the figure as sent; tests/pages/test_cell_contrast_pages.py
checks the figures of every scenario's own page)."""

from __future__ import annotations

import numpy as np
import pytest
from cell_contrast import as_sent, cell_contrasts, low_contrast, ratio, rgb

import attention_core as ac
from attention_views.pure import figures as fg
from attention_views.pure import theme
from attention_views.pure.figures.base import LIGHT_TEXT


def test_the_ratio_matches_wcags_published_values():
    assert ratio(rgb("#000000"), rgb("#ffffff")) == pytest.approx(21.0)
    assert ratio(rgb("#777777"), rgb("#ffffff")) == pytest.approx(4.48, abs=0.005)  # WebAIM's contrast checker
    assert ratio(rgb("#767676"), rgb("#ffffff")) == pytest.approx(4.54, abs=0.005)
    assert theme.contrast(rgb("#777777"), rgb("#ffffff")) == pytest.approx(4.48, abs=0.005)


SWEEP = np.linspace(0.0, 1.0, 400).reshape(20, 20)  # 400 values across each colour scale, 1/399 apart
TOKENS = [f"t{k}" for k in range(20)]
T8 = TOKENS[:8]
CAUSAL = np.tril(np.ones((8, 8))) > 0


def _sweeps(projector: bool):
    p = {"projector": projector}
    yield "attention weights", fg.attention_heatmap(SWEEP, TOKENS, TOKENS, **p)
    yield "signed matrix", fg.matrix_heatmap(2 * SWEEP - 1, TOKENS, TOKENS, **p)
    yield "own range", fg.matrix_heatmap(SWEEP, TOKENS, TOKENS, colorscale="Viridis", **p)
    yield "change", fg.delta_heatmap(SWEEP, SWEEP[::-1], TOKENS, TOKENS, **p)
    yield "clickable grid", fg.clickable_grid(SWEEP, TOKENS, TOKENS, **p)
    yield "heads, shared range", fg.head_grid([SWEEP, SWEEP[::-1]], ["a", "b"], TOKENS, TOKENS, **p)
    own = [SWEEP * 0.3 + 0.1, SWEEP]
    yield "heads, own ranges", fg.head_grid(own, ["a", "b"], TOKENS, TOKENS, shared_range=False, **p)
    yield "similarity", fg.head_similarity_heatmap(SWEEP[:10, :10], TOKENS[:10], **p)
    yield "masked cells", fg.attention_heatmap(np.where(CAUSAL, SWEEP[:8, :8], -np.inf), T8, T8, **p)
    yield "mask", fg.mask_heatmap(np.where(CAUSAL, 0.0, -np.inf), T8, T8, **p)
    words = [[f"w{i}{j}" for j in range(20)] for i in range(20)]
    yield "logit lens", fg.lens_heatmap(SWEEP, words, TOKENS, TOKENS, **p)


@pytest.mark.parametrize("projector", [False, True], ids=["normal", "projector"])
def test_every_cell_text_on_every_colour_scale_keeps_4_5_to_1(projector):
    checked = 0
    for name, fig in _sweeps(projector):
        sent = as_sent(fig)
        found = cell_contrasts(sent)
        assert found, f"{name}: no cell text found"
        assert not low_contrast(sent), (name, low_contrast(sent)[:5])
        checked += len(found)
    assert checked > 3000


@pytest.mark.parametrize("scenario", ac.list_scenarios())
def test_cell_text_holds_no_markup_so_plotly_sizes_the_digits_to_the_cells(scenario):
    """plotly sizes a heatmap's cell text by its longest string, markup included: a colour span in the text drew
    every digit of the playground at 1 px (hidden). The light cells' digits are a layer of their own instead."""
    W = ac.run_scenario(ac.load_scenario(scenario)).heads[0].weights  # (n_q, n_k)
    fig = fg.attention_heatmap(W, [f"q{i}" for i in range(W.shape[0])], [f"k{j}" for j in range(W.shape[1])])
    heatmaps = [t for t in fig.data if t.type == "heatmap"]
    texts = [c for t in heatmaps for row in t.text for c in row]
    assert texts and not [c for c in texts if "<" in c], "no cell text carries markup"
    main, *layers = heatmaps
    assert [t.name for t in layers] in ([], [LIGHT_TEXT])
    drawn = [[a or b for a, b in zip(ra, rb, strict=True)] for ra, rb in zip(main.text, layers[0].text, strict=True)]
    assert all(c for row in (drawn if layers else main.text) for c in row), "every cell's digits, in one layer"
