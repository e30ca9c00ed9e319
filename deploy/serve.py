"""The Docker image's entrypoint: one Streamlit process per core behind nginx, or one process on one core.

    python deploy/serve.py                          # what the image runs: 0.0.0.0:$PORT (default 8501)
    LAB_REPLICAS=1 python deploy/serve.py           # one process whatever the cores
    LAB_LISTEN=127.0.0.1 PORT=8090 python deploy/serve.py   # the container's recipe, here on loopback

- **One core** (or ``LAB_REPLICAS=1``): exec ``streamlit run app.py`` on ``LAB_LISTEN``:``PORT``, as
  the image always did; Streamlit is then PID 1 and answers ``docker stop`` itself.
- **More cores:** one replica per core (``LAB_REPLICAS=N`` overrides), each ``streamlit run app.py``
  on its own loopback port, and nginx on ``LAB_LISTEN``:``PORT`` in front with sticky sessions: the
  topology of deploy/run_local.py (deploy/nginx.conf, rewritten only for ports and paths), one
  ``server.cookieSecret`` for all (``STREAMLIT_SERVER_COOKIE_SECRET`` if set, else a fresh one).
  ``/_stcore/health`` answers through nginx, so the image's HEALTHCHECK is unchanged. SIGTERM (and
  SIGINT) stop nginx and every replica; if any of them exits, the rest are stopped and this exits 1,
  so the container's restart policy takes over.

The cores are the ones this process may run on and its cgroup's CPU quota allows (``docker run
--cpus=1`` sets a quota, not an affinity): the smaller of the two, rounded up.
"""

from __future__ import annotations

import math
import os
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "deploy"))

import run_local  # noqa: E402


def cgroup_cpu_limit(root: Path = Path("/sys/fs/cgroup")) -> float | None:
    """The CPU quota of this cgroup in cores (cgroup v2 ``cpu.max``, else v1 cfs), or None when unlimited."""
    with_v2 = root / "cpu.max"
    try:
        if with_v2.exists():
            quota, period = with_v2.read_text().split()[:2]
            return None if quota == "max" else int(quota) / int(period)
        quota = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        period = int((root / "cpu" / "cpu.cfs_period_us").read_text())
        return None if quota <= 0 else quota / period
    except (OSError, ValueError):
        return None


def usable_cores(affinity: int | None = None, limit: float | None = None) -> int:
    """Cores this process can use: its CPU affinity, capped by the cgroup quota (rounded up), at least 1."""
    affinity = len(os.sched_getaffinity(0)) if affinity is None else affinity
    return max(1, min(affinity, math.ceil(limit)) if limit else affinity)


def replicas_wanted(env: dict[str, str], cores: int) -> int:
    """``LAB_REPLICAS`` when set (a positive integer), else one per core."""
    value = env.get("LAB_REPLICAS", "").strip()
    if not value:
        return cores
    if not value.isdigit() or int(value) < 1:
        raise SystemExit(f"LAB_REPLICAS must be a positive integer, not {value!r}")
    return int(value)


def single_command(listen: str, port: int) -> list[str]:
    """One Streamlit process serving the world; .streamlit/config.toml holds the production settings."""
    return [
        sys.executable, "-m", "streamlit", "run", "app.py",
        f"--server.address={listen}", f"--server.port={port}", "--server.headless=true",
    ]  # fmt: skip


def serve_replicas(replicas: int, listen: str, port: int) -> int:
    """nginx on listen:port over N loopback replicas until a signal (0) or until one of them exits (1)."""

    def stop_on(signum: int, _frame: object) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGTERM, stop_on)  # PID 1 ignores SIGTERM without a handler
    signal.signal(signal.SIGINT, stop_on)
    try:
        with run_local.topology(replicas, port, ROOT, listen=listen) as top:
            print(f"serving {replicas} replicas behind nginx on {listen}:{port}", flush=True)
            while all(p.poll() is None for p in top.processes):
                time.sleep(1)
            gone = [p.args[0] if isinstance(p.args, list) else p.args for p in top.processes if p.poll() is not None]
            print(f"stopping: {gone} exited", file=sys.stderr, flush=True)
            return 1
    except KeyboardInterrupt:
        return 0


def main() -> int:
    listen, port = os.environ.get("LAB_LISTEN", "0.0.0.0"), int(os.environ.get("PORT", "8501"))
    replicas = replicas_wanted(dict(os.environ), usable_cores(limit=cgroup_cpu_limit()))
    os.chdir(ROOT)
    if replicas == 1:
        command = single_command(listen, port)
        os.execv(command[0], command)  # Streamlit becomes this process (PID 1 in the container)
    return serve_replicas(replicas, listen, port)


if __name__ == "__main__":
    sys.exit(main())
