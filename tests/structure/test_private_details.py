"""A private detail of Streamlit or plotly lives in one module per library (attention_views/ui/streamlit_compat.py,
attention_views/pure/figures/plotly_private.py), each with its test: no other code names one."""

from __future__ import annotations

import ast
import re

from tests.import_statements import ROOT

HOMES = {ROOT / "attention_views/ui/streamlit_compat.py", ROOT / "attention_views/pure/figures/plotly_private.py"}
# the private names the app relies on: glide-data-grid's and KaTeX's classes, Streamlit's pages-folder flag,
# plotly.py's _validate and plotly.js's classes and private state
PRIVATE = re.compile(
    r"dvn-|gdg-|#portal|katex|PagesManager|_validate|js-plotly-plot|main-svg|modebar|\.hm\b|_full[A-Z]"
)
COMMENT = re.compile(r"/\*.*?\*/|(^|\s)//[^\n]*", re.DOTALL)  # a script's or a stylesheet's
CODE = [
    p
    for p in [*(ROOT / "attention_views").rglob("*"), *(ROOT / "pages").glob("*.py"), ROOT / "app.py"]
    if p.suffix in {".py", ".js", ".css"} and "vendor" not in p.parts and p not in HOMES
]


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants in ``tree`` (prose may name a detail; code may not)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            found.add(id(body[0].value))
    return found


def named(path) -> set[str]:
    """The private names in ``path``'s code: a script's or stylesheet's (not its comments); a Python module's strings
    (not its docstrings), names, attributes and keyword arguments."""
    text = path.read_text(encoding="utf-8")
    if path.suffix != ".py":
        return set(PRIVATE.findall(COMMENT.sub(" ", text)))
    tree = ast.parse(text)
    docs, words = _docstrings(tree), []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            words.append(node.value)
        elif isinstance(node, ast.Name):
            words.append(node.id)
        elif isinstance(node, ast.Attribute):
            words.append(node.attr)
        elif isinstance(node, ast.keyword) and node.arg:
            words.append(node.arg)
        elif isinstance(node, ast.alias):
            words.append(node.name)
    return {m for w in words for m in PRIVATE.findall(w)}


def test_no_code_but_the_two_homes_names_a_private_detail():
    assert len(CODE) > 40 and any(p.suffix == ".js" for p in CODE)  # the sources were found
    found = {str(p.relative_to(ROOT)): names for p in CODE if (names := named(p))}
    assert not found, f"a private detail of Streamlit or plotly outside its module: {found}"


def test_the_homes_name_them_and_the_check_sees_one(tmp_path):
    assert all(named(home) for home in HOMES)
    script = tmp_path / "page.py"
    script.write_text(
        '"""Mentions .katex-display in prose."""\nimport plotly.graph_objects as go\n\n'
        'go.Heatmap(z=[[1]], _validate=False)\nCSS = ".dvn-scroller { }"\n'
    )
    assert named(script) == {"_validate", "dvn-"}
    sheet = tmp_path / "plane.css"
    sheet.write_text("/* .katex */ .js-plotly-plot .modebar { display: none; } // .hm in a comment")
    assert named(sheet) == {"js-plotly-plot", "modebar"}
