"""Fixtures shared by the model tests: the model, read once per process, its runs on the IOI prompts, the Hugging
Face reference numbers, and the tolerances made from the float32 error their side measured (tests/float_bounds.py)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import attention_models as am
from attention_core.decoder import rms_norm
from tests.float_bounds import U, gamma, probable_gamma, relative_spread, stored_spread

REF = np.load(Path(__file__).parents[1] / "data" / "smollm2_reference.npz")
META = json.loads(str(REF["meta"]))
# Hugging Face's float32 run against the same run in float64, the largest distance per kind of number
# (scripts/make_model_reference.py's float32_error): the ceilings every model tolerance is made from.
HF_ERROR: dict[str, float] = META["float32_error"]
LOGPROB = stored_spread(HF_ERROR["logprob"])  # two evaluations of a next-token or lens log-probability
LOGIT_DIFF = stored_spread(HF_ERROR["logit_diff"])  # two evaluations of a logit difference, patched or not
SURPRISAL = stored_spread(HF_ERROR["surprisal"])  # of one token's -log p, and so of a loss (their mean)
DLA = stored_spread(HF_ERROR["dla"])  # of one part of a direct logit attribution
RESIDUAL = stored_spread(HF_ERROR["residual"])  # of an entry of a residual, after one layer or thirty


def attention_spread(expected: np.ndarray) -> np.ndarray:
    """Allowed distance between two float32 evaluations of softmax weights ``expected`` (or of means of them): a
    share of each weight, SPREAD x the largest relative error of Hugging Face's float32 weights."""
    return relative_spread(HF_ERROR["attention_relative"], expected)


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
def ld_spread() -> float:
    """Allowed distance between two float32 evaluations of a logit difference after up to 30 layers."""
    return LOGIT_DIFF


def output_head_bound(model: am.Model, x: np.ndarray) -> np.ndarray:
    """``(m, vocab)``: how far one float32 evaluation of ``model.logits(x)`` may be from exact, for float32 rows
    ``x (m, d_model)``: RMSNorm (a mean of d squares: ``gamma_d``, then sqrt, add, divide, multiply: 4 U) scales
    the row, and each logit is a dot product of length d (``probable_gamma(d)``), both times ``|h| @ |W_U|.T``."""
    d = x.shape[-1]
    h = rms_norm(np.asarray(x, dtype=np.float64), model.weights.output_norm, model.config.eps)  # (m, d_model)
    norm_rel = gamma(d) / 2 + 4 * U  # the mean square's relative error halves through the square root
    magnitude = np.abs(h).astype(np.float32) @ np.abs(model.weights.output.T)  # sums of positive terms: float32
    return (norm_rel + probable_gamma(d)) * (1 + gamma(d)) * magnitude.astype(np.float64)  # (m, vocab)
