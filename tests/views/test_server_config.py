"""The server settings the classroom figures depend on (.streamlit/config.toml, read by `streamlit run`)."""

import tomllib
from pathlib import Path

CONFIG = Path(__file__).resolve().parents[2] / ".streamlit" / "config.toml"


def test_no_full_garbage_collection_after_every_rerun():
    # Streamlit's default gc.collect(2) after each script run costs about 65 ms here, more than a whole
    # rerun (benchmarks/bench_app.py, "finish ms"); deploy/README.md's load figures assume it is off.
    assert tomllib.loads(CONFIG.read_text())["runner"]["postScriptGC"] is False

