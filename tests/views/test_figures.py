"""Figure builders: traces, values, labels, hovers, masked cells and projector sizes (no browser)."""

import ast
import base64
import json
import re

import numpy as np
import plotly.graph_objects as go
import pytest

import attention_core as ac
from attention_views import figures, theme
from attention_views.theme import CONTENT_PX

# seed 003 (003_772d8909e260d638.txt): query of "friend" and key of "Emma"
FRIEND_Q = (1.0, 0.9, 0.5, 1)
EMMA_K = (1.2, 0.8, 1.0, 0)
DIMS = ("Pers", "Anim", "Noun", "Adj")
TOKENS = ["the", "cat", "is", "what", "it", "is"]  # "is" twice, on purpose


def _weights(n_q: int, n_k: int, seed: int = 0) -> np.ndarray:
    logits = np.random.default_rng(seed).normal(size=(n_q, n_k))
    return ac.softmax(logits, axis=-1)


def _z(trace) -> np.ndarray:
    """A heatmap's z as floats (None -> NaN), from nested lists or a plotly typed array."""
    if isinstance(trace.z, dict):
        raw = np.frombuffer(base64.b64decode(trace.z["bdata"]), dtype=np.dtype(trace.z["dtype"]))
        return raw.reshape([int(n) for n in trace.z["shape"].split(",")]).astype(float)
    return np.array([[np.nan if v is None else v for v in row] for row in trace.z], dtype=float)


def _hover(trace, i: int, j: int) -> str:
    """The hover text plotly would show for grid cell (i, j) of a heatmap trace (customdata, %{z:.4f})."""
    cell = trace.customdata[i][j]
    text = re.sub(r"%\{customdata\[(\d)\]\}", lambda m: str(cell[int(m.group(1))]), trace.hovertemplate)
    text = text.replace("%{z:.4f}", f"{_z(trace)[i, j] + 0.0:.4f}")
    return text.replace("<extra></extra>", "")


def _json(fig: go.Figure) -> dict:
    """The figure as the browser gets it; refuses NaN/Infinity, which are not JSON."""

    def refuse(constant):
        raise AssertionError(f"figure JSON contains {constant}")

    return json.loads(fig.to_json(), parse_constant=refuse)


# ---------------------------------------------------------------- attention_heatmap


def test_heatmap_rows_are_queries_columns_keys_with_values():
    W = _weights(3, 4)
    fig = figures.attention_heatmap(W, ["a", "b", "c"], ["w", "x", "y", "z"])
    trace = fig.data[0]
    assert trace.type == "heatmap"
    np.testing.assert_allclose(np.array(trace.z, dtype=float), W)
    assert list(trace.x) == [0, 1, 2, 3] and list(trace.y) == [0, 1, 2]
    assert fig.layout.xaxis.title.text == "Key token (attended to)"
    assert fig.layout.yaxis.title.text == "Query token (attending)"
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1], "first query must be at the top"
    assert (trace.zmin, trace.zmax) == (0.0, 1.0)


def test_heatmap_keeps_repeated_and_empty_token_labels():
    fig = figures.attention_heatmap(_weights(6, 3), TOKENS, ["is", "", "is"])
    assert list(fig.layout.yaxis.ticktext) == TOKENS
    assert list(fig.layout.yaxis.tickvals) == list(range(6))
    assert list(fig.layout.xaxis.ticktext) == ["is", "", "is"]
    assert _hover(fig.data[0], 5, 1).startswith("query: is<br>key: (blank #1)")


def test_heatmap_hover_names_query_key_and_value():
    W = np.array([[0.5812, 0.4188], [0.1, 0.9]])
    fig = figures.attention_heatmap(W, ["friend", "Emma"], ["Emma", "friend"])
    assert _hover(fig.data[0], 0, 0) == "query: friend<br>key: Emma<br>weight: 0.5812"
    score = figures.attention_heatmap(W, ["friend", "Emma"], ["Emma", "friend"], value_name="score")
    assert _hover(score.data[0], 1, 1) == "query: Emma<br>key: friend<br>score: 0.9000"


def test_heatmap_of_the_emma_friend_scenario_hovers_friend_to_emma():
    result = ac.run_scenario(ac.load_scenario("emma-friend"))
    head = result.heads[0]
    sc = ac.load_scenario("emma-friend")
    fig = figures.attention_heatmap(head.weights, sc.query_tokens, sc.key_tokens)
    row = sc.query_tokens.index("friend")
    assert _hover(fig.data[0], row, 0).startswith("query: friend<br>key: Emma<br>weight: ")
    assert fig.data[0].text[row][0] == f"{head.weights[row, 0]:.2f}"


def test_masked_cells_are_grey_minus_inf_with_masked_hover_and_no_inf_in_json():
    scores = np.where(ac.causal_mask(3), np.array([[1.0, 2.0, 3.0], [-1.5, 0.5, 2.0], [0.25, 1.0, -0.5]]), -np.inf)
    fig = figures.attention_heatmap(scores, list("abc"), list("abc"), value_name="score", zmin=None, zmax=None, zmid=0)
    values, masked = fig.data
    assert np.isnan(values.z[0][1]) and np.isnan(values.z[0][2]) and values.z[1][0] == -1.5, "NaN: a gap"
    assert masked.name == "masked" and masked.showscale is False
    assert masked.text[0][1] == "−inf" and masked.text[1][0] == ""
    assert values.text[0][1] == "", "the value trace leaves masked cells to the grey overlay"
    assert _hover(masked, 0, 2) == "query: a<br>key: c<br>score: masked"
    assert masked.z[0][1] == 1.0 and np.isnan(masked.z[1][0])
    data = _json(fig)
    assert "Infinity" not in json.dumps(data)


