"""The catalogue of scenarios: the five seed notebooks' (:mod:`attention_core.scenarios`) in their order, then
the modern-attention lessons' (:mod:`attention_core.lessons`). Ids are stable: links to the app use them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TypeVar

from attention_core.errors import AttentionInputError
from attention_core.lessons import LESSONS
from attention_core.scenarios import SEEDS, Scenario

T = TypeVar("T")
_BUILDERS = {**SEEDS, **LESSONS}


def list_scenarios() -> list[str]:
    """The scenario ids: the seed notebooks' in their order, then the lessons' (SEED_SCENARIOS are the first)."""
    return list(_BUILDERS)


def load_scenario(scenario_id: str) -> Scenario:
    """A fresh Scenario for ``scenario_id`` (arrays are new copies on every call)."""
    return build(_BUILDERS, "scenario", scenario_id)


def build(builders: Mapping[str, Callable[[], T]], kind: str, name: str) -> T:
    """``builders[name]()``; an unknown ``name`` is refused with the names there are (``kind``: what they name)."""
    if name not in builders:
        raise AttentionInputError(f"unknown {kind} {name!r}; choose one of {', '.join(builders)}")
    return builders[name]()
