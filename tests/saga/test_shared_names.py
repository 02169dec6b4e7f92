"""A name several entities share: Θ keeps every entity of it, and the anchor-conflict
repair (``?x a C ; name "N"`` where N names no C) fires only when none of them is a C.

Entity classes are read from the real demo VKG (Ontop 5.1.2 over PostgreSQL); which
entities share the name is set by hand (``bind`` does not look at the data).
"""

from __future__ import annotations

import pytest
from saga_common import DATA, PREFIX, RAIL

from navqa.backends.sparql_http import HttpSparqlEndpoint
from navqa.online.saga.repairs import OfflineRepairer
from navqa.online.saga.typestate import TypeState

pytestmark = [pytest.mark.ontop, pytest.mark.postgres]

NAME = RAIL + "name"
CITY = DATA + "city/3"           # the city Kestrel
STATION = DATA + "station/KSJ"   # Kestrel Junction
COMPANY = DATA + "company/6"     # Kestrel Metro, an operator company


@pytest.fixture
def theta(demo_ctx, demo_filter, served_demo) -> TypeState:
    return TypeState(demo_ctx, demo_filter, endpoint=HttpSparqlEndpoint(served_demo.running.url))


def _kinds(theta: TypeState, ctx, query: str, *, value_answer: bool = False) -> list[str]:
    rep = OfflineRepairer(ctx, theta, theta.endpoint, value_answer=value_answer)
    theta.observe_query(query)
    # the repairs of a misplaced name (other repairs, from probes, may follow)
    return [r.kind for r in rep.candidates(query, []) if r.reason.startswith("'Kestrel' names")]


def test_every_entity_of_a_name_is_kept_and_types_a_variable_pinned_to_it(theta) -> None:
    theta.bind(NAME, "Kestrel", CITY)
    theta.bind(NAME, "Kestrel", STATION)
    theta.bind(NAME, "Kestrel", CITY)   # found again: kept once
    assert theta.bindings[(NAME, "Kestrel")].iris == (CITY, STATION)
    theta.observe_query(PREFIX + 'SELECT ?x WHERE { ?x rail:name "Kestrel" }')
    assert theta.of("?x") == {RAIL + "City", RAIL + "Station"}
    assert theta.sources["?x"] == "value"


def test_a_name_one_of_whose_entities_fits_the_class_is_no_conflict(theta, demo_ctx) -> None:
    q = PREFIX + ('SELECT ?n WHERE { ?x a rail:Station ; rail:platformCount ?n ; '
                  'rail:name "Kestrel" }')
    theta.bind(NAME, "Kestrel", CITY)
    alone = _kinds(theta, demo_ctx, q)
    assert "reanchor" in alone and "swap-class" in alone   # the city alone is no station
    theta.bind(NAME, "Kestrel", STATION)
    assert _kinds(theta, demo_ctx, q) == []                # now one of them is


def test_a_value_of_the_named_entity_takes_its_class_first(theta, demo_ctx) -> None:
    # "What is the population of Kestrel?" read with a station as the answer class
    q = PREFIX + ('SELECT ?n WHERE { ?x a rail:Station ; rail:population ?n ; '
                  'rail:name "Kestrel" }')
    theta.set_answer_type(RAIL + "Station")
    theta.bind(NAME, "Kestrel", CITY)
    # the entities are the answer: keep the class, move the name to a joined node
    assert _kinds(theta, demo_ctx, q)[0] == "reanchor"
    # a value of them is the answer: the name says which entity, so retype ?x
    assert _kinds(theta, demo_ctx, q, value_answer=True)[0] == "swap-class"


def test_the_entity_class_that_carries_the_rest_of_the_query_comes_first(
        theta, demo_ctx) -> None:
    theta.bind(NAME, "Kestrel", CITY)
    theta.bind(NAME, "Kestrel", COMPANY)
    for prop, first in (("foundingYear", "OperatorCompany"), ("population", "City")):
        q = PREFIX + (f'SELECT ?n WHERE {{ ?x a rail:Station ; rail:{prop} ?n ; '
                      'rail:name "Kestrel" }')
        rep = OfflineRepairer(demo_ctx, theta, theta.endpoint)
        theta.observe_query(q)
        swaps = [r for r in rep.candidates(q, []) if r.kind == "swap-class"
                 and r.reason.startswith("'Kestrel' names")]
        assert swaps and f"?x a rail:{first}" in swaps[0].sparql, (prop, swaps)
