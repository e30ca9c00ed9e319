"""The docker-compose topology on loopback, without Docker: N app replicas + nginx, sticky sessions.

    apt-get install -y nginx                      # Debian's package; nothing else is needed
    python deploy/run_local.py                    # 2 replicas behind http://127.0.0.1:8080 until Ctrl-C
    python deploy/run_local.py --replicas 3 --port 8090 --for 600
    python deploy/run_local.py --listen 0.0.0.0   # a class: students' phones reach http://<this machine>:8080
    python deploy/run_local.py --compare 1 2 -- --sessions 24 --think 0 --duration 60
        # for each replica count in turn: start the topology, run benchmarks/load_test.py through
        # nginx with the arguments after `--`, stop it; then print both tables and the speed-up

Every replica is `streamlit run app.py` on its own loopback port, with the same `server.cookieSecret`
(a fresh random one per start, passed in the environment, never on a command line) and no file
watcher. nginx runs in the foreground from a config generated from deploy/nginx.conf (see there why
the sticky key is a cookie nginx sets). Everything lives in a temporary run folder (config, logs,
pid), printed at the start and removed at the stop unless --keep-logs; every process started here
is stopped here, by its own process group.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gzip
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.util import find_spec
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NGINX_CONF = Path(__file__).resolve().parent / "nginx.conf"
# Streamlit's frontend (index.html, static/), found without importing Streamlit into this small process
STREAMLIT_STATIC = Path(find_spec("streamlit").submodule_search_locations[0]).resolve() / "static"
sys.path.insert(0, str(ROOT))  # run as a script from anywhere
sys.path.insert(0, str(Path(__file__).resolve().parent))  # devserver.py beside this file, also when imported

import devserver  # noqa: E402  (deploy/devserver.py, beside this file)
import icon_font  # noqa: E402

ROUTING = re.compile(r"(?ms)^    upstream attention_lab \{.*?(?=^    # replicas: end$)")  # nginx.conf's replicas


def replica_routing(addresses: list[str], params: str) -> str:
    """nginx.conf's part between ``# replicas: begin`` and ``end`` for the replicas at ``addresses`` (host:port, each
    port its own), each server line with ``params``: a new browser's upstream (``least_conn``), one upstream per
    replica (the others its backups), the cookie's replica number -> its upstream, the answering port -> number."""
    numbered = list(enumerate(addresses, 1))
    lines = ["upstream attention_lab {  # a browser with no replica yet: the one with the fewest open connections"]
    lines += ["    least_conn;", *(f"    server {a}{params};" for a in addresses), "    keepalive 32;", "}"]
    for n, a in numbered:
        backups = [f"    server {b}{params} backup;" for b in addresses if b != a]
        lines += [f"upstream attention_lab_{n} {{", f"    server {a}{params};", *backups, "    keepalive 16;", "}"]
    lines += ["map $cookie_lab_replica $lab_upstream {  # the browser's replica; any other cookie value is no replica"]
    lines += ["    default attention_lab;", *(f"    {n} attention_lab_{n};" for n, _ in numbered), "}"]
    lines += ["map $upstream_addr $lab_served {  # the replica that answered (the last one tried), by its port"]
    lines += ['    default "";', *(f"    ~:{a.rsplit(':', 1)[1]}$ {n};" for n, a in numbered), "}"]
    return "".join(f"    {line}\n" for line in lines)


