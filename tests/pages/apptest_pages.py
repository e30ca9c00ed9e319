"""Helpers for running pages headless with Streamlit's AppTest (a module of its own, imported by name: a test file
that imported ``conftest`` got whichever conftest.py pytest had imported last, tests/e2e's when both ran)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
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


def link_state(at: AppTest) -> str:
    """The view's ``?state=`` token, as the address bar holds it after a run (AppTest keeps a list or a string)."""
    token = at.query_params["state"]
    return token[0] if isinstance(token, list) else token


def reopen(at: AppTest, page: str, scenario: str | None = None) -> AppTest:
    """A new session opened by ``at``'s link on ``pages/<page>.py`` (with ``?scenario=`` when given), run."""
    other = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    other.switch_page(f"pages/{page}.py")
    if scenario is not None:
        other.query_params["scenario"] = scenario
    other.query_params["state"] = link_state(at)
    return other.run()


def assert_clean(at: AppTest) -> None:
    """No exception element and no traceback text anywhere on the page."""
    assert not at.exception, [e.value for e in at.exception]
    texts = [m.value for m in at.markdown] + [e.value for e in at.error]
    assert not any("Traceback" in t for t in texts)


def plotly_figures(at: AppTest) -> list[dict]:
    """The plotly figures on the page (st.plotly_chart's and those drawn in place by ui/components/figure.py), as
    the JSON dicts Streamlit sends to the browser, each with the title the
    page shows above it (``widgets.chart`` writes it as page text, ``**title**``) back in ``layout.title.text``."""
    import json
    import re

    from attention_views.pure.formats import WORD_JOINER

    figures, before = [], None
    for node in _in_order(at.main):
        spec = None
        if node.type == "plotly_chart":
            spec = node.proto.spec
        elif node.type == "bidi_component" and node.proto.component_name == "attention_lab.figure":  # in place
            spec = json.loads(node.proto.json)["spec"]
        if spec is not None:
            fig = json.loads(spec)
            titled = before is not None and before.startswith("**") and before.endswith("**")
            title = re.sub(r"\\(.)", r"\1", before[2:-2]).replace(WORD_JOINER, "") if titled else ""
            fig["layout"].setdefault("title", {})["text"] = title
            figures.append(fig)
        before = node.value if node.type == "markdown" else None
    return figures


def nodes(node):
    """Every block and element under an AppTest node, depth first (``at._tree``: the main area and the sidebar)."""
    for child in getattr(node, "children", {}).values():
        yield child
        yield from nodes(child)


def _in_order(node):
    """The elements under an AppTest block, in page order."""
    children = getattr(node, "children", None)
    if children is None:
        yield node
        return
    for k in sorted(children):
        yield from _in_order(children[k])


def heatmap_z(figure: dict) -> np.ndarray:
    """The z matrix of the first heatmap trace of a figure (a gap is NaN)."""
    return sent_array(next(t for t in figure["data"] if t.get("type") == "heatmap")["z"])


def sent_array(value: object) -> np.ndarray:
    """A figure's data as sent (z, x, y...): plotly writes NumPy arrays as base64 {"dtype", "bdata", "shape"}."""
    if isinstance(value, dict):
        import base64

        raw = np.frombuffer(base64.b64decode(value["bdata"]), dtype=np.dtype(value["dtype"]).newbyteorder("<"))
        shape = [int(s) for s in str(value["shape"]).split(",")] if "shape" in value else [-1]
        return raw.reshape(shape).astype(float)
    if value and isinstance(value[0], list):
        return np.array([[np.nan if v is None else v for v in row] for row in value], dtype=float)
    return np.array([np.nan if v is None else v for v in value], dtype=float)


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
