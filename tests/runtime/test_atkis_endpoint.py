"""ATKIS (partial DLM250) served by real Ontop 5.1.2 over PostgreSQL + PostGIS.

* the partial dump loads through the ``atkis-restore`` / ``atkis-addtables`` fixes: PostGIS,
  19 of 36 layer tables with rows, 27 code-list tables;
* Ontop starts with the verbatim ``atkis2.ttl`` (multi-line literal accepted by the OWL API)
  and resolves the GeoSPARQL imports through the dataset's XML catalog;
* SPARQL equals SQL, including GeoSPARQL (``geof:distance``, ``geof:sfWithin``,
  ``geof:sfContains``, ``!geof:sfDisjoint``) compared with PostGIS;
* what Ontop 5.1.2 gets wrong or refuses is pinned: ``geof:sfIntersects`` casts the
  EPSG:31467 coordinates to GEOGRAPHY (wrong answers, strict xfail), and ``geof:metricArea``
  & co. are not supported;
* every gold query of ``datasets/atkis/questions.jsonl`` (dev), ``questions-validation.jsonl``
  (validation) and ``questions-test.jsonl`` (test, frozen) answers, and equals its ``sql``;
  the held-out splits are disjoint from the others and cover the question kinds users ask.
"""

from __future__ import annotations

import pytest
from gold_compare import (
    HELD_OUT_KINDS,
    HELD_OUT_SPLITS,
    bag,
    held_out_problems,
    load_questions,
    split_path,
)
from rdflib.plugins.sparql import prepareQuery

from navqa.errors import EndpointError
from navqa.model.terms import AskResult, SelectResult
from navqa.runtime.paths import repo_root

pytestmark = [pytest.mark.atkis, pytest.mark.ontop, pytest.mark.postgres]

P = """PREFIX : <http://example.org/ontologies/atkis#>
PREFIX geo: <http://www.opengis.net/ont/geosparql#>
PREFIX geof: <http://www.opengis.net/def/function/geosparql/>
PREFIX uom: <http://www.opengis.net/def/uom/OGC/1.0/>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
"""
LAYERS_WITH_DATA = {
    "gew02_f", "hdu01_b", "rel01_p", "rel02_p", "sie01_p", "sie03_f", "sie03_l", "sie03_p",
    "sie04_f", "sie04_l", "sie04_p", "sie05_p", "veg01_f", "veg04_f", "ver03_f", "ver04_f",
    "ver05_l", "ver06_f", "ver06_p",
}
BWF = "JOIN bauwerksfunktion f ON f.objart = b.objart AND f.code IN (b.bwf_1, b.bwf_2)"

