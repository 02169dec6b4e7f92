"""The cost guard, on real Ontop (dev mode) and real PostgreSQL.

* A tiny VKG whose table has no key on the joined column: Ontop's SQL for a natural
  question is a 3-way self-join that PostgreSQL estimates in the billions of rows. The
  guard flags it, names the table, the column and the mapping ids; ``navqa lint --cost``
  exits 1 with ``[costly-query]``. The same question through the keyed table passes.
* Every gold query of the bundled question sets (demo, NPD, Bgee, ATKIS) passes the
  default threshold with a wide margin.
* The real NPD case: the lithostratigraphic units via ``wellbore_formation_top``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from navqa.backends.cost_probe import (
    OntopPostgresProbe,
    OntopReformulator,
    PostgresExplainer,
    probe_for,
)
from navqa.evaluation.dataset import load_questions
from navqa.model.cost import CostVerdict
from navqa.offline.artifacts import parse_mappings
from navqa.online.cost import DEFAULT_MAX_COST, CostGuard
from navqa.runtime.ontop import OntopProcess, OntopSpec
from navqa.runtime.postgres import PgConnection, recreate_database
from navqa.runtime.vkg import DatabaseId, EndpointState, database_id

pytestmark = [pytest.mark.ontop, pytest.mark.postgres]

ROOT = Path(__file__).resolve().parents[2]
DB = "navqa_cost_tiny"

ONTOLOGY = """@prefix : <http://example.org/strata#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
<http://example.org/strata> a owl:Ontology .
:Stratum a owl:Class .
:Unit a owl:Class .
:KeyedUnit a owl:Class .
:inUnit a owl:ObjectProperty .
:name a owl:DatatypeProperty .
:label a owl:DatatypeProperty .
:code a owl:DatatypeProperty .
:level a owl:DatatypeProperty .
:keyedCode a owl:DatatypeProperty .
"""

OBDA = """[PrefixDeclaration]
:	http://example.org/strata#

