"""The one timer of the benchmark scripts: the median wall time of repeated calls."""

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
