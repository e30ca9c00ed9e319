"""Figure specs: the hand-written dicts are valid plotly, big grids travel as typed arrays, and the
cached figures reach st.plotly_chart without a deep copy or a re-validation. No timings."""

import base64
import inspect
import json
import pickle

import numpy as np
import plotly.basedatatypes
import plotly.graph_objects as go
import plotly.io as pio
import plotly.tools
import pytest
import streamlit as st
from plotly.subplots import make_subplots

import attention_core as ac
from attention_views import cached_figures, figures, theme
from attention_views.cached_figures import SpecFigure

N = 64  # the big state of benchmarks/bench_app.py: 64 tokens, 8 heads
TOKENS = [f"t{i}" for i in range(N)]


def _weights(n: int, seed: int = 0) -> np.ndarray:
    return ac.softmax(np.random.default_rng(seed).normal(size=(n, n)), axis=-1)  # (n, n)


def _scores(n: int) -> np.ndarray:
    """Causally masked scores: -inf above the diagonal."""
    S = np.random.default_rng(1).normal(size=(n, n)) * 3  # (n, n)
    return np.where(ac.causal_mask(n), S, -np.inf)


def _calls(n: int) -> dict[str, tuple[str, tuple, dict]]:
    """One call of every builder (some twice) at n tokens."""
    toks = TOKENS[:n] if n <= N else [f"t{i}" for i in range(n)]
    W, S = _weights(n), _scores(n)
    heads = [_weights(n, seed) for seed in range(8)]
    return {
        "attention_heatmap": ("attention_heatmap", (W, toks, toks), {"selected": (1, 0)}),
        "attention_heatmap masked": (
            "attention_heatmap",
            (S, toks, toks),
            {"value_name": "score", "zmin": None, "zmax": None, "zmid": 0.0},
        ),
        "matrix_heatmap": ("matrix_heatmap", (S[:, :3], toks, ["a", "b", "c"]), {"colorscale": "Blues"}),
        "mask_heatmap": ("mask_heatmap", (ac.additive_mask(ac.causal_mask(n)), toks, toks), {"projector": True}),
        "delta_heatmap": ("delta_heatmap", (S, S + 0.5, toks, toks), {}),
        "head_grid": ("head_grid", (heads, [f"Head {h}" for h in range(8)], toks, toks), {}),
        "head_grid 3 of 2x2": ("head_grid", (heads[:3], ["A", "", "C"], toks, toks), {"projector": True}),
        "clickable_grid": ("clickable_grid", (W, toks, toks), {"selected": (0, 1)}),
        "activation_bars": ("activation_bars", (toks, np.arange(n) / n), {}),
        "grouped_activation_bars": ("grouped_activation_bars", (toks, {"a": np.ones(n), "b": np.arange(n)}), {}),
        "product_terms_bar": ("product_terms_bar", (toks, np.linspace(-1, 1, n), np.ones(n)), {}),
        "variance_vs_dk": ("variance_vs_dk", ([1, 4, 16], [1.0, 4.0, 16.0], [1.0, 1.0, 1.0]), {}),
        "saturation_vs_dk": ("saturation_vs_dk", ([1, 4], {"s": [0.5, 0.9]}, {"s": [1.0, 0.2]}), {}),
        "vector_arrows 2d": ("vector_arrows", ({"q": [1.0, 2.0], "k": [-1.0, 0.5]},), {}),
        "vector_arrows 3d": ("vector_arrows", ({"q": [1.0, 2.0, 3.0]},), {"projector": True}),
        "head_similarity_heatmap": ("head_similarity_heatmap", (np.eye(3), ["A", "B", "C"]), {}),
    }


CALLS = [(n, name) for n in (3, N) for name in _calls(n)]


def _spec(n: int, name: str) -> dict:
    builder, args, kwargs = _calls(n)[name]
    return figures.SPECS[builder](*args, **kwargs)


def _decode(z: dict) -> np.ndarray:
    raw = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]).newbyteorder("<"))
    return raw.reshape([int(s) for s in z["shape"].split(",")]).astype(float)


@pytest.mark.parametrize(("n", "name"), CALLS)
def test_the_spec_is_what_plotly_would_make_of_it(n, name):
    spec = _spec(n, name)
    sent = json.loads(pio.to_json(spec, validate=False))  # what st.plotly_chart sends for a SpecFigure
    validated = json.loads(go.Figure(spec).to_json())  # plotly's validation: raises on an unknown key
    assert sent == validated, "validation changed the hand-written dict: write it as plotly stores it"


