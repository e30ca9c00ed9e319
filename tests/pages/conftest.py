"""Fixtures of the page tests; the helpers are in apptest_pages.py."""

from __future__ import annotations

import pytest
from apptest_pages import SCENARIOS


@pytest.fixture(params=SCENARIOS)
def scenario(request) -> str:
    return request.param
