"""The scaling page's sections: why divide, one random score row, the curves as d_k grows, seed 001's own numbers."""

from __future__ import annotations

import numpy as np
import streamlit as st

import attention_core as ac
from attention_core.score_spread import score_spread
from attention_views.pure import figures
from attention_views.ui.charts import chart, metric_columns

D_KS = np.unique(np.geomspace(1, 512, 19).round().astype(int))  # log-spaced: 1, 2, 3, 4, 6, 8, ..., 362, 512
VARIANCE_SAMPLES = 1_000  # pairs (q, k) per d_k
SATURATION_SAMPLES = 200  # score rows per d_k


@st.cache_data(max_entries=256)
def score_row(d_k: int, n_keys: int, seed: int) -> ac.ScoreRow:
    return ac.sample_score_row(d_k, n_keys, np.random.default_rng(seed))


@st.cache_data(max_entries=64)
def variance_curves(seed: int) -> tuple[np.ndarray, np.ndarray]:
    return ac.dot_product_variance(D_KS, VARIANCE_SAMPLES, np.random.default_rng(seed))


@st.cache_data(max_entries=64)
def saturation_curves(n_keys: int, seed: int) -> ac.Saturation:
    return ac.softmax_saturation(D_KS, n_keys, SATURATION_SAMPLES, np.random.default_rng(seed))


@st.cache_data
def worked_case() -> tuple[tuple[str, ...], ac.ScoreVariance]:
    sc = ac.load_scenario("random-causal")
    return sc.query_tokens, ac.score_variance(sc.Q, sc.K)


FIT = "22rem"  # on a projector, above the row's bars: the header, the folded argument, the controls and the titles


def why_divide(big: bool) -> None:
    """The argument, in words and in one formula: the variances of the d_k products add up. Folded on a projector
    (``big``), where the lecturer tells it and the screen is for the controls and the bars they change."""
    with st.expander("Why: the variances of the d_k products add up", expanded=not big, icon=":material/functions:"):
        st.markdown(
            "Each score is a sum of $d_k$ products $q_i k_i$. With independent entries of variance 1 the variances "
            "add up, so wider vectors give wider-spread scores, and the softmax of a wide-spread row puts nearly all "
            "weight on one key. Dividing by $\\sqrt{d_k}$ brings the variance back to 1 for every $d_k$."
        )
        st.latex(  # two lines: on one, a 1024-pixel projector cut off the "= 1" that is the point
            r"\begin{gathered}\operatorname{Var}(q\cdot k)=\sum_{i=1}^{d_k}\operatorname{Var}(q_i k_i)=d_k \\"
            r"\Rightarrow\quad\operatorname{Var}\!\left(\frac{q\cdot k}{\sqrt{d_k}}\right)=1\end{gathered}"
        )


def one_row(d_k: int, n_keys: int, seed: int, big: bool) -> None:
    """One random query against ``n_keys`` random keys: its softmax with and without 1/√d_k."""
    st.subheader(f"One random query against {n_keys} random keys, d_k = {d_k}")
    row = score_row(d_k, n_keys, int(seed))
    keys = [f"k{j}" for j in range(n_keys)]
    bars = figures.grouped_activation_bars(
        keys,
        {"softmax(q·K), unscaled": row.weights_unscaled, "softmax(q·K / √d_k), scaled": row.weights_scaled},
        title="One score row's softmax, with and without 1/√d_k",
        axis_titles=("Key", "softmax weight"),
        y_range=(0.0, 1.05),
        projector=big,
    )
    chart(bars, key="scaling_row_bars", fit=FIT)
    spread, scaled_spread = score_spread(row.scores, d_k)
    for name, weights in (("Unscaled", row.weights_unscaled), ("Scaled", row.weights_scaled)):
        st.markdown(
            f"**{name}:** max weight {weights.max():.3f} · entropy {float(ac.entropy_bits(weights)):.2f} bits "
            f"(about {float(ac.effective_tokens(weights)):.1f} of {n_keys} keys in play)"
        )
    st.caption(
        f"The scores q·k in this row have standard deviation {spread:.2f}; divided by √{d_k} = "
        f"{np.sqrt(d_k):.2f} it is {scaled_spread:.2f}. Move d_k and watch the unscaled row collapse "
        "onto one key."
    )


def as_d_k_grows(n_keys: int, seed: int, big: bool) -> None:
    """The variance of q·k and the softmax saturation against d_k, unscaled and scaled."""
    st.subheader("As d_k grows")
    var_unscaled, var_scaled = variance_curves(int(seed))
    sat = saturation_curves(n_keys, int(seed))
    chart(figures.variance_vs_dk(D_KS, var_unscaled, var_scaled, projector=big), key="scaling_variance")
    chart(figures.saturation_vs_dk(D_KS, sat.max_weight, sat.entropy_bits, projector=big), key="scaling_saturation")
    st.caption(
        f"Each point: {VARIANCE_SAMPLES} random pairs (q, k) for the variance, {SATURATION_SAMPLES} random rows "
        f"of {n_keys} keys for the saturation, drawn from seed {seed}. Uniform weights would have entropy "
        f"log₂ {n_keys} = {np.log2(n_keys):.2f} bits."
    )


def worked_case_section(big: bool) -> None:
    """The random-causal scenario's Q and K (seed 001): their variances and scores, raw and scaled."""
    tokens, w = worked_case()
    st.markdown(
        f"The random-causal scenario draws $Q$ and $K$ with {len(tokens)} tokens and $d_k = {w.d_k}$. "
        "With so few numbers the variances are only roughly what the rule predicts."
    )
    for col, label, value in zip(
        metric_columns(5, big),
        ("var(q)", "var(k)", "var(q·k)", "d_k·var(q)·var(k)", "var(q·k / √d_k)"),
        (w.var_q, w.var_k, w.var_scores, w.expected, w.var_scaled),
        strict=True,
    ):
        col.metric(label, f"{value:.2f}")
    st.caption(
        f"Rough expectation: {w.d_k} × {w.var_q:.2f} × {w.var_k:.2f} ≈ {w.expected:.1f}, "
        f"against the measured {w.var_scores:.1f}."
    )
    st.caption("Rows: queries t0 to t3; columns: keys t0 to t3. Dividing by √8 shrinks every score by the same factor.")
    raw_col, scaled_col = st.columns(2)
    with raw_col:
        chart(
            figures.matrix_heatmap(w.scores, tokens, tokens, title="Raw scores Q Kᵀ", projector=big),
            key="scaling_worked_raw",
        )
    with scaled_col:
        chart(
            figures.matrix_heatmap(w.scaled, tokens, tokens, title=f"Scaled scores Q Kᵀ / √{w.d_k}", projector=big),
            key="scaling_worked_scaled",
        )
