"""Bgee served by real Ontop over real PostgreSQL: loads, starts, answers like SQL.

* the dump loads as is (6 tables, 97,474 rows, one species);
* Ontop starts although the ontology imports ``<http://purl.org/lscr>`` (a generated stub
  answers the import offline);
* hand-written SPARQL over the GenEx vocabulary equals SQL written against the easyBgee
  tables (the mapping was read only to know which table backs which term);
* the three tutorial queries and the SIB examples that fit a one-species subset answer;
* every gold query of ``datasets/bgee/questions.jsonl`` (dev), ``questions-validation.jsonl``
  (validation) and ``questions-test.jsonl`` (test, frozen) answers, and equals its ``sql``;
  the held-out splits are disjoint from the others and cover the question kinds users ask.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest
from gold_compare import (
    HELD_OUT_KINDS,
    HELD_OUT_SPLITS,
    bag,
    held_out_problems,
    load_questions,
    norm,
    split_path,
)
from rdflib import Graph, Namespace
from rdflib.plugins.sparql import prepareQuery

from navqa.model.terms import AskResult, SelectResult
from navqa.runtime.paths import repo_root

pytestmark = [pytest.mark.bgee, pytest.mark.ontop, pytest.mark.postgres]

P = """PREFIX orth: <http://purl.org/net/orth#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX dcterms: <http://purl.org/dc/terms/>
PREFIX obo: <http://purl.obolibrary.org/obo/>
PREFIX genex: <http://purl.org/genex#>
PREFIX up: <http://purl.uniprot.org/core/>
PREFIX efo: <http://www.ebi.ac.uk/efo/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
"""
EXPRESSED = """globalexpression ge JOIN gene g ON g.bgeegeneid = ge.bgeegeneid
  JOIN globalcond gc ON gc.globalconditionid = ge.globalconditionid
  JOIN anatentity a ON a.anatentityid = gc.anatentityid"""

CASES = [
    (
        "species",
        "SELECT ?name ?common WHERE { ?s a up:Taxon ; up:scientificName ?name ; "
        "up:commonName ?common }",
        "SELECT genus || ' ' || species, speciescommonname FROM species",
    ),
    (
        "gene-count",
        "SELECT (COUNT(DISTINCT ?g) AS ?n) WHERE { ?g a orth:Gene }",
        "SELECT count(*) FROM gene",
    ),
    (
        "gene-by-equivalent-class",  # obo:SO_0000704 owl:equivalentClass orth:Gene
        "SELECT ?name WHERE { ?g a obo:SO_0000704 ; rdfs:label ?name . "
        "FILTER(STRSTARTS(?name, \"Cec\")) }",
        "SELECT genename FROM gene WHERE genename LIKE 'Cec%'",
    ),
    (
        "boss-organs",
        "SELECT DISTINCT ?organ WHERE { ?g rdfs:label \"boss\" ; genex:isExpressedIn ?o . "
        "?o a genex:AnatomicalEntity ; rdfs:label ?organ }",
        f"SELECT DISTINCT a.anatentityname FROM {EXPRESSED} "
        "WHERE g.genename = 'boss' AND ge.calltype = 'EXPRESSED'",
    ),
    (
        "brain-genes-via-inverse",  # obo:RO_0002292 is the inverse of a super-property
        "SELECT DISTINCT ?gene WHERE { ?o obo:RO_0002292 ?g ; rdfs:label \"brain\" . "
        "?g rdfs:label ?gene }",
        f"SELECT DISTINCT g.genename FROM {EXPRESSED} "
        "WHERE a.anatentityname = 'brain' AND ge.calltype = 'EXPRESSED'",
    ),
    (
        "cec2-absent",
        "SELECT DISTINCT ?organ WHERE { ?g rdfs:label \"Cec2\" ; genex:isAbsentIn ?o . "
        "?o a genex:AnatomicalEntity ; rdfs:label ?organ }",
        f"SELECT DISTINCT a.anatentityname FROM {EXPRESSED} "
        "WHERE g.genename = 'Cec2' AND ge.calltype = 'NOT_EXPRESSED'",
    ),
    (
        "gold-calls",
        "SELECT (COUNT(?e) AS ?n) WHERE { ?e a genex:Expression ; "
        "genex:hasConfidenceLevel obo:CIO_0000029 }",
        "SELECT count(*) FROM globalexpression WHERE calltype = 'EXPRESSED' "
        "AND summaryquality = 'GOLD'",
    ),
    (
        "adh-high-scores",  # scores are xsd:string literals: cast before comparing
        "SELECT ?organ ?score WHERE { ?e a genex:Expression ; genex:hasSequenceUnit ?g ; "
        "genex:hasExpressionLevel ?score ; genex:hasExpressionCondition/"
        "genex:hasAnatomicalEntity/rdfs:label ?organ . ?g rdfs:label \"Adh\" . "
        "FILTER(xsd:double(?score) > 99) }",
        f"SELECT a.anatentityname, ge.score::text FROM {EXPRESSED} "
        "WHERE g.genename = 'Adh' AND ge.calltype = 'EXPRESSED' AND ge.score > 99",
    ),
    (
        "stages-of-eya-in-head",
        "SELECT DISTINCT ?stage WHERE { ?e a genex:Expression ; genex:hasSequenceUnit ?g ; "
        "genex:hasExpressionCondition ?c . ?g rdfs:label \"eya\" . "
        "?c genex:hasAnatomicalEntity/rdfs:label \"head\" ; "
        "genex:hasDevelopmentalStage/rdfs:label ?stage }",
        f"SELECT DISTINCT s.stagename FROM {EXPRESSED} JOIN stage s ON s.stageid = gc.stageid "
        "WHERE g.genename = 'eya' AND a.anatentityname = 'head' AND ge.calltype = 'EXPRESSED'",
    ),
    (
        "organs-per-gene-top",
        "SELECT ?gene (COUNT(DISTINCT ?o) AS ?n) WHERE { ?g rdfs:label ?gene ; "
        "genex:isExpressedIn ?o . ?o a genex:AnatomicalEntity } GROUP BY ?gene "
        "HAVING (COUNT(DISTINCT ?o) >= 70)",
        f"SELECT g.genename, count(DISTINCT a.anatentityid) FROM {EXPRESSED} "
        "WHERE ge.calltype = 'EXPRESSED' GROUP BY g.genename "
        "HAVING count(DISTINCT a.anatentityid) >= 70",
    ),
]


@pytest.fixture(scope="module")
def bgee(vkg):
    return vkg("bgee")


def test_bgee_dump_loads_as_is(bgee) -> None:
    # exact counts: pg_stat_user_tables.n_live_tup is an estimate, off by one after a
    # cluster stopped in the middle of a run
    tables = [t for (t,) in bgee.sql(
        "SELECT relname FROM pg_stat_user_tables WHERE schemaname = 'public'")]
    counts = {t: bgee.sql(f'SELECT count(*) FROM "{t}"')[0][0] for t in tables}
    assert counts == {"anatentity": 42934, "gene": 129, "globalcond": 30242,
                      "globalexpression": 23227, "species": 1, "stage": 941}
    assert bgee.running.load is not None and not bgee.running.load.tolerated


def test_lscr_import_is_answered_by_a_stub(bgee) -> None:
    cat = bgee.running.ontop.spec.xml_catalog
    assert cat is not None and "http://purl.org/lscr" in cat.read_text()


@pytest.mark.parametrize(("case", "sparql", "sql"), CASES, ids=[c[0] for c in CASES])
def test_bgee_sparql_equals_sql(bgee, case: str, sparql: str, sql: str) -> None:
    result = bgee.endpoint.select(P + sparql)
    assert isinstance(result, SelectResult)
    expected = bgee.sql(sql)
    assert expected, f"{case}: the SQL oracle returned nothing; pick another value"
    assert bag(result.rows) == bag(expected)


def test_bgee_ask_matches_sql(bgee) -> None:
    for gene, organ in (("Cec2", "arthropod fat body"), ("Cec2", "brain")):
        ask = bgee.endpoint.ask(P + f'ASK {{ ?g rdfs:label "{gene}" ; genex:isExpressedIn ?o . '
                                f'?o rdfs:label "{organ}" }}')
        (row,) = bgee.sql(f"SELECT EXISTS (SELECT 1 FROM {EXPRESSED} WHERE g.genename = "
                          f"'{gene}' AND a.anatentityname = '{organ}' "
                          "AND ge.calltype = 'EXPRESSED')")
        assert isinstance(ask, AskResult) and ask.value == row[0]


def test_tutorial_queries(bgee) -> None:
    """The three queries of the Ontop tutorial answer 1, 27 and 103 rows (its README)."""
    portal = next(p for p in bgee.dataset.paths("queries") if p.name.endswith(".portal.toml"))
    tabs = tomllib.loads(portal.read_text())["tabGroups"][0]["tabs"]
    sizes = [len(bgee.endpoint.select(t["query"]).rows) for t in tabs]
    assert sizes == [1, 27, 103]


def test_sib_examples_that_fit_the_subset(bgee) -> None:
    sh = Namespace("http://www.w3.org/ns/shacl#")
    answered = {}
    for path in bgee.dataset.paths("queries"):
        if path.suffix != ".ttl" or path.stem not in ("001", "002", "011", "025"):
            continue
        g = Graph().parse(path, format="turtle")
        (query,) = [str(o) for o in g.objects(None, sh.select)]
        answered[path.stem] = len(bgee.endpoint.select(query).rows)
    (described,) = bgee.sql("SELECT count(*) FROM (SELECT DISTINCT stageid, stagename, "
                            "stagedescription FROM stage WHERE stagedescription IS NOT NULL) t")
    assert answered == {"001": 1, "002": 1, "011": described[0], "025": 1}


QUESTIONS = load_questions(repo_root() / "datasets" / "bgee" / "questions.jsonl")
#: Every held-out split's questions (gold_compare.HELD_OUT_SPLITS).
SPLIT_QUESTIONS = {split: load_questions(split_path("bgee", split)) for split in HELD_OUT_SPLITS}
HELD_OUT = [q for split in HELD_OUT_SPLITS for q in SPLIT_QUESTIONS[split]]


def test_question_file_is_well_formed() -> None:
    assert len(QUESTIONS) >= 32
    ids = [q["id"] for q in QUESTIONS]
    assert len(set(ids)) == len(ids)
    features = {"filter", "union", "optional", "minus", "aggregation", "order", "limit", "ask"}
    for q in QUESTIONS:
        assert q["vkg"] == "bgee" and q["hops"] >= 1
        assert set(q["features"]) <= features, q["id"]
        is_ask = prepareQuery(q["sparql"]).algebra.name == "AskQuery"
        assert is_ask == ("ask" in q["features"]), q["id"]
        assert q.get("trap", "http").startswith("http"), q["id"]
    assert sum("sql" in q for q in QUESTIONS) >= 10
    assert {f for q in QUESTIONS for f in q["features"]} == features


#: Lines each held-out split has at least; each blind half is half of one helper's file.
MIN_LINES = {"validation": 30, "test": 50, "dev-blind": 15, "validation-blind": 15}


@pytest.mark.parametrize("split", HELD_OUT_SPLITS)
def test_held_out_split_is_well_formed(shared_dataset, split: str) -> None:
    from navqa.offline.ontology_parser import parse_ontology

    ontology = parse_ontology(shared_dataset("bgee").path("ontology"))
    items = SPLIT_QUESTIONS[split]
    others = QUESTIONS + [q for q in HELD_OUT if q not in items]
    assert held_out_problems(
        others, items, vkg="bgee", split=split,
        min_lines=MIN_LINES[split],
        kinds=set(HELD_OUT_KINDS[split]),
        object_properties=frozenset(ontology.object_properties)) == []


@pytest.mark.parametrize("item", QUESTIONS + HELD_OUT,
                         ids=[q["id"] for q in QUESTIONS + HELD_OUT])
def test_gold_query_answers(bgee, item: dict) -> None:
    result = bgee.endpoint.query(item["sparql"])
    if isinstance(result, AskResult):
        assert "ask" in item["features"]
        assert result.value is item.get("answer", True), item["id"]
        if "sql" in item:
            assert result.value == bool(bgee.sql(item["sql"])[0][0])
        return
    assert isinstance(result, SelectResult)
    assert result.rows, f"{item['id']}: the gold query returned nothing"
    if "sql" in item:
        assert bag(result.rows) == bag(bgee.sql(item["sql"])), item["id"]


WITH_TRAP = [q for q in QUESTIONS + HELD_OUT if "trap" in q]


@pytest.mark.parametrize("item", WITH_TRAP, ids=[q["id"] for q in WITH_TRAP])
def test_trap_is_silent(bgee, item: dict) -> None:
    """The intuitive term a question tempts towards returns nothing (a silent failure)."""
    trap = item["trap"]
    as_class = bgee.endpoint.select(f"SELECT ?s WHERE {{ ?s a <{trap}> }} LIMIT 1")
    as_property = bgee.endpoint.select(f"SELECT ?s WHERE {{ ?s <{trap}> ?o }} LIMIT 1")
    assert not as_class.rows and not as_property.rows, f"{item['id']}: {trap} has data"


def test_scores_are_string_literals(bgee) -> None:
    """The README caveat: numeric comparisons on scores need a cast."""
    (row,) = bgee.endpoint.select(
        P + "SELECT ?s WHERE { ?e genex:hasExpressionLevel ?s } LIMIT 1").rows
    assert row[0].datatype in (None, "http://www.w3.org/2001/XMLSchema#string")
    assert isinstance(norm(row[0]), str)


def test_question_file_exists_in_manifest() -> None:
    from navqa.runtime.datasets import load_manifest

    assert "datasets/bgee/questions.jsonl" in load_manifest("bgee").questions
    assert (repo_root() / Path("datasets/bgee/questions.jsonl")).is_file()


def test_r2rml_copy_is_refused_by_ontop(navqa_config, pg, ontop_install, shared_dataset) -> None:
    """Upstream's R2RML gives urn:Species two subject maps; Ontop 5.1.2 rejects that."""
    from navqa.errors import OntopStartupError
    from navqa.runtime.vkg import start_vkg

    with pytest.raises(OntopStartupError, match="more than one subjectMap"):
        running = start_vkg(navqa_config, shared_dataset("bgee"), pg, ontop_install,
                            mapping="r2rml")
        running.ontop.stop()  # pragma: no cover - only if Ontop ever accepts it
