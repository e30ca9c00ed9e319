"""Fixtures shared by the model tests: the model, read once per process, and its run on the default sentence."""

from __future__ import annotations

import pytest

import attention_models as am


@pytest.fixture(scope="session")
def model() -> am.Model:
    return am.load("smollm2-135m")


@pytest.fixture(scope="session")
def default_run(model):
    return model.run(am.DEFAULT_SENTENCE)
