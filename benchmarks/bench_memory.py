"""Benchmark: the memory of the real-model page on a public link: the model, the cached runs, one session.

Run from the repository root (the model installed: requirements-models.txt)::

    python benchmarks/bench_memory.py                      # 200 distinct sentences of about 128 tokens
    python benchmarks/bench_memory.py --sentences 50 --words 20

It loads SmolLM2-135M once through the page's own cached loader, then sends ``--sentences`` distinct
sentences through the page's cached run path (``sections.real_model.run_for`` and ``head_scores``, as every
rerun of the page does) in this one process, and prints the process's RSS after the load, after each of the
first runs (so the cost of one cached run), every 25 sentences, and its peak (VmHWM). The caches keep at most
``max_entries`` runs, so RSS must level off once they are full instead of growing with every new sentence.

It also prints the size of one session's own state at the app's limits (a 64 x 64 lab in every table, a
snapshot, the real model's 2,000-character text and 128 generated tokens), pickled. It is a benchmark, not a
test: tests/pages/test_model_memory.py checks the bounds themselves.
"""

from __future__ import annotations

import argparse
import pickle
import random
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from attention_views.pure.lab import (  # noqa: E402
    MAX_DIMS,
    MAX_TEXT_CHARS,
    MAX_TOKENS,
    ModelView,
    Snapshot,
    new_lab,
    new_session,
)
from attention_views.pure.tables import matrix_table  # noqa: E402
from attention_views.ui.sections import model_runs  # noqa: E402
from attention_views.ui.sections import real_model as rm  # noqa: E402

WORDS = (
    "the a cat dog sat ran on under mat rug door house tree river city student teacher lecture reads writes "
    "attention head token query key value model learns quickly slowly because and then after before"
).split()


def status_mb(field: str) -> float:
    """A field of /proc/self/status (VmRSS: now, VmHWM: the peak), in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def sentences(n: int, words: int, seed: int = 0) -> list[str]:
    """``n`` distinct seeded sentences of ``words`` words (about ``words`` tokens each)."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        text = f"Sentence {len(out)}: " + " ".join(rng.choice(WORDS) for _ in range(words - 3)) + "."
        if text not in out:
            out.append(text)
    return out


def session_bytes() -> int:
    """One session's own state at the app's limits, pickled."""
    lab = new_lab("random-seed42")
    rng = np.random.default_rng(0)
    tokens, dims = [f"t{i}" for i in range(MAX_TOKENS)], [f"d{j}" for j in range(MAX_DIMS)]
    lab.tables = {"X": matrix_table(rng.normal(size=(MAX_TOKENS, MAX_DIMS)), tokens, dims, tokens=True)}
    for name in ("W_q", "W_k", "W_v", "W_o"):
        lab.tables[name] = matrix_table(rng.normal(size=(MAX_DIMS, MAX_DIMS)), dims, dims, tokens=False)
    lab.snapshot = Snapshot(rng.random((MAX_TOKENS, MAX_TOKENS)), tokens, tokens)
    lab.model = ModelView(preset="custom", text="x" * MAX_TEXT_CHARS, generated=tuple(range(128)))
    return len(pickle.dumps(new_session(lab)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sentences", type=int, default=200)
    parser.add_argument("--words", type=int, default=120, help="words per sentence (about one token each)")
    args = parser.parse_args()
    print(f"RSS at start {status_mb('VmRSS'):.0f} MB")
    start = time.perf_counter()
    model = model_runs.load_model()
    loaded = status_mb("VmRSS")
    print(
        f"model loaded in {time.perf_counter() - start:.1f} s; RSS after load {loaded:.0f} MB "
        f"(peak while loading {status_mb('VmHWM'):.0f} MB)"
    )
    last, lengths = loaded, []
    start = time.perf_counter()
    for k, text in enumerate(sentences(args.sentences, args.words)):
        view = ModelView(preset="custom", text=text)
        ids, run, _ = rm.run_for(model, view)
        rm.head_scores(tuple(ids), model_runs.scales_key(view.scales))
        lengths.append(len(ids))
        rss = status_mb("VmRSS")
        if k < 8:
            print(f"  run {k + 1}: {len(ids)} tokens, RSS {rss:.0f} MB ({rss - last:+.0f} MB)")
        elif (k + 1) % 25 == 0:
            print(f"  after {k + 1} sentences: RSS {rss:.0f} MB")
        last = rss
    took = time.perf_counter() - start
    T = max(lengths)
    run_mb = (run.attention.nbytes + run.residuals.nbytes + run.next_token_probs.nbytes) / 2**20
    print(f"{args.sentences} distinct sentences ({min(lengths)}-{T} tokens) in {took:.0f} s")
    print(f"one cached run of {len(run.token_ids)} tokens holds {run_mb:.1f} MB of arrays")
    print(f"RSS now {status_mb('VmRSS'):.0f} MB, peak {status_mb('VmHWM'):.0f} MB (after load {loaded:.0f} MB)")
    print(f"one session's own state at the app's limits: {session_bytes() / 1e6:.2f} MB pickled")


if __name__ == "__main__":
    main()
