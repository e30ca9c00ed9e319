"""What attention_views.streamlit_compat relies on inside Streamlit: this fails when Streamlit changes it."""

import inspect
from pathlib import Path

import streamlit.runtime.scriptrunner.script_runner as script_runner
from streamlit.commands import navigation
from streamlit.runtime.pages_manager import PagesManager

ROOT = Path(__file__).resolve().parents[2]


def test_a_pages_folder_switches_streamlit_to_the_old_multipage_mode():
    assert (ROOT / "pages").is_dir()  # the folder that starts the old mode, beside app.py
    assert hasattr(PagesManager, "uses_pages_directory")
    runner = inspect.getsource(script_runner.ScriptRunner)
    assert "PagesManager.uses_pages_directory" in runner and "_mpa_v1(" in runner
    assert '/ "pages"' in inspect.getsource(script_runner._mpa_v1)


def test_st_navigation_clears_the_flag_as_run_through_app_does():
    assert "PagesManager.uses_pages_directory = False" in inspect.getsource(navigation)