def test_no_masked_overlay_without_minus_inf():
    assert len(figures.attention_heatmap(_weights(2, 2), ["a", "b"], ["c", "d"]).data) == 1


def test_zmid_gives_a_symmetric_range_and_the_diverging_scale():
    scores = np.array([[3.0, -1.0], [0.5, -np.inf]])
    fig = figures.attention_heatmap(scores, ["a", "b"], ["c", "d"], zmin=None, zmax=None, zmid=0.0)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (-3.0, 3.0)
    assert fig.data[0].colorscale == go.Heatmap(colorscale=theme.DIVERGING_COLORSCALE).colorscale


def test_auto_range_without_zmid_spans_the_finite_values():
    scores = np.array([[2.0, 5.0], [-np.inf, 3.0]])
    fig = figures.attention_heatmap(scores, ["a", "b"], ["c", "d"], zmin=None, zmax=None)
    assert (fig.data[0].zmin, fig.data[0].zmax) == (2.0, 5.0)
    flat = figures.attention_heatmap(np.full((2, 2), 4.0), ["a", "b"], ["c", "d"], zmin=None, zmax=None)
    assert flat.data[0].zmin < 4.0 < flat.data[0].zmax, "a constant matrix still needs a non-empty range"


def test_weights_use_the_weights_scale_and_projector_the_high_contrast_one():
    W = _weights(2, 2)
    normal = figures.attention_heatmap(W, ["a", "b"], ["c", "d"])
    projector = figures.attention_heatmap(W, ["a", "b"], ["c", "d"], projector=True)
    assert normal.data[0].colorscale == go.Heatmap(colorscale=theme.WEIGHTS_COLORSCALE).colorscale
    assert projector.data[0].colorscale == go.Heatmap(colorscale=theme.PROJECTOR_WEIGHTS_COLORSCALE).colorscale
    assert normal.data[0].colorscale != projector.data[0].colorscale


@pytest.mark.parametrize(("n_q", "n_k", "has_text"), [(20, 20, True), (21, 21, False), (20, 21, False), (3, 21, False)])
def test_cell_text_only_up_to_the_limit(n_q, n_k, has_text):
    fig = figures.attention_heatmap(_weights(n_q, n_k), [f"q{i}" for i in range(n_q)], [f"k{j}" for j in range(n_k)])
    assert (fig.data[0].text is not None) == has_text
    assert (fig.data[0].texttemplate == "%{text}") == has_text


@pytest.mark.parametrize("projector", [False, True])
def test_a_few_wide_cells_keep_their_digits_at_the_playgrounds_width(projector):
    """Four keys in half the page (random-causal, the colour bar under the cells): room for "0.53" even on a
    1024-pixel projector, so the digits are written."""
    fig = figures.attention_heatmap(
        _weights(4, 4), ["t0", "t1", "t2", "t3"], ["t0", "t1", "t2", "t3"], projector=projector, width_px=395
    )
    assert fig.data[0].text is not None and fig.data[0].texttemplate == "%{text}"
    assert fig.data[0].textfont.size >= (12 if projector else 9)


def test_show_text_overrides_the_automatic_choice():
    big = figures.attention_heatmap(_weights(21, 21), [""] * 21, [""] * 21, show_text=True)
    small = figures.attention_heatmap(_weights(2, 2), ["a", "b"], ["c", "d"], show_text=False)
    assert big.data[0].text is not None and big.data[0].text[0][0].count(".") == 1
    assert small.data[0].text is None


def test_cell_text_has_two_decimals_and_no_negative_zero():
    fig = figures.attention_heatmap(np.array([[0.12345, -0.001]]), ["a"], ["b", "c"], zmin=None, zmax=None, zmid=0.0)
    assert list(fig.data[0].text[0]) == ["0.12", "0.00"]


def test_selected_cell_is_outlined():
    fig = figures.attention_heatmap(_weights(3, 3), list("abc"), list("def"), selected=(2, 1))
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert rects and all((s.x0, s.x1, s.y0, s.y1) == (0.5, 1.5, 1.5, 2.5) for s in rects)
    assert not figures.attention_heatmap(_weights(3, 3), list("abc"), list("def")).layout.shapes
    with pytest.raises(ValueError, match="outside the 3x3 grid"):
        figures.attention_heatmap(_weights(3, 3), list("abc"), list("def"), selected=(3, 0))


def test_height_grows_with_the_number_of_queries_from_300px():
    heights = [figures.attention_heatmap(_weights(n, 4), ["t"] * n, list("abcd")).layout.height for n in (2, 10, 20)]
    assert heights[0] >= 300
    assert heights[0] < heights[1] < heights[2]
    assert heights[1] <= 720, "10 queries must fit a 1280x720 projector"


