"""Benchmark: learning an exercise's tables by gradient descent (attention_core.learning).

Run from the repository root::

    python benchmarks/bench_learning.py

It prints the steps per second of ``learn_step`` (loss, gradient and one update) on a 10-token
"attend to the previous token" exercise built here (X = one-hot positions plus a constant, W_q and
W_k of shape (11, 10)), then, for every exercise, the steps and the time learn_until_solved takes
from the exercise's start and from a seeded random start (default learning rate). It is a
benchmark, not a test; the machine may be shared, so the load average is printed too. Last, the
wall time of ``train_head`` (seed 0, its default 300 Adam steps) for each job. On a busy machine
OpenBLAS's threads can slow these small matmuls many times; ``OPENBLAS_NUM_THREADS=1`` avoids that.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

import attention_core as ac  # noqa: E402
from attention_core.exercises import EDIT_W  # noqa: E402
from attention_core.head_training import JOBS  # noqa: E402

N_TOKENS = 10


def ten_token_exercise() -> ac.Exercise:
    """Exercise 2 ("attend to the previous token") stretched to 10 tokens: X (10, 11), W (11, 10)."""
    n = N_TOKENS
    X = np.hstack([np.eye(n), np.ones((n, 1))])  # (n, d_model): one-hot position, then a constant 1
    W = np.vstack([np.eye(n), np.zeros((1, n))])  # (d_model, d_k): position p_i -> direction k_i
    target = np.eye(n)[[0, *range(n - 1)]][None]  # (1, n, n): row i on token i - 1, row 0 on itself
    return ac.Exercise(
        id="previous-10",
        title="previous token, 10 tokens",
        task="",
        hint="",
        worked="",
        tokens=tuple(f"t{i}" for i in range(n)),
        edits=EDIT_W,
        tables=("W_q", "W_k"),
        start={"W_q": W, "W_k": W.copy()},
        solution={"W_q": W, "W_k": W.copy()},
        target=target,
        threshold=0.05,
        dim_labels=tuple(f"k{i}" for i in range(n)),
        X=X,
        x_labels=(*(f"p{i}" for i in range(n)), "one"),
    )


def steps_per_second(state: ac.LearningState, lr: float, seconds: float = 2.0) -> list[float]:
    """Steps per second of learn_step, measured in 5 rounds of about seconds / 5 each."""
    rates = []
    for _ in range(5):
        count, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds / 5:
            s = state
            for _ in range(50):
                s = ac.learn_step(s, lr)
            count += 50
        rates.append(count / (time.perf_counter() - t0))
    return rates


def time_learning(ex: ac.Exercise, tables: dict) -> tuple[ac.LearningRun, float]:
    """The run from ``tables`` and its best wall time over 5 repeats."""
    best, run = float("inf"), None
    for _ in range(5):
        t0 = time.perf_counter()
        run = ac.learn_until_solved(ac.start_learning(ex, tables))
        best = min(best, time.perf_counter() - t0)
    return run, best


def main() -> None:
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    ex = ten_token_exercise()
    state = ac.start_learning(ex, ex.start)
    rates = steps_per_second(state, lr=1.0)
    print(
        f"learn_step on {N_TOKENS} tokens (W_q, W_k {ex.start['W_q'].shape}): "
        f"median {statistics.median(rates):,.0f} steps/s (rounds: {', '.join(f'{r:,.0f}' for r in rates)})"
    )
    run, best = time_learning(ex, ex.start)
    print(f"  learn_until_solved from its start: {run.stopped} in {run.final.step} steps, {best * 1e3:.2f} ms")
    print()
    print(
        f"{'exercise':<12} {'from':<13} {'stopped':<9} {'steps':>5} {'score':>7} {'threshold':>9} {'ms, best of 5':>14}"
    )
    for eid in ac.list_exercises():
        ex = ac.load_exercise(eid)
        for label, tables in (("start", ex.start), ("random seed 0", ac.random_start(ex, np.random.default_rng(0)))):
            run, best = time_learning(ex, tables)
            print(
                f"{eid:<12} {label:<13} {run.stopped:<9} {run.final.step:>5} {run.scores[-1]:>7.4f} "
                f"{ex.threshold:>9} {best * 1e3:>14.2f}"
            )

    print()
    for job in JOBS:
        t0 = time.perf_counter()
        run = ac.train_head(job, seed=0)
        first, last = run.snapshots[0], run.snapshots[-1]
        print(
            f"train_head({job!r}, seed=0): {last.step} steps in {time.perf_counter() - t0:.2f} s, "
            f"held-out loss {first.loss:.2f} -> {last.loss:.3f}"
        )


if __name__ == "__main__":
    main()
