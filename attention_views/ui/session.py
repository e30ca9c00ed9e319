"""Where a browser session's state lives: ``st.session_state[KEY]`` holds one
:class:`~attention_views.pure.lab.Session`.

:func:`current` is the only read of it for pages and the helpers they call.
"""

from __future__ import annotations

import streamlit as st

from attention_views.pure.lab import Session
from attention_views.ui.streamlit_compat import run_through_app

KEY = "session"


def current() -> Session:
    """This browser session's state (app.py creates it before any page runs).

    For pages and the helpers they call; widget callbacks get the objects they change as arguments
    (``args=``), because a callback runs before the script, where run_through_app may not rerun.
    """
    run_through_app(started=KEY in st.session_state)  # a direct link's first run may skip app.py: see there
    return st.session_state[KEY]
