"""Every page opened by its URL in a real browser: no exception, no false "Page not found", charts drawn."""

from __future__ import annotations

import pytest
from streamlit_browser import (
    PAGE_PATHS,
    app_pages,
    assert_clean,
    figures,
    heatmaps,
    open_page,
    screenshot,
    shape,
    wait_until,
)

import attention_core as ac
from attention_views.session import DEFAULT_SCENARIO

pytestmark = pytest.mark.e2e

_DEFAULT = ac.load_scenario(DEFAULT_SCENARIO)
N_Q, N_K = len(_DEFAULT.query_tokens), len(_DEFAULT.key_tokens)
# The token grid each page draws for the scenario a fresh session opens on.
TOKEN_GRID = {
    "/playground": (N_Q, N_K),  # attention weights: queries x keys
    "/multi_head": (N_Q, N_K),  # one weights grid per head
    "/similarity": (N_K, N_K),  # pairwise cosine of the token vectors
}


APP_PAGES = app_pages()


def test_app_has_the_documented_pages():
    assert set(PAGE_PATHS) <= {path for path, _ in APP_PAGES}, f"app.py's pages: {APP_PAGES}"


# Home last: on a fresh server the first direct link to a page is the one that can miss app.py's navigation.
@pytest.mark.parametrize("path", [path for path, _ in APP_PAGES if path != "/"] + ["/"])
def test_page_opens_directly(page, path):
    open_page(page, path)
    nav = wait_until(page, lambda: page.locator('[data-testid="stSidebarNav"] a').all_inner_texts(), "the page list")
    titles = [t.strip().splitlines()[-1] for t in nav]  # each link reads "<icon name>\n\n<title>"
    assert titles == [title for _, title in APP_PAGES], "the sidebar should list app.py's pages"
    if path != "/":
        wait_until(page, lambda: any(f["traces"] for f in figures(page)), f"a plotly chart with data on {path}")
    assert_clean(page)
    screenshot(page, path.strip("/") or "home")
    if path in TOKEN_GRID:  # the page may still be drawing its later charts: wait for the grid, then say what is there
        wait_until(
            page, lambda: TOKEN_GRID[path] in [shape(h["z"]) for h in heatmaps(page)], "the token grid", required=False
        )
        shapes = [shape(h["z"]) for h in heatmaps(page)]
        assert TOKEN_GRID[path] in shapes, f"{path}: no {TOKEN_GRID[path]} heatmap among {shapes}"
