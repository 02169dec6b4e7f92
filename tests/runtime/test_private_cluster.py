"""The private PostgreSQL cluster survives the loss of its cache (and so of its password).

Under root the cluster lives in ``/var/tmp``, outside the cache. Deleting the cache used to
leave a cluster whose password nobody knew: every later connection failed with "password
authentication failed". Deleting the password file here reproduces that state (as root the
cluster stays in ``/var/tmp``; otherwise it is the same cluster with its password gone).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from navqa.config import NavqaConfig
from navqa.runtime.postgres import PrivateCluster

pytestmark = pytest.mark.postgres


def _tables(conn) -> set[str]:
    with conn.connect("postgres") as c:
        return {r[0] for r in c.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'").fetchall()}


def test_a_cluster_whose_password_was_lost_is_recreated(
        navqa_config: NavqaConfig, tmp_path: Path) -> None:
    if navqa_config.runtime.pg_dsn is not None:
        pytest.skip("NAVQA_PG_DSN is set: this run uses an existing server, no private cluster")
    cfg = navqa_config.with_overrides(runtime={"cache_dir": str(tmp_path / "cache"),
                                               "pg_cluster": "orphan-test"})
    first = PrivateCluster(cfg)
    try:
        conn = first.start()
        with conn.connect("postgres", autocommit=True) as c:
            c.execute("CREATE TABLE left_behind (x int)")
        assert _tables(conn) == {"left_behind"}

        # the cache goes, the running cluster stays
        first.password_file.unlink()
        second = PrivateCluster(cfg)
        assert second.data_dir == first.data_dir
        conn2 = second.start()
        assert _tables(conn2) == set()  # a fresh cluster, reachable with the new password
        assert second.password_file.is_file()
        second.stop()
        assert second.postmaster_pid() is None
    finally:
        first.force_stop()
        shutil.rmtree(first.base, ignore_errors=True)


def test_the_last_live_user_stops_the_cluster_and_dead_users_do_not_count(
        navqa_config: NavqaConfig, tmp_path: Path) -> None:
    if navqa_config.runtime.pg_dsn is not None:
        pytest.skip("NAVQA_PG_DSN is set: this run uses an existing server, no private cluster")
    cfg = navqa_config.with_overrides(runtime={"cache_dir": str(tmp_path / "cache"),
                                               "pg_cluster": "lease-test"})
    first, second = PrivateCluster(cfg), PrivateCluster(cfg)
    try:
        conn = first.start()
        assert second.start().port == conn.port  # the running cluster is shared
        first.stop()
        assert second.postmaster_pid() is not None, "stopped under its other user"
        with conn.connect("postgres") as c:
            assert c.execute("SELECT 1").fetchone() == (1,)

        # a process that took a lease and died without dropping it (SIGKILL) does not count
        script = ("import os, sys; from navqa.config import load_config; "
                  "from navqa.runtime.postgres import PrivateCluster; "
                  "PrivateCluster(load_config(), 'lease-test').start(); os._exit(0)")
        env = dict(os.environ, NAVQA_CACHE_DIR=str(tmp_path / "cache"))
        env.pop("NAVQA_PG_DSN", None)
        subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=120)
        assert len(list(second.users_dir.iterdir())) == 2  # its lease is still on disk
        assert second.live_users() == [os.getpid()]
        second.stop()
        assert second.postmaster_pid() is None, "the last live user left it running"
    finally:
        first.force_stop()
        shutil.rmtree(first.base, ignore_errors=True)