def local_nginx_conf(
    template: str,
    port: int,
    replica_ports: list[int],
    run: Path,
    listen: str = "127.0.0.1",
    app_dir: Path = ROOT,
    frontend: Path = STREAMLIT_STATIC,
) -> str:
    """deploy/nginx.conf with loopback replicas, nginx on ``listen``:``port``, paths in ``run``, Streamlit's frontend
    files from ``frontend`` (a copy with gzipped files beside, :func:`compressed_frontend`), the class signal files
    and plotly.js from ``app_dir``'s static/; proxying as it is."""
    first = re.search(r"(?m)^        server app1:\d+([^;\n]*);\n", template)
    if first is None or not ROUTING.search(template):
        raise ValueError("deploy/nginx.conf has no `upstream attention_lab` with `server app1:PORT` to replace")
    routing = replica_routing([f"127.0.0.1:{p}" for p in replica_ports], first[1])  # the same parameters
    conf = ROUTING.sub(lambda _: routing, template, count=1)
    temp = "".join(f"    {kind}_temp_path {run}/{kind}_temp;\n" for kind in ("client_body", "proxy", "fastcgi"))
    temp += "".join(f"    {kind}_temp_path {run}/{kind}_temp;\n" for kind in ("uwsgi", "scgi"))
    swaps = {
        "pid /run/nginx.pid;": f"pid {run}/nginx.pid;",
        "error_log /var/log/nginx/error.log warn;": f"error_log {run}/error.log warn;",
        "access_log /var/log/nginx/access.log sticky;": f"access_log {run}/access.log sticky;\n{temp}",
        "        listen 80;": f"        listen {listen}:{port};",
        "root /usr/local/lib/python3.11/site-packages/streamlit/static;": f"root {frontend};",
        "alias /app/static/class/;": f"alias {app_dir.resolve() / 'static' / 'class'}/;",
        "alias /app/static/vendor/;": f"alias {app_dir.resolve() / 'static' / 'vendor'}/;",
        "alias /app/static/components/;": f"alias {app_dir.resolve() / 'static' / 'components'}/;",
    }
    for old, new in swaps.items():
        if old not in conf:
            raise ValueError(f"deploy/nginx.conf no longer has the line {old.strip()!r} that run_local rewrites")
        conf = conf.replace(old, new, 1)
    if os.geteuid() == 0:  # nginx started by root runs its workers as nobody, who may not read a Python
        # installed under /root (nor this 0700 run folder): keep them root, on loopback, on a development
        # machine. In the Docker image nginx runs as the unprivileged user and this line is not added.
        conf = "user root;\n" + conf
    return conf


@dataclass
class Topology:
    """The running processes of one start, and where to reach them."""

    url: str
    run: Path
    replicas: list[devserver.Server] = field(default_factory=list)
    nginx: subprocess.Popen | None = None

    @property
    def processes(self) -> list[subprocess.Popen]:
        return [r.process for r in self.replicas] + ([self.nginx] if self.nginx else [])

    @property
    def pids(self) -> list[int]:
        return [p.pid for p in self.processes]


def start_nginx(conf: str, run: Path) -> subprocess.Popen:
    """nginx in the foreground (so its pid is ours to stop), after `nginx -t` accepts the config."""
    nginx = shutil.which("nginx") or "/usr/sbin/nginx"
    if not Path(nginx).exists():
        raise SystemExit("nginx is not installed: apt-get install -y nginx")
    (run / "nginx.conf").write_text(conf)
    args = [nginx, "-p", str(run), "-c", str(run / "nginx.conf"), "-e", str(run / "error.log")]
    check = subprocess.run([*args, "-t", "-q"], capture_output=True, text=True)
    if check.returncode:
        raise SystemExit(f"nginx refused the generated config {run / 'nginx.conf'}:\n{check.stderr}")
    return subprocess.Popen([*args, "-g", "daemon off;"], start_new_session=True)


COMPRESSED = (".js", ".css", ".html", ".svg", ".json", ".map", ".txt")  # the frontend's text files


def compressed_frontend(run: Path, source: Path = STREAMLIT_STATIC) -> Path:
    """A copy of Streamlit's frontend files in ``run``, each text file with its gzip beside it (for nginx's
    ``gzip_static``: compressed once per start, never per request), and the icon font cut to the icons Streamlit
    and the app name (deploy/icon_font.py: 17 kB instead of 375 kB, under the font's own name)."""
    target = run / "frontend"
    shutil.copytree(source, target)
    icon_font.put_in(target)
    for path in target.rglob("*"):
        if path.suffix in COMPRESSED and path.is_file():
            path.with_name(path.name + ".gz").write_bytes(gzip.compress(path.read_bytes(), compresslevel=9, mtime=0))
    return target


