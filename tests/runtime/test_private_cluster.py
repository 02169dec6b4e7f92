"""The private PostgreSQL cluster survives the loss of its cache (and so of its password).

Under root the cluster lives in ``/var/tmp``, outside the cache. Deleting the cache used to
leave a cluster whose password nobody knew: every later connection failed with "password
authentication failed". Deleting the password file here reproduces that state (as root the
cluster stays in ``/var/tmp``; otherwise it is the same cluster with its password gone).
"""

from __future__ import annotations

import shutil
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
