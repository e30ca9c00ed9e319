"""Attention Lab: `streamlit run app.py`. Page setup, navigation, and the frame around every page."""

import streamlit as st

from attention_views.ui import frame

st.set_page_config(page_title="Attention Lab", page_icon="🔍", layout="wide")
PAGES = "app_pages"  # this session's navigation (session state)


NAVIGATION = {  # section -> (file in pages/, title, Material icon); home is the default page
    "Lectures": (
        ("home", "Home", "home"),
        ("playground", "Playground", "grid_on"),
        ("multi_head", "Multi-head", "view_module"),
        ("step_by_step", "Step by step", "calculate"),
        ("scaling", "Scaling", "show_chart"),
        ("similarity", "Similarity", "explore"),
        ("exercises", "Exercises", "school"),
    ),
    "Modern attention": (
        ("positions", "Positions", "pin_drop"),
        ("kv_cache", "KV cache", "stacks"),
        ("online_softmax", "Online softmax", "view_column"),
        ("sinks", "Attention sinks", "anchor"),
        ("cross_attention", "Cross-attention", "translate"),
        ("real_model", "Real model", "memory"),
        ("learning", "A head learns", "model_training"),
    ),
}


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
