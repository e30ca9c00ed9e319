"""The one place the app relies on Streamlit's internals (Streamlit 1.67, pinned in requirements.txt): its pages-folder
mode, a page run again inside a fragment, and the class names of the libraries its frontend draws with
(glide-data-grid for st.dataframe and st.data_editor, KaTeX for formulas), which the app's CSS and scripts select.

``tests/views/test_streamlit_compat.py`` fails when Streamlit changes what this relies on.
"""

from __future__ import annotations

import streamlit as st
from streamlit.navigation.page import StreamlitPage
from streamlit.runtime.pages_manager import PagesManager

# glide-data-grid's class names (Streamlit's frontend bundle, no documented API)
GRID_SCROLLER = ".dvn-scroller"  # a table's scrolling element, inside its [data-testid="stDataFrame"]
GRID_CELL_EDITOR = "#portal .gdg-clip-region"  # the editor the grid opens over a cell, in the page's portal
# KaTeX's (what st.latex and st.markdown's $$...$$ draw)
FORMULA = ".katex"  # a formula
FORMULA_BLOCK = ".katex-display"  # a formula set as a display block


def run_through_app(started: bool) -> None:
    """Make a direct link's first run go through app.py's st.navigation.

    A server whose app has a folder named ``pages/`` starts in Streamlit's old multipage mode
    (``PagesManager.uses_pages_directory``, read in ``script_runner.ScriptRunner._run_script``): until some
    session has run app.py, which calls st.navigation, a direct link such as /playground runs the page
    file alone (``script_runner._mpa_v1``), without app.py's page config, sidebar and link. st.navigation
    switches that mode off by clearing the flag; we clear it and rerun, so the run goes through app.py
    with the same URL. No public API or option does this: renaming ``pages/`` would, at the cost of
    every link and import that names the folder.

    ``started``: whether app.py has set up this session. The flag is read when a run starts, so when
    a class opens direct links at once a run may have started in the old mode just before another
    session cleared the flag: such a run finds the flag clear but no session, and reruns too (seen
    in a 200-student load test as a KeyError for the session).
    """
    if PagesManager.uses_pages_directory or not started:
        PagesManager.uses_pages_directory = False
        st.rerun()


def run_page_again(page: StreamlitPage) -> None:
    """Run ``page`` (st.navigation's) in a rerun of the fragment that ran it in the whole run.

    ``StreamlitPage.run`` runs once per run of the entry file (``_can_be_called``, cleared by its first call), and a
    fragment's rerun calls the fragment with the whole run's arguments, this page among them. No public API runs a
    page's file in a fragment: the page is made runnable again, as st.navigation's page is at every whole run.
    """
    page._can_be_called = True
    page.run()
