"""Run by test_lifecycle.py in a separate pytest session (not collected on its own).

It starts PostgreSQL and Ontop through the normal fixtures, records their PIDs, and then
fails on purpose while both are running: the outer test checks that the session still
stopped them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from navqa.runtime.ontop import OntopProcess
from navqa.runtime.postgres import PrivateCluster, recreate_database


def test_start_services_then_fail(tmp_path, navqa_config, pg, ontop_install) -> None:
    from test_bad_input import GOOD_OBDA, _spec

    recreate_database(pg, "navqa_tiny")
    with pg.connect("navqa_tiny", autocommit=True) as c:
        c.execute("CREATE TABLE thing (id int primary key, name text)")
    spec = _spec(tmp_path, pg, "navqa_tiny", GOOD_OBDA)
    proc = OntopProcess(ontop_install, spec, log_path=tmp_path / "inner.log").start(timeout=120)
    pids = {"jvm": proc.pid, "postmaster": PrivateCluster(navqa_config).postmaster_pid()}
    Path(os.environ["NAVQA_LIFECYCLE_PIDS"]).write_text(json.dumps(pids))
    raise AssertionError("deliberate failure while Ontop and PostgreSQL are running")
