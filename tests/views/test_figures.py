"""Figure builders: traces, values, labels, hovers, masked cells and projector sizes (no browser)."""

import base64
import json
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import plotly.graph_objects as go
import pytest
from plotly.subplots import make_subplots

import attention_core as ac
from attention_views.pure import figures, theme
from attention_views.pure.figures import base
from attention_views.pure.figures.base import LIGHT_TEXT
from tests.plotly_axes import drawn_axis

ROOT = Path(__file__).resolve().parents[2]

# seed 003 (003_772d8909e260d638.txt): query of "friend" and key of "Emma"
FRIEND_Q = (1.0, 0.9, 0.5, 1)
EMMA_K = (1.2, 0.8, 1.0, 0)
DIMS = ("Pers", "Anim", "Noun", "Adj")
TOKENS = ["the", "cat", "is", "what", "it", "is"]  # "is" twice, on purpose


def drawn(fig) -> list:
    """The traces that draw something of their own (not base.light_text_layers' layers of dark cells' digits)."""
    return [t for t in fig.data if t.name != LIGHT_TEXT]


def light_layer(fig, k: int):
    """The layer that writes the light-ink digits of trace ``k``."""
    (layer,) = [t for t in fig.data if t.name == LIGHT_TEXT and t.meta == k]
    return layer


def written(fig, k: int) -> list[list[str]]:
    """Each cell's text of trace ``k`` as drawn: its own, or its light-text layer's ("" where neither writes)."""
    layers = [t for t in fig.data if t.name == LIGHT_TEXT and t.meta == k]
    own = [[c.strip() for c in row] for row in fig.data[k].text]
    if not layers:
        return own
    return [[a or b.strip() for a, b in zip(r, q, strict=True)] for r, q in zip(own, layers[0].text, strict=True)]


def _weights(n_q: int, n_k: int, seed: int = 0) -> np.ndarray:
    logits = np.random.default_rng(seed).normal(size=(n_q, n_k))
    return ac.softmax(logits, axis=-1)


def _z(trace) -> np.ndarray:
    """A heatmap's z as floats (None -> NaN), from nested lists or a plotly typed array."""
    if isinstance(trace.z, dict):
        raw = np.frombuffer(base64.b64decode(trace.z["bdata"]), dtype=np.dtype(trace.z["dtype"]))
        return raw.reshape([int(n) for n in trace.z["shape"].split(",")]).astype(float)
    return np.array([[np.nan if v is None else v for v in row] for row in trace.z], dtype=float)


def axis_name(axis, n: int) -> str:
    """What plotly.js names position ``n`` of a numeric axis in a hover (``%{x}``): the text of its tick, else
    the axis's ``labelalias`` of the number, else the number."""
    ticks = [int(v) for v in axis.tickvals or ()]
    if n in ticks:
        return axis.ticktext[ticks.index(n)]
    return (axis.labelalias or {}).get(str(n), str(n))


def _hover(fig: go.Figure, trace, i: int, j: int) -> str:
    """The hover text plotly would show for grid cell (i, j) of a heatmap trace of ``fig``: the axes' names
    (%{y}, %{x}), the cell's customdata, %{z:.4f}."""
    layout = fig.layout.to_plotly_json()
    xa, ya = (
        SimpleNamespace(**{"tickvals": None, "ticktext": None, "labelalias": None, **drawn_axis(layout, axis)})
        for axis in (name[0] + "axis" + name[1:] for name in (trace.xaxis or "x", trace.yaxis or "y"))
    )
    cell = None if trace.customdata is None else trace.customdata[i][j]
    text = trace.hovertemplate.replace("%{x}", axis_name(xa, j)).replace("%{y}", axis_name(ya, i))
    text = re.sub(r"%\{customdata\[(\d)\]\}", lambda m: str(cell[int(m.group(1))]), text)
    text = text.replace("%{customdata}", str(cell))
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
    assert fig.layout.xaxis.title.text == "key"
    assert fig.layout.yaxis.title.text == "query"
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1], "first query must be at the top"
    assert (trace.zmin, trace.zmax) == (0.0, 1.0)


