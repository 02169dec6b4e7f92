"""A costly query is written again through a keyed table before it runs (offline backend).

A small generated VKG on real PostgreSQL and Ontop (dev mode) offers two routes from the
strata to the name of their unit: ``:unitName``, mapped from the stratum table (no key on
the unit: Ontop's SQL joins that table with itself, and the estimate grows ~66x with the
number of strata per unit), and ``:unitTitle``, mapped from the keyed unit table. Asked for
the strata of one unit by its name, the offline synthesizer grounds the name on the first;
the cost guard finds it costly, the pipeline writes the question again without the
properties of the exploding join, keeps the cheaper equivalent and runs it.
When no rewrite is under the threshold the original runs, and the events say so.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from navqa.backends.cost_probe import OntopPostgresProbe, OntopReformulator, PostgresExplainer
from navqa.backends.sparql_http import HttpSparqlEndpoint
from navqa.model.cost import CostVerdict
from navqa.model.events import Answer, CheaperQueryTried, Event, QueryCostChecked, QueryExecuted
from navqa.offline.artifacts import IndexBundle, build_index
from navqa.online.cost import CostGuard, same_shape
from navqa.online.pipeline import Pipeline
from navqa.runtime.ontop import OntopProcess, OntopSpec
from navqa.runtime.postgres import PgConnection, recreate_database

pytestmark = [pytest.mark.ontop, pytest.mark.postgres]

DB = "navqa_cost_retry"
EX = "http://example.org/strata#"

ONTOLOGY = """@prefix : <http://example.org/strata#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
<http://example.org/strata> a owl:Ontology .
:Stratum a owl:Class ; rdfs:label "stratum" .
:Unit a owl:Class ; rdfs:label "unit" .
:inUnit a owl:ObjectProperty ; rdfs:label "in unit" ; rdfs:domain :Stratum ; rdfs:range :Unit .
:depth a owl:DatatypeProperty ; rdfs:label "depth" ; rdfs:domain :Stratum ;
    rdfs:range xsd:integer .
:unitName a owl:DatatypeProperty ; rdfs:label "unit name" ; rdfs:domain :Unit ;
    rdfs:range xsd:string .
:unitTitle a owl:DatatypeProperty ; rdfs:label "unit title" ; rdfs:domain :Unit ;
    rdfs:range xsd:string .
"""

OBDA = """[PrefixDeclaration]
:	http://example.org/strata#

