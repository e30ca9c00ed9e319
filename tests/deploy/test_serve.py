"""deploy/serve.py, the Docker image's entrypoint: how many replicas it picks, and, run here on loopback
exactly as the container runs it (Debian's nginx, `apt-get install -y nginx`), that the health check
answers through nginx, every browser's requests (websocket included) stay on one replica, the class
spreads over both, nginx serves Streamlit's frontend files itself, and SIGTERM stops everything."""

import gzip
import itertools
import os
import re
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from benchmarks import load_test
from deploy import devserver, run_local, serve
from tests import event_loop

ROOT = Path(__file__).resolve().parents[2]
STATIC = run_local.STREAMLIT_STATIC


def test_cgroup_v2_quota_in_cores(tmp_path: Path):
    (tmp_path / "cpu.max").write_text("150000 100000\n")
    assert serve.cgroup_cpu_limit(tmp_path) == 1.5
    (tmp_path / "cpu.max").write_text("max 100000\n")
    assert serve.cgroup_cpu_limit(tmp_path) is None, "no quota"


def test_cgroup_v1_quota_in_cores(tmp_path: Path):
    (tmp_path / "cpu").mkdir()
    (tmp_path / "cpu" / "cpu.cfs_period_us").write_text("100000\n")
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("200000\n")
    assert serve.cgroup_cpu_limit(tmp_path) == 2.0
    (tmp_path / "cpu" / "cpu.cfs_quota_us").write_text("-1\n")
    assert serve.cgroup_cpu_limit(tmp_path) is None, "-1 is unlimited"
    assert serve.cgroup_cpu_limit(tmp_path / "absent") is None


def test_usable_cores_is_affinity_capped_by_the_quota():
    assert serve.usable_cores(affinity=4, limit=None) == 4
    assert serve.usable_cores(affinity=4, limit=1.0) == 1, "docker run --cpus=1 on a 4-core host"
    assert serve.usable_cores(affinity=4, limit=1.5) == 2, "a part core counts"
    assert serve.usable_cores(affinity=2, limit=8.0) == 2
    assert serve.usable_cores(affinity=1, limit=0.5) == 1


def test_one_replica_per_core_unless_lab_replicas_says_otherwise():
    assert serve.replicas_wanted({}, cores=2) == 2
    assert serve.replicas_wanted({}, cores=1) == 1
    assert serve.replicas_wanted({"LAB_REPLICAS": "1"}, cores=8) == 1
    assert serve.replicas_wanted({"LAB_REPLICAS": " 3 "}, cores=1) == 3
    for bad in ("0", "-1", "two"):
        with pytest.raises(SystemExit, match="LAB_REPLICAS"):
            serve.replicas_wanted({"LAB_REPLICAS": bad}, cores=2)


def test_single_process_command_listens_where_asked():
    command = serve.single_command("0.0.0.0", 7860)
    assert command[1:5] == ["-m", "streamlit", "run", "app.py"]
    assert "--server.address=0.0.0.0" in command and "--server.port=7860" in command


def upstreams_by_key(access_log: Path) -> dict[str, set[str]]:
    """nginx's sticky log (deploy/nginx.conf): sticky key -> the replicas that served it."""
    seen: dict[str, set[str]] = {}
    for line in access_log.read_text().splitlines():
        up, key = re.search(r"up=(\S+) key=(\S+)$", line).groups()
        seen.setdefault(key, set()).add(up)
    return seen


def run_folder(out: Path, within: float = 10) -> Path:
    """The run folder serve.py prints once nginx is up (its config and access log are there)."""
    deadline = time.monotonic() + within
    while not (found := re.search(r"run folder (\S+)\)", out.read_text())):
        assert time.monotonic() < deadline, f"serve.py never named its run folder:\n{out.read_text()}"
        time.sleep(0.2)
    return Path(found.group(1))


def logged_streams(access_log: Path, expected: int, within: float = 10) -> list[str]:
    """The websocket lines of nginx's log: nginx writes one when the proxied connection has closed on
    both sides, which may be a moment after the client's close returned, so wait for ``expected``."""
    deadline = time.monotonic() + within
    while True:
        lines = [line for line in access_log.read_text().splitlines() if "/_stcore/stream" in line]
        if len(lines) >= expected or time.monotonic() > deadline:
            return lines
        time.sleep(0.2)


