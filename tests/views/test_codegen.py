"""Reproduce in NumPy: the generated script, run in a fresh interpreter, prints the app's own weights."""

import ast
import json
import os
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

import attention_core as ac
from attention_views.pure.codegen import array_literal, numpy_script
from attention_views.pure.lab import new_lab
from attention_views.pure.single_head import run_single_head
from attention_views.pure.tables import TableError

ROOT = Path(__file__).resolve().parents[2]


def run_script(script: str, tmp_path: Path) -> tuple[dict, str]:
    """Run the script as a user would (cwd and PYTHONPATH = the repository root); its JSON line and stdout."""
    path = tmp_path / "reproduce.py"
    path.write_text(script, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, str(path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stdout


def assert_reproduces(lab: dict, tmp_path: Path) -> dict:
    out, _ = run_script(numpy_script(lab), tmp_path)
    head = run_single_head(lab)
    np.testing.assert_allclose(np.array(out["weights"]), head.result.weights, rtol=0, atol=1e-12)
    assert out["query_tokens"] == list(head.query_tokens)
    assert out["key_tokens"] == list(head.key_tokens)
    return out


@pytest.mark.parametrize("scenario", ac.list_scenarios())
def test_every_scenario_reproduces_its_weights(scenario, tmp_path):
    assert_reproduces(new_lab(scenario), tmp_path)


def edited_lab() -> dict:
    """emma-friend after edits an exact-float copy must keep: 0.1 + 0.2, a tiny value, a negative one."""
    lab = new_lab("emma-friend")
    q = lab.tables["Q"]
    q.iat[8, 1], q.iat[0, 2], q.iat[3, 4] = 0.1 + 0.2, 1e-7, -2.718281828459045
    lab.tables["K"].iat[2, 3] = 1 / 3
    lab = replace(lab, mask="causal", scale_mode="custom", scale_custom=0.37, temperature=0.7)
    return lab


def test_an_edited_lab_reproduces_exactly(tmp_path):
    lab = edited_lab()
    out = assert_reproduces(lab, tmp_path)
    pristine = run_single_head(new_lab("emma-friend")).result.weights
    assert not np.allclose(out["weights"], pristine), "the edits must show in the script's weights"
    assert np.all(np.triu(np.array(out["weights"]), 1) == 0), "the causal mask is in the script"


def test_an_edited_projection_lab_reproduces_exactly(tmp_path):
    lab = new_lab("random-seed42")
    lab.tables["W_k"].iat[1, 2] = -3.25
    lab.tables["X"].iat[2, 1] = 0.1 + 0.7
    lab = replace(lab, scale_mode="none", temperature=2.5)
    assert_reproduces(lab, tmp_path)


@pytest.mark.parametrize(
    ("kind", "field", "value"),
    [
        ("padding", "mask_pad", 2),
        ("window", "mask_window", 2),
        ("prefix", "mask_prefix", 3),
        ("custom", None, None),
    ],
)
def test_every_mask_kind_reproduces(kind, field, value, tmp_path):
    lab = new_lab("apple-orange")
    lab.mask = kind
    if field:
        setattr(lab, field, value)
    else:  # a painted mask: causal with a few cells toggled
        painted = ac.causal_mask(10)
        painted[0, 5], painted[7, 2] = True, False
        lab.mask_custom = painted
    out = assert_reproduces(lab, tmp_path)
    assert np.any(np.array(out["weights"]) == 0), "the mask blocks some keys"


def test_script_prints_a_readable_table_and_imports_only_numpy_and_the_core(tmp_path):
    script = numpy_script(new_lab("mammal-query"))
    _, stdout = run_script(script, tmp_path)
    assert "mammal" in stdout and "reptile" in stdout
    imported = {
        alias.name
        for node in ast.walk(ast.parse(script))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported == {"json", "numpy", "attention_core"}
    assert "precision=6" in script and "suppress=True" in script


def test_array_literal_round_trips_every_float_exactly():
    M = np.array([[0.1 + 0.2, 1e-300, -0.0], [123456789.123456789, np.pi, -1 / 3]])
    scope = {"np": np}
    exec(array_literal("M", M), scope)  # our own generated literal
    assert scope["M"].tobytes() == M.tobytes()


def test_a_bad_cell_raises_the_tables_error():
    lab = new_lab("emma-friend")
    lab.tables["K"].iat[1, 2] = "abc"
    with pytest.raises(TableError, match="K row 1"):
        numpy_script(lab)


def _panel_app(scenario: str, bad: bool) -> None:
    import streamlit as st

    from attention_views.pure.lab import new_lab
    from attention_views.ui.reproduce import reproduce_panel

    lab = new_lab(scenario)
    if bad:
        lab.tables["Q"].iat[0, 1] = None
    reproduce_panel(lab)
    st.session_state["lab_for_test"] = lab


def test_reproduce_panel_shows_the_script_and_a_download():
    at = AppTest.from_function(_panel_app, args=("emma-friend", False), default_timeout=30).run()
    assert not at.exception
    assert at.code[0].value == numpy_script(new_lab("emma-friend")).rstrip("\n")  # st.code drops the final newline
    assert at.get("download_button")[0].proto.id.endswith("sidebar_reproduce_download")


def test_reproduce_panel_explains_a_bad_cell():
    at = AppTest.from_function(_panel_app, args=("emma-friend", True), default_timeout=30).run()
    assert not at.exception
    assert not at.code
    assert "Q row 0" in at.error[0].value and "is empty" in at.error[0].value