[MappingDeclaration] @collection [[
mappingId	strata
target		:stratum/{wellbore}/{unit} a :Stratum ; :inUnit :unit/{unit} .
source		SELECT wellbore, unit FROM stratum

mappingId	unit-names
target		:unit/{unit} a :Unit ; :name {unit_name} .
source		SELECT unit, unit_name FROM stratum

mappingId	unit-codes
target		:unit/{unit} :code {unit_code} .
source		SELECT unit, unit_code FROM stratum

mappingId	unit-levels
target		:unit/{unit} :level {unit_level} .
source		SELECT unit, unit_level FROM stratum

mappingId	keyed-units
target		:unit/{id} a :KeyedUnit ; :label {name} ; :keyedCode {code} .
source		SELECT id, name, code FROM unit
]]
"""

PREFIX = "PREFIX : <http://example.org/strata#>\n"
EXPLODING = PREFIX + ("SELECT ?s ?n ?c ?l WHERE { ?s :inUnit ?u . ?u :name ?n ; :code ?c ; "
                      ":level ?l }")
KEYED = PREFIX + "SELECT ?s ?n ?c WHERE { ?s :inUnit ?u . ?u :label ?n ; :keyedCode ?c }"


@pytest.fixture(scope="module")
def strata(tmp_path_factory, pg: PgConnection, ontop_install) -> tuple[OntopProcess, Path, Path]:
    """The tiny VKG served by Ontop in dev mode: (process, ontology, mapping)."""
    recreate_database(pg, DB)
    with pg.connect(DB, autocommit=True) as c:
        # 60 000 strata over 30 units, no key on stratum.unit; the unit table is keyed
        c.execute("CREATE TABLE stratum (wellbore int NOT NULL, unit int NOT NULL, "
                  "unit_name text NOT NULL, unit_code text NOT NULL, unit_level int NOT NULL)")
        c.execute("INSERT INTO stratum SELECT i % 3000, i % 30, 'U' || (i % 30), "
                  "'C' || (i % 30), i % 3 FROM generate_series(1, 60000) AS i")
        c.execute("CREATE TABLE unit (id int PRIMARY KEY, name text NOT NULL, "
                  "code text NOT NULL)")
        c.execute("INSERT INTO unit SELECT i, 'U' || i, 'C' || i "
                  "FROM generate_series(0, 29) AS i")
        c.execute("ANALYZE")
    d = tmp_path_factory.mktemp("strata")
    onto, mp = d / "strata.ttl", d / "strata.obda"
    onto.write_text(ONTOLOGY)
    mp.write_text(OBDA)
    spec = OntopSpec(ontology=onto, mapping=mp, jdbc_url=pg.jdbc_url(DB), user=pg.user,
                     password=pg.password, dev=True)
    proc = OntopProcess(ontop_install, spec, log_path=d / "ontop.log").start(timeout=180)
    try:
        yield proc, onto, mp
    finally:
        proc.stop()


def _guard(url: str, pg: PgConnection, db: str, mapping: Path | None = None,
           max_cost: float = DEFAULT_MAX_COST) -> CostGuard:
    probe = OntopPostgresProbe(OntopReformulator(url),
                               PostgresExplainer({"conninfo": pg.conninfo(db)}))
    return CostGuard(probe, mappings=parse_mappings(mapping) if mapping else None,
                     max_cost=max_cost)


def test_self_join_on_a_column_without_key_is_flagged(strata, pg) -> None:
    proc, _, mp = strata
    check = _guard(proc.url, pg, DB, mp).check(EXPLODING)
    assert check.verdict is CostVerdict.COSTLY, check.summary()
    est = check.estimate
    assert est is not None and est.total_cost > DEFAULT_MAX_COST
    assert est.sql.lower().count("stratum") >= 4, est.sql  # Ontop kept the self-joins
    h = est.hotspot
    assert h is not None
    assert h.tables == ("stratum",) and h.self_join
    assert "stratum.unit" in h.columns
    assert set(h.mapping_ids) == {"strata", "unit-names", "unit-codes", "unit-levels"}
    assert h.rows > 1e12
    assert "stratum" in check.summary() and "unit-codes" in check.summary()


def test_the_same_question_through_the_keyed_table_passes(strata, pg) -> None:
    proc, _, mp = strata
    check = _guard(proc.url, pg, DB, mp).check(KEYED)
    assert check.verdict is CostVerdict.OK, check.summary()
    assert check.estimate is not None and check.estimate.total_cost < DEFAULT_MAX_COST / 1e3


def test_no_reformulation_without_dev_mode_is_unknown_not_ok(tmp_path, strata, pg,
                                                            ontop_install) -> None:
    _, onto, mp = strata
    spec = OntopSpec(ontology=onto, mapping=mp, jdbc_url=pg.jdbc_url(DB), user=pg.user,
                     password=pg.password, dev=False)
    with OntopProcess(ontop_install, spec, log_path=tmp_path / "nodev.log").start(
            timeout=180) as proc:
        check = _guard(proc.url, pg, DB, mp).check(EXPLODING)
    assert check.verdict is CostVerdict.UNKNOWN
    assert check.estimate is None and "dev mode" in (check.reason or "")


def test_lint_cost_reports_the_explosion_and_exits_1(strata, pg, cli_env, tmp_path) -> None:
    proc, onto, mp = strata
    props = tmp_path / "strata.properties"
    props.write_text(f"jdbc.url={pg.jdbc_url(DB)}\njdbc.user={pg.user}\n"
                     f"jdbc.password={pg.password or ''}\n")
    q = tmp_path / "q.rq"
    q.write_text(EXPLODING)
    env = cli_env
    r = subprocess.run([sys.executable, "-m", "navqa.cli", "lint", "--cost", "--no-embedder",
                        "-t", str(onto), "-m", str(mp), "-p", str(props), str(q)],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "[costly-query]" in r.stdout
    assert "stratum.unit" in r.stdout and "unit-codes" in r.stdout
    assert "type the variable" in r.stdout
    assert "Traceback" not in r.stderr

    q.write_text(KEYED)
    r = subprocess.run([sys.executable, "-m", "navqa.cli", "lint", "--cost", "--no-embedder",
                        "-t", str(onto), "-m", str(mp), "-p", str(props), "--format", "json",
                        str(q)], capture_output=True, text=True, env=env, cwd=tmp_path,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "costly-query" not in r.stdout
    doc = json.loads(r.stdout)
    assert doc  # the JSON report is printed


def test_sparql_warns_before_a_costly_query_and_still_runs_it(strata, pg, cli_env,
                                                              tmp_path) -> None:
    """``navqa sparql`` runs the guard first; a tiny --max-cost makes the cheap query costly."""
    _, onto, mp = strata
    props = tmp_path / "strata.properties"
    props.write_text(f"jdbc.url={pg.jdbc_url(DB)}\njdbc.user={pg.user}\n"
                     f"jdbc.password={pg.password or ''}\n")
    base = [sys.executable, "-m", "navqa.cli", "sparql", "-t", str(onto), "-m", str(mp),
            "-p", str(props), "--csv", KEYED]
    r = subprocess.run([*base, "--max-cost", "0.001"], capture_output=True, text=True,
                       env=cli_env, cwd=tmp_path, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "[costly-query]" in r.stderr and "threshold 0.001" in r.stderr
    assert len(r.stdout.splitlines()) > 1000  # the strata were printed: it ran
    r = subprocess.run(base, capture_output=True, text=True, env=cli_env, cwd=tmp_path,
                       timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "costly-query" not in r.stderr


BUNDLED = ("demo", "npd", "bgee", "atkis")


@pytest.mark.parametrize("name", BUNDLED)
def test_every_gold_query_passes_with_a_wide_margin(name: str, vkg: Callable) -> None:
    served = vkg(name)
    guard = _guard(served.endpoint.url, served.pg, served.database)
    files = sorted((ROOT / "datasets" / name).glob("questions*.jsonl"))
    qs = load_questions(*files)
    costs: list[tuple[float, str]] = []
    for q in qs:
        if q.sparql is None:
            continue
        check = guard.check(q.sparql)
        assert check.verdict is CostVerdict.OK, f"{q.id}: {check.summary()}"
        assert check.estimate is not None
        costs.append((check.estimate.total_cost, q.id))
    assert len(costs) >= 20
    costs.sort()
    # "a wide margin": the costliest gold query is 100× below the threshold
    assert costs[-1][0] < DEFAULT_MAX_COST / 100, costs[-3:]
    print(f"\n{name}: {len(costs)} gold queries, cost min {costs[0][0]:.3g} median "
          f"{costs[len(costs) // 2][0]:.3g} max {costs[-1][0]:.3g} ({costs[-1][1]})")


# "Which lithostratigraphic units do the formation tops lie in, with their level and
# parent unit?": every property of the unit comes from wellbore_formation_top, keyed on
# nothing, so Ontop joins that table with itself on lsuNpdidLithoStrat once per property.
NPD_STRATA = """PREFIX npdv: <http://sws.ifi.uio.no/vocab/npd-v2#>
SELECT ?unit ?level ?parent WHERE {
  ?s npdv:inLithostratigraphicUnit ?u .
  ?u npdv:name ?unit ; npdv:stratigraphicLevel ?level ; npdv:stratigraphicParent ?p .
  ?p npdv:name ?parent .
}"""


def test_npd_strata_through_wellbore_formation_top_are_flagged(vkg) -> None:
    served = vkg("npd")
    guard = _guard(served.endpoint.url, served.pg, served.database,
                   served.dataset.path("mapping"))
    check = guard.check(NPD_STRATA)
    assert check.verdict is CostVerdict.COSTLY, check.summary()
    h = check.estimate.hotspot if check.estimate else None
    assert check.estimate is not None and check.estimate.total_cost > 100 * DEFAULT_MAX_COST
    assert h is not None and "wellbore_formation_top" in h.tables, check.summary()
    assert h.mapping_ids, check.summary()


def _record(url: str, db: DatabaseId) -> EndpointState:
    """What ``navqa endpoint up`` records for an endpoint (see :mod:`navqa.runtime.vkg`)."""
    return EndpointState(name="strata", url=url, pid=os.getpid(), ontop_pid=0, port=0,
                         mapping="strata.obda", files_checksum="", started_at=0.0,
                         log_path="", db_host=db.host, db_port=db.port, db_name=db.database,
                         db_cluster=db.cluster)


def test_an_endpoint_navqa_did_not_start_here_is_explained_on_its_recorded_database(
        strata, pg, navqa_config) -> None:
    """A reused or ``--endpoint`` endpoint: with the record of ``navqa endpoint up`` the
    guard explains on the database it names (a lease on navqa's server per EXPLAIN)."""
    proc, _, mp = strata
    recorded = _record(proc.url, database_id(navqa_config, pg, DB))
    probe = probe_for(proc.url, config=navqa_config, endpoints=[recorded])
    guard = CostGuard(probe, mappings=parse_mappings(mp))
    check = guard.check(EXPLODING)
    assert check.verdict is CostVerdict.COSTLY, check.summary()
    assert check.estimate is not None and "stratum.unit" in (check.estimate.hotspot.columns
                                                             if check.estimate.hotspot else ())
    assert CostGuard(probe).check(KEYED).verdict is CostVerdict.OK


def test_an_endpoint_without_a_known_database_says_why_it_is_unknown(strata, pg,
                                                                     navqa_config) -> None:
    proc, _, _ = strata
    unknown = CostGuard(probe_for(proc.url, config=navqa_config, endpoints=[])).check(EXPLODING)
    assert unknown.verdict is CostVerdict.UNKNOWN and unknown.estimate is None
    assert "is not an endpoint navqa started" in (unknown.reason or ""), unknown.reason
    # a record naming a database of another server: never explained on the wrong one
    elsewhere = _record(proc.url, DatabaseId("db.example.org", 5432, DB, None))
    other = CostGuard(probe_for(proc.url, config=navqa_config,
                                endpoints=[elsewhere])).check(EXPLODING)
    assert other.verdict is CostVerdict.UNKNOWN
    assert "db.example.org:5432/" + DB in (other.reason or ""), other.reason