async def open_tabs(url: str, n: int) -> list[dict[str, str]]:
    """n browser tabs: the page, the health check, host-config and the websocket, as load_test's client does."""
    cookies = []
    for _ in range(n):
        tab = load_test.Student(url, "playground", timeout=30)
        await tab.open()
        await tab.close()
        cookies.append(tab.cookies)
    return cookies


def test_two_replicas_behind_nginx_sticky_and_healthy(tmp_path: Path):
    port = devserver.free_port()
    env = os.environ | {"LAB_LISTEN": "127.0.0.1", "PORT": str(port), "LAB_REPLICAS": "2"}
    out = tmp_path / "serve.log"
    with out.open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, "deploy/serve.py"], cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    signal_file = ROOT / "static" / "class" / f"TEST{port}.json"
    try:
        devserver.wait_healthy(url, proc, timeout=120)  # the image's HEALTHCHECK asks this same URL
        run = run_folder(out)
        cookies = event_loop.run(open_tabs(url, 16))
        assert all("lab_replica" in c for c in cookies), "nginx hands every new browser its sticky cookie"
        stream = logged_streams(run / "access.log", 16)
        seen = upstreams_by_key(run / "access.log")
        for c in cookies:
            assert len(seen[c["lab_replica"]]) == 1, f"one browser's requests reached {seen[c['lab_replica']]}"
        assert len(stream) == 16, "every tab's websocket went through nginx"
        used = set().union(*(seen[c["lab_replica"]] for c in cookies))
        assert len(used) == 2, f"16 browsers all landed on {used}: the class is not spread"
        bundle = next(a for a in load_test.asset_paths((STATIC / "index.html").read_bytes()) if "js/index." in a)
        with urllib.request.urlopen(f"{url}/{bundle}", timeout=10) as response:
            kind, body = response.headers["Content-Type"], response.read()
        assert kind == "application/javascript", "module scripts run only when sent as JavaScript"
        assert body == (STATIC / bundle).read_bytes(), "the frontend file as Streamlit ships it"
        served = logged_lines(run / "access.log", f"GET /{bundle} ")
        assert served and all(" up=- " in line for line in served), f"nginx served it from disk: {served}"
        signal_file.write_text('{"version": 7}')  # a class's signal file, as a replica's watcher writes it
        with urllib.request.urlopen(f"{url}/app/static/class/{signal_file.name}", timeout=10) as response:
            cache, body = response.headers["Cache-Control"], response.read()
        assert body == b'{"version": 7}' and cache == "no-store", (body, cache)
        polled = logged_lines(run / "access.log", f"GET /app/static/class/{signal_file.name} ")
        assert polled and all(" up=- " in line for line in polled), f"nginx served the class signal: {polled}"
    finally:
        signal_file.unlink(missing_ok=True)
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
        code = proc.wait(30)
    assert code == 0, f"SIGTERM is a clean stop:\n{out.read_text()}"
    time.sleep(0.5)
    assert not devserver.healthy(url), "nothing answers after the stop"
    assert not run.exists(), "the run folder (config, logs) is removed"


def test_one_replica_is_streamlit_itself_without_nginx(tmp_path: Path):
    port = devserver.free_port()
    env = os.environ | {"LAB_LISTEN": "127.0.0.1", "PORT": str(port), "LAB_REPLICAS": "1"}
    with (tmp_path / "serve.log").open("w") as log:
        proc = subprocess.Popen(
            [sys.executable, str(ROOT / "deploy" / "serve.py")], cwd=tmp_path, env=env, stdout=log,
            stderr=subprocess.STDOUT, start_new_session=True,
        )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        devserver.wait_healthy(url, proc, timeout=120)
        command = Path(f"/proc/{proc.pid}/cmdline").read_bytes().split(b"\0")
        assert b"streamlit" in command and b"app.py" in command, f"serve.py became Streamlit (PID 1): {command}"
        assert load_test.process_tree(proc.pid) == [proc.pid], "no nginx, no other process"
    finally:
        proc.terminate()  # Streamlit's own SIGTERM handling
        code = proc.wait(30)
    assert code == 0 and not devserver.healthy(url)