@pytest.mark.parametrize(("n", "name"), [(3, "attention_heatmap masked"), (N, "head_grid"), (N, "clickable_grid")])
def test_the_public_builder_is_the_spec_as_a_figure(n, name):
    builder, args, kwargs = _calls(n)[name]
    fig = getattr(figures, builder)(*args, **kwargs)
    assert isinstance(fig, go.Figure)
    assert json.loads(fig.to_json()) == json.loads(pio.to_json(figures.SPECS[builder](*args, **kwargs)))


def test_every_public_builder_has_a_spec_twin_with_the_same_arguments():
    public = {
        name
        for name, f in vars(figures).items()
        if inspect.isfunction(f) and f.__module__.startswith(figures.__name__) and not name.startswith("_")
    }
    assert {f"{name}_spec" for name in figures.SPECS} | set(figures.SPECS) == public
    for name, spec in figures.SPECS.items():
        assert getattr(figures, name).__name__ == name
        assert list(inspect.signature(getattr(figures, name)).parameters) == list(inspect.signature(spec).parameters)


def test_the_specs_raise_the_builders_errors():
    with pytest.raises(ValueError, match="query_tokens has 2 labels but there are 3 rows"):
        figures.attention_heatmap_spec(_weights(3), ["a", "b"], ["c", "d", "e"])
    with pytest.raises(ValueError, match="every head attends over the same tokens"):
        figures.head_grid_spec([_weights(2), _weights(3)], ["A", "B"], ["a", "b"], ["c", "d"])


@pytest.mark.parametrize(("rows", "cols"), [(1, 1), (2, 2), (4, 2), (2, 3), (3, 3)])
def test_head_grid_lays_out_subplots_as_make_subplots_does(rows, cols):
    heads = [_weights(2, seed) for seed in range(rows * cols)]
    names = [f"H{h}" for h in range(rows * cols)]
    layout = figures.head_grid_spec(heads, names, ["a", "b"], ["c", "d"], cols=cols)["layout"]
    gold = make_subplots(rows=rows, cols=cols, subplot_titles=names).layout
    for k in range(rows * cols):
        suffix = "" if k == 0 else str(k + 1)
        for axis in (f"xaxis{suffix}", f"yaxis{suffix}"):
            assert layout[axis]["domain"] == pytest.approx(list(gold[axis].domain)), axis
            assert layout[axis]["anchor"] == gold[axis].anchor
    for ours, theirs in zip(layout["annotations"], gold.annotations, strict=True):
        assert (ours["text"], ours["x"], ours["y"]) == (theirs.text, pytest.approx(theirs.x), pytest.approx(theirs.y))


# ---------------------------------------------------------------- payload


def test_small_grids_send_z_as_exact_lists_big_grids_as_typed_arrays():
    W = _weights(theme.CELL_TEXT_LIMIT)
    small = figures.attention_heatmap_spec(W, TOKENS[: W.shape[0]], TOKENS[: W.shape[1]])["data"][0]
    assert small["z"] == W.tolist()
    big = figures.attention_heatmap_spec(_weights(N), TOKENS, TOKENS)["data"][0]
    assert big["z"]["dtype"] == "f4" and big["z"]["shape"] == f"{N}, {N}"
    np.testing.assert_allclose(_decode(big["z"]), _weights(N), rtol=1e-6)
    assert "text" not in big


def test_big_masked_grids_leave_nan_gaps_for_the_grey_overlay():
    S = _scores(N)
    values, masked = figures.attention_heatmap_spec(S, TOKENS, TOKENS, value_name="score", zmin=None, zmax=None)["data"]
    z, grey = _decode(values["z"]), _decode(masked["z"])
    np.testing.assert_array_equal(np.isnan(z), np.isneginf(S))
    np.testing.assert_allclose(z[np.isfinite(S)], S[np.isfinite(S)], rtol=1e-6)
    np.testing.assert_array_equal(np.isnan(grey), np.isfinite(S))
    assert values["hoverongaps"] is masked["hoverongaps"] is False
    assert masked["hovertemplate"] == "query: %{customdata[0]}<br>key: %{customdata[1]}<br>score: masked<extra></extra>"
    assert values["customdata"][0][1] is None and masked["customdata"][0][1] == ["t0", "t1"]
    assert masked["customdata"][1][0] is None, "only the cells a trace draws carry labels"


