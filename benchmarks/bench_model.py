"""Benchmark: SmolLM2-135M in attention_models — load time, memory, forward pass; Hugging Face beside it.

Run from the repository root (the model installed: requirements-models.txt)::

    python benchmarks/bench_model.py
    /tmp/refvenv/bin/python benchmarks/bench_model.py          # where torch + transformers are installed
    /tmp/refvenv/bin/python benchmarks/bench_model.py --threads 2   # both sides on 2 threads (default 1)

It prints: the load time (reading, dequantising and transposing the GGUF once); the process's RSS
after loading (goal: at most 1.2 GB for the whole app process); the median time of a forward pass
of 64 tokens through all 30 layers (goal: at most 200 ms on the 2-core machine); a run edited
in layer 20 that reuses layers 0..19; the forward beside its matmuls alone (the BLAS floor, the
rest is attention, RoPE, norms and activations); and, when torch and transformers are importable, Hugging
Face's eager float32 forward on the same 64 tokens, torch on as many threads as our BLAS (1 unless
``--threads``), timed in alternation with ours: the ratio ours / theirs (goal: at most 1.0x). The
load average is printed too: the machine may be shared, and timings then vary.

OpenBLAS spins its threads between calls; when another process holds a core, the ~200 small
matmuls of a forward pass can run many times slower with two threads than with one, which is why
``Model.blas_threads`` is 1 by default. The forward pass is timed both ways, alternately.
It is a benchmark, not a test.
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from timing import median_ms  # noqa: E402  (benchmarks/timing.py, beside this script)

import attention_models as am  # noqa: E402
from attention_models.gguf_file import model_path  # noqa: E402

N_TOKENS = 64
RSS_GOAL_MB = 1200
FORWARD_GOAL_MS = 200
HF_RATIO_GOAL = 1.0


def rss_mb() -> float:
    """The resident memory of this process in MB (Linux /proc)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def hugging_face(model: am.Model):
    """Hugging Face's model on the same file, or None without torch/transformers."""
    try:
        import torch
        from transformers import AutoModelForCausalLM
    except ImportError:
        return None
    path = model_path(am.MODELS[model.name])
    hf = AutoModelForCausalLM.from_pretrained(
        path.parent, gguf_file=path.name, dtype=torch.float32, attn_implementation="eager"
    ).eval()
    return hf, torch


def main() -> None:
    print(f"load average {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} ({os.cpu_count()} cores)")
    start = time.perf_counter()
    model = am.load("smollm2-135m")
    print(f"load: {time.perf_counter() - start:.2f} s; RSS after loading {rss_mb():.0f} MB (goal <= {RSS_GOAL_MB})")

    ids = am.repeated_random_tokens(model.vocab_size, length=N_TOKENS // 2)  # 64 tokens
    for threads in (None, 1, None, 1):  # alternated: the machine's load changes between them
        model.blas_threads = threads
        model.run(ids)  # warm up
        ours = median_ms(lambda: model.run(ids), 7 if threads else 3)  # the library's own: seconds under load
        setting = "the BLAS library's own thread count" if threads is None else f"{threads} BLAS thread"
        print(f"forward, {N_TOKENS} tokens, 30 layers, {setting}: {ours:.0f} ms median (goal <= {FORWARD_GOAL_MS})")
    model.blas_threads = am.model.BLAS_THREADS
    base = model.run(ids)
    scale = np.ones((model.n_layers, model.n_heads))
    scale[20, 0] = 0.0
    edited = median_ms(lambda: model.run(ids, head_scale=scale, reuse=base))
    print(f"edited head in layer 20, reusing layers 0..19: {edited:.0f} ms median")
    print(f"RSS after the runs {rss_mb():.0f} MB")
    with model.threads():
        floor, ours = times_alternately(lambda: matmuls(model, N_TOKENS), lambda: model.run(ids), rounds=9)
    print(f"the forward's matmuls alone (the BLAS floor), timed alternately with the forward: "
          f"{statistics.median(floor):.0f} ms median; the forward {statistics.median(ours):.0f} ms = "
          f"{statistics.median(ours) / statistics.median(floor):.2f}x the floor")  # fmt: skip

    loaded = hugging_face(model)
    if loaded is None:
        print("Hugging Face: torch/transformers not importable here; run with a python that has them to compare")
        return
    hf, torch = loaded
    threads = int(sys.argv[sys.argv.index("--threads") + 1]) if "--threads" in sys.argv else 1
    model.blas_threads = threads
    torch.set_num_threads(threads)  # the same thread count on both sides
    x = torch.tensor([ids])
    with torch.no_grad():
        hf(x)  # warm up
        theirs, eager, ours = times_alternately(
            lambda: hf(x), lambda: hf(x, output_attentions=True), lambda: model.run(ids), rounds=9
        )
    print(f"Hugging Face eager float32 forward, {N_TOKENS} tokens, {torch.get_num_threads()} torch thread(s), timed "
          f"alternately with ours ({model.blas_threads} BLAS thread(s)), median / best of 9:")  # fmt: skip
    print(f"  theirs {statistics.median(theirs):.0f} / {min(theirs):.0f} ms; with output_attentions "
          f"{statistics.median(eager):.0f} / {min(eager):.0f} ms")  # fmt: skip
    print(f"  ours {statistics.median(ours):.0f} / {min(ours):.0f} ms = "
          f"{statistics.median(ours) / statistics.median(theirs):.2f}x / {min(ours) / min(theirs):.2f}x theirs "
          f"(goal <= {HF_RATIO_GOAL}x)")  # fmt: skip


def matmuls(model: am.Model, T: int) -> None:
    """The products of a ``T``-token forward and nothing else: each layer's seven, then the output row."""
    x = np.ones((T, model.weights.embedding.shape[1]), dtype=np.float32)  # (T, d_model)
    for w in model.weights.layers:
        x @ w.W_q, x @ w.W_k, x @ w.W_v, x @ w.W_o  # noqa: B018  (timed, not kept)
        (x @ w.W_gate) @ w.W_down, x @ w.W_up  # noqa: B018
    x[-1:] @ model.weights.output.T  # noqa: B018


def times_alternately(*fns, rounds: int) -> list[list[float]]:
    """Wall times in ms of each ``fn()``, the functions called in turn ``rounds`` times (same machine state)."""
    times: list[list[float]] = [[] for _ in fns]
    for _ in range(rounds):
        for fn, t in zip(fns, times, strict=True):
            start = time.perf_counter()
            fn()
            t.append(1000 * (time.perf_counter() - start))
    return times


if __name__ == "__main__":
    main()