[MappingDeclaration] @collection [[
mappingId	strata
target		:stratum/{wellbore}/{unit} a :Stratum ; :inUnit :unit/{unit} ; :depth {depth} .
source		SELECT wellbore, unit, depth FROM stratum

mappingId	unit-names-from-strata
target		:unit/{unit} a :Unit ; :unitName {unit_name} .
source		SELECT unit, unit_name FROM stratum

mappingId	units
target		:unit/{id} a :Unit ; :unitTitle {name} .
source		SELECT id, name FROM unit
]]
"""

QUESTION = "What is the depth of the strata in unit U3?"
MAX_COST = 1e4
"""The query through the keyless table is estimated near 6e4 (a self-join of stratum growing
~66x), the keyed one near 1.1e3 (both measured)."""


@pytest.fixture(scope="module")
def strata(tmp_path_factory, pg: PgConnection, ontop_install, navqa_config, embedder
           ) -> tuple[OntopProcess, IndexBundle]:
    recreate_database(pg, DB)
    with pg.connect(DB, autocommit=True) as c:
        # 60 000 strata rows over 30 units, no key on stratum.unit; the unit table is keyed
        c.execute("CREATE TABLE stratum (wellbore int NOT NULL, unit int NOT NULL, "
                  "unit_name text NOT NULL, depth int NOT NULL)")
        c.execute("INSERT INTO stratum SELECT i % 3000, i % 30, 'U' || (i % 30), i "
                  "FROM generate_series(1, 60000) AS i")
        c.execute("CREATE TABLE unit (id int PRIMARY KEY, name text NOT NULL)")
        c.execute("INSERT INTO unit SELECT i, 'U' || i FROM generate_series(0, 29) AS i")
        c.execute("ANALYZE")
    d: Path = tmp_path_factory.mktemp("cost_retry")
    onto, mp = d / "strata.ttl", d / "strata.obda"
    onto.write_text(ONTOLOGY, encoding="utf-8")
    mp.write_text(OBDA, encoding="utf-8")
    bundle = build_index(navqa_config, ontology_path=onto, mapping_path=mp, out_dir=d / "idx",
                         embedder=embedder, name="strata-retry")
    spec = OntopSpec(ontology=onto, mapping=mp, jdbc_url=pg.jdbc_url(DB), user=pg.user,
                     password=pg.password, dev=True)
    proc = OntopProcess(ontop_install, spec, log_path=d / "ontop.log").start(timeout=180)
    try:
        yield proc, bundle
    finally:
        proc.stop()


def _ask(strata, pg, navqa_config, embedder, max_cost: float) -> Answer:
    proc, bundle = strata
    # a short timeout: the exploding query never finishes, and it must not hold the test
    cfg = navqa_config.with_overrides(runtime={"query_timeout_s": 5})
    pipe = Pipeline.from_index(bundle, endpoint=HttpSparqlEndpoint(proc.url, timeout=60),
                               config=cfg, embedder=embedder)
    pipe.cost_guard = CostGuard(
        OntopPostgresProbe(OntopReformulator(proc.url),
                           PostgresExplainer({"conninfo": pg.conninfo(DB)})),
        mappings=bundle.mappings, max_cost=max_cost)
    return pipe.ask(QUESTION)


def _cost_events(answer: Answer) -> list[Event]:
    return [e for e in answer.events
            if isinstance(e, QueryCostChecked | CheaperQueryTried | QueryExecuted)]


def test_a_costly_query_is_replaced_by_the_path_through_the_keyed_table(
        strata, pg, navqa_config, embedder) -> None:
    answer = _ask(strata, pg, navqa_config, embedder, MAX_COST)
    first, tried, second, executed = _cost_events(answer)
    # the synthesizer's first query reads the unit name from the keyless table
    assert isinstance(first, QueryCostChecked) and first.verdict == CostVerdict.COSTLY.value
    assert f"<{EX}>" in first.sparql and "unitName" in first.sparql
    assert "self-join of stratum on stratum.unit" in first.summary, first.summary
    assert first.total_cost is not None and first.total_cost > MAX_COST
    # the rewrite leaves that property out and keeps the route through the unit table
    assert isinstance(tried, CheaperQueryTried) and tried.kept_cheaper, tried.summary
    assert tried.without == (EX + "unitName",)
    assert tried.original == first.sparql and tried.sparql != first.sparql
    assert "unitTitle" in tried.sparql and "depth" in tried.sparql
    assert tried.total_cost is not None and tried.total_cost < first.total_cost / 10
    assert isinstance(second, QueryCostChecked) and second.sparql == tried.sparql
    assert second.verdict == CostVerdict.OK.value
    # and that is the query that runs, and answers
    assert isinstance(executed, QueryExecuted) and executed.sparql == tried.sparql
    assert answer.error is None, answer.error
    assert answer.sparql == tried.sparql
    # the depths of the 2,000 strata of unit 3 (i % 30 == 3 for i in 1..60000)
    assert answer.result is not None and len(answer.result) == 2000


def test_without_a_cheap_enough_rewrite_the_original_runs_and_the_events_say_so(
        strata, pg, navqa_config, embedder) -> None:
    """A threshold under even the keyed query's estimate: the rewrite is estimated, not
    kept, and the original query runs."""
    answer = _ask(strata, pg, navqa_config, embedder, 100.0)
    first, tried, executed = _cost_events(answer)
    assert isinstance(first, QueryCostChecked) and first.verdict == CostVerdict.COSTLY.value
    assert isinstance(tried, CheaperQueryTried) and not tried.kept_cheaper
    assert tried.tried >= 1 and tried.sparql == first.sparql and tried.without == ()
    assert "no cheaper query" in tried.summary
    assert isinstance(executed, QueryExecuted) and executed.sparql == first.sparql
    assert answer.sparql == first.sparql


ORIGINAL = """PREFIX ns: <http://example.org/strata#>
SELECT DISTINCT ?n ?depth WHERE { ?u a ns:Unit ; ns:unitName ?n . ?s a ns:Stratum ;
  ns:inUnit ?u ; ns:depth ?depth . FILTER(?depth > 5) }"""


def test_a_rewrite_that_drops_a_column_a_filter_or_a_class_is_not_equivalent() -> None:
    classes = {EX + "Unit", EX + "Stratum"}
    same = ORIGINAL.replace("unitName", "unitTitle")
    assert same_shape(ORIGINAL, classes, same, classes)
    dropped_filter = ORIGINAL.replace(" FILTER(?depth > 5)", "")
    assert not same_shape(ORIGINAL, classes, dropped_filter, classes)
    dropped_column = ORIGINAL.replace("?n ?depth WHERE", "?n WHERE")
    assert not same_shape(ORIGINAL, classes, dropped_column, classes)
    assert not same_shape(ORIGINAL, classes, same, {EX + "Unit"})