def test_heatmap_keeps_repeated_and_empty_token_labels():
    fig = figures.attention_heatmap(_weights(6, 3), TOKENS, ["is", "", "is"])
    assert list(fig.layout.yaxis.ticktext) == TOKENS
    assert list(fig.layout.yaxis.tickvals) == list(range(6))
    assert list(fig.layout.xaxis.ticktext) == ["is", "is"] and list(fig.layout.xaxis.tickvals) == [0, 2]
    assert fig.layout.xaxis.labelalias == {"1": "(blank #1)"}, "a blank label has no tick; its hover names it"
    assert _hover(fig, fig.data[0], 5, 1).startswith("query: is<br>key: (blank #1)")


def test_heatmap_hover_names_query_key_and_value():
    W = np.array([[0.5812, 0.4188], [0.1, 0.9]])
    fig = figures.attention_heatmap(W, ["friend", "Emma"], ["Emma", "friend"])
    assert _hover(fig, fig.data[0], 0, 0) == "query: friend<br>key: Emma<br>weight: 0.5812"
    score = figures.attention_heatmap(W, ["friend", "Emma"], ["Emma", "friend"], value_name="score")
    assert _hover(score, score.data[0], 1, 1) == "query: Emma<br>key: friend<br>score: 0.9000"


def test_heatmap_of_the_emma_friend_scenario_hovers_friend_to_emma():
    result = ac.run_scenario(ac.load_scenario("emma-friend"))
    head = result.heads[0]
    sc = ac.load_scenario("emma-friend")
    fig = figures.attention_heatmap(head.weights, sc.query_tokens, sc.key_tokens)
    row = sc.query_tokens.index("friend")
    assert _hover(fig, fig.data[0], row, 0).startswith("query: friend<br>key: Emma<br>weight: ")
    assert fig.data[0].text[row][0] == f"{head.weights[row, 0]:.2f}"


def test_masked_cells_are_grey_minus_inf_with_masked_hover_and_no_inf_in_json():
    scores = np.where(ac.causal_mask(3), np.array([[1.0, 2.0, 3.0], [-1.5, 0.5, 2.0], [0.25, 1.0, -0.5]]), -np.inf)
    fig = figures.attention_heatmap(scores, list("abc"), list("abc"), value_name="score", zmin=None, zmax=None, zmid=0)
    values, masked = drawn(fig)
    assert np.isnan(values.z[0][1]) and np.isnan(values.z[0][2]) and values.z[1][0] == -1.5, "NaN: a gap"
    assert masked.name == "masked" and masked.showscale is False
    assert masked.text[0][1] == "−inf" and masked.text[1][0] == ""
    assert not values.text[0][1].strip(), "the value trace leaves masked cells to the grey overlay"
    assert _hover(fig, masked, 0, 2) == "query: a<br>key: c<br>score: masked"
    assert masked.z[0][1] == 1.0 and np.isnan(masked.z[1][0])
    data = _json(fig)
    assert "Infinity" not in json.dumps(data)


def test_no_masked_overlay_without_minus_inf():
    assert len(drawn(figures.attention_heatmap(_weights(2, 2), ["a", "b"], ["c", "d"]))) == 1


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


def test_show_text_overrides_the_automatic_choice():
    big = figures.attention_heatmap(_weights(21, 21), [""] * 21, [""] * 21, show_text=True)
    small = figures.attention_heatmap(_weights(2, 2), ["a", "b"], ["c", "d"], show_text=False)
    assert big.data[0].text is not None and written(big, 0)[0][0].count(".") == 1
    assert small.data[0].text is None


def test_a_grid_and_its_light_text_layer_both_hold_a_string_in_every_cell():
    """plotly fits a trace's cell text to the distance between its written cells (capped at the figure's font): a
    trace writing a few scattered cells got the cap, the other trace the cells' size, and a projector hid one of
    them. A blank where the other trace writes gives both one size."""
    weights = np.full((4, 4), 0.05)
    weights[[0, 3], [0, 2]] = 0.85  # two light cells (dark ink) among fourteen dark ones (light ink)
    fig = figures.attention_heatmap(weights, list("abcd"), list("efgh"))
    for trace in (fig.data[0], light_layer(fig, 0)):
        assert all(cell for row in trace.text for cell in row), trace.name
    assert [[c.strip() for c in row] for row in fig.data[0].text] == [
        ["0.85", "", "", ""],
        ["", "", "", ""],
        ["", "", "", ""],
        ["", "", "0.85", ""],
    ]


