"""The timers of the benchmark scripts: the median wall time of repeated calls, and calls timed in alternation."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


def median_ms(fn: Callable[[], object], repeats: int = 7) -> float:
    """Median wall time of ``repeats`` calls of ``fn``, in milliseconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def time_alternately(*fns: Callable[[], object], min_total: float = 1.5, min_repeats: int = 9) -> list[list[float]]:
    """Wall times in seconds of repeated ``fn()`` calls, one round calling each function once, in turn.

    The machine may be busy with other work; alternating the calls lets every function see the same
    conditions, so their ratio stays meaningful even when the absolute numbers move. Rounds go on
    until there are ``min_repeats`` of them and ``min_total`` seconds have been spent.
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
