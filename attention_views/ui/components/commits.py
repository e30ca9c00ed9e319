"""The data editors' edits taken into a rerun at once (``commits.js`` beside this file): the editors store an edit
without a rerun (``on_change="ignore"``, so Streamlit's 150 ms wait before an editor's rerun is skipped) and this
component, mounted on every run, asks for the rerun as soon as a grid commits. The edits the last run's editors hold
are folded in at the next run's start (:func:`attention_views.ui.editors.fold_last_runs_edits`), whatever page it
draws."""

from __future__ import annotations

import functools
from pathlib import Path

import streamlit as st

from attention_views.ui.components.served import served
from attention_views.ui.streamlit_compat import GRID_CELL_EDITOR

KEY = "lab_commits"  # its element is hidden (frame.py's CSS): it draws nothing


@functools.cache
def _component():  # registered once a process
    return st.components.v2.component("attention_lab.commits", js=served(Path(__file__).parent / "commits.js"))


def commits(keys: list[str]) -> None:
    """Mount the component for the editors ``keys`` (this run's, drawn with ``on_change="ignore"``): its trigger
    reruns the app, carrying every editor's stored edits."""
    _component()(key=KEY, data={"keys": keys, "cellEditor": GRID_CELL_EDITOR}, on_commit_change=_rerun_only)


def _rerun_only() -> None:
    """The trigger's rerun does the work: each editor's edits are folded in by the run."""