def test_a_value_too_big_for_float32_keeps_float64():
    M = np.full((N, N), 1e300)
    z = figures.matrix_heatmap_spec(M, TOKENS, TOKENS)["data"][0]["z"]
    assert z["dtype"] == "f8"
    np.testing.assert_array_equal(_decode(z), M)


def test_hovers_take_the_value_from_the_cell_and_the_tokens_from_customdata():
    trace = figures.attention_heatmap_spec(_weights(N), TOKENS, TOKENS)["data"][0]
    hover = "query: %{customdata[0]}<br>key: %{customdata[1]}<br>weight: %{z:.4f}<extra></extra>"
    assert trace["hovertemplate"] == hover
    assert trace["customdata"][5][7] == ["t5", "t7"]


def _bytes(spec: dict) -> int:
    return len(pio.to_json(spec, validate=False).encode())


def test_the_64_token_figures_stay_under_the_payload_budget():
    heads = [_weights(N, seed) for seed in range(8)]
    grid = figures.head_grid_spec(heads, [f"head {h + 1}" for h in range(8)], TOKENS, TOKENS)
    assert _bytes(grid) < 700_000, "8 heads x 64x64 (was 1.45 MB with per-cell value strings and float lists)"
    assert _bytes(figures.attention_heatmap_spec(heads[0], TOKENS, TOKENS)) < 150_000
    assert _bytes(figures.attention_heatmap_spec(_scores(N), TOKENS, TOKENS, zmin=None, zmax=None)) < 150_000


# ---------------------------------------------------------------- the cache and st.plotly_chart


@pytest.fixture
def no_object_model(monkeypatch):
    """Fail on plotly's deep copy of a figure and on building a go.Figure."""

    def refuse(*args, **kwargs):
        raise AssertionError("plotly's object model was used")

    monkeypatch.setattr(plotly.basedatatypes, "deepcopy", refuse)
    monkeypatch.setattr(go.Figure, "__init__", refuse)


def test_a_cached_figure_reaches_st_plotly_chart_as_its_spec(no_object_model):
    fig = cached_figures.head_grid([_weights(N, s) for s in range(8)], list("ABCDEFGH"), TOKENS, TOKENS)
    assert isinstance(fig, SpecFigure) and isinstance(fig, go.Figure)
    spec = fig.to_dict()
    assert plotly.tools.return_figure_from_figure_or_data(fig, validate_figure=True) is spec  # streamlit's call
    before = pickle.dumps(spec)
    st.plotly_chart(fig, key="specs_head_grid")  # no runtime: bare mode still runs the element's code
    assert pickle.dumps(spec) == before, "st.plotly_chart must not modify the spec"


def test_the_guard_catches_the_old_path(no_object_model):
    fig = go.Figure.__new__(go.Figure)  # proves the fixture bites: a real figure's to_dict deep-copies
    fig._data, fig._layout, fig._frame_objs = [], {}, ()
    with pytest.raises(AssertionError, match="object model"):
        fig.to_dict()


def test_a_spec_figure_becomes_an_ordinary_figure_when_used_as_one():
    spec = figures.attention_heatmap_spec(_weights(3), list("abc"), list("abc"))
    before = pickle.dumps(spec)
    fig = SpecFigure(spec)
    fig.update_layout(title_text="Mine")  # as a page may do
    assert fig.layout.title.text == "Mine" and fig.to_dict()["layout"]["title"]["text"] == "Mine"
    assert pickle.dumps(spec) == before, "the cached spec is copied, never changed"
    assert json.loads(SpecFigure(spec).to_json()) == json.loads(pio.to_json(spec))


def test_every_builder_has_a_cached_twin_that_draws_the_same_figure():
    for name in figures.SPECS:
        assert callable(getattr(cached_figures, name)), name
    args = (np.array([[1.0, -2.0], [0.5, 3.0]]), ["a", "b"], ["x", "y"])
    assert cached_figures.matrix_heatmap(*args, title="M").to_plotly_json() == figures.matrix_heatmap_spec(
        *args, title="M"
    )
    assert not hasattr(cached_figures, "matrix_heatmap_spec")
