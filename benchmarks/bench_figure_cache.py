"""Benchmark: the memory the shared figure cache (cached_figures.SPEC_CACHE) holds, and what a hit costs.

Run from the repository root: ``python benchmarks/bench_figure_cache.py``

The cache keeps each figure spec pickled and drops the least recently used ones while their bytes
exceed its bound (100 MB, issue 15). This prints the pickled size of the largest figures the app can
make (its largest allowed state: 64 tokens with 100-character labels, 16 heads of 64 x 64), then
fills a fresh cache with 600 distinct such figures (a class's worth of reruns) and prints the bytes it
holds and the process's RSS growth, and the time of a miss and of a hit. It never fails; it prints figures.
"""

from __future__ import annotations

import pickle
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attention_views import cached_figures, figures  # noqa: E402

BUDGET_MB = 100.0


def largest_calls(seed: int = 0) -> dict[str, tuple[str, tuple, dict]]:
    rng = np.random.default_rng(seed)
    n, h = 64, 16
    tokens = [f"token{i:02d}".ljust(100, "x") for i in range(n)]  # labels are cut at 100 characters
    W = rng.dirichlet(np.ones(n), size=n)  # (n, n) weights
    S = rng.normal(size=(n, n))  # (n, n) signed values
    heads = [rng.dirichlet(np.ones(n), size=n) for _ in range(h)]
    return {
        "attention heatmap 64x64": ("attention_heatmap", (W, tokens, tokens), {}),
        "matrix heatmap 64x64": ("matrix_heatmap", (S, tokens, tokens), {}),
        "delta heatmap 64x64": ("delta_heatmap", (W, W[::-1], tokens, tokens), {}),
        "head grid 16 x 64x64": ("head_grid", (heads, [f"h{i}" for i in range(h)], tokens, tokens), {}),
        "clickable grid 64x64": ("clickable_grid", (W, tokens, tokens), {}),
        "activation bars 64": ("activation_bars", (tokens, np.abs(S[0])), {}),
    }


def rss_mb() -> float:
    with open("/proc/self/status") as f:
        return next(int(line.split()[1]) for line in f if line.startswith("VmRSS")) / 1024


def main() -> None:
    print(f"{'figure':28} {'entry MB':>9}")
    for label, (name, args, kwargs) in largest_calls().items():
        print(f"{label:28} {len(pickle.dumps(figures.SPECS[name](*args, **kwargs))) / 1e6:9.3f}")

    cache = cached_figures.SpecCache(cached_figures.MAX_BYTES)
    before = rss_mb()
    misses = []
    for seed in range(100):  # 6 figures each: 600 distinct reruns
        for name, args, kwargs in largest_calls(seed + 1).values():
            start = time.perf_counter()
            cache.get(name, args, kwargs)
            misses.append(time.perf_counter() - start)
    name, args, kwargs = largest_calls(100)["head grid 16 x 64x64"]
    start = time.perf_counter()
    cache.get(name, args, kwargs)
    hit = time.perf_counter() - start
    held = cache.bytes / 1e6
    verdict = "met" if held <= BUDGET_MB else "MISSED"
    print(f"\n600 distinct figures: the cache holds {len(cache)}, {held:.0f} MB (bound {BUDGET_MB:.0f} MB: {verdict})")
    print(f"RSS growth while filling it: {rss_mb() - before:.0f} MB")
    miss = statistics.median(misses) * 1e3
    print(f"miss (build + pickle): median {miss:.1f} ms; hit on the 16-head grid: {hit * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
