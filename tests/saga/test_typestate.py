"""The type state Θ: updated from lookups, partial queries (patterns, δ/ρ) and results."""

from __future__ import annotations

from saga_common import DATA, PREFIX, RAIL

from navqa.model.events import TypeStateUpdated
from navqa.model.terms import IRITerm, LiteralTerm, SelectResult
from navqa.online.saga.schema_index import PropertySchema, SchemaIndex, Side
from navqa.online.saga.typefilter import TypeFilter
from navqa.online.saga.typestate import TypeState


def test_explicit_types_and_domain_range_inference(demo_ctx, demo_filter) -> None:
    theta = TypeState(demo_ctx, demo_filter)
    evs = theta.observe_query(PREFIX + "SELECT ?n WHERE { ?x a rail:Station ; rail:operatedBy "
                                       "?y . ?l rail:lineCode ?c . ?y rail:name ?n }")
    assert theta.of("?x") == {RAIL + "Station"}
    assert theta.sources["?x"] == "pattern"
    assert theta.of("?y") == {RAIL + "OperatorCompany"}          # ρ(operatedBy)
    assert theta.sources["?y"] == "range"
    assert theta.of("?l") == {RAIL + "Line"}                      # δ(lineCode)
    assert theta.sources["?l"] == "domain"
    assert all(isinstance(e, TypeStateUpdated) for e in evs)
    assert {e.entity for e in evs} >= {"?x", "?y", "?l"}


def test_a_union_domain_types_nothing(demo_ctx, demo_filter) -> None:
    theta = TypeState(demo_ctx, demo_filter)
    theta.observe_query(PREFIX + "SELECT * WHERE { ?s rail:operatedBy ?o }")
    assert theta.of("?s") == frozenset()   # a station or a service: unknown, not both


def test_constants_are_typed_by_their_iri_template(demo_ctx, demo_filter) -> None:
    theta = TypeState(demo_ctx, demo_filter)   # no endpoint: template typing only
    theta.observe_query(PREFIX + f"SELECT ?c WHERE {{ <{DATA}station/KJN> rail:locatedInCity ?c }}")
    assert theta.of(f"<{DATA}station/KJN>") == {RAIL + "Station"}
    assert not theta.is_definite(f"<{DATA}station/KJN>")


def test_results_are_trace_local_evidence(demo_ctx, demo_index) -> None:
    # pretend runsOnLine's range is unknown: a result then shows what it points to
    entries = dict(demo_index.entries)
    p = RAIL + "runsOnLine"
    entries[p] = PropertySchema(p, False, entries[p].domain, Side())
    tf = TypeFilter(demo_ctx, SchemaIndex(demo_ctx, entries))
    theta = TypeState(demo_ctx, tf)
    q = PREFIX + "SELECT ?s ?l WHERE { ?s rail:runsOnLine ?l }"
    theta.observe_query(q)
    res = SelectResult(variables=("s", "l"), rows=(
        (IRITerm(DATA + "service/1"), IRITerm(DATA + "line/KV2")),
        (IRITerm(DATA + "service/2"), IRITerm(DATA + "line/NM1"))))
    evs = theta.observe_result(q, res)
    assert theta.of("?l") == {RAIL + "Line"} and theta.sources["?l"] == "result"
    assert any(e.source == "result" for e in evs)
    assert theta.observed_types(p, "range") == [RAIL + "Line"]
    # evidence guides, it does not constrain: the index still does not know the range
    assert tf.index.range(p) == frozenset()
    assert theta.observe_result(q, SelectResult(variables=("s",), rows=(
        (LiteralTerm("x"),),))) == []


def test_the_state_persists_and_variables_are_retyped(demo_ctx, demo_filter) -> None:
    theta = TypeState(demo_ctx, demo_filter)
    theta.observe_query(PREFIX + "SELECT * WHERE { ?x a rail:Station . ?y a rail:City }")
    theta.observe_query(PREFIX + "SELECT * WHERE { ?x a rail:Line }")
    assert theta.of("?x") == {RAIL + "Line"}       # the latest query's evidence wins
    assert theta.of("?y") == {RAIL + "City"}       # remembered across steps


def test_without_persistence_only_explicit_patterns_count(demo_ctx, demo_filter) -> None:
    theta = TypeState(demo_ctx, demo_filter, enabled=False)
    theta.observe_query(PREFIX + "SELECT * WHERE { ?y a rail:City }")
    theta.observe_query(PREFIX + "SELECT * WHERE { ?x a rail:Station ; rail:operatedBy ?o }")
    assert theta.of("?x") == {RAIL + "Station"}
    assert theta.of("?o") == frozenset()            # no range inference
    assert theta.of("?y") == frozenset()            # nothing carried over


def test_answer_type_seed(demo_ctx, demo_filter) -> None:
    theta = TypeState(demo_ctx, demo_filter)
    ev = theta.set_answer_type(RAIL + "Station")
    assert ev is not None and ev.source == "answer-type"
    assert theta.answer_classes == {RAIL + "Station"}
