"""Fixtures shared by the model tests: the model, read once per process, and its run on the default sentence."""

from __future__ import annotations

import numpy as np
import pytest

import attention_models as am
from attention_core.decoder import rms_norm
from tests.float_bounds import U, gamma, probable_gamma


@pytest.fixture(scope="session")
def model() -> am.Model:
    return am.load("smollm2-135m")


@pytest.fixture(scope="session")
def default_run(model):
    return model.run(am.DEFAULT_SENTENCE)


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


def output_head_bound(model: am.Model, x: np.ndarray) -> np.ndarray:
    """``(m, vocab)``: how far one float32 evaluation of ``model.logits(x)`` may be from exact, for float32 rows
    ``x (m, d_model)``: RMSNorm (a mean of d squares: ``gamma_d``, then sqrt, add, divide, multiply: 4 U) scales
    the row, and each logit is a dot product of length d (``probable_gamma(d)``), both times ``|h| @ |W_U|.T``."""
    d = x.shape[-1]
    h = rms_norm(np.asarray(x, dtype=np.float64), model.weights.output_norm, model.config.eps)  # (m, d_model)
    norm_rel = gamma(d) / 2 + 4 * U  # the mean square's relative error halves through the square root
    magnitude = np.abs(h).astype(np.float32) @ np.abs(model.weights.output.T)  # sums of positive terms: float32
    return (norm_rel + probable_gamma(d)) * (1 + gamma(d)) * magnitude.astype(np.float64)  # (m, vocab)