CASES = [
    (
        "airfield-count",
        "SELECT (COUNT(?a) AS ?n) WHERE { ?a a :AirTraffic }",
        "SELECT count(*) FROM ver04_f",
    ),
    (
        "international-airports",
        "SELECT ?name ?icao WHERE { ?a a :AirTraffic ; rdfs:label ?name ; :designation ?icao ; "
        ":type/rdfs:label \"Internationaler Flughafen\"@de }",
        "SELECT v.nam, v.bez FROM ver04_f v JOIN art a ON a.code = v.art AND a.objart = v.objart "
        "WHERE a.name_de = 'Internationaler Flughafen'",
    ),
    (
        "lighthouses",
        "SELECT ?name WHERE { ?b a :Building ; rdfs:label ?name ; "
        ":structureFunction/rdfs:label \"Lighthouse\"@en }",
        f"SELECT b.nam FROM sie05_p b {BWF} WHERE f.name_en = 'Lighthouse' AND b.nam IS NOT NULL",
    ),
    (
        "traffic-subclasses",  # :AirTraffic, :ShippingTraffic ... rdfs:subClassOf :Traffic
        "SELECT (COUNT(DISTINCT ?t) AS ?n) WHERE { ?t a :Traffic }",
        "SELECT (SELECT count(*) FROM ver03_f) + (SELECT count(*) FROM ver04_f) + "
        "(SELECT count(*) FROM ver05_l) + (SELECT count(*) FROM ver06_f) + "
        "(SELECT count(*) FROM ver06_p)",
    ),
    (
        "geo-distance-places-near-fritzlar",
        "SELECT ?place ?d WHERE { ?a a :AirTraffic ; rdfs:label \"Fritzlar\" ; "
        "geo:hasDefaultGeometry/geo:asWKT ?aw . ?l a :Location ; rdfs:label ?place ; "
        "geo:hasDefaultGeometry/geo:asWKT ?lw . BIND(geof:distance(?aw, ?lw, uom:metre) AS ?d) "
        "FILTER(?d < 5000) }",
        "SELECT p.nam, ST_Distance(a.geom, p.geom) FROM ver04_f a JOIN sie01_p p "
        "ON ST_DWithin(a.geom, p.geom, 5000) WHERE a.nam = 'Fritzlar'",
    ),
    (
        "geo-within-frankfurt-airport",
        "SELECT ?name WHERE { ?a a :AirTraffic ; rdfs:label \"Frankfurt am Main\" ; "
        "geo:hasDefaultGeometry/geo:asWKT ?aw . ?b a :Building ; rdfs:label ?name ; "
        "geo:hasDefaultGeometry/geo:asWKT ?bw . FILTER(geof:sfWithin(?bw, ?aw)) }",
        "SELECT b.nam FROM ver04_f a JOIN sie05_p b ON ST_Within(b.geom, a.geom) "
        "WHERE a.nam = 'Frankfurt am Main'",
    ),
    (
        "geo-contains-airport-facilities",
        "SELECT ?airport (COUNT(?f) AS ?n) WHERE { ?a a :AirTraffic ; rdfs:label ?airport ; "
        "geo:hasDefaultGeometry/geo:asWKT ?aw . ?f a :TransportBuildingAndFacility ; "
        "geo:hasDefaultGeometry/geo:asWKT ?fw . FILTER(geof:sfContains(?aw, ?fw)) } "
        "GROUP BY ?airport",
        "SELECT a.nam, count(*) FROM ver04_f a JOIN ver06_p f ON ST_Contains(a.geom, f.geom) "
        "GROUP BY a.nam",
    ),
    (
        "geo-not-disjoint-control-towers",  # the working spelling of sfIntersects on 5.1.2
        "SELECT ?tower WHERE { ?a a :AirTraffic ; rdfs:label \"Frankfurt am Main\" ; "
        "geo:hasDefaultGeometry/geo:asWKT ?aw . ?b a :Building ; rdfs:label ?tower ; "
        ":structureFunction/rdfs:label \"Control tower\"@en ; "
        "geo:hasDefaultGeometry/geo:asWKT ?bw . FILTER(!geof:sfDisjoint(?aw, ?bw)) }",
        f"SELECT b.nam FROM ver04_f a JOIN sie05_p b ON ST_Intersects(a.geom, b.geom) {BWF} "
        "WHERE a.nam = 'Frankfurt am Main' AND f.name_en = 'Control tower'",
    ),
]


@pytest.fixture(scope="module")
def atkis(vkg):
    return vkg("atkis")


def test_partial_dump_loads_with_postgis(atkis) -> None:
    assert atkis.sql("SELECT count(*) FROM pg_extension WHERE extname = 'postgis'") == [(1,)]
    counts: dict[str, int] = {}
    for (table,) in atkis.sql("SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
                              "AND tablename ~ '^(geb|gew|hdu|rel|sie|veg|ver)0'"):
        counts[table] = atkis.sql(f'SELECT count(*) FROM "{table}"')[0][0]
    assert len(counts) == 36
    assert {t for t, n in counts.items() if n} == LAYERS_WITH_DATA
    assert sum(counts.values()) == 139_688
    # addtables.sql ran: spatial link tables, code lists, the repaired rows and column
    assert atkis.sql("SELECT count(*) FROM gebaeudefunktion WHERE code = '1000' "
                     "AND name_de = 'Wohngebäude'") == [(1,)]
    assert atkis.sql("SELECT count(*) FROM information_schema.columns "
                     "WHERE table_name = 'veg02_f' AND column_name = 'ntz'") == [(1,)]
    assert atkis.sql("SELECT to_regclass('public.building_in_city') IS NOT NULL") == [(True,)]
    assert atkis.running.load is not None and not atkis.running.load.tolerated


