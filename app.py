"""Attention Lab: `streamlit run app.py`. Page setup, navigation, and the frame around every page."""

import streamlit as st

from attention_views.pure.navigation import NAVIGATION
from attention_views.ui import frame

st.set_page_config(page_title="Attention Lab", page_icon="🔍", layout="wide")
PAGES = "app_pages"  # this session's navigation (session state)


def pages() -> dict[str, list[st.Page]]:
    """The navigation's pages by section. Each url_path is its file's name: a mismatch shows a false "Page not
    found" (Streamlit #8860, #9992); the default page (home) has none."""
    return {
        section: [
            st.Page(
                f"pages/{name}.py",
                title=title,
                icon=f":material/{icon}:",
                **({"default": True} if name == "home" else {"url_path": name}),
            )
            for name, title, icon in entries
        ]
        for section, entries in NAVIGATION.items()
    }


# The pages are this session's own, made on its first run, never on every rerun; st.navigation marks the one it
# returns as the one to run, so they are never shared between sessions.
if PAGES not in st.session_state:
    st.session_state[PAGES] = pages()
frame.run(st.navigation(st.session_state[PAGES], expanded=True))  # session and sidebar, the page, the view's link