def logged_lines(log: Path, needle: str, timeout: float = 10.0) -> list[str]:
    """The access-log lines holding ``needle``, waiting up to ``timeout`` s for nginx to write the first one."""
    deadline = time.monotonic() + timeout
    while True:
        lines = [line for line in log.read_text().splitlines() if needle in line]
        if lines or time.monotonic() > deadline:
            return lines
        time.sleep(0.1)


def answers(url: str) -> bool:
    """True when ``url`` answers 200."""
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status == 200
    except OSError:
        return False


def until_answered(target: str, within: float) -> float:
    """Seconds until ``target`` answered 200, asked every 0.05 s; fails after ``within`` seconds."""
    start = time.monotonic()
    while not answers(target):
        assert time.monotonic() - start < within, f"{target} did not answer within {within} s"
        time.sleep(0.05)
    return time.monotonic() - start


def stand_in(port: int, folder: Path) -> subprocess.Popen:
    """A plain HTTP server on loopback ``port`` serving ``folder``: a replica as nginx sees one."""
    return subprocess.Popen(
        [sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1", "--directory", str(folder)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip


def test_replicas_back_from_a_crash_take_requests_again_within_seconds(tmp_path: Path):
    """deploy/nginx.conf's upstream as run_local writes it, in front of two plain HTTP servers standing in for the
    replicas: both killed, nginx asked meanwhile (its 502s mark them failed), both started again on their ports.
    nginx must route to them soon after they answer (with fail_timeout=10s it refused for about 7 s more)."""
    ports, port = [devserver.free_port(), devserver.free_port()], devserver.free_port()
    (tmp_path / "www").mkdir()
    replicas = [stand_in(p, tmp_path / "www") for p in ports]
    conf = run_local.local_nginx_conf(run_local.NGINX_CONF.read_text(), port, ports, tmp_path)
    nginx = run_local.start_nginx(conf, tmp_path)
    url = f"http://127.0.0.1:{port}/"
    try:
        until_answered(url, 20)
        for r in replicas:
            r.kill()
            r.wait(10)
        down = time.monotonic() + 2
        while time.monotonic() < down:  # students retrying while the replicas are down
            assert not answers(url), "no replica runs, yet nginx answered 200"
            time.sleep(0.05)
        replicas = [stand_in(p, tmp_path / "www") for p in ports]
        for p in ports:
            until_answered(f"http://127.0.0.1:{p}/", 20)
        late = until_answered(url, 30)
        assert late < 3, f"nginx kept students out {late:.1f} s after both replicas answered again"
    finally:
        for r in replicas:
            r.kill()
        devserver.stop(nginx)


def test_nginx_spreads_new_browsers_evenly_and_keeps_each_on_the_replica_its_cookie_names(tmp_path: Path):
    """deploy/nginx.conf's routing as run_local writes it, in front of two plain HTTP servers standing in for the
    replicas: a browser with no cookie goes to the replica with fewer open connections and is handed the cookie
    naming the one that answered; a cookie keeps every request on its replica (on the other while it is down, with
    no new cookie); a cookie naming no replica is taken as none. The template's routing is the generator's."""
    template = run_local.NGINX_CONF.read_text()
    assert run_local.ROUTING.search(template)[0] == run_local.replica_routing(
        ["app1:8501", "app2:8502"], " max_fails=3 fail_timeout=1s"
    ), "nginx.conf's replicas part is what replica_routing writes for compose's two replicas"
    ports, port = [devserver.free_port(), devserver.free_port()], devserver.free_port()
    (tmp_path / "www").mkdir()
    replicas = [stand_in(p, tmp_path / "www") for p in ports]
    nginx = run_local.start_nginx(run_local.local_nginx_conf(template, port, ports, tmp_path), tmp_path)
    log = tmp_path / "access.log"

    asked = itertools.count()

    def get(cookie: str | None = None) -> tuple[str | None, str]:
        """(the lab_replica cookie handed out or None, the replica's port that answered, from nginx's log)."""
        path = f"/?request={next(asked)}"
        request = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
        if cookie is not None:
            request.add_header("Cookie", f"lab_replica={cookie}")
        with urllib.request.urlopen(request, timeout=5) as response:
            handed = re.search(r"lab_replica=(\w+)", response.headers.get("Set-Cookie") or "")
        line = logged_lines(log, f"GET {path} ", timeout=5)
        assert line, f"nginx logged no line for {path}"
        return (handed[1] if handed else None), re.search(r"up=(?:\S+, )?\S+:(\d+) ", line[0])[1]

    try:
        for p in [*ports, port]:
            until_answered(f"http://127.0.0.1:{p}/", 20)
        number = {str(p): str(n) for n, p in enumerate(ports, 1)}
        first = [get() for _ in range(10)]
        assert all(handed == number[up] for handed, up in first), (
            f"each cookie names the replica that answered: {first}"
        )
        counts = [sum(up == str(p) for _, up in first) for p in ports]
        assert abs(counts[0] - counts[1]) <= 1, f"ten new browsers, one after another, split {counts}"
        for n, p in enumerate(ports, 1):
            assert {get(str(n)) for _ in range(4)} == {(None, str(p))}, f"cookie {n} stays on port {p}, no new cookie"
        for forged in ("7", "x", "attention_lab_1"):
            handed, up = get(forged)
            assert handed == number[up], f"the cookie {forged!r} names no replica: a new one is handed out"
        replicas[1].kill()
        replicas[1].wait(10)
        assert [get("2") for _ in range(4)][-1] == (None, str(ports[0])), "replica 2 down: its browsers go to 1"
    finally:
        for r in replicas:
            r.kill()
        devserver.stop(nginx)


def test_nginx_sends_the_frontend_and_plotly_js_from_their_gzipped_copies_cached_for_a_year(tmp_path: Path):
    """The class set-up's bytes: Streamlit's frontend files (run_local's copy, each text file's .gz written once)
    and the app's plotly.js bundle (its .gz the app writes) go out gzipped, from the .gz file itself (a marker
    only the .gz holds comes back), with a year's caching; a browser that takes no gzip gets the plain file."""
    frontend = tmp_path / "streamlit-static"
    (frontend / "static" / "js").mkdir(parents=True)
    (frontend / "static" / "js" / "main.abc123.js").write_text("console.log('plain');\n" * 200)
    app = tmp_path / "app"
    (app / "static" / "vendor").mkdir(parents=True)
    (app / "static" / "vendor" / "plotly-x.min.js").write_text("var plain = 1;\n" * 200)
    (app / "static" / "components").mkdir()
    (app / "static" / "components" / "figure.abc.js").write_text("var plain = 2;\n" * 200)
    run = tmp_path / "run"
    run.mkdir()
    copied = run_local.compressed_frontend(run, frontend)
    marked = {  # each .gz made to differ from a fresh compression of its file: only gzip_static sends it
        copied / "static" / "js" / "main.abc123.js.gz": "console.log('from the gz');\n",
        app / "static" / "vendor" / "plotly-x.min.js.gz": "var gz = 1;\n",
        app / "static" / "components" / "figure.abc.js.gz": "var gz = 2;\n",
    }
    written = next(iter(marked))
    assert gzip.decompress(written.read_bytes()) == written.with_suffix("").read_bytes()  # compressed_frontend's
    for path, text in marked.items():
        path.write_bytes(gzip.compress(text.encode(), mtime=0))
    ports, port = [devserver.free_port()], devserver.free_port()
    (tmp_path / "www").mkdir()
    replica = stand_in(ports[0], tmp_path / "www")
    conf = run_local.local_nginx_conf(run_local.NGINX_CONF.read_text(), port, ports, run, app_dir=app, frontend=copied)
    nginx = run_local.start_nginx(conf, run)
    try:
        until_answered(f"http://127.0.0.1:{port}/", 20)
        for path, text in [
            ("/static/js/main.abc123.js", "from the gz"),
            ("/app/static/vendor/plotly-x.min.js", "gz"),
            ("/app/static/components/figure.abc.js", "gz = 2"),
        ]:
            request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", headers={"Accept-Encoding": "gzip"})
            with urllib.request.urlopen(request, timeout=5) as response:
                assert response.headers["Content-Encoding"] == "gzip", path
                assert (
                    "immutable" in response.headers["Cache-Control"] and "31536000" in response.headers["Cache-Control"]
                )
                assert text in gzip.decompress(response.read()).decode(), path
            with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as response:
                assert response.headers.get("Content-Encoding") is None and b"plain" in response.read(), path
    finally:
        replica.kill()
        devserver.stop(nginx)
