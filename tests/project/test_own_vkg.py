"""A VKG of the user's own (not one of the bundled four), end to end through the CLI.

The test owns the database: it starts a throwaway PostgreSQL cluster with initdb/pg_ctl
itself (not navqa's private cluster), loads the library VKG with psycopg, and then runs
every command as a subprocess through ``-t/-m/-p``, through ``--endpoint``, and through a
``navqa.toml`` written by ``navqa init``. After every command the database must be
unchanged: same row counts and same schema checksum.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .library_vkg import NAVQA, UserDb, navqa

pytestmark = [pytest.mark.postgres, pytest.mark.ontop]


def test_every_command_on_a_vkg_of_ones_own(vkg_dir: Path, user_db: UserDb) -> None:
    files = ("-t", "library.ttl", "-m", "library.obda")
    run = lambda *a, ok=(0,): navqa(*a, cwd=vkg_dir, db=user_db, ok=ok)  # noqa: E731

    # offline commands need only -t/-m
    audit = run("audit", *files)
    assert re.search(r"recommendedBy", audit), audit
    lint = run("lint", *files, "q.rq", ok=(1,))
    assert "unmapped-term" in lint and "recommendedBy" in lint
    index = run("index", *files, "--stats")
    assert "index" in index and "|E0| (mapped)" in index

    # Ontop on the user's own properties
    ask = run("ask", *files, "-p", "library.properties", "--llm", "none",
              "Which books are held at Harbour Street Library?")
    assert "The Silent Lighthouse" in ask or "Kindred" in ask, ask
    sparql = run("sparql", *files, "-p", "library.properties", "--csv",
                 "PREFIX : <http://example.org/library#> SELECT (COUNT(*) AS ?n) "
                 "WHERE { ?l a :Loan }")
    assert "20" in sparql

    # --endpoint: an Ontop navqa did not start for this command
    up = subprocess.Popen([NAVQA, "endpoint", "up", *files, "-p", "library.properties"],
                          cwd=vkg_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, start_new_session=True)
    try:
        url = None
        assert up.stdout is not None
        deadline = time.monotonic() + 600
        while url is None and time.monotonic() < deadline:
            line = up.stdout.readline()
            if not line:
                break
            m = re.search(r"(http://127\.0\.0\.1:\d+/sparql)", line)
            url = m.group(1) if m else None
        assert url, "navqa endpoint up printed no URL"
        ask = run("ask", "--endpoint", url, *files, "--llm", "none",
                  "Which books are held at Harbour Street Library?")
        assert "The Silent Lighthouse" in ask or "Kindred" in ask, ask
        live = run("audit", "--endpoint", url, *files, "--live", "--format", "json")
        assert "recommendedBy" in live
    finally:
        os.killpg(up.pid, signal.SIGTERM)
        up.wait(60)
        if up.stdout is not None:
            up.stdout.close()

    # navqa init, then no flags at all
    init = run("init")
    assert "library.properties" in init and (vkg_dir / "navqa.toml").is_file()
    assert user_db.password not in (vkg_dir / "navqa.toml").read_text()
    run("init", ok=(2,))  # refuses to overwrite
    assert "recommendedBy" in run("audit")
    assert "recommendedBy" in run("lint", "q.rq", ok=(1,))
    ask = run("ask", "--llm", "none", "Which books are held at Harbour Street Library?")
    assert "The Silent Lighthouse" in ask or "Kindred" in ask, ask


def test_a_properties_file_missing_a_key_is_named(vkg_dir: Path, user_db: UserDb) -> None:
    bad = vkg_dir / "bad.properties"
    bad.write_text(f"jdbc.url=jdbc:postgresql://127.0.0.1:{user_db.port}/library\n")
    out = navqa("audit", "-t", "library.ttl", "-m", "library.obda", "-p", "bad.properties",
                cwd=vkg_dir, db=user_db, ok=(2,))
    assert "jdbc.user" in out and "bad.properties" in out and "Traceback" not in out
