"""The catalogue of scenarios: the five seed notebooks' (:mod:`attention_core.scenarios`) in their order, then
the modern-attention lessons' (:mod:`attention_core.lessons`). Ids are stable: links to the app use them."""

from __future__ import annotations

from attention_core.errors import AttentionInputError
from attention_core.lessons import LESSONS
from attention_core.scenarios import SEEDS, Scenario

_BUILDERS = {**SEEDS, **LESSONS}


def list_scenarios() -> list[str]:
    """The scenario ids: the seed notebooks' in their order, then the lessons' (SEED_SCENARIOS are the first)."""
    return list(_BUILDERS)


def load_scenario(scenario_id: str) -> Scenario:
    """A fresh Scenario for ``scenario_id`` (arrays are new copies on every call)."""
    if scenario_id not in _BUILDERS:
        raise AttentionInputError(f"unknown scenario {scenario_id!r}; choose one of {', '.join(_BUILDERS)}")
    return _BUILDERS[scenario_id]()