def test_bad_input_gives_a_message_that_says_what_to_fix():
    with pytest.raises(ValueError, match="query_tokens has 2 labels but there are 3 rows"):
        figures.attention_heatmap(_weights(3, 2), ["a", "b"], ["c", "d"])
    with pytest.raises(ValueError, match="row 0, column 1 is nan"):
        figures.attention_heatmap(np.array([[0.5, np.nan]]), ["a"], ["b", "c"])
    with pytest.raises(ValueError, match="2-D"):
        figures.attention_heatmap(np.array([0.5, 0.5]), ["a"], ["b", "c"])


def test_many_tokens_thin_the_tick_labels_but_keep_every_row():
    n = 64
    fig = figures.attention_heatmap(_weights(n, n), [f"t{i}" for i in range(n)], [f"t{i}" for i in range(n)])
    assert len(fig.data[0].y) == n
    assert len(fig.layout.yaxis.tickvals) < n
    assert fig.layout.yaxis.ticktext[1] == f"t{fig.layout.yaxis.tickvals[1]}"


# ---------------------------------------------------------------- matrix, mask, delta


def test_matrix_heatmap_is_diverging_around_zero_and_keeps_labels():
    Q = np.array([[1.0, -2.0, 0.5], [0.0, 0.25, 1.5]])
    fig = figures.matrix_heatmap(Q, ["is", "is"], ["q0", "q1", "q2"], title="Q")
    trace = fig.data[0]
    np.testing.assert_allclose(np.array(trace.z, dtype=float), Q)
    assert (trace.zmin, trace.zmax) == (-2.0, 2.0)
    assert trace.colorscale == go.Heatmap(colorscale=theme.DIVERGING_COLORSCALE).colorscale
    assert list(fig.layout.yaxis.ticktext) == ["is", "is"]
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]
    assert fig.layout.title.text == "Q"
    assert _hover(trace, 0, 1) == "row: is<br>column: q1<br>value: -2.0000"
    big = figures.attention_heatmap(_weights(2, 3), ["is", "is"], ["q0", "q1", "q2"])
    assert fig.layout.height < big.layout.height, "matrix heatmaps are compact"


def test_matrix_heatmap_with_its_own_scale_spans_min_to_max():
    fig = figures.matrix_heatmap(np.array([[1.0, 3.0]]), ["x"], ["a", "b"], colorscale="Blues")
    assert (fig.data[0].zmin, fig.data[0].zmax) == (1.0, 3.0)


def test_mask_heatmap_shows_zero_and_minus_inf_in_two_colours():
    additive = ac.additive_mask(ac.causal_mask(3))
    fig = figures.mask_heatmap(additive, list("abc"), list("abc"))
    trace = fig.data[0]
    assert trace.text[0][0] == "0" and trace.text[0][1] == "−inf"
    assert trace.z[0][1] != trace.z[0][0]
    assert trace.colorscale[0][1] == theme.MASKED_COLOR and trace.colorscale[-1][1] == theme.ALLOWED_COLOR
    assert _hover(trace, 0, 2) == "query: a<br>key: c<br>mask: −inf (blocked)"
    assert fig.layout.title.text == "Additive mask"
    _json(fig)


def test_delta_heatmap_is_after_minus_before_with_a_symmetric_range():
    before = np.array([[0.5, 0.5], [0.2, 0.8]])
    after = np.array([[0.9, 0.1], [0.2, 0.8]])
    fig = figures.delta_heatmap(before, after, ["a", "b"], ["c", "d"])
    np.testing.assert_allclose(np.array(fig.data[0].z, dtype=float), after - before, atol=1e-12)
    assert fig.data[0].zmin == -fig.data[0].zmax == pytest.approx(-0.4)
    assert "after − before" in fig.layout.title.text


def test_delta_heatmap_of_identical_matrices_and_masked_scores():
    same = figures.delta_heatmap(np.eye(2), np.eye(2), ["a", "b"], ["c", "d"])
    assert same.data[0].zmin == -1.0 and same.data[0].zmax == 1.0
    masked = figures.delta_heatmap(np.array([[1.0, -np.inf]]), np.array([[2.0, -np.inf]]), ["a"], ["b", "c"])
    np.testing.assert_array_equal(masked.data[0].z[0], [1.0, np.nan])
    _json(masked)
    with pytest.raises(ValueError, match="one shape"):
        figures.delta_heatmap(np.eye(2), np.eye(3), ["a", "b"], ["c", "d"])


# ---------------------------------------------------------------- head grid


def test_head_grid_shares_one_colour_axis_with_one_colour_bar():
    heads = [_weights(3, 3, seed) for seed in range(3)]
    fig = figures.head_grid(heads, ["Head A", "Head B", "Head C"], list("abc"), ["x", "x", "y"])
    assert [t.type for t in fig.data] == ["heatmap"] * 3
    assert {t.coloraxis for t in fig.data} == {"coloraxis"}
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)
    assert fig.layout.coloraxis.colorscale == go.Heatmap(colorscale=theme.WEIGHTS_COLORSCALE).colorscale
    assert all(t.showscale is None and t.colorscale is None for t in fig.data), "no per-head colour bars"
    assert [a.text for a in fig.layout.annotations] == ["Head A", "Head B", "Head C"]
    np.testing.assert_allclose(np.array(fig.data[2].z, dtype=float), heads[2])
    for axis in ("xaxis", "xaxis2", "xaxis3"):
        assert list(fig.layout[axis].ticktext) == ["x", "x", "y"]
    assert fig.layout.yaxis3.range[0] > fig.layout.yaxis3.range[1]
    assert "weight (Head B)" in _hover(fig.data[1], 0, 0)


