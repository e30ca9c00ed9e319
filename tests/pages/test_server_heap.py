"""The app's process freezes what is alive after its first run, once (frame.settle_heap): the libraries' objects
stay out of the garbage collector's full collections, and no later run freezes a session's objects."""

import gc

from apptest_pages import assert_clean, open_page


def test_the_first_run_freezes_the_objects_alive_then_and_no_later_run_does():
    at = open_page("playground", "emma-friend")  # this process's first run, or a run after an earlier test's
    assert_clean(at)
    frozen = gc.get_freeze_count()
    assert frozen > 10_000  # streamlit, pandas, plotly and numpy's objects at least
    at.slider(key="playground_temperature").set_value(1.7).run()
    open_page("multi_head", "apple-orange")
    # frozen objects still die when no reference is left; a second freeze would take in thousands of this run's
    assert gc.get_freeze_count() <= frozen
