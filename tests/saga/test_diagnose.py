"""Why is a result empty: static causes from Θ, the schema index and the IRI templates."""

from __future__ import annotations

from saga_common import PREFIX, RAIL

from navqa.online.saga.diagnose import diagnose, render_findings
from navqa.online.saga.typestate import TypeState


def _find(demo_ctx, demo_filter, query: str, *, enabled: bool = True):
    theta = TypeState(demo_ctx, demo_filter, enabled=enabled)
    theta.observe_query(query)
    return diagnose(demo_ctx, theta, query)   # no endpoint: no literal probes


def test_a_domain_conflict_is_named(demo_ctx, demo_filter) -> None:
    q = PREFIX + "SELECT ?n WHERE { ?s a rail:Station ; rail:name ?n ; rail:builtBy ?m }"
    found = _find(demo_ctx, demo_filter, q)
    assert found[0].kind == "domain-conflict"
    assert found[0].prop == RAIL + "builtBy" and found[0].var == "?s"
    assert "rail:RollingStock" in found[0].message and "rail:Station" in found[0].message
    assert render_findings(found).startswith("[WARNING] empty result; likely cause: rail:builtBy")


def test_a_join_whose_templates_cannot_unify(demo_ctx, demo_filter) -> None:
    # ?x is the subject of operatedBy (station and service IRIs) and of partOfRegion (city
    # IRIs): no IRI is both. Θ off, so only the templates can tell.
    q = PREFIX + "SELECT * WHERE { ?x rail:operatedBy ?o . ?x rail:partOfRegion ?r }"
    found = _find(demo_ctx, demo_filter, q, enabled=False)
    assert [f.kind for f in found] == ["template-join"]
    assert "never produce the same IRI" in found[0].message


def test_a_literal_used_as_an_iri(demo_ctx, demo_filter) -> None:
    q = PREFIX + "SELECT * WHERE { ?s rail:name ?n . ?n rail:population ?p }"
    found = _find(demo_ctx, demo_filter, q, enabled=False)
    assert any(f.kind == "template-join" and "literal" in f.message for f in found)


def test_literals_of_the_wrong_datatype(demo_ctx, demo_filter) -> None:
    q = PREFIX + ('SELECT ?n WHERE { ?l rail:name ?n ; rail:electrified "yes" ; '
                  'rail:lengthKm ?k . ?s rail:openingDate ?d FILTER(?d < 1860) }')
    found = _find(demo_ctx, demo_filter, q)
    kinds = {(f.kind, f.prop) for f in found}
    assert ("literal-datatype", RAIL + "electrified") in kinds
    assert ("literal-datatype", RAIL + "openingDate") in kinds


def test_a_well_typed_query_has_no_static_finding(demo_ctx, demo_filter) -> None:
    q = PREFIX + ('SELECT ?n WHERE { ?s a rail:Station ; rail:name ?n ; rail:operatedBy ?o . '
                  '?o rail:name "Kestrel Metro" }')
    assert _find(demo_ctx, demo_filter, q) == []
