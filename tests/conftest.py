"""The suite's summary: how long the browser tests took, added up (they run on every worker under pytest-xdist;
the controller sees every test's report, so these hooks live here, not in tests/e2e/)."""

from __future__ import annotations

import os
import tempfile

import pytest

_E2E_SECONDS: list[float] = []  # setup + call + teardown of every browser test


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "e2e" in report.keywords:
        _E2E_SECONDS.append(report.duration)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Under pytest-xdist's work stealing (``addopts``), each worker starts on its share of the browser tests and
    ends on short ones: the collection becomes one part per worker, each a contiguous share of the browser tests
    (their modules stay together) then short tests, as long as the share xdist hands that worker at the start. A
    worker out of work steals from the end of another's (short tests), so none waits long at the end for another's
    last test; about half the suite's test time is in 140 browser tests."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    browser = [item for item in items if "e2e" in item.keywords]
    short = [item for item in items if "e2e" not in item.keywords]
    ordered = []
    for part in range(workers):
        mine = browser[len(browser) * part // workers : len(browser) * (part + 1) // workers]
        size = len(items) * (part + 1) // workers - len(items) * part // workers  # xdist's share for this worker
        ordered += mine + short[: size - len(mine)]
        del short[: size - len(mine)]
    items[:] = ordered + short


def pytest_terminal_summary(terminalreporter) -> None:
    if _E2E_SECONDS:
        terminalreporter.write_line(
            f"browser tests (e2e): {sum(_E2E_SECONDS):.0f}s of test time in all (summed over the workers), "
            "server starts included"
        )


def pytest_configure(config: pytest.Config) -> None:
    """The class store of every app the suite runs (AppTest in this process, servers it starts) lies in a temporary
    folder of this run, never in the checkout's ./data: a fuzzed "Start a class" makes rooms. Tests that need a
    store of their own set LAB_DATA_DIR themselves."""
    if "LAB_DATA_DIR" not in os.environ:
        os.environ["LAB_DATA_DIR"] = tempfile.mkdtemp(prefix="attention-lab-test-data-")
