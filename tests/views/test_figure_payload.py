"""What a figure sends to the browser: every builder's figure as JSON, exact values on small grids, float32
and NaN gaps on big ones, labels only where a trace draws, and the 64-token figures within the payload budget."""

import base64
import json

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio
import pytest

import attention_core as ac
from attention_views.pure import figures, theme
from tests.float_bounds import U, assert_within

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


def _sent(fig: go.Figure) -> dict:
    """The figure as st.plotly_chart sends it: plotly's JSON of ``fig.to_dict()``, parsed back."""
    return json.loads(pio.to_json(fig.to_dict(), validate=False))


def _z(trace: dict) -> np.ndarray:
    """A heatmap's z as sent: plotly writes NumPy arrays as base64 {"dtype", "bdata", "shape"}."""
    z = trace["z"]
    raw = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]).newbyteorder("<"))
    return raw.reshape([int(s) for s in z["shape"].split(",")]).astype(float)


@pytest.mark.parametrize(("n", "name"), CALLS)
def test_every_builder_makes_a_figure_that_plotly_sends_and_reads_back(n, name):
    builder, args, kwargs = _calls(n)[name]
    fig = getattr(figures, builder)(*args, **kwargs)
    assert isinstance(fig, go.Figure)
    sent = _sent(fig)
    again = go.Figure(sent)  # the JSON is valid plotly: a key plotly does not know would raise here
    assert len(again.data) == len(fig.data) >= 1
    assert again.layout.title.text == fig.layout.title.text
    assert again.layout.template.layout.paper_bgcolor is None, "plotly's plain template, not the grey default"


# ---------------------------------------------------------------- payload


def test_small_grids_send_z_exactly_big_grids_as_float32():
    W = _weights(theme.CELL_TEXT_LIMIT)
    small = _sent(figures.attention_heatmap(W, TOKENS[: W.shape[0]], TOKENS[: W.shape[1]]))["data"][0]
    assert small["z"]["dtype"] == "f8"
    np.testing.assert_array_equal(_z(small), W)
    big = _sent(figures.attention_heatmap(_weights(N), TOKENS, TOKENS))["data"][0]
    assert big["z"]["dtype"] == "f4" and big["z"]["shape"] == f"{N}, {N}"
    assert_within(_z(big), _weights(N), U * _weights(N), "float32 z")  # rounded to nearest once: U relative
    assert "text" not in big


def test_big_masked_grids_leave_nan_gaps_for_the_grey_overlay():
    S = _scores(N)
    fig = figures.attention_heatmap(S, TOKENS, TOKENS, value_name="score", zmin=None, zmax=None)
    values, masked = _sent(fig)["data"]
    z, grey = _z(values), _z(masked)
    np.testing.assert_array_equal(np.isnan(z), np.isneginf(S))
    assert_within(z[np.isfinite(S)], S[np.isfinite(S)], U * np.abs(S[np.isfinite(S)]), "float32 z")
    np.testing.assert_array_equal(np.isnan(grey), np.isfinite(S))
    assert values["hoverongaps"] is masked["hoverongaps"] is False
    assert masked["hovertemplate"] == "query: %{y}<br>key: %{x}<br>score: masked<extra></extra>"
    assert "customdata" not in values and "customdata" not in masked, "the axes name the tokens"


def test_a_value_too_big_for_float32_keeps_float64():
    M = np.full((N, N), 1e300)
    trace = _sent(figures.matrix_heatmap(M, TOKENS, TOKENS))["data"][0]
    assert trace["z"]["dtype"] == "f8"
    np.testing.assert_array_equal(_z(trace), M)


def test_hovers_take_the_value_from_the_cell_and_the_tokens_from_the_axes():
    """Past MAX_TICK_LABELS an axis labels every n-th token; labelalias names the others (as plotly.js reads it:
    tests/e2e/test_browser_hostile_input.py hovers them), so no cell carries its tokens' names."""
    sent = _sent(figures.attention_heatmap(_weights(N), TOKENS, TOKENS))
    trace, x, y = sent["data"][0], sent["layout"]["xaxis"], sent["layout"]["yaxis"]
    assert trace["hovertemplate"] == "query: %{y}<br>key: %{x}<br>weight: %{z:.4f}<extra></extra>"
    assert "customdata" not in trace
    for axis in (x, y):
        named = dict(zip(axis["tickvals"], axis["ticktext"], strict=True)) | {
            int(k): v for k, v in axis["labelalias"].items()
        }
        assert [named[i] for i in range(N)] == TOKENS
        assert set(axis["tickvals"]).isdisjoint(int(k) for k in axis["labelalias"]), "a tick's text wins over alias"


def _bytes(fig: go.Figure) -> int:
    return len(pio.to_json(fig.to_dict(), validate=False).encode())


def test_the_64_token_figures_stay_under_the_payload_budget():
    heads = [_weights(N, seed) for seed in range(8)]
    grid = figures.head_grid(heads, [f"head {h + 1}" for h in range(8)], TOKENS, TOKENS)
    # 8 heads x 64x64: 1.45 MB with per-cell value strings and float lists, 0.66 MB with per-cell token names
    assert _bytes(grid) < 250_000
    assert _bytes(figures.attention_heatmap(heads[0], TOKENS, TOKENS)) < 40_000
    assert _bytes(figures.attention_heatmap(_scores(N), TOKENS, TOKENS, zmin=None, zmax=None)) < 80_000


@pytest.mark.parametrize("builder", ["clickable_grid", "head_score_grid"])
def test_a_clickable_grid_sends_each_cells_row_and_column_as_a_json_pair(builder):
    """A click hands the point's customdata back to Python; a typed array would come back unreadable."""
    W = _weights(4)
    fig = (
        figures.clickable_grid(W, TOKENS[:4], TOKENS[:4]) if builder == "clickable_grid" else figures.head_score_grid(W)
    )
    custom = _sent(fig)["data"][0]["customdata"]
    assert isinstance(custom, list) and custom[5] == [1, 1] and custom[-1] == [3, 3]