def test_head_grid_lays_heads_out_in_columns_and_checks_shapes():
    fig = figures.head_grid([_weights(2, 2, s) for s in range(4)], list("ABCD"), ["a", "b"], ["c", "d"], cols=3)
    assert (fig.data[3].xaxis, fig.data[3].yaxis) == ("x4", "y4")
    assert fig.layout.xaxis4.domain[0] == fig.layout.xaxis.domain[0], "head 4 starts the second row"
    with pytest.raises(ValueError, match="every head attends over the same tokens"):
        figures.head_grid([_weights(2, 2), _weights(3, 2)], ["A", "B"], ["a", "b"], ["c", "d"])
    with pytest.raises(ValueError, match="one name per head"):
        figures.head_grid([_weights(2, 2)], ["A", "B"], ["a", "b"], ["c", "d"])


def test_head_grid_text_follows_the_limit():
    small = figures.head_grid([_weights(3, 3)], ["A"], list("abc"), list("abc"))
    big = figures.head_grid([_weights(21, 21)], ["A"], [""] * 21, [""] * 21)
    assert small.data[0].text is not None and big.data[0].text is None


# ---------------------------------------------------------------- clickable grid


def test_clickable_grid_is_one_square_marker_per_cell_with_customdata_i_j():
    W = _weights(2, 3)
    fig = figures.clickable_grid(W, ["is", "is"], ["a", "b", "c"])
    (trace,) = fig.data
    assert trace.type == "scatter" and trace.marker.symbol == "square"
    assert [list(c) for c in trace.customdata] == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    assert list(trace.x) == [0, 1, 2, 0, 1, 2] and list(trace.y) == [0, 0, 0, 1, 1, 1]
    np.testing.assert_allclose(trace.marker.color, W.ravel())
    assert (trace.marker.cmin, trace.marker.cmax) == (0.0, 1.0)
    assert trace.marker.colorscale == go.Scatter(marker={"colorscale": theme.WEIGHTS_COLORSCALE}).marker.colorscale
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]
    assert list(fig.layout.yaxis.ticktext) == ["is", "is"]
    assert trace.hovertext[4] == "query: is<br>key: b"
    assert trace.hovertemplate == "%{hovertext}<br>weight: %{marker.color:.4f}<extra></extra>"
    assert trace.unselected.marker.opacity == 1.0, "clicking must not fade the other cells"


def test_clickable_grid_axis_titles_are_short_when_the_grid_is_shorter_than_them():
    """Two queries on a projector: "Query token (attending)" stood taller than the grid and ran into the figure's
    title (mammal-query on the step-by-step page); the short title then, the full one when it fits."""
    short = figures.clickable_grid(_weights(2, 5), ["mammal", "reptile"], list("abcde"), projector=True)
    tall = figures.clickable_grid(_weights(8, 8), list("abcdefgh"), list("ijklmnop"), projector=True)
    assert (short.layout.yaxis.title.text, short.layout.xaxis.title.text) == ("query", "Key token (attended to)")
    assert (tall.layout.yaxis.title.text, tall.layout.xaxis.title.text) == (
        "Query token (attending)",
        "Key token (attended to)",
    )


def test_product_terms_sum_is_spelled_out_only_when_it_fits_one_line():
    """Eight terms on a projector ran the annotation past the chart's edge (four in normal mode on a 1024-px
    screen): the sum is written as Σ q_i k_i when the terms do not fit one line of the chart on the narrowest
    screen."""
    q, k = np.linspace(-0.5, 0.5, 8), np.linspace(0.3, 0.9, 8)
    dims = [f"d{i}" for i in range(8)]
    wide = figures.product_terms_bar(dims, q, k, projector=True, width_px=CONTENT_PX * 3 / 5)
    four = figures.product_terms_bar(dims[:4], q[:4], k[:4], width_px=CONTENT_PX * 3 / 5)
    few = figures.product_terms_bar(dims[:3], q[:3], k[:3], width_px=CONTENT_PX)
    assert "Σ q_i k_i" in wide.layout.annotations[0].text and "Σ q_i k_i" in four.layout.annotations[0].text
    assert " + " in few.layout.annotations[0].text and "Σ" not in few.layout.annotations[0].text


def test_clickable_grid_squares_fill_their_cells():
    fig = figures.clickable_grid(_weights(4, 4), list("abcd"), list("efgh"))
    m = fig.layout.margin
    cell_w = (fig.layout.width - m.l - m.r) / 4
    cell_h = (fig.layout.height - m.t - m.b) / 4
    assert cell_w == pytest.approx(cell_h)
    assert 0.85 * cell_w <= fig.data[0].marker.size <= cell_w
    assert fig.layout.xaxis.automargin is False and fig.layout.xaxis.fixedrange is True


