"""No page or view ends a run with ``st.stop()``: it would skip the frame's work after the page (the address bar's
link, the live class's section, the table editors' commits component). A page that has nothing more to show calls
``frame.end_page()``, after which that work is still done."""

from __future__ import annotations

import ast

from tests.import_statements import ROOT

SOURCES = sorted([*(ROOT / "pages").glob("*.py"), ROOT / "app.py", *(ROOT / "attention_views").rglob("*.py")])


def stops(path) -> list[int]:
    """The lines of ``path`` that call ``<anything>.stop()`` on Streamlit's module (``st.stop()``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "stop"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id in {"st", "streamlit"}
    ]


def test_no_page_or_view_calls_st_stop():
    assert len(SOURCES) > 20  # the pages and the view layer were found
    found = {str(p.relative_to(ROOT)): lines for p in SOURCES if (lines := stops(p))}
    assert not found, f"st.stop() ends the whole run; call frame.end_page() instead: {found}"


def test_the_check_sees_a_stop(tmp_path):
    page = tmp_path / "page.py"
    page.write_text("import streamlit as st\nif True:\n    st.stop()\nst.write('x')\n", encoding="utf-8")
    assert stops(page) == [3]
