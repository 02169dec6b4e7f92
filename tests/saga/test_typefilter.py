"""SAGA's TypeFilter: keep p iff δ(p) = ∅ or δ(p) ∩ τ*(x) ≠ ∅ — and CompactFormat."""

from __future__ import annotations

from saga_common import RAIL

from navqa.model.events import Candidate
from navqa.online.saga.lookup import compact_format, rank_by_answer_type
from navqa.online.saga.schema_index import PropertySchema, SchemaIndex, Side
from navqa.online.saga.typefilter import TypeFilter


def test_an_unknown_domain_is_kept(demo_ctx, demo_index) -> None:
    entries = dict(demo_index.entries)
    entries[RAIL + "builtBy"] = PropertySchema(RAIL + "builtBy", False, Side(), Side())
    tf = TypeFilter(demo_ctx, SchemaIndex(demo_ctx, entries))
    assert tf.compatible([RAIL + "Station"], RAIL + "builtBy")
    # and a node with no known type keeps everything
    assert tf.compatible([], RAIL + "operatedBy")


def test_a_subclass_compatible_domain_is_kept(demo_filter) -> None:
    # δ(builtBy) = {RollingStock}; an ElectricLocomotive is a RollingStock (τ* goes up)
    assert demo_filter.compatible([RAIL + "ElectricLocomotive"], RAIL + "builtBy")
    # a variable typed Company may be bound to an OperatorCompany (τ* goes down too)
    assert demo_filter.compatible([RAIL + "Organisation"], RAIL + "foundingYear")
    # …but an entity whose classes were confirmed is closed upwards only
    assert demo_filter.compatible([RAIL + "Company"], RAIL + "franchiseOperator", "in")
    assert not demo_filter.compatible([RAIL + "Region"], RAIL + "franchiseOperator", "in",
                                      definite=True)


def test_a_conflicting_domain_is_dropped(demo_filter) -> None:
    assert not demo_filter.compatible([RAIL + "Station"], RAIL + "builtBy")
    assert not demo_filter.compatible([RAIL + "Line"], RAIL + "operatedBy")
    # backwards: the node is the object, ρ decides (ρ(partOfRegion) = {Region})
    assert not demo_filter.compatible([RAIL + "Station"], RAIL + "partOfRegion", "in")
    assert demo_filter.compatible([RAIL + "Region"], RAIL + "partOfRegion", "in")


def test_the_expansion_hook_splits_candidates(demo_filter) -> None:
    cands = [Candidate(RAIL + p, d, "", 0.5) for p, d in
             (("name", "out"), ("builtBy", "out"), ("operatedBy", "out"),
              ("locatedInCity", "in"), ("partOfRegion", "out"))]
    kept, removed = demo_filter(RAIL + "Station", cands)
    assert [c.prop for c in kept] == [RAIL + "name", RAIL + "operatedBy"]
    assert {c.prop for c in removed} == {RAIL + "builtBy", RAIL + "locatedInCity",
                                         RAIL + "partOfRegion"}


def test_the_answer_type_prior_only_reorders(demo_index, demo_filter) -> None:
    cands = [Candidate(RAIL + "locatedInCity", "out", "", 0.50),
             Candidate(RAIL + "operatedBy", "out", "", 0.45),
             Candidate(RAIL + "name", "out", "", 0.40)]
    ranges = {c.prop: demo_index.range(c.prop) for c in cands}
    ranked = rank_by_answer_type(cands, ranges, demo_filter.closure({RAIL + "OperatorCompany"}))
    assert [c.prop for c in ranked] == [RAIL + "operatedBy", RAIL + "locatedInCity",
                                        RAIL + "name"]
    assert sorted(c.prop for c in ranked) == sorted(c.prop for c in cands)


def test_compact_format(demo_ctx, demo_index) -> None:
    e = demo_index.get(RAIL + "builtBy")
    text = compact_format(demo_ctx, RAIL + "builtBy", "out", domain=e.domain.shown,
                          range_=e.range.shown)
    assert text.startswith("built by (rail:builtBy): ")
    assert text.endswith("[domain: rail:Locomotive, rail:MultipleUnit | range: rail:Manufacturer]")
    unknown = compact_format(demo_ctx, RAIL + "operatedBy", "in", domain=frozenset(),
                             range_=frozenset(), observed=[RAIL + "OperatorCompany"])
    assert "(inverse" in unknown and "[domain: unknown | range: observed: rail:OperatorCompany]" \
        in unknown