@pytest.mark.parametrize("projector", [False, True])
@pytest.mark.parametrize("n", [3, 9, 10, 16])
def test_clickable_grid_fits_the_narrowest_screen_and_its_digits_fit_their_squares(n, projector):
    """A fixed-size grid wider than its column is shrunk by the browser, its squares and digits are not."""
    tokens = ["friend", "hates", "games", "Emma", "is", "a", "great", "but", "she", "x", "y", "z", "u", "v", "w", "t"]
    fig = figures.clickable_grid(_weights(n, n), tokens[:n], tokens[:n], projector=projector)
    assert fig.layout.width <= figures.base.NARROWEST_SCREEN * CONTENT_PX
    if fig.data[0].text:  # written only while the digits fit: four characters of the font, and a little room
        font = fig.data[0].textfont.size
        assert font * figures.base.CELL_TEXT_CHARS * figures.base.CHAR_PX + 4 <= fig.data[0].marker.size
        assert font >= (12 if projector else 9)
    assert bool(fig.data[0].text) == (n <= 10), "up to ten tokens (the seeds') the squares hold their digits"


def test_clickable_grid_outlines_the_selected_cell_and_writes_readable_text():
    fig = figures.clickable_grid(np.array([[0.05, 0.95]]), ["q"], ["a", "b"], selected=(0, 1))
    assert {(s.x0, s.y0) for s in fig.layout.shapes} == {(0.5, -0.5)}
    assert list(fig.data[0].text) == ["0.05", "0.95"]
    assert list(fig.data[0].textfont.color) == ["white", "black"], "white on dark purple, black on yellow"
    with pytest.raises(ValueError, match="outside"):
        figures.clickable_grid(np.array([[0.05, 0.95]]), ["q"], ["a", "b"], selected=(1, 0))


# ---------------------------------------------------------------- bars


def test_activation_bars_keep_duplicate_tokens_as_separate_bars():
    norms = np.array([1.0, 2.0, 3.0, 0.5, 0.25, 4.0])
    fig = figures.activation_bars(TOKENS, norms)
    (trace,) = fig.data
    assert trace.type == "bar" and list(trace.x) == list(range(6))
    np.testing.assert_allclose(trace.y, norms)
    assert list(fig.layout.xaxis.ticktext) == TOKENS
    assert list(trace.customdata) == TOKENS
    assert "L2 norm of output row: %{y:.4f}" in trace.hovertemplate
    assert fig.layout.yaxis.title.text == "L2 norm of output row"
    with pytest.raises(ValueError, match="tokens has 5 labels but there are 6 values"):
        figures.activation_bars(TOKENS[:5], norms)


def test_grouped_activation_bars_one_trace_per_series():
    single, multi = np.array([1.0, 2.0, 3.0]), np.array([1.5, 1.0, 2.5])
    fig = figures.grouped_activation_bars(["apple", "is", "is"], {"single-head": single, "multi-head": multi})
    assert [t.name for t in fig.data] == ["single-head", "multi-head"]
    assert fig.layout.barmode == "group"
    np.testing.assert_allclose(fig.data[1].y, multi)
    assert list(fig.layout.xaxis.ticktext) == ["apple", "is", "is"]
    assert fig.data[0].marker.color != fig.data[1].marker.color
    assert fig.layout.title.text == "Single-head vs multi-head activation strength"
    with pytest.raises(ValueError, match="series 'multi-head'"):
        figures.grouped_activation_bars(["a", "b", "c"], {"single-head": single, "multi-head": multi[:2]})


def test_product_terms_of_friend_and_emma_sum_to_2_42():
    fig = figures.product_terms_bar(DIMS, FRIEND_Q, EMMA_K)
    (trace,) = fig.data
    np.testing.assert_allclose(trace.y, [1.2, 0.72, 0.5, 0.0])
    assert list(fig.layout.xaxis.ticktext) == list(DIMS)
    (note,) = fig.layout.annotations
    assert note.text.endswith("= <b>2.42</b>")
    assert "1.2 + 0.72 + 0.5 + 0.0" in note.text
    assert "q·k = 1.0 × 1.2 = 1.2" in trace.hovertext[0]
    assert trace.hovertext[1].startswith("Anim: q[1] × k[1]")
    with pytest.raises(ValueError, match="k must be a 1-D list with 4 entries"):
        figures.product_terms_bar(DIMS, FRIEND_Q, EMMA_K[:3])


def test_negative_product_terms_get_their_own_colour():
    fig = figures.product_terms_bar(["a", "b"], [1.0, -1.0], [2.0, 3.0])
    assert fig.data[0].marker.color[0] != fig.data[0].marker.color[1]
    assert fig.layout.annotations[0].text.endswith("<b>-1.0</b>")


# ---------------------------------------------------------------- scaling


def test_variance_vs_dk_two_lines_on_a_log_axis():
    d = np.array([1, 4, 16, 64])
    fig = figures.variance_vs_dk(d, d * 1.0, np.ones(4))
    assert [t.type for t in fig.data] == ["scatter", "scatter"]
    assert fig.layout.xaxis.type == "log" and list(fig.layout.xaxis.ticktext) == ["1", "4", "16", "64"]
    assert fig.layout.yaxis.type == "log", "on a linear axis the scaled line hides at 0"
    np.testing.assert_allclose(fig.data[0].y, d)
    assert "√d_k" in fig.layout.title.text
    with pytest.raises(ValueError, match="greater than 0"):
        figures.variance_vs_dk([0, 4], [1, 2], [1, 1])