def test_cell_text_has_two_decimals_and_no_negative_zero():
    fig = figures.attention_heatmap(np.array([[0.12345, -0.001]]), ["a"], ["b", "c"], zmin=None, zmax=None, zmid=0.0)
    # the top of the range: dark red, its text white, in the light-text layer (see light_ink)
    assert list(written(fig, 0)[0]) == ["0.12", "0.00"]
    assert [list(r) for r in light_layer(fig, 0).text] == [["0.12", " "]] and light_layer(
        fig, 0
    ).textfont.color == "#ffffff"


def test_selected_cell_is_outlined():
    fig = figures.attention_heatmap(_weights(3, 3), list("abc"), list("def"), selected=(2, 1))
    rects = [s for s in fig.layout.shapes if s.type == "rect"]
    assert rects and all((s.x0, s.x1, s.y0, s.y1) == (0.5, 1.5, 1.5, 2.5) for s in rects)
    assert not figures.attention_heatmap(_weights(3, 3), list("abc"), list("def")).layout.shapes
    with pytest.raises(ValueError, match="outside the 3x3 grid"):
        figures.attention_heatmap(_weights(3, 3), list("abc"), list("def"), selected=(3, 0))


def test_height_grows_with_the_number_of_queries_from_240px():
    heights = [figures.attention_heatmap(_weights(n, 4), ["t"] * n, list("abcd")).layout.height for n in (2, 10, 20)]
    assert heights[0] >= 240
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
    names = [f"t{i}" for i in range(n)]
    assert [axis_name(fig.layout.xaxis, i) for i in range(n)] == [axis_name(fig.layout.yaxis, i) for i in range(n)]
    assert [axis_name(fig.layout.yaxis, i) for i in range(n)] == names, "the hover names every row"
    assert fig.layout.yaxis.exponentformat == "none", "row 1000 is not hovered as 1k"
    assert fig.data[0].customdata is None


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
    assert _hover(fig, trace, 0, 1) == "row: is<br>column: q1<br>value: -2.0000"
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
    assert _hover(fig, trace, 0, 2) == "query: a<br>key: c<br>mask: −inf (blocked)"
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
    assert [t.type for t in drawn(fig)] == ["heatmap"] * 3
    assert {t.coloraxis for t in drawn(fig)} == {"coloraxis"}
    assert (fig.layout.coloraxis.cmin, fig.layout.coloraxis.cmax) == (0.0, 1.0)
    assert fig.layout.coloraxis.colorscale == go.Heatmap(colorscale=theme.WEIGHTS_COLORSCALE).colorscale
    assert all(t.showscale is None and t.colorscale is None for t in drawn(fig)), "no per-head colour bars"
    assert [a.text for a in fig.layout.annotations] == ["Head A", "Head B", "Head C"]
    np.testing.assert_allclose(np.array(fig.data[2].z, dtype=float), heads[2])
    layout = fig.layout.to_plotly_json()
    for axis in ("xaxis", "xaxis2", "xaxis3"):
        assert list(drawn_axis(layout, axis)["ticktext"]) == ["x", "x", "y"]
    assert drawn_axis(layout, "yaxis3")["range"][0] > drawn_axis(layout, "yaxis3")["range"][1]
    assert "weight (Head B)" in _hover(fig, fig.data[1], 0, 0)


def test_head_grid_lays_heads_out_in_columns_and_checks_shapes():
    fig = figures.head_grid([_weights(2, 2, s) for s in range(4)], list("ABCD"), ["a", "b"], ["c", "d"], cols=3)
    assert (fig.data[3].xaxis, fig.data[3].yaxis) == ("x4", "y4")
    grid = fig.layout.grid  # plotly.js puts panel k in reading order: head 4 starts the second row
    assert (grid.rows, grid.columns, grid.pattern) == (2, 3, "independent")
    with pytest.raises(ValueError, match="every head attends over the same tokens"):
        figures.head_grid([_weights(2, 2), _weights(3, 2)], ["A", "B"], ["a", "b"], ["c", "d"])
    with pytest.raises(ValueError, match="one name per head"):
        figures.head_grid([_weights(2, 2)], ["A", "B"], ["a", "b"], ["c", "d"])