def test_manifest_says_the_data_is_partial(atkis) -> None:
    m = atkis.dataset.manifest
    assert m.partial and "19 of the 41" in (m.partial_note or "")
    assert "--full" in (m.partial_note or "")
    assert m.extensions == ("postgis",) and m.ontop.geosparql


def test_imports_are_resolved_through_the_catalog(atkis) -> None:
    """geo:hasGeometry is only a super-property of geo:hasDefaultGeometry in geo.ttl."""
    (row,) = atkis.endpoint.select(
        P + "SELECT (COUNT(?g) AS ?n) WHERE { ?a a :AirTraffic ; geo:hasGeometry ?g }").rows
    assert int(row[0].value) == 300


@pytest.mark.parametrize(("case", "sparql", "sql"), CASES, ids=[c[0] for c in CASES])
def test_atkis_sparql_equals_sql(atkis, case: str, sparql: str, sql: str) -> None:
    result = atkis.endpoint.select(P + sparql)
    assert isinstance(result, SelectResult)
    expected = atkis.sql(sql)
    assert expected, f"{case}: the SQL oracle returned nothing; pick another value"
    assert bag(result.rows) == bag(expected)


def test_empty_layers_answer_nothing(atkis) -> None:
    """Roads (ver01_l) are not in the partial dump: a true, explained, empty answer."""
    (row,) = atkis.endpoint.select(P + "SELECT (COUNT(?r) AS ?n) WHERE { ?r a :RoadTraffic }").rows
    assert int(row[0].value) == 0


@pytest.mark.xfail(strict=True, reason="Ontop 5.1.2 renders geof:sfIntersects as "
                   "ST_INTERSECTS(CAST(ST_ASTEXT(geom) AS GEOGRAPHY), ...), so EPSG:31467 "
                   "metres are read as wrapped degrees (re-check on Ontop >= 5.2)")
def test_geof_sfintersects_matches_postgis(atkis) -> None:
    result = atkis.endpoint.select(P + (
        "SELECT ?tower WHERE { ?a a :AirTraffic ; rdfs:label \"Frankfurt am Main\" ; "
        "geo:hasDefaultGeometry/geo:asWKT ?aw . ?b a :Building ; rdfs:label ?tower ; "
        ":structureFunction/rdfs:label \"Control tower\"@en ; "
        "geo:hasDefaultGeometry/geo:asWKT ?bw . FILTER(geof:sfIntersects(?aw, ?bw)) }"))
    expected = atkis.sql(f"SELECT b.nam FROM ver04_f a JOIN sie05_p b "
                         f"ON ST_Intersects(a.geom, b.geom) {BWF} WHERE a.nam = "
                         "'Frankfurt am Main' AND f.name_en = 'Control tower'")
    assert bag(result.rows) == bag(expected)


_AIRFIELD_WKT = "?a a :AirTraffic ; geo:hasDefaultGeometry/geo:asWKT ?w ."
REFUSED = {
    "metricArea": f"SELECT ?x WHERE {{ {_AIRFIELD_WKT} BIND(geof:metricArea(?w) AS ?x) }}",
    "area": f"SELECT ?x WHERE {{ {_AIRFIELD_WKT} BIND(geof:area(?w, uom:metre) AS ?x) }}",
    "metricLength": f"SELECT ?x WHERE {{ {_AIRFIELD_WKT} BIND(geof:metricLength(?w) AS ?x) }}",
    "centroid": f"SELECT ?x WHERE {{ {_AIRFIELD_WKT} BIND(geof:centroid(?w) AS ?x) }}",
    "transform": f"SELECT ?x WHERE {{ {_AIRFIELD_WKT} BIND(geof:transform(?w, "
                 "<http://www.opengis.net/def/crs/OGC/1.3/CRS84>) AS ?x) }",
    "aggUnion": f"SELECT (geof:aggUnion(?w) AS ?x) WHERE {{ {_AIRFIELD_WKT} }}",
}


