"""The real-model page's caches are bounded: 200 distinct sentences through the page's cached run path leave at
most ``max_entries`` runs (and head scores, and losses) cached, however many sessions sent them.

The caches are counted by what they do, not by reaching into Streamlit: the model behind them is a stand-in that
counts its forward passes; a sentence whose run is still cached costs none, one that was evicted costs one again.
The memory each cached run takes is measured by benchmarks/bench_memory.py (docs/security.md, "Memory").
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pytest

from attention_views.pure.lab import ModelView
from attention_views.ui.sections import model_runs
from attention_views.ui.sections import real_model as rm

SENTENCES = [f"Sentence number {k} is not like the others." for k in range(200)]
RUNS_KEPT, SCORES_KEPT, LOSSES_KEPT = 6, 32, 32  # the max_entries of model_run, head_scores, second_copy_loss


@dataclass(frozen=True, eq=False)
class _Run:
    token_ids: list[int]
    attention: np.ndarray  # (L, h, T, T)


@dataclass
class _CountingModel:
    """Stands in for SmolLM2 behind model_runs.load_model: tokenizes by bytes, records every forward pass and loss."""

    n_layers: int = 2
    n_heads: int = 3
    max_tokens: int = 128
    runs: list[tuple[int, ...]] = field(default_factory=list)
    losses: int = 0

    def tokenize(self, text: str, *, control_tokens: bool = True) -> list[int]:
        return list(text.encode())

    def run(self, ids: list[int], head_scale=None, reuse=None) -> _Run:
        self.runs.append(tuple(ids))
        T = len(ids)
        return _Run(list(ids), np.full((self.n_layers, self.n_heads, T, T), 1.0 / T))

    def loss(self, run: _Run, start: int, stop: int) -> float:
        self.losses += 1
        return 1.0


@pytest.fixture
def model(monkeypatch) -> _CountingModel:
    fake = _CountingModel()
    monkeypatch.setattr(model_runs, "load_model", lambda: fake)
    for cache in (model_runs.model_run, rm.head_scores, rm.second_copy_loss):
        cache.clear()
    yield fake
    for cache in (model_runs.model_run, rm.head_scores, rm.second_copy_loss):
        cache.clear()  # the next test's real model must not find these stand-in runs


def _view(text: str) -> ModelView:
    return ModelView(preset="custom", text=text, scales=np.ones((2, 3)))


def _ids(text: str) -> tuple[int, ...]:
    return tuple(text.encode())


def test_200_distinct_sentences_leave_six_runs_cached(model):
    for text in SENTENCES:
        rm.run_for(model, _view(text))  # what each rerun of the page does
    assert len(model.runs) == len(SENTENCES)  # one forward pass each: the unedited run is the same entry
    model.runs.clear()
    for text in SENTENCES[-RUNS_KEPT:]:
        rm.run_for(model, _view(text))
    assert model.runs == []  # the last six are still cached
    rm.run_for(model, _view(SENTENCES[-RUNS_KEPT - 1]))
    assert model.runs == [_ids(SENTENCES[-RUNS_KEPT - 1])]  # the seventh from last was evicted


def test_edited_runs_share_the_same_bound(model):
    scales = np.ones((2, 3))
    scales[1, 2] = 0.0
    for text in SENTENCES[:50]:
        rm.run_for(model, ModelView(preset="custom", text=text, scales=scales))
    assert len(model.runs) == 100  # the unedited run and the edited one
    model.runs.clear()
    rm.run_for(model, ModelView(preset="custom", text=SENTENCES[49], scales=scales))
    rm.run_for(model, ModelView(preset="custom", text=SENTENCES[48], scales=scales))
    assert model.runs == []  # the last two sentences, both runs of each: four entries of six
    rm.run_for(model, ModelView(preset="custom", text=SENTENCES[46], scales=scales))
    assert len(model.runs) == 2  # its runs were evicted


@pytest.mark.parametrize(("cache", "kept"), [("head_scores", SCORES_KEPT), ("second_copy_loss", LOSSES_KEPT)])
def test_scores_and_losses_stay_at_their_bound(model, cache, kept):
    fn = getattr(rm, cache)
    key = model_runs.scales_key(np.ones((2, 3)))
    for text in SENTENCES:
        fn(_ids(text), key)
    model.runs.clear()
    losses = model.losses

    def recomputed() -> int:  # a score is computed from a run; a loss by the model's loss
        return model.losses - losses if cache == "second_copy_loss" else len(model.runs)

    for text in SENTENCES[-kept:]:
        fn(_ids(text), key)
    assert recomputed() == 0 and model.runs == []  # the last ``kept`` are cached: nothing recomputed
    fn(_ids(SENTENCES[-kept - 1]), key)
    assert recomputed() == 1  # one before them was evicted: computed again
