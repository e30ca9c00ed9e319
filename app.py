"""Attention Lab: `streamlit run app.py`. Page setup, navigation, and the frame around every page."""

import streamlit as st

from attention_views import frame

st.set_page_config(page_title="Attention Lab", page_icon="🔍", layout="wide")
PAGES = "app_pages"  # this session's navigation (session state)


def pages() -> dict[str, list[st.Page]]:
    """The navigation, by section. url_path equals each file's name: a mismatch shows a false "Page not found"
    (Streamlit #8860, #9992)."""
    return {
        "Lectures": [
            st.Page("pages/home.py", title="Home", icon=":material/home:", default=True),
            st.Page("pages/playground.py", title="Playground", icon=":material/grid_on:", url_path="playground"),
            st.Page("pages/multi_head.py", title="Multi-head", icon=":material/view_module:", url_path="multi_head"),
            st.Page(
                "pages/step_by_step.py", title="Step by step", icon=":material/calculate:", url_path="step_by_step"
            ),
            st.Page("pages/scaling.py", title="Scaling", icon=":material/show_chart:", url_path="scaling"),
            st.Page("pages/similarity.py", title="Similarity", icon=":material/explore:", url_path="similarity"),
            st.Page("pages/exercises.py", title="Exercises", icon=":material/school:", url_path="exercises"),
        ],
        "Modern attention": [
            st.Page("pages/positions.py", title="Positions", icon=":material/pin_drop:", url_path="positions"),
            st.Page("pages/kv_cache.py", title="KV cache", icon=":material/stacks:", url_path="kv_cache"),
            st.Page(
                "pages/online_softmax.py",
                title="Online softmax",
                icon=":material/view_column:",
                url_path="online_softmax",
            ),
            st.Page("pages/sinks.py", title="Attention sinks", icon=":material/anchor:", url_path="sinks"),
            st.Page(
                "pages/cross_attention.py",
                title="Cross-attention",
                icon=":material/translate:",
                url_path="cross_attention",
            ),
            st.Page("pages/real_model.py", title="Real model", icon=":material/memory:", url_path="real_model"),
            st.Page("pages/learning.py", title="A head learns", icon=":material/model_training:", url_path="learning"),
        ],
    }


# The pages are this session's own, made on its first run (14 st.Page cost about 1.5 ms of every rerun's CPU);
# st.navigation marks the one it returns as the one to run, so they are never shared between sessions.
if PAGES not in st.session_state:
    st.session_state[PAGES] = pages()
frame.run(st.navigation(st.session_state[PAGES], expanded=True))  # session and sidebar, the page, the view's link
