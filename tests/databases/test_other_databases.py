"""The demo VKG on MariaDB and on DuckDB gives the answers it gives on PostgreSQL.

For each database (started and loaded by ``conftest.py``, never by navqa), through the
CLI with an Ontop ``.properties`` file naming only ``jdbc.url`` (and the credentials):
navqa picks the driver class and Maven artifact by the URL prefix, resolves and verifies
the driver against ``navqa/runtime/jdbc-lock.json``, and puts it on Ontop's class path.
Then ``ask``, ``audit --live``, ``sparql`` and ``eval`` are compared with the same
commands on the PostgreSQL demo endpoint (``vkg("demo")``), and every one of the 67 gold
queries of ``datasets/demo/questions.jsonl`` must return the same rows. After every
command the database must be unchanged (row counts and schema checksum).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import requests

from .conftest import DEMO, REPO, ForeignDb

NAVQA = str(Path(sys.executable).with_name("navqa"))
QUESTION = "Which company currently operates the Aster Coast Line?"
#: Gold questions run through `navqa sparql` and `navqa eval` (all 67 go through HTTP).
EVAL_IDS = ("demo-001", "demo-002", "demo-003", "demo-005", "demo-007", "demo-012",
            "demo-015", "demo-022", "demo-025", "demo-033", "demo-045", "demo-062")
_NUMERIC = {"http://www.w3.org/2001/XMLSchema#" + t for t in ("decimal", "double", "float")}

pytestmark = [pytest.mark.postgres, pytest.mark.ontop, pytest.mark.slow]


def gold() -> list[dict[str, Any]]:
    lines = (DEMO / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(x) for x in lines if x.strip()]


def normal(answer: dict[str, Any]) -> object:
    """A SPARQL JSON answer as a comparable value: ASK's boolean, or the sorted rows with
    numbers compared by value (``50.6`` on DuckDB is ``50.6000000000000000`` on PostgreSQL)."""
    if "boolean" in answer:
        return answer["boolean"]

    def term(t: dict[str, str]) -> tuple[str, str, str]:
        value = t["value"]
        if t.get("datatype") in _NUMERIC:
            value = str(Decimal(value).normalize())
        return (t["type"], value, t.get("datatype", ""))

    return sorted(sorted((k, term(v)) for k, v in row.items())
                  for row in answer["results"]["bindings"])


def select(url: str, query: str) -> object:
    r = requests.post(url, data={"query": query},
                      headers={"Accept": "application/sparql-results+json"}, timeout=300)
    assert r.status_code == 200, f"{url}: {r.status_code} {r.text[:500]}"
    return normal(r.json())


@pytest.fixture(scope="module", params=["mariadb", "duckdb"])
def db(request: pytest.FixtureRequest) -> ForeignDb:
    fixture: ForeignDb = request.getfixturevalue(
        "mariadb" if request.param == "mariadb" else "duckdb_file")
    return fixture


@pytest.fixture(scope="module")
def vkg_dir(tmp_path_factory: pytest.TempPathFactory, db: ForeignDb) -> Path:
    """The user's folder: the demo's ontology and mapping (unchanged) and a properties file
    naming only the JDBC URL and credentials (no driver class, no jar)."""
    d = tmp_path_factory.mktemp(f"rail-{db.name}")
    shutil.copy(REPO / "ontologies" / "demo.ttl", d / "rail.ttl")
    shutil.copy(REPO / "mappings" / "demo.obda", d / "rail.obda")
    (d / "rail.properties").write_text(db.properties, encoding="utf-8")
    return d


FILES = ("-t", "rail.ttl", "-m", "rail.obda")


def navqa(db: ForeignDb, *args: str, cwd: Path) -> str:
    """Run the CLI; exit 0, no password in the output, the database unchanged."""
    before = db.fingerprint()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("NAVQA_LLM", None)
    proc = subprocess.run([NAVQA, *args], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=1200)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"navqa {' '.join(args)}:\n{out[-4000:]}"
    if db.password is not None:
        assert db.password not in out
    assert db.fingerprint() == before, f"navqa {args[0]} changed the {db.name} database"
    return proc.stdout


@pytest.fixture(scope="module")
def endpoint(vkg_dir: Path, db: ForeignDb) -> Iterator[str]:
    """``navqa endpoint up -t -m -p`` on the database, in the background; its URL."""
    up = subprocess.Popen([NAVQA, "endpoint", "up", *FILES, "-p", "rail.properties"],
                          cwd=vkg_dir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, start_new_session=True)
    try:
        url, seen = None, []
        assert up.stdout is not None
        deadline = time.monotonic() + 600
        while url is None and time.monotonic() < deadline:
            line = up.stdout.readline()
            if not line:
                break
            seen.append(line)
            m = re.search(r"(http://127\.0\.0\.1:\d+/sparql)", line)
            url = m.group(1) if m else None
        assert url, "navqa endpoint up printed no URL:\n" + "".join(seen)
        yield url
    finally:
        os.killpg(up.pid, signal.SIGTERM)
        up.wait(60)
        if up.stdout is not None:
            up.stdout.close()


@pytest.fixture(scope="module")
def pg_url(vkg: Callable[..., Any]) -> str:
    """The PostgreSQL demo endpoint (navqa's own cluster, loaded from the same files)."""
    url: str = vkg("demo").running.url
    return url


def test_ask_on_a_properties_file_with_only_the_url(vkg_dir: Path, db: ForeignDb,
                                                    pg_url: str) -> None:
    out = navqa(db, "ask", *FILES, "-p", "rail.properties", "--llm", "none", "--json",
                QUESTION, cwd=vkg_dir)
    answer = json.loads(out)
    assert answer["error"] is None
    assert normal(answer["result"]) == select(pg_url, answer["sparql"])
    assert "Aster Coast Trains" in json.dumps(answer["result"])


def test_audit_live_finds_the_same_elements_with_rows(vkg_dir: Path, db: ForeignDb,
                                                      pg_url: str) -> None:
    def live(report: str) -> list[tuple[str, str, bool, str]]:
        return sorted((e["iri"], e["kind"], e["mapped"], e["status"])
                      for e in json.loads(report)["live"])

    here = live(navqa(db, "audit", *FILES, "-p", "rail.properties", "--live", "--format",
                      "json", cwd=vkg_dir))
    there = live(navqa(db, "audit", "--endpoint", pg_url, *FILES, "--live", "--format",
                       "json", cwd=vkg_dir))
    assert here == there
    assert sum(1 for e in here if e[3] == "rows") >= 40  # the demo's mapped elements


def test_every_gold_query_returns_the_rows_it_returns_on_postgresql(
        endpoint: str, pg_url: str, db: ForeignDb) -> None:
    before = db.fingerprint()
    diff = {q["id"]: (got, want) for q in gold()
            if (got := select(endpoint, q["sparql"])) != (want := select(pg_url, q["sparql"]))}
    assert diff == {}
    assert db.fingerprint() == before


def test_sparql_command(endpoint: str, vkg_dir: Path, db: ForeignDb, pg_url: str) -> None:
    by_id = {q["id"]: q for q in gold()}
    for qid in ("demo-002", "demo-007", "demo-045"):
        out = navqa(db, "sparql", "--endpoint", endpoint, *FILES, "--json",
                    by_id[qid]["sparql"], cwd=vkg_dir)
        assert normal(json.loads(out)) == select(pg_url, by_id[qid]["sparql"]), qid


def test_eval_scores_the_same(endpoint: str, vkg_dir: Path, db: ForeignDb, pg_url: str,
                              tmp_path: Path) -> None:
    subset = tmp_path / "subset.jsonl"
    subset.write_text("".join(json.dumps(q) + "\n" for q in gold() if q["id"] in EVAL_IDS),
                      encoding="utf-8")

    def run(url: str, out: Path) -> dict[str, tuple[object, ...]]:
        navqa(db, "eval", "--vkg", "demo", "--endpoint", url, "--dataset", str(subset),
              "--strategy", "navqa", "--llm", "none", "--out", str(out), cwd=vkg_dir)
        rows = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines() if x]
        return {r["id"]: (r["sparql"], r["outcome"], r["f1"], r["gold_size"], r["pred_size"])
                for r in rows}

    here, there = run(endpoint, tmp_path / "here"), run(pg_url, tmp_path / "there")
    assert set(here) == set(EVAL_IDS)
    assert here == there
