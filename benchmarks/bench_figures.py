"""Benchmark: the server's cost of each figure (build it, hand it to the browser) and the JSON bytes sent.

Run from the repository root::

    python benchmarks/bench_figures.py [--repeats 5]

For every builder of :mod:`attention_views.pure.figures`, at seed size (10 tokens) and at 64 tokens
(8 heads for ``head_grid``), it times, median of ``--repeats``:

- ``build ms``: ``figures.<name>(...)`` as the app builds it, without plotly's per-property checks
  (``figures.base.VALIDATE`` off); ``checked ms``: the same with the checks on, timed alternately with it,
  and ``ratio`` = build / checked;
- ``send ms``: what ``st.plotly_chart`` does with it (streamlit 1.67): ``fig.to_dict()`` (a deep copy)
  then ``plotly.io.to_json(validate=False)``;
- ``total ms``: the two, what one figure adds to a rerun;
- ``kB``: the figure JSON the browser gets.

It prints figures; it is not a test and never fails.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

import numpy as np
import plotly.io as pio

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from timing import median_ms, time_alternately  # noqa: E402  (benchmarks/timing.py, beside this script)

from attention_views.pure import figures  # noqa: E402
from attention_views.pure.figures import base  # noqa: E402


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def cases(n: int, rng: np.random.Generator) -> dict[str, tuple[str, tuple, dict]]:
    """name -> (builder, args, kwargs) at n tokens, as the pages call them."""
    tokens = [f"t{i}" for i in range(n)]
    scores = rng.normal(size=(n, n)) * 2  # (n, n)
    causal = np.where(np.tril(np.ones((n, n), bool)), scores, -np.inf)  # (n, n), -inf above the diagonal
    heads = [_softmax(rng.normal(size=(n, n))) for _ in range(8)]  # 8 x (n, n)
    dks = np.array([1, 2, 4, 8, 16, 32, 64, 128, 256, 512])
    similarity = np.corrcoef(np.stack([h.ravel() for h in heads])).clip(0, 1)  # (8, 8)
    return {
        "attention_heatmap": ("attention_heatmap", (heads[0], tokens, tokens), {}),
        "attention_heatmap (masked scores)": (
            "attention_heatmap",
            (causal, tokens, tokens),
            {"value_name": "score", "zmin": None, "zmax": None, "zmid": 0.0},
        ),
        "matrix_heatmap (n x 8)": ("matrix_heatmap", (scores[:, :8], tokens, [f"d{i}" for i in range(8)]), {}),
        "mask_heatmap": ("mask_heatmap", (np.where(np.isfinite(causal), 0.0, -np.inf), tokens, tokens), {}),
        "delta_heatmap": ("delta_heatmap", (heads[0], heads[1], tokens, tokens), {}),
        "head_grid (8 heads)": ("head_grid", (heads, [f"head {h + 1}" for h in range(8)], tokens, tokens), {}),
        "clickable_grid": ("clickable_grid", (heads[0], tokens, tokens), {"selected": (0, 0)}),
        "activation_bars": ("activation_bars", (tokens, np.abs(scores[0])), {}),
        "grouped_activation_bars": (
            "grouped_activation_bars",
            (tokens, {"a": np.abs(scores[0]), "b": np.abs(scores[1])}),
            {},
        ),
        "product_terms_bar": ("product_terms_bar", (tokens, scores[0], scores[1]), {}),
        "variance_vs_dk": ("variance_vs_dk", (dks, dks * 1.0, np.ones(dks.size)), {}),
        "saturation_vs_dk": (
            "saturation_vs_dk",
            (dks, {"unscaled": np.linspace(0.2, 1, 10)}, {"unscaled": np.linspace(3, 0, 10)}),
            {},
        ),
        "vector_arrows": ("vector_arrows", ({"q": scores[0, :3], "k": scores[1, :3]},), {}),
        "head_similarity_heatmap": ("head_similarity_heatmap", (similarity, [f"head {h + 1}" for h in range(8)]), {}),
    }


def _built(make, args: tuple, kwargs: dict, validate: bool):
    base.VALIDATE = validate
    try:
        return make(*args, **kwargs)
    finally:
        base.VALIDATE = False


def row(builder: str, args: tuple, kwargs: dict, repeats: int) -> tuple[float, float, float, float, float]:
    """(build ms, checked build ms, send ms, total ms, kB) of one figure."""
    make = getattr(figures, builder)
    fig = make(*args, **kwargs)
    unchecked, checked = time_alternately(
        lambda: _built(make, args, kwargs, False), lambda: _built(make, args, kwargs, True), min_total=0.2
    )
    return (
        1000 * statistics.median(unchecked),
        1000 * statistics.median(checked),
        median_ms(lambda: pio.to_json(fig.to_dict(), validate=False), repeats),
        median_ms(lambda: pio.to_json(make(*args, **kwargs).to_dict(), validate=False), repeats),
        len(pio.to_json(fig.to_dict(), validate=False).encode()) / 1000,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    repeats = parser.parse_args().repeats
    print(f"load average {os.getloadavg()[0]:.1f}")
    head = f"{'build ms':>9} {'checked ms':>10} {'ratio':>6} {'send ms':>8} {'total ms':>9} {'kB':>8}"
    print(f"{'figure':36} {'n':>3} {head}")
    for n in (10, 64):
        for name, (builder, args, kwargs) in cases(n, np.random.default_rng(0)).items():
            build, checked, send, total, kb = row(builder, args, kwargs, repeats)
            print(
                f"{name:36} {n:>3} {build:>9.1f} {checked:>10.1f} {build / checked:>6.2f} {send:>8.1f} {total:>9.1f} "
                f"{kb:>8.1f}"
            )
    print(f"load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
