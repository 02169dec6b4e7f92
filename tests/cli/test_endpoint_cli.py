"""`navqa endpoint up/status/down` and `navqa sparql` as a user runs them (real processes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = [pytest.mark.ontop, pytest.mark.postgres, pytest.mark.slow]

NAVQA = [sys.executable, "-m", "navqa.cli"]
Q = ("PREFIX rail: <http://example.org/navqa/rail#> "
     "SELECT ?n WHERE { ?r a rail:Region ; rail:name ?n }")


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


@pytest.fixture
def cli_env(navqa_config) -> dict[str, str]:
    if navqa_config.runtime.pg_dsn is not None:
        pytest.skip("NAVQA_PG_DSN is set: these tests exercise navqa's private cluster")
    return dict(os.environ, NAVQA_PG_CLUSTER="cli-test", NAVQA_CACHE_DIR=str(
        navqa_config.runtime.cache_dir))


def _cleanup(proc: subprocess.Popen, navqa_config) -> None:
    """After a failure: kill the CLI and the private cluster it may have left behind."""
    if proc.poll() is None:
        proc.kill()
        proc.wait(30)
        from navqa.runtime.postgres import PrivateCluster

        PrivateCluster(navqa_config, "cli-test").force_stop()
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


def _recorded(cache: Path, name: str, pid: int) -> list[dict]:
    found = []
    for path in (cache / "endpoints").glob(f"{name}-*.json"):
        try:
            st = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if st["pid"] == pid:
            found.append(st)
    return found


def _wait_state(cache: Path, name: str, proc: subprocess.Popen, timeout: float = 300) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = _recorded(cache, name, proc.pid)
        if found:
            return found[0]
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else "exited"
        time.sleep(0.5)
    raise AssertionError("navqa endpoint up did not become ready")


def test_endpoint_up_serves_and_ctrl_c_stops_everything(cli_env, navqa_config) -> None:
    cache = navqa_config.runtime.cache_dir
    proc = subprocess.Popen(NAVQA + ["endpoint", "up", "--vkg", "demo"], env=cli_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        st = _wait_state(cache, "demo", proc)
        # status lists it; sparql reuses it and answers
        status = subprocess.run(NAVQA + ["endpoint", "status", "--json"], env=cli_env,
                                capture_output=True, text=True, timeout=120)
        # (other endpoints of the shared cache may be listed too)
        assert [s["url"] for s in json.loads(status.stdout) if s["pid"] == proc.pid] == [st["url"]]
        out = subprocess.run(NAVQA + ["sparql", "--vkg", "demo", "--json", Q], env=cli_env,
                             capture_output=True, text=True, timeout=300)
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert len(data["results"]["bindings"]) == 5
        assert "reusing the running endpoint" in out.stderr
        jvm = st["ontop_pid"]
        assert _alive(jvm)
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=60)
    finally:
        _cleanup(proc, navqa_config)
    assert not _alive(jvm), "Ctrl-C left the Ontop JVM running"
    assert not _recorded(cache, "demo", proc.pid)
    from navqa.runtime.postgres import PrivateCluster

    pm = PrivateCluster(navqa_config, "cli-test").postmaster_pid()
    assert pm is None or not _alive(pm), "Ctrl-C left PostgreSQL running"


def test_endpoint_down_stops_a_running_endpoint(cli_env, navqa_config) -> None:
    cache = navqa_config.runtime.cache_dir
    proc = subprocess.Popen(NAVQA + ["endpoint", "up", "--vkg", "demo"], env=cli_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        st = _wait_state(cache, "demo", proc)
        # --port too: the cache may hold other sessions' demo endpoints
        down = subprocess.run(NAVQA + ["endpoint", "down", "--vkg", "demo", "--port",
                                       str(st["port"])], env=cli_env,
                              capture_output=True, text=True, timeout=120)
        assert down.returncode == 0, down.stderr
        assert down.stdout.count("stopped demo") == 1, down.stdout
        proc.wait(timeout=60)
    finally:
        _cleanup(proc, navqa_config)
    assert not _alive(st["ontop_pid"])


def test_sparql_refuses_update_and_unknown_dataset(cli_env) -> None:
    upd = subprocess.run(NAVQA + ["sparql", "--vkg", "demo", "DELETE WHERE { ?s ?p ?o }"],
                         env=cli_env, capture_output=True, text=True, timeout=120)
    assert upd.returncode == 2  # a usage error: refused before anything starts
    assert "UPDATE is never sent" in upd.stderr
    assert "Traceback" not in upd.stderr
    bad = subprocess.run(NAVQA + ["sparql", "--vkg", "nope", "SELECT * {}"], env=cli_env,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert "unknown dataset 'nope'" in bad.stderr and "demo" in bad.stderr


def _up(env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen(NAVQA + ["endpoint", "up", "--vkg", "demo"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _navqa(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(NAVQA + list(args), env=env, capture_output=True, text=True,
                          timeout=300)


def _rows(out: subprocess.CompletedProcess[str]) -> int:
    assert out.returncode == 0, out.stderr
    return len(json.loads(out.stdout)["results"]["bindings"])


def test_a_second_endpoint_up_for_the_same_vkg_is_recorded_beside_the_first(
        cli_env, navqa_config) -> None:
    cache = navqa_config.runtime.cache_dir
    first = _up(cli_env)
    second = None
    try:
        st1 = _wait_state(cache, "demo", first)
        second = _up(cli_env)
        st2 = _wait_state(cache, "demo", second)
        assert st1["port"] != st2["port"]
        status = _navqa(cli_env, "endpoint", "status", "--json")
        listed = {s["pid"]: s["url"] for s in json.loads(status.stdout)}
        assert (listed.get(first.pid), listed.get(second.pid)) == (st1["url"], st2["url"])

        # down on one port stops that endpoint only, and PostgreSQL stays for the other
        down = _navqa(cli_env, "endpoint", "down", "--port", str(st1["port"]))
        assert down.returncode == 0, down.stderr
        assert f"stopped demo ({st1['url']})" in down.stdout
        first.wait(timeout=60)
        assert not _alive(st1["ontop_pid"])
        assert second.poll() is None
        out = _navqa(cli_env, "sparql", "--vkg", "demo", "--json", Q)
        assert _rows(out) == 5
        assert f"reusing the running endpoint {st2['url']}" in out.stderr

        down = _navqa(cli_env, "endpoint", "down", "--port", str(st2["port"]))
        assert f"stopped demo ({st2['url']})" in down.stdout
        second.wait(timeout=60)
    finally:
        _cleanup(first, navqa_config)
        if second is not None:
            _cleanup(second, navqa_config)
    from navqa.runtime.postgres import PrivateCluster

    pm = PrivateCluster(navqa_config, "cli-test").postmaster_pid()
    assert pm is None or not _alive(pm), "down left PostgreSQL running"


def test_navqa_pg_dsn_is_not_ignored_when_a_private_cluster_endpoint_is_up(
        cli_env, navqa_config) -> None:
    from navqa.runtime.postgres import PrivateCluster, database_marker

    cache = navqa_config.runtime.cache_dir
    other = PrivateCluster(navqa_config, "cli-test-dsn")  # stands for the user's own server
    proc = _up(cli_env)
    try:
        st = _wait_state(cache, "demo", proc)
        conn = other.start()
        env = dict(cli_env, NAVQA_PG_DSN=conn.conninfo("postgres"))
        out = _navqa(env, "sparql", "--vkg", "demo", "--json", Q)
        assert _rows(out) == 5
        assert "reusing" not in out.stderr
        assert database_marker(conn, "navqa_demo"), "the VKG was not loaded into NAVQA_PG_DSN"
        assert _navqa(cli_env, "endpoint", "down", "--port", str(st["port"])).returncode == 0
        proc.wait(timeout=60)
    finally:
        _cleanup(proc, navqa_config)
        other.force_stop()
    assert not _alive(st["ontop_pid"])


def test_postgres_stopped_under_a_running_endpoint_is_noticed_and_restarted(
        cli_env, navqa_config) -> None:
    from navqa.backends.sparql_http import HttpSparqlEndpoint
    from navqa.errors import EndpointUnreachableError
    from navqa.runtime.postgres import PrivateCluster

    cache = navqa_config.runtime.cache_dir
    cluster = PrivateCluster(navqa_config, "cli-test")
    proc = _up(cli_env)
    try:
        st = _wait_state(cache, "demo", proc)
        pm = cluster.postmaster_pid()
        assert pm is not None
        os.kill(pm, signal.SIGINT)  # PostgreSQL's fast shutdown, behind navqa's back
        for _ in range(120):
            if not _alive(pm):
                break
            time.sleep(0.25)

        status = _navqa(cli_env, "endpoint", "status", "--json")
        assert status.returncode == 1
        assert [s["database_reachable"] for s in json.loads(status.stdout)
                if s["pid"] == proc.pid] == [False]
        assert f"the database behind demo ({st['url']})" in status.stderr
        assert "is unreachable" in status.stderr

        with pytest.raises(EndpointUnreachableError) as ei:
            HttpSparqlEndpoint(st["url"], timeout=60).select(Q)
        msg = str(ei.value)
        assert msg.startswith("the database behind the endpoint is unreachable")
        # Ontop quotes whichever JDBC message it met first: the pooled connection being
        # terminated, or a new one refused. Exactly one of them, once (not the whole chain).
        causes = [f"Connection to 127.0.0.1:{st['db_port']} refused",
                  "terminating connection due to administrator command",
                  "This connection has been closed"]
        quoted = [c for c in causes if c in msg]
        assert len(quoted) == 1 and msg.count(quoted[0]) == 1, msg
        assert ei.value.hint and "navqa endpoint down" in ei.value.hint

        # the next command starts the cluster again on its port: the endpoint works again
        out = _navqa(cli_env, "sparql", "--vkg", "demo", "--json", Q)
        assert _rows(out) == 5
        assert f"reusing the running endpoint {st['url']}" in out.stderr
        status = _navqa(cli_env, "endpoint", "status", "--json")
        assert [s["database_reachable"] for s in json.loads(status.stdout)
                if s["pid"] == proc.pid] == [True]
        assert _navqa(cli_env, "endpoint", "down", "--port", str(st["port"])).returncode == 0
        proc.wait(timeout=60)
    finally:
        _cleanup(proc, navqa_config)
    assert not _alive(st["ontop_pid"])