def test_saturation_vs_dk_puts_entropy_on_a_secondary_axis():
    d = [1, 8, 64]
    max_weight = {"unscaled": [0.4, 0.8, 0.99], "scaled": [0.4, 0.45, 0.5]}
    fig = figures.saturation_vs_dk(d, max_weight, {"unscaled": [1.5, 0.7, 0.1], "scaled": [1.5, 1.4, 1.3]})
    axes = {t.name: t.yaxis for t in fig.data}
    assert axes["max weight, unscaled"] == "y" and axes["entropy (bits), unscaled"] == "y2"
    assert fig.layout.xaxis.type == "log"
    assert fig.layout.yaxis2.overlaying == "y" and fig.layout.yaxis2.tickmode == "auto"
    colors = {t.name: t.line.color for t in fig.data}
    assert colors["max weight, scaled"] == colors["entropy (bits), scaled"] != colors["max weight, unscaled"]


# ---------------------------------------------------------------- vectors


def test_vector_arrows_2d_uses_arrow_annotations_and_equal_aspect():
    fig = figures.vector_arrows({"q": np.array([1.0, 2.0]), "k": np.array([2.0, -1.0])})
    arrows = [a for a in fig.layout.annotations if a.showarrow]
    assert [(a.x, a.y, a.ax, a.ay) for a in arrows] == [(1.0, 2.0, 0, 0), (2.0, -1.0, 0, 0)]
    assert all(a.axref == "x" and a.ayref == "y" for a in arrows)
    assert fig.layout.yaxis.scaleanchor == "x" and fig.layout.yaxis.scaleratio == 1
    assert [list(t.text) for t in fig.data] == [["q"], ["k"]]


def test_vector_arrows_3d_for_three_or_more_dims():
    fig = figures.vector_arrows({"a": [1.0, 0.0, 2.0, 9.0], "b": [0.0, 1.0, 1.0, 9.0]})
    assert [t.type for t in fig.data] == ["scatter3d", "scatter3d"]
    assert list(fig.data[0].z) == [0, 2.0] and list(fig.data[0].text) == ["", "a"]
    assert fig.layout.scene.aspectmode == "cube"
    assert fig.layout.scene.xaxis.range == fig.layout.scene.zaxis.range
    assert "first 3 of 4 dims" in fig.layout.title.text
    eye = fig.layout.scene.camera.eye
    assert not (eye.x == eye.y == eye.z), "the default eye looks along (1, 1, 1), where positive vectors point"


def test_vector_arrows_one_dimension_lies_on_the_x_axis():
    fig = figures.vector_arrows({"v": [2.0]})
    assert (fig.layout.annotations[0].x, fig.layout.annotations[0].y) == (2.0, 0.0)


# ---------------------------------------------------------------- every figure


W2 = np.array([[0.7, 0.3], [0.4, 0.6]])
MASK2 = ac.additive_mask(ac.causal_mask(2))
AB = ["a", "b"]
BUILDERS = {
    "attention_heatmap": lambda p: figures.attention_heatmap(W2, ["a", "b"], ["a", "b"], projector=p),
    "matrix_heatmap": lambda p: figures.matrix_heatmap(W2 - 0.5, ["a", "b"], ["d0", "d1"], projector=p),
    "mask_heatmap": lambda p: figures.mask_heatmap(MASK2, AB, AB, projector=p),
    "delta_heatmap": lambda p: figures.delta_heatmap(W2, W2.T, ["a", "b"], ["a", "b"], projector=p),
    "head_grid": lambda p: figures.head_grid([W2, W2.T], ["A", "B"], ["a", "b"], ["a", "b"], projector=p),
    "clickable_grid": lambda p: figures.clickable_grid(W2, ["a", "b"], ["a", "b"], projector=p),
    "activation_bars": lambda p: figures.activation_bars(["a", "b"], [1.0, 2.0], projector=p),
    "grouped_activation_bars": lambda p: figures.grouped_activation_bars(AB, {"s": [1, 2], "m": [2, 1]}, projector=p),
    "product_terms_bar": lambda p: figures.product_terms_bar(DIMS, FRIEND_Q, EMMA_K, projector=p),
    "variance_vs_dk": lambda p: figures.variance_vs_dk([1, 2], [1, 2], [1, 1], projector=p),
    "saturation_vs_dk": lambda p: figures.saturation_vs_dk([1, 2], {"s": [0.5, 0.6]}, {"s": [1, 0.9]}, projector=p),
    "vector_arrows_2d": lambda p: figures.vector_arrows({"q": [1, 2]}, projector=p),
    "vector_arrows_3d": lambda p: figures.vector_arrows({"q": [1, 2, 3]}, projector=p),
}


@pytest.mark.parametrize("name", BUILDERS)
def test_every_figure_has_a_title_a_light_template_and_serialises(name):
    fig = BUILDERS[name](False)
    assert isinstance(fig, go.Figure) and fig.data
    assert fig.layout.title.text
    assert fig.layout.paper_bgcolor == "white" and fig.layout.plot_bgcolor == "white"  # light, set per figure
    assert fig.layout.height >= 180
    _json(fig)


