"""The pure part of the views (attention_views/pure) never imports Streamlit, nor the Streamlit part (ui): checked
in every module's source (any import statement, at any depth) and by importing every module in a fresh
interpreter."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.import_statements import ROOT, module_name, named_modules

PURE = ROOT / "attention_views" / "pure"
SOURCES = sorted(PURE.rglob("*.py"))


def forbidden(name: str) -> bool:
    return name.split(".")[0] == "streamlit" or name == "attention_views.ui" or name.startswith("attention_views.ui.")


def test_the_walk_finds_every_pure_module():
    names = {module_name(p) for p in SOURCES}
    assert {"attention_views.pure.figures.base", "attention_views.pure.links", "attention_views.pure.lab"} <= names
    assert len(SOURCES) >= 19, [p.name for p in SOURCES]


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PURE)))
def test_no_pure_module_names_streamlit_or_the_ui_in_an_import(path):
    assert not {name for name in named_modules(path) if forbidden(name)}


def test_the_source_check_sees_an_import_inside_a_function(tmp_path):
    planted = tmp_path / "m.py"
    planted.write_text("def f():\n    from streamlit import session_state\n    from attention_views.ui import frame\n")
    assert {name for name in named_modules(planted) if forbidden(name)} == {
        "streamlit",
        "streamlit.session_state",
        "attention_views.ui",
        "attention_views.ui.frame",
    }


PROBE = """
import importlib, json, sys
sys.path.insert(0, {root!r})
loaded = {{}}
for name in {names!r}:
    importlib.import_module(name)
    loaded[name] = sorted(m for m in sys.modules if m.split(".")[0] == "streamlit")
print(json.dumps(loaded))
"""


def test_importing_every_pure_module_in_a_fresh_interpreter_loads_no_streamlit():
    names = [module_name(p) for p in SOURCES]
    # -I: isolated (no PYTHONPATH, no user site, no cwd on sys.path), so only the probe decides what loads
    probe = PROBE.format(root=str(ROOT), names=names)
    done = subprocess.run([sys.executable, "-I", "-c", probe], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert list(loaded) == names, "every pure module was imported"
    assert {name: mods for name, mods in loaded.items() if mods} == {}, "streamlit loaded after importing these"
