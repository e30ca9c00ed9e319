"""Benchmark: multi_head_attention, every stage kept, against the versions a reader already knows.

Run from the repository root (PyTorch is optional; a scratch environment with it is enough)::

    python benchmarks/bench_core.py [--threads 1] [--seconds 2]

For each (tokens, d_model, heads): self-attention of ``X (n, d_model)`` with ``W_q, W_k, W_v, W_o``
``(d_model, d_model)``, no biases, float64, the same inputs for every contender:

- ``core``: ``attention_core.multi_head_attention(X, heads=split_heads(W_q, W_k, W_v, h), W_o=W_o)``,
  the app's call: every stage of every head kept, inputs validated;
- ``numpy``: ``numpy_attention`` below, the textbook NumPy version (heads as an axis, the weights
  kept, nothing else kept and nothing checked): what the plain arithmetic costs;
- ``torch``: ``torch.nn.MultiheadAttention(need_weights=True, average_attn_weights=False)`` on the
  CPU in float64, a library a reader trusts, returning the same weights; for reference only, and its
  columns say "not installed" without PyTorch;
- ``exp``: ``np.exp`` of one ``(h, n, n)`` float64 array, the softmax's exponentials alone, which any
  NumPy version computes once per call. NumPy's float64 ``exp`` is vectorised only with AVX-512, so on
  other CPUs this column is the part of ``core`` and ``numpy`` no NumPy code can shorten.

Before timing, the three outputs and weights are checked to agree. The contenders run in alternation
(a round calls each once; at least 15 rounds and ``--seconds`` a case), each at the same thread count
(threadpoolctl for NumPy's BLAS, ``torch.set_num_threads`` for PyTorch; one thread unless ``--threads``
says otherwise). A table per thread count: the median ms of each, and ``core / numpy``, ``core / torch``
and ``exp / torch``, the median over rounds of the ratio within a round (a busy machine moves the times of
a round together, so this ratio is steadier than the times themselves); ``cpu`` is ``core / numpy`` in CPU
time of the calling thread, where BLAS runs at one thread, so the work other processes do on the machine
counts only through the caches and memory they share. ``limit`` is the most ``core / numpy`` may be at one
thread: 6 at 10 tokens, 2.5 at 64, 1.5 from 256 up (docs/performance.md).
It is a benchmark, not a test: the numbers depend on the machine and on what else it is doing.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from timing import time_alternately  # noqa: E402  (benchmarks/timing.py, beside this script)

import attention_core as ac  # noqa: E402

try:
    import torch
except ImportError:  # PyTorch is a reference for this script only, never a requirement
    torch = None

CASES = ((10, 8, 4), (64, 64, 4), (256, 256, 8), (512, 512, 8), (1024, 512, 8))  # (tokens, d_model, heads)
LIMITS = {10: 6.0, 64: 2.5}  # tokens -> the most core / numpy may be; 1.5 from 256 tokens up


def numpy_attention(X, W_q, W_k, W_v, W_o, h: int) -> tuple[np.ndarray, np.ndarray]:
    """Multi-head self-attention in plain NumPy: ``X (n, d_model) -> output (n, d_model), weights (h, n, n)``."""
    n, d_model = X.shape
    Q, K, V = ((X @ W).reshape(n, h, -1).swapaxes(0, 1) for W in (W_q, W_k, W_v))  # (h, n, d_head) each
    scores = Q @ K.mT / np.sqrt(d_model // h)  # (h, n, d_head) @ (h, d_head, n) -> (h, n, n)
    weights = np.exp(scores - scores.max(axis=-1, keepdims=True))  # (h, n, n)
    weights /= weights.sum(axis=-1, keepdims=True)  # rows sum to 1
    concat = (weights @ V).swapaxes(0, 1).reshape(n, d_model)  # (h, n, d_head) -> (n, h * d_head)
    return concat @ W_o, weights  # (n, d_model), (h, n, n)


def torch_attention(W_q, W_k, W_v, W_o, h: int) -> Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """PyTorch's MultiheadAttention holding the same weights: ``X (n, d_model) -> output, weights (h, n, n)``."""
    d_model = W_q.shape[0]
    mha = torch.nn.MultiheadAttention(d_model, h, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():  # torch computes x @ W.T: its weights are ours transposed
        mha.in_proj_weight.copy_(torch.from_numpy(np.concatenate([W_q.T, W_k.T, W_v.T])))
        mha.out_proj.weight.copy_(torch.from_numpy(np.ascontiguousarray(W_o.T)))

    def run(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:  # (1, n, d_model)
        with torch.inference_mode():
            return mha(x, x, x, need_weights=True, average_attn_weights=False)

    return run


def contenders(n: int, d: int, h: int, rng: np.random.Generator) -> dict[str, Callable[[], object]]:
    """The calls to time on one case, after checking that they agree."""
    X = rng.standard_normal((n, d))  # (n, d_model)
    W_q, W_k, W_v, W_o = (rng.standard_normal((d, d)) / np.sqrt(d) for _ in range(4))  # (d_model, d_model)
    heads = ac.split_heads(W_q, W_k, W_v, h)
    calls = {
        "core": lambda: ac.multi_head_attention(X, heads=heads, W_o=W_o),
        "numpy": lambda: numpy_attention(X, W_q, W_k, W_v, W_o, h),
    }
    core = calls["core"]()
    answers = {"numpy": calls["numpy"]()}
    if torch is not None:
        run, x = torch_attention(W_q, W_k, W_v, W_o, h), torch.from_numpy(X)[None]  # (1, n, d_model)
        calls["torch"] = lambda: run(x)
        answers["torch"] = tuple(t[0].numpy() for t in run(x))  # (n, d_model), (h, n, n)
    shifted = np.stack([r.masked for r in core.heads])  # (h, n, n) the softmax's input
    shifted -= shifted.max(axis=-1, keepdims=True)  # its exponents, as the softmax takes them: each <= 0
    calls["exp"] = lambda: np.exp(shifted, out=np.empty_like(shifted))  # (h, n, n)
    for name, (output, weights) in answers.items():
        assert np.allclose(core.output, output, atol=1e-10), f"{name} disagrees with the core's output"
        assert np.allclose(np.stack([r.weights for r in core.heads]), weights, atol=1e-12), f"{name}'s weights"
    return calls


def bench(threads: int, seconds: float) -> None:
    rng = np.random.default_rng(0)
    names = ("core", "numpy", "torch", "exp")
    header = f"{'tokens':>6} {'d_model':>7} {'heads':>5} {'rounds':>6} " + " ".join(f"{n + ' ms':>13}" for n in names)
    header += " " + " ".join(f"{r:>13}" for r in ("core/numpy", "cpu", "limit", "core/torch", "exp/torch"))
    print(f"\n{threads} thread(s) each; load average before: {_load()}")
    print(header)
    print("-" * len(header))
    for n, d, h in CASES:
        calls = contenders(n, d, h, rng)
        cpu = {name: [] for name in calls}  # each call's CPU time (this thread), the warm-up call first
        timed = [_cpu_timed(call, cpu[name]) for name, call in calls.items()]
        times = dict(zip(calls, time_alternately(*timed, min_total=seconds, min_repeats=15), strict=True))
        cells = [f"{statistics.median(times[name]) * 1e3:.3f}" if name in times else _ABSENT for name in names]
        cells += [f"{_paired_ratio(times['core'], times['numpy']):.2f}"]
        cells += [f"{_paired_ratio(cpu['core'][1:], cpu['numpy'][1:]):.2f}", f"{LIMITS.get(n, 1.5):.1f}"]
        for ours, theirs in (("core", "torch"), ("exp", "torch")):
            cells.append(f"{_paired_ratio(times[ours], times[theirs]):.2f}" if theirs in times else _ABSENT)
        print(f"{n:>6} {d:>7} {h:>5} {len(times['core']):>6} " + " ".join(f"{c:>13}" for c in cells), flush=True)
    print(f"load average after: {_load()}")


_ABSENT = "not installed"  # the cells of a PyTorch column without PyTorch


def _cpu_timed(call: Callable[[], object], log: list[float]) -> Callable[[], None]:
    """``call`` that appends the CPU time it took in this thread (seconds) to ``log``."""

    def run() -> None:
        start = time.thread_time()
        call()
        log.append(time.thread_time() - start)

    return run


def _paired_ratio(ours: list[float], theirs: list[float]) -> float:
    """Median over rounds of ours / theirs within the round."""
    return statistics.median(a / b for a, b in zip(ours, theirs, strict=True))


def _load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", default="1", help="comma-separated thread counts, one table each")
    parser.add_argument("--seconds", type=float, default=2.0, help="least time spent on each case")
    args = parser.parse_args()
    versions = f"numpy {np.__version__}, torch " + (torch.__version__ if torch is not None else _ABSENT)
    print(f"{versions}, float64, {os.cpu_count()} CPUs")
    for threads in (int(t) for t in args.threads.split(",")):
        if torch is not None:
            torch.set_num_threads(threads)
        with threadpool_limits(limits=threads, user_api="blas"):
            bench(threads, args.seconds)


if __name__ == "__main__":
    main()
