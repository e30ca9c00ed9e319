"""Every page opens on the largest lab the app allows (64 tokens x 64 dimensions x 16 heads) and on the smallest
(two tokens or one, one dimension, one head), for a scenario that gives Q, K, V directly and for one that gives X and
the projections, without an exception or a traceback."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from apptest_pages import ROOT, assert_clean, open_page

from attention_views.pure.lab import MAX_DIMS, MAX_HEADS, MAX_TOKENS
from attention_views.pure.tables import matrix_table

PAGES = sorted(p.stem for p in (ROOT / "pages").glob("*.py") if p.stem != "real_model")  # its own sizes: 128 tokens
SIZES = {"largest": (MAX_TOKENS, MAX_DIMS, MAX_HEADS), "two-tokens": (2, 1, 1), "one-token": (1, 1, 1)}
CASES = [("random-causal", size) for size in SIZES] + [
    ("random-seed42", s) for s in ("largest", "one-token")
]  # Q, K, V; X, W


def _tables(direct: bool, n: int, d: int) -> dict:
    """Q, K, V (or X and W_q, W_k, W_v) of ``n`` tokens and ``d`` dimensions, seeded random numbers."""
    rng = np.random.default_rng(n * 100 + d)
    tokens, dims = [f"t{i}" for i in range(n)], [f"d{j}" for j in range(d)]
    if direct:
        return {
            name: matrix_table(rng.normal(size=(n, d)), tokens, [f"{p}{j}" for j in range(d)], tokens=True)
            for name, p in (("Q", "d"), ("K", "d"), ("V", "v"))
        }
    tables = {"X": matrix_table(rng.normal(size=(n, d)), tokens, dims, tokens=True)}
    for name, p in (("W_q", "q"), ("W_k", "k"), ("W_v", "v")):
        tables[name] = matrix_table(rng.normal(size=(d, d)), dims, [f"{p}{j}" for j in range(d)], tokens=False)
    return tables


@pytest.mark.parametrize(("scenario", "size"), CASES)
@pytest.mark.parametrize("page", PAGES)
def test_every_page_opens_on_the_largest_and_the_smallest_lab(page, scenario, size):
    n, d, h = SIZES[size]
    at = open_page(page, scenario)
    s = at.session_state["session"]
    heads = s.lab.heads.iloc[:1].assign(dims=", ".join(str(j) for j in range(d)))
    s.lab = replace(
        s.lab,
        tables=_tables("Q" in s.lab.tables, n, d),
        heads=heads,
        heads_mode="split",
        n_heads=min(h, d),
        selected=(n - 1, n - 1),
        rev=s.lab.rev + 1,
        last_single=None,
        last_multi=None,
    )
    at.run()
    assert_clean(at)  # a page may refuse a size with a message (RoPE needs an even width), never with a traceback
