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


def _wait_state(cache: Path, name: str, proc: subprocess.Popen, timeout: float = 300) -> dict:
    path = cache / "endpoints" / f"{name}.json"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.is_file():
            st = json.loads(path.read_text())
            if st["pid"] == proc.pid:
                return st
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
        assert [s["url"] for s in json.loads(status.stdout) if s["name"] == "demo"] == [st["url"]]
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
    assert not (cache / "endpoints" / "demo.json").exists()
    from navqa.runtime.postgres import PrivateCluster

    pm = PrivateCluster(navqa_config, "cli-test").postmaster_pid()
    assert pm is None or not _alive(pm), "Ctrl-C left PostgreSQL running"


def test_endpoint_down_stops_a_running_endpoint(cli_env, navqa_config) -> None:
    cache = navqa_config.runtime.cache_dir
    proc = subprocess.Popen(NAVQA + ["endpoint", "up", "--vkg", "demo"], env=cli_env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        st = _wait_state(cache, "demo", proc)
        down = subprocess.run(NAVQA + ["endpoint", "down", "--vkg", "demo"], env=cli_env,
                              capture_output=True, text=True, timeout=120)
        assert down.returncode == 0, down.stderr
        assert "stopped demo" in down.stdout
        proc.wait(timeout=60)
    finally:
        _cleanup(proc, navqa_config)
    assert not _alive(st["ontop_pid"])


def test_sparql_refuses_update_and_unknown_dataset(cli_env) -> None:
    upd = subprocess.run(NAVQA + ["sparql", "--vkg", "demo", "DELETE WHERE { ?s ?p ?o }"],
                         env=cli_env, capture_output=True, text=True, timeout=120)
    assert upd.returncode == 1
    assert "UPDATE is never sent" in upd.stderr
    assert "Traceback" not in upd.stderr
    bad = subprocess.run(NAVQA + ["sparql", "--vkg", "nope", "SELECT * {}"], env=cli_env,
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1
    assert "unknown dataset 'nope'" in bad.stderr and "demo" in bad.stderr
