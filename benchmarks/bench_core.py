"""Benchmark: one multi_head_attention call (with W_o) against a plain NumPy matmul of the same work.

Run from the repository root::

    python benchmarks/bench_core.py

For each (tokens, d_model, heads) it prints the median time of one call, the GFLOP/s that works out
to, the GFLOP/s of a square ``A @ B`` doing the same number of flops (the machine's ceiling, measured
in the same run) and the ratio. Only matmul flops are counted (a multiply-add is 2 flops):

- projections ``X @ W_q``, ``X @ W_k``, ``X @ W_v``: ``3 * 2 n d^2``
- ``Q @ K.T`` over all heads: ``2 n^2 d``;  ``weights @ V`` over all heads: ``2 n^2 d``
- ``concat @ W_o``: ``2 n d^2``

so ``flops = 8 n d^2 + 4 n^2 d`` for ``n`` tokens and ``d = d_model`` (independent of the head count).
It is a benchmark, not a test. attention_core runs the plain path (a loop over heads, every stage
kept as its own array, the softmax as taught), which is not tuned for these sizes: the app runs at
most 64 tokens, 64 dimensions and 16 heads. The ratio says what that plainness costs on big inputs.

``--stages`` also splits the calls of 512 tokens and more into the stages of that plain path (the
same NumPy operations, for every head), each timed on its own, to show where the time goes: the
matmuls at their own rates, the elementwise (n, n) stages, the softmax (one thread: exp and the
row sums are not parallel in NumPy).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

import attention_core as ac  # noqa: E402
from attention_core.softmax import softmax  # noqa: E402

CASES = ((10, 8, 4), (64, 64, 4), (256, 256, 8), (512, 512, 8), (1024, 512, 8))


def attention_flops(n: int, d: int) -> int:
    """Matmul flops of one multi-head self-attention call with W_o: 8 n d^2 + 4 n^2 d."""
    return 8 * n * d * d + 4 * n * n * d


def time_alternately(*fns: Callable[[], object], min_total: float = 1.5, min_repeats: int = 9) -> list[list[float]]:
    """Wall times of repeated ``fn()`` calls, the functions timed in alternation.

    The machine may be busy with other work; alternating the calls lets every function see the same
    conditions, so their ratio stays meaningful even when the absolute numbers move.
    """
    for fn in fns:
        fn()  # warm-up: first-touch allocations, BLAS thread start-up
    times: list[list[float]] = [[] for _ in fns]
    while len(times[0]) < min_repeats or sum(map(sum, times)) < min_total:
        for fn, ts in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - start)
    return times


def bench_case(n: int, d: int, h: int, rng: np.random.Generator) -> dict[str, float]:
    X = rng.standard_normal((n, d))  # (n, d_model)
    W_q, W_k, W_v, W_o = (rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4))  # (d_model, d_model)
    heads = ac.split_heads(W_q, W_k, W_v, h)
    flops = attention_flops(n, d)
    m = max(1, round((flops / 2) ** (1 / 3)))  # square matmul with 2 m^3 ~= the same flops
    A, B = rng.standard_normal((m, m)), rng.standard_normal((m, m))
    t_attn, t_mm = time_alternately(lambda: ac.multi_head_attention(X, heads=heads, W_o=W_o), lambda: A @ B)
    gflops_attn = flops / statistics.median(t_attn) / 1e9
    gflops_mm = 2 * m**3 / statistics.median(t_mm) / 1e9
    best_ratio = (flops / min(t_attn)) / (2 * m**3 / min(t_mm))
    return {
        "time": statistics.median(t_attn),
        "gflops": gflops_attn,
        "ceiling": gflops_mm,
        "ratio": gflops_attn / gflops_mm,
        "best": best_ratio,
        "m": m,
    }


def bench_stages(n: int, d: int, h: int, rng: np.random.Generator) -> None:
    """Print the median time of each stage of one call, for all h heads, timed alternately, beside the whole call."""
    X = rng.standard_normal((n, d))  # (n, d_model)
    W_q, W_k, W_v, W_o = (rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4))  # (d_model, d_model)
    heads = ac.split_heads(W_q, W_k, W_v, h)
    scale = 1 / np.sqrt(d // h)
    Q, K, V = X @ heads[0].W_q, X @ heads[0].W_k, X @ heads[0].W_v  # (n, d_head) each; every head alike
    additive_mask = np.zeros((n, n))  # (n, n) no mask, as in bench_case
    scores = Q @ K.T  # (n, d_head) @ (d_head, n) -> (n, n)
    scaled = scores * scale  # (n, n)
    masked = scaled + additive_mask  # (n, n)
    weights = softmax(masked)  # (n, n)
    concat = np.concatenate([weights @ V] * h, axis=1)  # (n, h d_head)
    every_head = range(h)  # the loop over heads; each list keeps its h arrays, as a result does

    stages = {  # name: (function, matmul flops)
        "projections X @ W_q, W_k, W_v": (
            lambda: [X @ W for head in heads for W in (head.W_q, head.W_k, head.W_v)],
            6 * n * d * d,
        ),
        "scores = Q @ K.T": (lambda: [Q @ K.T for _ in every_head], 2 * n * n * d),
        "scaled = scores * scale": (lambda: [scores * scale for _ in every_head], 0),
        "masked = scaled + additive_mask": (lambda: [scaled + additive_mask for _ in every_head], 0),
        "weights = softmax(masked)": (lambda: [softmax(masked) for _ in every_head], 0),
        "output = weights @ V": (lambda: [weights @ V for _ in every_head], 2 * n * n * d),
        "concat @ W_o": (lambda: concat @ W_o, 2 * n * d * d),
        "the whole call": (lambda: ac.multi_head_attention(X, heads=heads, W_o=W_o), attention_flops(n, d)),
    }
    times = time_alternately(*(fn for fn, _ in stages.values()), min_total=3.0)
    print(f"\nstages of ({n} tokens, d_model {d}, {h} heads), all heads, median of {len(times[0])} alternated runs:")
    for (name, (_, flops)), ts in zip(stages.items(), times, strict=True):
        rate = f"{flops / statistics.median(ts) / 1e9:8.2f} GFLOP/s" if flops else ""
        print(f"  {name:34} {statistics.median(ts) * 1e3:9.3f} ms {rate}")


def main() -> None:
    rng = np.random.default_rng(0)
    print(f"numpy {np.__version__}, float64, {os.cpu_count()} CPUs, load average {_load()}")
    print("flops = 8 n d^2 + 4 n^2 d (matmuls only); ceiling = a square A @ B of the same flops, timed alternately;")
    print("ratio = median vs median; best-of = fastest vs fastest, less hurt by a busy machine")
    header = (
        f"{'tokens':>6} {'d_model':>7} {'heads':>5} {'MFLOP':>9} {'median ms':>10} {'GFLOP/s':>8} "
        f"{'matmul m':>8} {'ceiling GFLOP/s':>15} {'ratio':>6} {'best-of':>7}"
    )
    print(header)
    print("-" * len(header))
    for n, d, h in CASES:
        r = bench_case(n, d, h, rng)
        print(
            f"{n:>6} {d:>7} {h:>5} {attention_flops(n, d) / 1e6:>9.1f} {r['time'] * 1e3:>10.3f} "
            f"{r['gflops']:>8.2f} {r['m']:>8} {r['ceiling']:>15.2f} {r['ratio']:>6.0%} {r['best']:>7.0%}"
        )
    print(f"load average after: {_load()} (a busy machine lowers both columns; the ratio is what counts)")
    if "--stages" in sys.argv[1:]:
        for n, d, h in CASES:
            if n >= 512:
                bench_stages(n, d, h, rng)
        print(f"load average after the stages: {_load()}")


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


if __name__ == "__main__":
    main()
