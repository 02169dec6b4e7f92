"""The empty-answer repair that makes a projected-only column OPTIONAL.

Unit tests read query texts (which variables count as projected-only, which patterns stay
required, a join chain to a name); the end-to-end test repairs an empty query on the real
demo VKG (Ontop 5.1.2 over PostgreSQL) and checks the rows against SQL on the demo
database, never against the code under test.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from navqa.model.events import ConfidenceLevel, ConfidenceReason, QueryRepaired
from navqa.model.iri import RDFS
from navqa.model.terms import SelectResult
from navqa.online.confidence import assess
from navqa.online.pipeline import AskState, Pipeline
from navqa.online.saga.repair import repair_empty
from navqa.online.saga.repair_optional import (
    make_optional,
    optional_columns,
    relax_columns,
)
from navqa.online.saga.sparql_text import QueryText

EX = "http://example.org/v#"
HEAD = f"PREFIX : <{EX}>\nPREFIX rdfs: <{RDFS}>\n"
OBJECT_PROPS = {EX + "operator", EX + "field", EX + "partOf"}
NAMES = {EX + "name", RDFS + "label"}


def is_data(prop: str) -> bool:
    return prop not in OBJECT_PROPS


def columns(body: str, select: str = "?name ?depth", tail: str = "") -> dict[str, int]:
    """Each relaxable column and how many patterns its OPTIONAL takes."""
    qt = QueryText.parse(f"{HEAD}SELECT DISTINCT {select} WHERE {{\n{body}\n}}{tail}")
    return {c.column: len(c.triples) for c in optional_columns(qt, is_data, NAMES)}


BASE = "?w a :Well ; :name ?name ; :depth ?depth ."


def test_a_column_only_in_the_select_is_relaxable() -> None:
    assert columns(BASE) == {"?depth": 1}


def test_the_answer_name_and_the_only_column_stay_required() -> None:
    assert columns(BASE, select="?name") == {}
    assert columns(BASE, select="?depth") == {}
    # the name of another node than the answer is a column like any other
    assert columns(BASE + " ?w :operator ?c . ?c :name ?cname .",
                   select="?name ?cname") == {"?cname": 2}


@pytest.mark.parametrize(("extra", "tail"), [
    ("FILTER(?depth > 100)", ""),
    ("", "\nORDER BY DESC(?depth)"),
    ("", "\nGROUP BY ?name ?depth"),
    ("BIND(?depth * 2 AS ?twice)", ""),
    ("?w2 :depth ?depth .", ""),
    ("MINUS { ?w :status ?depth . }", ""),
    ("FILTER NOT EXISTS { ?x :depth ?depth }", ""),
])
def test_a_column_used_anywhere_else_stays_required(extra: str, tail: str) -> None:
    assert columns(BASE + "\n" + extra, tail=tail) == {}


def test_a_column_inside_a_projected_expression_stays_required() -> None:
    assert columns(BASE, select="?name (STR(?depth) AS ?d) ?depth") == {}


def test_a_column_already_optional_or_in_a_union_is_left_alone() -> None:
    assert columns("?w a :Well ; :name ?name . OPTIONAL { ?w :depth ?depth . }") == {}
    assert columns("?w a :Well ; :name ?name . { ?w :depth ?depth } UNION "
                   "{ ?w :md ?depth }") == {}


def test_an_object_property_column_is_not_a_data_column() -> None:
    assert columns("?w a :Well ; :name ?name ; :operator ?c .", select="?name ?c") == {}


def test_a_join_chain_that_only_reaches_a_column_is_one_column() -> None:
    body = ("?w a :Well ; :name ?name .\n?w :field ?f .\n?f a :Field .\n"
            "?f :operator ?c .\n?c :name ?cname .")
    assert columns(body, select="?name ?cname") == {"?cname": 4}
    # a node used elsewhere ends the chain: ?f is pinned by a name
    pinned = body.replace("?f a :Field .", '?f :name "TROLL" .')
    assert columns(pinned, select="?name ?cname") == {"?cname": 2}


def test_when_every_column_qualifies_the_first_stays_required() -> None:
    assert columns("?w :depth ?depth ; :md ?md .", select="?depth ?md") == {"?md": 1}


def test_the_relaxed_text_puts_the_chain_in_one_optional() -> None:
    q = (f"{HEAD}SELECT ?name ?depth ?cname WHERE {{\n  ?w a :Well ; :name ?name ; "
         f":depth ?depth .\n  ?w :operator ?c .\n  ?c :name ?cname .\n}}\nORDER BY ?name")
    qt = QueryText.parse(q)
    out = make_optional(qt, optional_columns(qt, is_data, NAMES))
    assert out is not None
    want = (f"{HEAD}SELECT ?name ?depth ?cname WHERE {{ ?w a :Well ; :name ?name . "
            f"OPTIONAL {{ ?w :depth ?depth . }} OPTIONAL {{ ?w :operator ?c . "
            f"?c :name ?cname . }} }} ORDER BY ?name")
    assert " ".join(out.split()) == " ".join(want.split())


def test_the_repair_needs_the_probe_to_find_rows() -> None:
    q = f"{HEAD}SELECT ?name ?depth WHERE {{\n  {BASE}\n}}"
    asked: list[str] = []

    def no(text: str) -> bool:
        asked.append(text)
        return False

    assert relax_columns(QueryText.parse(q), is_data, NAMES, no) is None
    # the probe asks the rest of the query, without the column
    assert asked and asked[0].startswith(HEAD + "ASK {") and ":depth" not in asked[0]
    r = relax_columns(QueryText.parse(q), is_data, NAMES, lambda _: True)
    assert r is not None and "OPTIONAL { ?w :depth ?depth . }" in r.sparql
    assert r.reason == "column ?depth is missing for every answer: made OPTIONAL"


# -- end to end, on the demo VKG ----------------------------------------------------------------

RAIL = "PREFIX rail: <http://example.org/navqa/rail#>\n"
# Kreuzfeld's founding year and headquarters are not recorded: no row of the plain query
EMPTY = RAIL + """SELECT ?fleet ?founded ?city WHERE {
  ?stock a rail:RollingStock ; rail:fleetNumber ?fleet ; rail:builtBy ?maker .
  ?maker rail:name "Kreuzfeld Traktion GmbH" ; rail:foundingYear ?founded ;
         rail:headquarteredIn ?hq .
  ?hq rail:name ?city .
}"""
QUESTION = "Which rolling stock did Kreuzfeld Traktion GmbH build, with the maker's founding " \
           "year and home city?"


@pytest.mark.ontop
@pytest.mark.postgres
def test_an_empty_answer_whose_columns_are_missing_returns_the_entities(
        demo_pipeline: Pipeline, vkg: Callable[..., Any]) -> None:
    pipe = demo_pipeline
    st = AskState(QUESTION)
    events = [*pipe.extract(st), *pipe.ground(st)]
    st.sparql = EMPTY
    st.result = pipe.endpoint.query(EMPTY)
    assert st.result.is_empty
    events += list(repair_empty(pipe, st))

    expected = set(vkg("demo").sql(
        "SELECT r.fleet_number, c.founded_year, hq.name FROM rolling_stock r "
        "JOIN company c ON c.company_id = r.manufacturer_id "
        "LEFT JOIN city hq ON hq.city_id = c.hq_city_id "
        "WHERE c.name = 'Kreuzfeld Traktion GmbH'"))
    assert isinstance(st.result, SelectResult)
    got = {tuple(None if t is None else str(t) for t in row) for row in st.result.rows}
    assert got == {(fleet, None if y is None else str(y), city) for fleet, y, city in expected}
    assert len(got) == 8

    repairs = [e for e in events if isinstance(e, QueryRepaired)]
    assert repairs[0].reason.startswith("optional-column: columns ?founded, ?city are "
                                        "missing for every answer: made OPTIONAL")
    assert repairs[0].reason.endswith("→ rows")
    assert "OPTIONAL { ?maker rail:headquarteredIn ?hq . ?hq rail:name ?city . }" in st.sparql
    conf = assess(QUESTION, events, sparql=st.sparql, result=st.result, error=None).confidence
    assert conf.level != ConfidenceLevel.HIGH
    assert any(r.kind == ConfidenceReason.QUERY_REPAIRED for r in conf.reasons)


@pytest.mark.ontop
@pytest.mark.postgres
def test_a_name_no_entity_has_is_not_relaxed_into_optional(demo_pipeline: Pipeline) -> None:
    pipe = demo_pipeline
    hopeless = EMPTY.replace("Kreuzfeld Traktion GmbH", "No Such Maker At All")
    st = AskState(QUESTION)
    events = [*pipe.extract(st), *pipe.ground(st)]
    st.sparql = hopeless
    st.result = pipe.endpoint.query(hopeless)
    events = list(repair_empty(pipe, st))
    assert not any(isinstance(e, QueryRepaired) and e.reason.startswith("optional-column")
                   for e in events)
    assert "OPTIONAL" not in st.sparql
