"""What attention_views.ui.streamlit_compat relies on inside Streamlit: this fails when Streamlit changes it."""

import inspect
import sys
from pathlib import Path

import streamlit
import streamlit.runtime.scriptrunner.script_runner as script_runner
from streamlit.commands import navigation
from streamlit.runtime.pages_manager import PagesManager

ROOT = Path(__file__).resolve().parents[2]
FRONTEND = Path(streamlit.__file__).parent / "static"  # Streamlit's frontend bundle


def frontend_has(text: str) -> bool:
    return any(text in f.read_text(encoding="utf-8", errors="replace") for f in FRONTEND.rglob("*.[jc]s*"))


def test_a_pages_folder_switches_streamlit_to_the_old_multipage_mode():
    assert (ROOT / "pages").is_dir()  # the folder that starts the old mode, beside app.py
    assert hasattr(PagesManager, "uses_pages_directory")
    runner = inspect.getsource(script_runner.ScriptRunner)
    assert "PagesManager.uses_pages_directory" in runner and "_mpa_v1(" in runner
    assert '/ "pages"' in inspect.getsource(script_runner._mpa_v1)


def test_st_navigation_clears_the_flag_as_run_through_app_does():
    assert "PagesManager.uses_pages_directory = False" in inspect.getsource(navigation)


def test_a_run_that_started_in_the_old_mode_reruns_even_after_another_session_cleared_the_flag(monkeypatch):
    import pytest
    from streamlit.runtime.scriptrunner_utils.exceptions import RerunException

    from attention_views.ui import streamlit_compat

    reruns = []
    monkeypatch.setattr(
        streamlit_compat.st, "rerun", lambda: reruns.append(1) or (_ for _ in ()).throw(RerunException(None))
    )
    monkeypatch.setattr(PagesManager, "uses_pages_directory", False)  # another session's app.py cleared it
    with pytest.raises(RerunException):
        streamlit_compat.run_through_app(started=False)  # this run has no session: it skipped app.py
    streamlit_compat.run_through_app(started=True)  # an ordinary run through app.py: nothing to do
    assert reruns == [1]


def test_the_frontend_draws_the_class_names_the_app_selects():
    from attention_views.ui import streamlit_compat as compat

    assert len(list(FRONTEND.rglob("*.js"))) > 20  # the bundle was found
    portal, clip = compat.GRID_CELL_EDITOR.split()
    assert portal == "#portal" and frontend_has('<div id="portal" />')  # glide-data-grid's editor lives there
    for name in (clip, compat.GRID_SCROLLER, compat.FORMULA, compat.FORMULA_BLOCK):
        assert frontend_has(name[1:]), f"Streamlit's frontend no longer draws {name}"
    assert not frontend_has("gdg-no-such-class-anywhere")  # the check can fail


def test_a_page_runs_once_a_run_unless_made_runnable_again(monkeypatch):
    """frame.page_part reruns the page in its fragment: StreamlitPage.run refuses a second call until
    ``_can_be_called`` is set again (run_page_again)."""
    import pytest
    from streamlit.errors import StreamlitAPIException
    from streamlit.navigation.page import StreamlitPage

    from attention_views.ui import streamlit_compat

    ran = []
    page = StreamlitPage(lambda: ran.append(1), title="t", url_path="t")
    monkeypatch.setattr(sys.modules[StreamlitPage.__module__], "get_script_run_ctx", lambda: None)  # run: no script
    page._can_be_called = True  # as st.navigation leaves the page it returns
    page.run()
    with pytest.raises(StreamlitAPIException, match="can be called once"):
        page.run()
    streamlit_compat.run_page_again(page)
    assert "_can_be_called = False" in inspect.getsource(StreamlitPage.run)
