"""attention_core is NumPy only: importing it must not pull in the app's heavy dependencies."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FORBIDDEN = ("streamlit", "pandas", "plotly", "torch")

PROBE = f"""
import json, sys
sys.path.insert(0, {str(ROOT)!r})
import attention_core
loaded = sorted(m for m in sys.modules if m.split(".")[0] in {FORBIDDEN!r})
print(json.dumps({{"core": attention_core.__file__, "numpy": "numpy" in sys.modules, "loaded": loaded}}))
"""


def test_importing_attention_core_in_a_fresh_interpreter_loads_no_ui_or_torch():
    # -I: isolated (no PYTHONPATH, no user site, no cwd on sys.path), so only the probe decides what loads
    done = subprocess.run([sys.executable, "-I", "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert Path(report["core"]).resolve().parent == ROOT / "attention_core"  # the package under test was imported
    assert report["numpy"]
    assert report["loaded"] == [], f"import attention_core also imported {report['loaded']}"


def test_the_probe_would_notice_a_forbidden_import():
    """The check above can fail: plant a fake 'plotly.io' module after the import and the probe reports it."""
    stand_in = PROBE.replace("import attention_core\n", "import attention_core\nsys.modules['plotly.io'] = sys\n")
    done = subprocess.run([sys.executable, "-I", "-c", stand_in], capture_output=True, text=True, timeout=120)
    assert json.loads(done.stdout.strip().splitlines()[-1])["loaded"] == ["plotly.io"]
