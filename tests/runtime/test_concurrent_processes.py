"""navqa processes started together on one machine share its private PostgreSQL safely.

Four ``navqa ask`` used to fail together when no endpoint was running: whichever process
had started the private cluster stopped it on exit, under the three others. Here they
really run at the same time, on a cluster of their own (the cache, with the Ontop jars
and the demo index, is shared with the session).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from navqa.config import NavqaConfig
from navqa.runtime.postgres import PrivateCluster

pytestmark = [pytest.mark.ontop, pytest.mark.postgres, pytest.mark.slow]

NAVQA = [sys.executable, "-m", "navqa.cli"]
QUESTION = "Which company currently operates the Aster Coast Line?"


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def test_four_asks_started_together_share_the_private_cluster(
        navqa_config: NavqaConfig) -> None:
    if navqa_config.runtime.pg_dsn is not None:
        pytest.skip("NAVQA_PG_DSN is set: these processes would not use a private cluster")
    name = f"{navqa_config.runtime.pg_cluster}-concurrent"
    cluster = PrivateCluster(navqa_config, name)
    cluster.force_stop()  # a leftover of an earlier, interrupted run
    env = dict(os.environ, NAVQA_PG_CLUSTER=name,
               NAVQA_CACHE_DIR=str(navqa_config.runtime.cache_dir))
    t0 = time.monotonic()
    procs = [subprocess.Popen(NAVQA + ["ask", "--vkg", "demo", "--llm", "none", "--json",
                                       QUESTION], env=env, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for _ in range(4)]
    try:
        outs = [p.communicate(timeout=900) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(30)
        seconds = time.monotonic() - t0
        print(f"four concurrent asks: {seconds:.0f}s wall")
    try:
        answers = []
        for p, (out, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0, err[-3000:]
            data = json.loads(out)
            assert data["error"] is None, data["error"]
            answers.append(sorted(map(str, data["result"]["results"]["bindings"])))
        assert answers[0], "the question has an answer on the demo VKG"
        assert answers == [answers[0]] * 4
        # the last one to leave stopped the cluster, and no lease is left behind
        pm = cluster.postmaster_pid()
        assert pm is None or not _alive(pm), "the last ask left PostgreSQL running"
        assert cluster.live_users() == []
    finally:
        cluster.force_stop()
        shutil.rmtree(cluster.base, ignore_errors=True)


_USER = """
import sys, time
from navqa.config import load_config
from navqa.runtime.postgres import PrivateCluster

cluster = PrivateCluster(load_config(), "race-test")
conn = cluster.start()
with conn.connect("postgres") as c:
    c.execute("SELECT 1")
time.sleep(float(sys.argv[1]))  # overlap with the others
with conn.connect("postgres") as c:  # still up: nobody stopped it under this process
    c.execute("SELECT 1")
cluster.stop()
"""


def test_processes_creating_a_cluster_together_run_initdb_once(
        navqa_config: NavqaConfig, tmp_path: Path) -> None:
    if navqa_config.runtime.pg_dsn is not None:
        pytest.skip("NAVQA_PG_DSN is set: this run uses an existing server, no private cluster")
    env = dict(os.environ, NAVQA_CACHE_DIR=str(tmp_path / "cache"))
    env.pop("NAVQA_PG_DSN", None)
    # the first to leave leaves at once, the others a little later
    procs = [subprocess.Popen([sys.executable, "-c", _USER, str(delay)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for delay in (0, 2, 2, 3)]
    outs = [p.communicate(timeout=600) for p in procs]
    cfg = navqa_config.with_overrides(runtime={"cache_dir": str(tmp_path / "cache")})
    cluster = PrivateCluster(cfg, "race-test")
    try:
        for p, (_out, err) in zip(procs, outs, strict=True):
            assert p.returncode == 0, err[-3000:]
        assert cluster.postmaster_pid() is None, "the last user left PostgreSQL running"
        assert cluster.live_users() == []
    finally:
        cluster.force_stop()
        shutil.rmtree(cluster.base, ignore_errors=True)
