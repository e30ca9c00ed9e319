"""The "Reproduce in NumPy" panel: the current single head as a script, shown and offered as a download."""

from __future__ import annotations

import streamlit as st

import attention_core as ac
from attention_views.pure.codegen import numpy_script, script_file_name
from attention_views.pure.formats import message
from attention_views.pure.lab import Lab
from attention_views.pure.tables import TableError


def reproduce_panel(lab: Lab) -> None:
    """Draw the lab's NumPy script (st.code) and its download button; an invalid input shows why instead."""
    try:
        script = numpy_script(lab)
    except (TableError, ac.AttentionInputError) as err:
        st.error(f"No script while the input is invalid: {message(err)}", icon="⚠️")
        return
    st.caption("A short Python script that rebuilds this head with attention_core and prints its weights.")
    st.download_button(
        "Download the script (.py)",
        script,
        file_name=script_file_name(lab),
        mime="text/x-python",
        key="sidebar_reproduce_download",
        icon=":material/download:",
        width="stretch",
    )
    st.code(script, language="python")