@pytest.mark.parametrize("name", BUILDERS)
def test_projector_mode_enlarges_every_font(name):
    normal, projector = BUILDERS[name](False), BUILDERS[name](True)
    assert projector.layout.font.size >= 18 > normal.layout.font.size
    assert projector.layout.title.font.size > normal.layout.title.font.size
    for trace in projector.data:
        if trace.textfont is not None and trace.textfont.size is not None:
            assert trace.textfont.size >= 16


@pytest.mark.parametrize("name", ["attention_heatmap", "matrix_heatmap", "mask_heatmap", "head_grid"])
def test_projector_mode_thickens_cell_gaps(name):
    normal, projector = BUILDERS[name](False), BUILDERS[name](True)
    assert projector.data[0].xgap > normal.data[0].xgap and projector.data[0].ygap > normal.data[0].ygap
    assert projector.data[0].textfont.size >= 16


def test_builders_never_import_streamlit():
    for module in (figures, theme):
        with open(module.__file__, encoding="utf-8") as handle:
            tree = ast.parse(handle.read())
        imported = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
        imported |= {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        assert not {name for name in imported if name and name.split(".")[0] == "streamlit"}, module.__name__


def test_head_grid_can_give_each_head_its_own_colour_range():
    rng = np.random.default_rng(0)
    heads = [rng.dirichlet(np.ones(5) * 50, size=5) for _ in range(4)]  # all near 0.2: alike on 0..1
    tokens = list("abcde")
    own = figures.head_grid(heads, ["h1", "h2", "h3", "h4"], tokens, tokens, shared_range=False).to_dict()
    for trace, W in zip(own["data"], heads, strict=True):
        assert (trace["zmin"], trace["zmax"]) == (W.min(), W.max())
        assert "coloraxis" not in trace
    titles = [a["text"] for a in own["layout"]["annotations"]]
    assert titles[0] == f"h1<br>{heads[0].min():.2f}–{heads[0].max():.2f}"  # the range under the name
    shared = figures.head_grid(heads, ["h1", "h2", "h3", "h4"], tokens, tokens).to_dict()
    assert all(t["coloraxis"] == "coloraxis" for t in shared["data"])
    assert (shared["layout"]["coloraxis"]["cmin"], shared["layout"]["coloraxis"]["cmax"]) == (0.0, 1.0)


def test_head_grid_panel_titles_fit_their_panel_and_queries_are_labelled_once_per_row():
    heads = [np.full((3, 3), 1 / 3)] * 4
    name = "Head 2: preference/comparison of fruit"
    fig = figures.head_grid(heads, ["a", name, "c", "<b>d</b>"], list("xyz"), list("xyz"), width_px=300).to_dict()
    titles = [a["text"] for a in fig["layout"]["annotations"]][:4]
    first, second = titles[1].split("<br>")  # "Head 2:" over what the head is for, cut to fit
    assert first == "Head 2:"
    assert second.endswith("…") and name.startswith(f"Head 2: {second[:-1]}") and len(second) > 5
    assert titles[3] == "&lt;b&gt;d&lt;/b&gt;"  # still shown literally
    markup = "<b>H</b>: <i>a long description of it</i>"  # split, and each line still literal
    split = figures.head_grid(heads, ["a", markup, "c", "d"], list("xyz"), list("xyz"), width_px=300).to_dict()
    first, second = split["layout"]["annotations"][1]["text"].split("<br>")
    assert first == "&lt;b&gt;H&lt;/b&gt;:" and second.startswith("&lt;i&gt;a") and second.endswith("…")
    shown = [fig["layout"][f"yaxis{k}"].get("showticklabels", True) for k in ("", "2", "3", "4")]
    assert shown == [True, False, True, False]  # two panels a row: the queries on the left one


def test_rope_arrows_draw_each_position_of_each_pair_from_the_origin():
    q = np.arange(1.0, 9.0)  # d = 8: pairs (0, 4), (1, 5), (2, 6), (3, 7)
    rotated = ac.rope(np.tile(q, (3, 1)), np.arange(3))  # (3, 8)
    fig = figures.rope_arrows(rotated, "<b>cat</b>")
    assert len(fig.data) == 4 * 3
    for trace in fig.data:
        i, p = int((trace.xaxis or "x")[1:] or 1) - 1, int(trace.name.split()[-1])
        assert list(trace.x) == [0, rotated[p, i]] and list(trace.y) == [0, rotated[p, i + 4]]
    assert [a.text for a in fig.layout.annotations] == ["dims 0 and 4", "dims 1 and 5", "dims 2 and 6", "dims 3 and 7"]
    assert "<b>" not in fig.layout.title.text, "a token label is shown as typed, not as markup"
    with pytest.raises(ValueError, match="even number"):
        figures.rope_arrows(rotated[:, :7], "cat")


def test_a_long_title_is_cut_into_lines_that_fit_the_figure_and_the_margin_grows_with_them():
    title = "Why scale by 1/√d_k: the variance of q·k grows with d_k"
    wide = figures.attention_heatmap(np.eye(3), list("abc"), list("abc"), title=title, width_px=1200)
    narrow = figures.attention_heatmap(np.eye(3), list("abc"), list("abc"), title=title, width_px=300)
    assert wide.layout.title.text == title
    lines = narrow.layout.title.text.split("<br>")
    assert len(lines) >= 3 and " ".join(lines) == title
    assert max(map(len, lines)) * 0.62 * theme.NORMAL.title_font <= 0.7 * 300 + 1e-9, (
        "each line fits the narrowest screen"
    )
    assert narrow.layout.margin.t > wide.layout.margin.t and narrow.layout.height > wide.layout.height


@pytest.mark.parametrize("scenario_id", ["mammal-query", "emma-friend", "apple-orange"])
def test_projector_playground_heatmap_names_every_key(scenario_id):
    """On a projector the playground's heatmap (7/12 of the content, on a 1024-pixel screen) keeps a label for
    every key: upright in a smaller font rather than every other one (they were 3 of 5, 5 of 9, 4 of 10)."""
    sc = ac.load_scenario(scenario_id)
    keys = list(sc.key_tokens)
    W = np.full((len(sc.query_tokens), len(keys)), 1 / len(keys))
    fig = figures.attention_heatmap(W, sc.query_tokens, keys, projector=True, width_px=CONTENT_PX * 7 / 12)
    x = fig.layout.xaxis
    assert list(x.ticktext) == keys
    if x.tickangle == -90:  # upright: one line of the font per label, never below the projector's smallest
        assert x.tickfont.size >= 12 and len(keys) * 1.2 * x.tickfont.size <= 0.7 * CONTENT_PX * 7 / 12
    assert fig.data[0].colorbar.orientation == "h", "drawn narrow on a projector: the colour bar lies underneath"


def test_exercise_panels_name_every_key_on_a_projector():
    """The exercises' target and yours panels (2 across the 6/11 column) took the row labels off each panel's
    width and kept 3 of 5 keys; the labels are drawn once per row of panels, so each panel has room for all."""
    from attention_views.exercise_views import VIEW_PX

    tokens = ["the", "cat", "sat", "on", "mats"]
    fig = figures.head_grid([np.eye(5)] * 2, ["Target", "Yours"], tokens, tokens, projector=True, width_px=VIEW_PX)
    assert list(fig.layout.xaxis.ticktext) == tokens and fig.layout.xaxis.tickfont.size >= 12


def test_column_labels_are_thinned_to_the_width_the_page_draws_the_heatmap():
    tokens = [f"tok{i}" for i in range(12)]
    W = np.full((12, 12), 1 / 12)
    wide = figures.attention_heatmap(W, tokens, tokens, projector=True)
    narrow = figures.attention_heatmap(W, tokens, tokens, projector=True, width_px=300)
    assert list(wide.layout.xaxis.ticktext) == tokens
    assert 1 < len(narrow.layout.xaxis.ticktext) < 12, "every other label, or fewer, in a narrow column"
    assert narrow.layout.yaxis.title.text == "query" and narrow.data[0].colorbar.orientation == "h"


@pytest.mark.parametrize("n_keys", [2, 3, 4, 5])
def test_a_heatmap_drawn_as_narrow_as_attention_heatmap_px_keeps_its_digits_in_the_full_font(n_keys):
    """The playground's projector layout gives the tables every pixel the heatmap can spare: attention_heatmap_px
    is the least width at which its cells still hold their values in the projector's own cell font."""
    tokens = [f"t{i}" for i in range(n_keys)]
    W = np.full((n_keys, n_keys), 1 / n_keys)
    least = figures.attention_heatmap_px(n_keys, 2, projector=True, most_px=10_000)
    planned = least / figures.NARROWEST_SCREEN  # so drawn on the narrowest screen at exactly that width
    fig = figures.attention_heatmap(W, tokens, tokens, projector=True, width_px=planned)
    assert fig.data[0].texttemplate and fig.data[0].textfont.size == theme.PROJECTOR_CELL_FONT_SIZE
    smaller = figures.attention_heatmap(W, tokens, tokens, projector=True, width_px=planned - 40)
    assert smaller.data[0].textfont.size < theme.PROJECTOR_CELL_FONT_SIZE or not smaller.data[0].texttemplate


def test_many_keys_get_colour_cells_when_their_digits_would_take_too_much_room():
    digits = figures.attention_heatmap_px(10, 7, projector=True, most_px=10_000)
    colour = figures.attention_heatmap_px(10, 7, projector=True, most_px=digits - 1)
    assert colour < digits
    assert colour - figures.attention_heatmap_px(0, 7, projector=True, most_px=0) == 10 * 22  # COLOUR_CELL_PX each


def test_the_long_query_title_only_beside_rows_about_as_tall_as_it_is_long():
    """Two queries' rows on a projector are 150 px: "Query token (attending)" ran into the chart's title above."""
    keys = ["kitten", "lizard", "salmon", "whale", "wolf"]
    few = figures.attention_heatmap(_weights(2, 5), ["mammal", "reptile"], keys, projector=True, width_px=600)
    many = figures.attention_heatmap(_weights(6, 5), TOKENS, keys, projector=True, width_px=600)
    assert few.layout.yaxis.title.text == "query"
    assert many.layout.yaxis.title.text == figures.QUERY_AXIS_TITLE
