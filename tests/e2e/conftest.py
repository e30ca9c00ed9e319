"""Real-browser fixtures: `streamlit run app.py` on a free loopback port, driven by Debian's Chromium.

No browser is ever downloaded: Playwright launches /usr/bin/chromium (`apt-get install chromium`).
If it is missing, every browser test fails with a message saying how to install it; none skips.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from streamlit_browser import new_context, screenshot

from deploy import devserver

REPO_ROOT = Path(__file__).resolve().parents[2]
OUTPUT = REPO_ROOT / "test-output"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",  # the machine has no network: no update or metrics calls
    "--disable-component-update",
    "--disable-sync",
    "--disable-quic",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def app_url() -> Iterator[str]:
    """Start `streamlit run app.py` from the repo root; yield its base URL once /_stcore/health says ok."""
    OUTPUT.mkdir(exist_ok=True)
    try:
        server = devserver.start(REPO_ROOT, log=OUTPUT / f"streamlit-e2e{_worker_suffix()}.log")
    except devserver.ServerError as err:
        pytest.fail(str(err), pytrace=False)
    try:
        yield server.url
    finally:
        devserver.stop_server(server)


def _worker_suffix() -> str:
    """ "-gw0", "-gw1", ... under pytest-xdist, where each worker starts its own server; "" without it."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    return f"-{worker}" if worker else ""


@pytest.fixture(scope="session")
def browser():
    """Debian's Chromium under Playwright; fails (never skips) when it is not installed."""
    if not CHROMIUM.exists():
        pytest.fail(
            f"The browser tests need Debian's Chromium at {CHROMIUM}, which is missing. Install it with "
            "`sudo apt-get install chromium` (Debian/Ubuntu); the tests never download a browser.",
            pytrace=False,
        )
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="session")
def context(browser, app_url):
    """One browser context per worker, on a 1280x720 viewport, for tests that only look (the layout tests): its
    tabs share the HTTP cache (the frontend's files load once), and each tab is a Streamlit session of its own."""
    context = new_context(browser, app_url)
    yield context
    context.close()


@pytest.fixture
def page(request, browser, app_url):
    """A new tab, a fresh Streamlit session, on a 1280x720 viewport: in a fresh browser context (nothing shared
    with other tests' tabs: the grid's typing and focus); in a module marked ``looks_only`` (it opens, looks and
    clicks, never types into a grid), in the worker's shared context, whose cache holds the frontend's files."""
    if request.node.get_closest_marker("looks_only"):
        tab = request.getfixturevalue("context").new_page()
        yield tab
        tab.close()
        return
    context = new_context(browser, app_url)
    yield context.new_page()
    context.close()


@pytest.fixture(scope="module")
def module_tab(browser, app_url):
    """One tab (one Streamlit session) that a module's tests share, each going on from where the last left it: for
    checks that a click inside the app repeats (a lesson's card, a scenario's pick), one page load, not one each."""
    context = new_context(browser, app_url)
    yield context.new_page()
    context.close()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """A failed browser test leaves a screenshot of its tab, test-output/screenshots/FAILED_<test>.png, taken
    before its fixtures close the tab; the report names the file."""
    report = yield
    args = getattr(item, "funcargs", {})
    tab = args.get("page") or args.get("module_tab")
    if report.when == "call" and report.failed and tab is not None and not tab.is_closed():
        name = "FAILED_" + "".join(c if c.isalnum() or c in "-_" else "_" for c in item.name)[:150]
        try:
            path = screenshot(tab, name)
        except Exception as err:  # the browser itself may be what failed
            report.sections.append(("screenshot", f"none taken: {err}"))
        else:
            report.sections.append(("screenshot", f"{path} (at {tab.url})"))
    return report
