"""The class store this app process talks to: one per process, shared by its sessions (the rooms live in it)."""

from __future__ import annotations

import streamlit as st

from attention_rooms.store import Store, open_store


@st.cache_resource(on_release=lambda released: released.disconnect())
def store() -> Store:
    """The store named by ``LAB_STORE`` (Redis) or SQLite in ``LAB_DATA_DIR``; opened once per process, its connection
    closed when the cache releases it (one still holding it opens another on its next call)."""
    return open_store()
