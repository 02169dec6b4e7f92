"""No JVM or postgres started by a test session outlives it, even when a test fails."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.ontop, pytest.mark.postgres, pytest.mark.slow]

HERE = Path(__file__).parent


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead for our purpose; /proc tells.
    try:
        state = Path(f"/proc/{pid}/stat").read_text().split()[2]
    except OSError:
        return False
    return state != "Z"


def test_failed_session_leaves_no_jvm_or_postgres(tmp_path, navqa_config) -> None:
    if navqa_config.runtime.pg_dsn is not None:
        pytest.skip("NAVQA_PG_DSN is set: the session uses an external server it does not own")
    pids_file = tmp_path / "pids.json"
    env = dict(os.environ, NAVQA_LIFECYCLE_PIDS=str(pids_file),
               NAVQA_PG_CLUSTER="lifecycle-test", PYTHONPATH=str(HERE))
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         "--rootdir", str(HERE.parent.parent), str(HERE / "lifecycle_inner.py")],
        env=env, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "deliberate failure" in proc.stdout
    pids = json.loads(pids_file.read_text())
    assert pids["jvm"] and pids["postmaster"], pids
    assert not _alive(pids["jvm"]), "the Ontop JVM outlived the test session"
    assert not _alive(pids["postmaster"]), "PostgreSQL outlived the test session"