@contextlib.contextmanager
def topology(
    replicas: int, port: int, app_dir: Path, keep_logs: bool = False, listen: str = "127.0.0.1"
) -> Iterator[Topology]:
    """Start N replicas and nginx (on ``listen``:``port``) in front of them; stop all of them on the way out."""
    run = Path(tempfile.mkdtemp(prefix="attention-lab-deploy-"))
    top = Topology(f"http://127.0.0.1:{port}", run)
    # The same secret on every replica (the one given, else a fresh one); never on a command line.
    secret = os.environ.get("STREAMLIT_SERVER_COOKIE_SECRET") or secrets.token_hex(32)
    env = {"STREAMLIT_SERVER_COOKIE_SECRET": secret}
    ports = [devserver.free_port() for _ in range(replicas)]
    try:
        for i, p in enumerate(ports):  # all start at once, then each is waited for
            top.replicas.append(devserver.launch(app_dir, p, env, log=run / f"replica{i + 1}.log"))
        for replica in top.replicas:
            replica.wait_healthy()
        conf = local_nginx_conf(NGINX_CONF.read_text(), port, ports, run, listen, app_dir, compressed_frontend(run))
        top.nginx = start_nginx(conf, run)
        devserver.wait_healthy(top.url, top.nginx)
        print(f"{replicas} replica(s) on ports {ports} behind nginx at {top.url} (run folder {run})", flush=True)
        yield top
    finally:
        for proc in reversed(top.processes):  # nginx first
            devserver.stop(proc, timeout=15)
        if not keep_logs:
            shutil.rmtree(run, ignore_errors=True)


def sticky_report(run: Path) -> str:
    """From nginx's access log: how many sticky keys (browsers' cookies) each replica served, and keys seen on two
    replicas (a browser's first request, with no cookie yet, is left out)."""
    upstreams: dict[str, set[str]] = {}
    for line in (run / "access.log").read_text().splitlines():
        up, key = re.search(r"up=(\S+) key=(\S+)$", line).groups()
        if up != "-" and key != "-":
            upstreams.setdefault(key, set()).add(up.split(", ")[-1])
    per_replica: dict[str, int] = {}
    for ups in upstreams.values():
        for up in ups:
            per_replica[up] = per_replica.get(up, 0) + 1
    split = sum(1 for ups in upstreams.values() if len(ups) > 1)
    return f"keys per replica {dict(sorted(per_replica.items()))}; keys seen on more than one replica: {split}"


def compare(counts: list[int], port: int, app_dir: Path, load_args: list[str], rounds: int, keep: bool) -> None:
    """The same load through nginx for each replica count (alternating, ``rounds`` times); print the speed-up."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import load_test

    results: dict[int, list[float]] = {n: [] for n in counts}
    for r in range(rounds):
        for n in counts:
            with topology(n, port, app_dir, keep) as top:
                label = f"{n} replica(s) behind nginx, round {r + 1}"
                args = load_test.parse_args([*load_args, "--url", top.url, "--label", label])
                args.server_pid = top.pids
                result = asyncio.run(load_test.run_load(args, args.server_pid))
                load_test.report(result, args.json)
                print(f"  sticky check               {sticky_report(top.run)}")
                results[n].append(result["throughput_per_s"])
    base = sum(results[counts[0]]) / rounds
    print("\nthroughput (interactions/s), mean of rounds:")
    for n in counts:
        mean = sum(results[n]) / rounds
        runs = ", ".join(f"{t:.2f}" for t in results[n])
        print(f"  {n} replica(s): {mean:.2f}  ({runs})  x{mean / base:.2f} of {counts[0]} replica(s)")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    own, load_args = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--replicas", type=int, default=2, help="app processes behind nginx (default 2)")
    p.add_argument("--port", type=int, default=8080, help="nginx's port (default 8080)")
    p.add_argument(
        "--listen",
        default="127.0.0.1",
        help="nginx's address: 127.0.0.1 (default) for this machine alone, 0.0.0.0 for a class on the network",
    )
    p.add_argument("--app-dir", type=Path, default=ROOT, help="folder of app.py (default: this repo)")
    p.add_argument("--for", dest="seconds", type=float, default=3600, help="serve this long, then stop (1 h)")
    p.add_argument("--compare", type=int, nargs="+", help="replica counts to load-test in turn, e.g. 1 2")
    p.add_argument("--keep-logs", action="store_true", help="keep the run folder (config, logs) after stopping")
    p.add_argument("--rounds", type=int, default=1, help="repeat the comparison, alternating (default 1)")
    args = p.parse_args(own)
    if args.compare:
        compare(args.compare, args.port, args.app_dir, load_args, args.rounds, args.keep_logs)
        return 0
    with (
        topology(args.replicas, args.port, args.app_dir, args.keep_logs, args.listen) as top,
        contextlib.suppress(KeyboardInterrupt),
    ):
        print(f"open {top.url}/playground; Ctrl-C stops (or after {args.seconds:.0f} s)", flush=True)
        end = time.monotonic() + args.seconds
        while time.monotonic() < end and all(p.poll() is None for p in top.processes):
            time.sleep(1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
