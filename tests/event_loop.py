"""``asyncio.run`` for tests that may share a pytest-xdist worker with the browser tests: Playwright's sync API keeps
an event loop running in the worker's main thread for the rest of its session (the ``browser`` fixture is
session-scoped), and ``asyncio.run`` refuses to start in a thread whose loop runs. A thread of its own has none."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(coroutine)`` in a thread of its own; its result, or its exception."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, coroutine).result()