@pytest.mark.parametrize("function", sorted(REFUSED))
def test_geosparql_functions_ontop_5_1_2_refuses(atkis, function: str) -> None:
    with pytest.raises(EndpointError, match="not supported yet"):
        atkis.endpoint.select(P + REFUSED[function] + " LIMIT 1")


QUESTIONS = load_questions(repo_root() / "datasets" / "atkis" / "questions.jsonl")
#: ATKIS's held-out splits: it has no blind dev/validation halves yet (the helper writing
#: them on 2026-12-07 produced no file).
ATKIS_SPLITS = tuple(s for s in HELD_OUT_SPLITS if s in ("validation", "test"))
SPLIT_QUESTIONS = {split: load_questions(split_path("atkis", split)) for split in ATKIS_SPLITS}
HELD_OUT = [q for split in ATKIS_SPLITS for q in SPLIT_QUESTIONS[split]]


def test_question_file_is_well_formed() -> None:
    assert len(QUESTIONS) >= 22
    ids = [q["id"] for q in QUESTIONS]
    assert len(set(ids)) == len(ids)
    features = {"filter", "union", "optional", "minus", "aggregation", "order", "limit", "ask"}
    for q in QUESTIONS:
        assert q["vkg"] == "atkis" and q["hops"] >= 1
        assert set(q["features"]) <= features, q["id"]
        is_ask = prepareQuery(q["sparql"]).algebra.name == "AskQuery"
        assert is_ask == ("ask" in q["features"]), q["id"]
        assert "geof:sfIntersects" not in q["sparql"], "wrong answers on Ontop 5.1.2"
    assert sum("sql" in q for q in QUESTIONS) >= 6
    assert sum("geof:" in q["sparql"] for q in QUESTIONS) >= 5


#: Lines each held-out split has at least; each blind half is half of one helper's file.
MIN_LINES = {"validation": 20, "test": 30, "dev-blind": 10, "validation-blind": 10}


@pytest.mark.parametrize("split", ATKIS_SPLITS)
def test_held_out_split_is_well_formed(shared_dataset, split: str) -> None:
    from navqa.offline.ontology_parser import parse_ontology

    ontology = parse_ontology(shared_dataset("atkis").path("ontology"))
    items = SPLIT_QUESTIONS[split]
    others = QUESTIONS + [q for q in HELD_OUT if q not in items]
    assert held_out_problems(
        others, items, vkg="atkis", split=split,
        min_lines=MIN_LINES[split],
        kinds=set(HELD_OUT_KINDS[split]),
        object_properties=frozenset(ontology.object_properties)) == []
    if split == "validation":  # written with spatial questions; the test writer had none
        assert sum("geof:" in q["sparql"] for q in items) >= 3
    assert not [q["id"] for q in items if "geof:sfIntersects" in q["sparql"]]


@pytest.mark.parametrize("item", QUESTIONS + HELD_OUT,
                         ids=[q["id"] for q in QUESTIONS + HELD_OUT])
def test_gold_query_answers(atkis, item: dict) -> None:
    result = atkis.endpoint.query(item["sparql"])
    if isinstance(result, AskResult):
        assert "ask" in item["features"]
        assert result.value is item.get("answer", True), item["id"]
        if "sql" in item:
            assert result.value == bool(atkis.sql(item["sql"])[0][0])
        return
    assert isinstance(result, SelectResult)
    assert result.rows, f"{item['id']}: the gold query returned nothing"
    if "sql" in item:
        assert bag(result.rows) == bag(atkis.sql(item["sql"])), item["id"]


WITH_TRAP = [q for q in QUESTIONS + HELD_OUT if "trap" in q]


@pytest.mark.parametrize("item", WITH_TRAP, ids=[q["id"] for q in WITH_TRAP])
def test_trap_is_silent(atkis, item: dict) -> None:
    """The intuitive term a question tempts towards returns nothing (a silent failure)."""
    trap = item["trap"]
    as_class = atkis.endpoint.select(f"SELECT ?s WHERE {{ ?s a <{trap}> }} LIMIT 1")
    as_property = atkis.endpoint.select(f"SELECT ?s WHERE {{ ?s <{trap}> ?o }} LIMIT 1")
    assert not as_class.rows and not as_property.rows, f"{item['id']}: {trap} has data"
