"""Fixtures shared by the model tests: the model, read once per process, its runs on the IOI prompts, and the
float64 runs that measure a float32 run's rounding (tests/float_bounds.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import attention_models as am
from attention_core.decoder import rms_norm
from attention_models.interp import logit_diffs
from tests.float_bounds import U, assert_within, gamma, probable_gamma, spread_bound


@pytest.fixture(scope="session")
def model() -> am.Model:
    return am.load("smollm2-135m")


@pytest.fixture(scope="session")
def default_run(model):
    return model.run(am.DEFAULT_SENTENCE)


@pytest.fixture(scope="session")
def answers(model) -> tuple[int, int]:
    (mary,), (john,) = model.tokenize(am.IOI.answer), model.tokenize(am.IOI.other)
    return mary, john


@pytest.fixture(scope="session")
def corrupt_run(model):
    return model.run(am.IOI.corrupt)


@pytest.fixture(scope="session")
def ld_spread(model, default_run, corrupt_run, answers) -> float:
    """Allowed distance between two float32 evaluations of a logit difference after up to 30 layers: the spread
    of the float32 runs' logit differences (at every position of both IOI prompts) from float64 ones."""
    errors = [
        logit_diffs(model, run.residuals[-1], *answers)
        - logit_diffs(model, float64_residuals(model, run.token_ids)[-1], *answers)
        for run in (default_run, corrupt_run)
    ]
    return spread_bound(np.concatenate(errors))


def float64_run(
    model: am.Model, x: np.ndarray, start: int = 0, head_scale: np.ndarray | None = None, head_weights=None
) -> tuple[np.ndarray, np.ndarray]:
    """The model's layers ``start..L-1`` on the residual ``x (T, d_model)`` entering ``start``, run in float64 (the
    float32 weights taken as exact): residuals ``(L+1-start, T, d_model)`` and attention ``(L-start, h, T, T)``
    (rounded to float32). The reference against which a float32 run's rounding is measured
    (tests/float_bounds.spread_bound)."""
    scale = np.ones((model.n_layers, model.n_heads)) if head_scale is None else head_scale
    with model.threads():
        residuals, attention, _ = model._layers(np.asarray(x, dtype=np.float64), scale, head_weights or {}, start)
    return np.stack(residuals), np.stack(attention)


def float64_copy(run: am.ModelRun) -> am.ModelRun:
    """``run`` recomputed in float64 from its embeddings, with its edits: the same float32 weights taken as exact,
    so ``float32 value - the copy's value`` is that value's float32 rounding (what :func:`spread_bound` reads)."""
    model = run.model
    x = model.weights.embedding[run.token_ids].astype(np.float64)  # (T, d_model)
    with model.threads():
        residuals, attention, outputs = model._layers(x, run.head_scale, run.head_weights, 0)
    residuals = np.stack(residuals)  # (L+1, T, d_model) float64
    probs = np.exp(float64_logprobs(model, residuals[-1][-1:])[0])
    return dataclasses.replace(
        run,
        residuals=residuals,
        attention=np.stack(attention),  # float64 weights, stored rounded to float32 by the model
        head_outputs=np.stack(outputs),
        next_token_probs=probs,
        first_layer=0,
    )


def logprob_error(run: am.ModelRun) -> np.ndarray:
    """``(vocab,)``: float32 rounding in the run's next-token log-probabilities, read from its last residual row
    through the float32 output head, minus the same from :func:`float64_copy`. Read from the residual stream, not
    from ``next_token_probs``, so a fault in how a run makes its probabilities is not taken for rounding."""
    model = run.model
    z = model.logits(run.residuals[-1][-1:])[0]  # float32 head on the float32 residual, (vocab,)
    z = z - z.max()
    narrow = z - np.log(np.exp(z).sum())
    return narrow - float64_logprobs(model, float64_copy(run).residuals[-1][-1:])[0]


def float64_layer(model: am.Model, x: np.ndarray, layer: int) -> np.ndarray:
    """One layer's output on the residual ``x (T, d_model)`` entering it, in float64, (T, d_model)."""
    x = np.asarray(x, dtype=np.float64)[None]  # (1, T, d_model)
    with model.threads():
        heads, _ = model.attention_heads(x, layer, np.ones(model.n_heads))
        return model.layer_output(x, heads, layer)[0]


def float64_residuals(model: am.Model, ids: list[int], **edits) -> np.ndarray:
    """``(L+1, T, d_model)``: :func:`float64_run` from the embeddings of ``ids``."""
    return float64_run(model, model.weights.embedding[ids], **edits)[0]


def float64_logprobs(model: am.Model, x: np.ndarray) -> np.ndarray:
    """``log softmax`` of the output head on residual rows ``x (m, d_model)``, all in float64, (m, vocab)."""
    z = model.logits(np.asarray(x, dtype=np.float64))  # float64 rows stay float64 through the norm and head
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def output_head_spread(model: am.Model, x: np.ndarray) -> float:
    """Allowed distance between two float32 evaluations of any logit of ``model.logits(x)``, rows ``x (m, d_model)``:
    :func:`spread_bound` of one evaluation's distance from float64, which is itself checked to lie within the
    analytic :func:`output_head_bound` (the measurement is what float32 promises, not a fit)."""
    narrow, exact = model.logits(x), model.logits(np.asarray(x, dtype=np.float64))  # (m, vocab) each
    assert_within(narrow, exact, output_head_bound(model, x), "float32 output head against float64")
    return spread_bound(narrow - exact)


def output_head_bound(model: am.Model, x: np.ndarray) -> np.ndarray:
    """``(m, vocab)``: how far one float32 evaluation of ``model.logits(x)`` may be from exact, for float32 rows
    ``x (m, d_model)``: RMSNorm (a mean of d squares: ``gamma_d``, then sqrt, add, divide, multiply: 4 U) scales
    the row, and each logit is a dot product of length d (``probable_gamma(d)``), both times ``|h| @ |W_U|.T``."""
    d = x.shape[-1]
    h = rms_norm(np.asarray(x, dtype=np.float64), model.weights.output_norm, model.config.eps)  # (m, d_model)
    norm_rel = gamma(d) / 2 + 4 * U  # the mean square's relative error halves through the square root
    magnitude = np.abs(h).astype(np.float32) @ np.abs(model.weights.output.T)  # sums of positive terms: float32
    return (norm_rel + probable_gamma(d)) * (1 + gamma(d)) * magnitude.astype(np.float64)  # (m, vocab)