@pytest.mark.parametrize(("n_panels", "n_cols"), [(2, 2), (3, 2), (4, 2), (4, 3), (8, 2), (6, 3), (4, 4), (5, 1)])
def test_a_panel_grid_puts_each_panel_where_make_subplots_does(n_panels, n_cols):
    """plotly.js places the layout grid's cells (its components/grid: cell i of n at ``[i s, i s + s (1 - gap)]``,
    ``s = 1 / (n - gap)``, rows from the top); they match make_subplots' domains for the same titled grid."""
    n_rows = -(-n_panels // n_cols)
    titles = [f"Head {k}" for k in range(n_panels)]
    grid = base.panel_grid(n_panels, n_cols, titles, {}, {})["grid"]
    expected = make_subplots(rows=n_rows, cols=n_cols, subplot_titles=titles).layout

    def cells(n: int, gap: float) -> list[tuple[float, float]]:
        s = 1 / (n - gap)
        return [(i * s, i * s + s * (1 - gap)) for i in range(n)]

    for k in range(n_panels):
        r, c = divmod(k, n_cols)
        x = cells(n_cols, grid["xgap"])[c]
        y = cells(n_rows, grid["ygap"])[n_rows - 1 - r]  # the first row on top
        suffix = "" if k == 0 else str(k + 1)
        np.testing.assert_allclose(x, expected[f"xaxis{suffix}"].domain, atol=1e-12, err_msg=f"panel {k} x")
        np.testing.assert_allclose(y, expected[f"yaxis{suffix}"].domain, atol=1e-12, err_msg=f"panel {k} y")


def test_a_head_grid_sets_its_axes_once_and_hides_only_the_repeated_query_labels():
    """Every x axis and every y axis of a head grid come from the layout's template: the layout holds no axis but
    the y axes after the first of each row, which hide their labels."""
    fig = figures.head_grid([_weights(3, 3, s) for s in range(5)], list("ABCDE"), list("abc"), list("abc"), cols=2)
    layout = fig.to_plotly_json()["layout"]
    own = sorted(k for k in layout if k.startswith(("xaxis", "yaxis")))
    assert own == ["yaxis2", "yaxis4"]
    assert all(layout[k] == {"automargin": True, "showticklabels": False, **theme.AXIS_STYLE} for k in own)
    x, y = layout["template"]["layout"]["xaxis"], layout["template"]["layout"]["yaxis"]
    assert x["ticktext"] == y["ticktext"] == ["a", "b", "c"] and x["showline"] and y["automargin"]
    assert [(n["xref"], n["yref"]) for n in layout["annotations"]][-1] == ("x5 domain", "y5 domain")


def test_upright_grid_labels_are_never_looked_for_past_the_edge_and_turned_ones_may_be_hidden():
    """A grid's upright column labels and its row labels cannot reach past the figure's sides (nor a row's past
    its top or bottom), so plotly does not look for any (ticklabeloverflow "allow"; its default measures every label
    again as each one is placed, on every redraw); labels plotly turns itself may, and keep its default."""
    s = theme.style(False)
    x, y = base.grid_axes(["a", "b"], ["c", "d"], s)
    assert x["ticklabeloverflow"] == y["ticklabeloverflow"] == "allow" and x["tickangle"] == -90
    assert x["automargin"] is y["automargin"] is True
    x, y = base.grid_axes(["a", "b"], ["c", "d"], s, upright=False)
    assert "ticklabeloverflow" not in x and "ticklabeloverflow" not in y and "tickangle" not in x
    weights = json.loads(figures.attention_heatmap(W2, AB, AB).to_json())["layout"]
    assert weights["xaxis"]["ticklabeloverflow"] == weights["yaxis"]["ticklabeloverflow"] == "allow"


def test_head_grid_text_follows_the_limit():
    small = figures.head_grid([_weights(3, 3)], ["A"], list("abc"), list("abc"))
    big = figures.head_grid([_weights(21, 21)], ["A"], [""] * 21, [""] * 21)
    assert small.data[0].text is not None and big.data[0].text is None


# ---------------------------------------------------------------- clickable grid


def test_clickable_grid_is_one_invisible_marker_per_cell_with_customdata_i_j_over_a_heatmap():
    """A click anywhere in a cell selects its marker (the nearest centre); the heatmap under them draws it."""
    W = _weights(2, 3)
    fig = figures.clickable_grid(W, ["is", "is"], ["a", "b", "c"])
    markers, cells = drawn(fig)
    assert markers.type == "scatter" and cells.type == "heatmap" and cells.hoverinfo == "skip"
    assert [list(c) for c in markers.customdata] == [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]
    assert list(markers.x) == [0, 1, 2, 0, 1, 2] and list(markers.y) == [0, 0, 0, 1, 1, 1]
    np.testing.assert_allclose(markers.marker.color, W.ravel())
    np.testing.assert_allclose(np.array(cells.z, dtype=float), W)
    assert (cells.zmin, cells.zmax) == (0.0, 1.0)
    assert cells.colorscale == go.Heatmap(colorscale=theme.WEIGHTS_COLORSCALE).colorscale
    assert fig.layout.yaxis.range[0] > fig.layout.yaxis.range[1]
    assert list(fig.layout.yaxis.ticktext) == ["is", "is"]
    assert markers.hovertext is None, "the axes name the cell's tokens"
    assert markers.hovertemplate == "query: %{y}<br>key: %{x}<br>weight: %{marker.color:.4f}<extra></extra>"
    assert [axis_name(fig.layout.yaxis, 1), axis_name(fig.layout.xaxis, 1)] == ["is", "b"]
    assert markers.marker.opacity == markers.selected.marker.opacity == markers.unselected.marker.opacity == 0.0
    assert fig.layout.hoverdistance == -1 and fig.layout.clickmode == "event+select"


def test_clickable_grid_outlines_the_selected_cell_and_writes_readable_text():
    fig = figures.clickable_grid(np.array([[0.05, 0.95]]), ["q"], ["a", "b"], selected=(0, 1))
    assert {(s.x0, s.y0) for s in fig.layout.shapes} == {(0.5, -0.5)}
    cells = fig.data[1]  # the heatmap under the markers: white text on the dark cell, the trace's black on the light
    assert cells.type == "heatmap" and [list(row) for row in cells.text] == [[" ", "0.95"]]
    assert [list(row) for row in light_layer(fig, 1).text] == [["0.05", " "]]
    assert cells.textfont.size is None and cells.textfont.color == "#000000"
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
    assert trace.customdata is None and trace.hovertemplate.startswith("token: %{x}<br>")
    assert [axis_name(fig.layout.xaxis, i) for i in range(6)] == TOKENS
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


def test_grouped_activation_bars_take_their_axis_titles_and_a_fixed_y_range():
    fig = figures.grouped_activation_bars(
        ["k0", "k1"], {"a": [0.2, 0.8]}, axis_titles=("Key", "softmax weight"), y_range=(0.0, 1.05)
    )
    assert (fig.layout.xaxis.title.text, fig.layout.yaxis.title.text) == ("Key", "softmax weight")
    assert list(fig.layout.yaxis.range) == [0.0, 1.05]
    default = figures.grouped_activation_bars(["k0", "k1"], {"a": [0.2, 0.8]})
    assert (default.layout.xaxis.title.text, default.layout.yaxis.title.text) == ("Token", "Activation strength")
    assert default.layout.yaxis.range is None and default.layout.yaxis.rangemode == "tozero"


def test_product_terms_of_friend_and_emma_sum_to_2_42():
    fig = figures.product_terms_bar(DIMS, FRIEND_Q, EMMA_K)
    (trace,) = fig.data
    np.testing.assert_allclose(trace.y, [1.2, 0.72, 0.5, 0.0])
    assert list(fig.layout.xaxis.ticktext) == list(DIMS)
    assert fig.layout.title.text.endswith("q·k = 1.2 + 0.72 + 0.5 + 0.0 = 2.42")  # page text: it wraps
    assert "q·k = 1.0 × 1.2 = 1.2" in trace.hovertext[0]
    assert trace.hovertext[1].startswith("Anim: q[1] × k[1]")
    with pytest.raises(ValueError, match="k must be a 1-D list with 4 entries"):
        figures.product_terms_bar(DIMS, FRIEND_Q, EMMA_K[:3])


def test_negative_product_terms_get_their_own_colour():
    fig = figures.product_terms_bar(["a", "b"], [1.0, -1.0], [2.0, 3.0])
    assert fig.data[0].marker.color[0] != fig.data[0].marker.color[1]
    assert fig.layout.title.text.endswith("= -1.0")


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
def test_projector_mode_thickens_cell_gaps_and_leaves_the_cell_text_size_to_plotly(name):
    """plotly sizes cell text to the cells when no size is given (at most the figure's font, 18 px on a
    projector); the page's CSS hides digits drawn below the mode's least size (test_theme)."""
    normal, projector = BUILDERS[name](False), BUILDERS[name](True)
    assert projector.data[0].xgap > normal.data[0].xgap and projector.data[0].ygap > normal.data[0].ygap
    assert projector.data[0].textfont.size is None and normal.data[0].textfont.size is None


def test_head_grid_can_give_each_head_its_own_colour_range():
    rng = np.random.default_rng(0)
    heads = [rng.dirichlet(np.ones(5) * 50, size=5) for _ in range(4)]  # all near 0.2: alike on 0..1
    tokens = list("abcde")
    own = figures.head_grid(heads, ["h1", "h2", "h3", "h4"], tokens, tokens, shared_range=False).to_dict()
    for trace, W in zip([t for t in own["data"] if t.get("name") != LIGHT_TEXT], heads, strict=True):
        assert (trace["zmin"], trace["zmax"]) == (W.min(), W.max())
        assert "coloraxis" not in trace
    titles = [a["text"] for a in own["layout"]["annotations"]]
    assert titles[0] == f"h1<br>{heads[0].min():.2f}–{heads[0].max():.2f}"  # the range under the name
    shared = figures.head_grid(heads, ["h1", "h2", "h3", "h4"], tokens, tokens).to_dict()
    assert all(t["coloraxis"] == "coloraxis" for t in shared["data"] if t.get("name") != LIGHT_TEXT)
    assert (shared["layout"]["coloraxis"]["cmin"], shared["layout"]["coloraxis"]["cmax"]) == (0.0, 1.0)


def test_head_grid_panel_titles_are_cut_to_their_share_of_characters_and_queries_are_labelled_once_per_row():
    heads = [np.full((3, 3), 1 / 3)] * 4
    name = "Head 2: preference/comparison of fruit and of vegetables"
    fig = figures.head_grid(heads, ["a", name, "c", "<b>d</b>"], list("xyz"), list("xyz")).to_dict()
    titles = [a["text"] for a in fig["layout"]["annotations"]][:4]
    first, second = titles[1].split("<br>")  # "Head 2:" over what the head is for, cut to fit
    assert first == "Head 2:"
    assert second.endswith("…") and name.startswith(f"Head 2: {second[:-1]}") and len(second) > 5
    assert titles[3] == "&lt;b&gt;d&lt;/b&gt;"  # still shown literally
    markup = "<b>H</b>: <i>a long description of it, longer than a panel holds</i>"  # split, each line literal
    split = figures.head_grid(heads, ["a", markup, "c", "d"], list("xyz"), list("xyz")).to_dict()
    first, second = split["layout"]["annotations"][1]["text"].split("<br>")
    assert first == "&lt;b&gt;H&lt;/b&gt;:" and second.startswith("&lt;i&gt;a") and second.endswith("…")
    shown = [drawn_axis(fig["layout"], f"yaxis{k}").get("showticklabels", True) for k in ("", "2", "3", "4")]
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
    assert "<b>cat</b>" in fig.layout.title.text, "the token as typed: charts.chart shows titles as page text"
    with pytest.raises(ValueError, match="even number"):
        figures.rope_arrows(rotated[:, :7], "cat")
