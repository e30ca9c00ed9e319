"""Helpers for running pages headless with Streamlit's AppTest."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import attention_core as ac

ROOT = Path(__file__).resolve().parents[2]
PAGES = ("home", "playground", "multi_head", "step_by_step", "scaling", "similarity")
SCENARIOS = tuple(ac.list_scenarios())


def open_page(page: str, scenario: str | None = None) -> AppTest:
    """Run app.py on ``pages/<page>.py``, as a direct link does, optionally opened on ``?scenario=``."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.switch_page(f"pages/{page}.py")
    if scenario is not None:
        at.query_params["scenario"] = scenario
    at.run()
    return at


def assert_clean(at: AppTest) -> None:
    """No exception element and no traceback text anywhere on the page."""
    assert not at.exception, [e.value for e in at.exception]
    texts = [m.value for m in at.markdown] + [e.value for e in at.error]
    assert not any("Traceback" in t for t in texts)


def plotly_figures(at: AppTest) -> list[dict]:
    """The plotly figures on the page, as the JSON dicts Streamlit sends to the browser."""
    import json

    return [json.loads(el.proto.spec) for el in at.get("plotly_chart")]


def heatmap_z(figure: dict) -> np.ndarray:
    """The z matrix of the first heatmap trace of a figure (None -> NaN)."""
    trace = next(t for t in figure["data"] if t.get("type") == "heatmap")
    z = trace["z"]
    if isinstance(z, dict):  # plotly may ship typed arrays as {"dtype", "bdata", "shape"}
        import base64

        raw = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
        return raw.reshape([int(s) for s in str(z["shape"]).split(",")]) if "shape" in z else raw
    return np.array([[np.nan if v is None else v for v in row] for row in z], dtype=float)


def editor_key(at: AppTest, prefix: str, name: str) -> str:
    """The current session-state key of a page's data editor for table ``name``."""
    return f"{prefix}_editor_{name}_{at.session_state['session'].lab.rev}"


def edit_cells(at: AppTest, key: str, edits: dict[int, dict[str, object]], added=(), deleted=()) -> AppTest:
    """Simulate a data-editor edit (AppTest cannot type into one): seed its delta and rerun."""
    at.session_state[key] = {"edited_rows": edits, "added_rows": list(added), "deleted_rows": list(deleted)}
    return at.run()


def open_tab(at: AppTest, key: str, label: str) -> AppTest:
    """Select tab ``label`` of the lazy tabs ``key`` (only the open tab is drawn) and rerun, as a click does."""
    at.session_state[key] = label
    return at.run()


@pytest.fixture(params=SCENARIOS)
def scenario(request) -> str:
    return request.param
