"""The schema index: δ(p) and ρ(p) with provenance (ontology, templates, sampled evidence)."""

from __future__ import annotations

import json

from saga_common import RAIL

from navqa.online.context import SchemaContext
from navqa.online.saga.schema_index import (
    EmpiricalSample,
    PropertySchema,
    Provenance,
    SchemaIndex,
    Side,
)
from navqa.online.saga.typefilter import TypeFilter

D, E, T, S = (Provenance.DECLARED, Provenance.ENTAILED, Provenance.TEMPLATE,
              Provenance.EMPIRICAL)


def test_templates_refine_the_ontology(demo_index) -> None:
    # builtBy: declared on the union (Locomotive ⊔ MultipleUnit); the stock template is
    # the exact VKG answer, so it is the effective domain; both sources are recorded.
    e = demo_index.get(RAIL + "builtBy")
    assert e.domain.classes == {RAIL + "RollingStock"}
    assert e.domain.provenance[RAIL + "Locomotive"] == {D}
    assert e.domain.provenance[RAIL + "RollingStock"] == {T}
    assert e.domain.sources == {T}
    # The objects are company IRIs (a template shared by every kind of company): the
    # filter uses Company; listings show the declared, more telling Manufacturer.
    assert e.range.classes == {RAIL + "Company"}
    assert e.range.shown == {RAIL + "Manufacturer"}
    assert e.domain.shown == {RAIL + "Locomotive", RAIL + "MultipleUnit"}


def test_a_property_without_a_domain_is_typed_by_its_subject_templates(demo_index) -> None:
    # operatedBy declares no domain: the mappings use it on services and on stations.
    e = demo_index.get(RAIL + "operatedBy")
    assert e.domain.classes == {RAIL + "Station", RAIL + "ScheduledService"}
    assert all(p == {T} for p in e.domain.provenance.values())


def test_entailed_domains_and_sub_property_templates(demo_index) -> None:
    # originStation states nothing itself: its domain is entailed from lineEndpoint.
    origin = demo_index.get(RAIL + "originStation")
    assert E in origin.domain.provenance[RAIL + "Line"]
    # locatedIn has no mapping of its own: its sub-properties' templates type it.
    located = demo_index.get(RAIL + "locatedIn")
    assert located.domain.classes == {RAIL + "Station", RAIL + "City"}
    assert located.range.classes == {RAIL + "City", RAIL + "Region"}


def test_data_properties_have_datatypes(demo_index) -> None:
    e = demo_index.get(RAIL + "openingDate")
    assert e.is_data
    assert e.range.datatypes == {"http://www.w3.org/2001/XMLSchema#date"}
    assert not e.range.classes


def test_without_templates_the_ontology_types_the_property(demo_bundle, embedder) -> None:
    # The "w/o AOC" view includes unmapped properties: no template, so T decides.
    full = SchemaContext(demo_bundle, embedder, use_active_ontology=False)
    idx = SchemaIndex.build(full)
    e = idx.get(RAIL + "stopsAt")
    assert e.domain.classes == {RAIL + "Service"}
    assert e.domain.sources == {D}
    assert not e.domain.templates


def test_unknown_properties_stay_unknown(demo_ctx) -> None:
    idx = SchemaIndex(demo_ctx, {})
    assert idx.domain(RAIL + "builtBy") == frozenset()
    assert TypeFilter(demo_ctx, idx).compatible([RAIL + "Station"], RAIL + "builtBy")


def _blank(demo_ctx: SchemaContext, props: list[str]) -> dict[str, PropertySchema]:
    return {p: PropertySchema(p, False, Side(), Side()) for p in props}


def test_empirical_evidence_only_when_nothing_else_knows(demo_ctx, tmp_path,
                                                         monkeypatch) -> None:
    from navqa.online.saga import schema_index as si

    target = RAIL + "usesRollingStock"
    real_static = si._Builder.static

    def static(self, p):  # pretend neither T nor M types usesRollingStock
        return (Side(), Side()) if p == target else real_static(self, p)

    monkeypatch.setattr(si._Builder, "static", static)
    calls: list[str] = []

    def sampler(p: str) -> EmpiricalSample:
        calls.append(p)
        return EmpiricalSample(rows=20, subjects={RAIL + "ScheduledService": 20},
                               objects={RAIL + "MultipleUnit": 12,
                                        RAIL + "ElectricLocomotive": 7,
                                        RAIL + "Stop": 1})

    idx = SchemaIndex.build(demo_ctx, sampler=sampler, cache_dir=tmp_path)
    assert calls == [target], "only the property nobody types is sampled"
    e = idx.get(target)
    assert e.domain.classes == {RAIL + "ScheduledService"}
    assert e.domain.sources == {S}
    # rare types (under 20 % of the sample) are not evidence
    assert e.range.classes == {RAIL + "MultipleUnit", RAIL + "ElectricLocomotive"}
    cached = list((tmp_path / "saga" / "demo").glob("empirical-*.json"))
    assert len(cached) == 1
    assert target in json.loads(cached[0].read_text())["samples"]
    # a second build reads the cache: no endpoint query
    idx2 = SchemaIndex.build(demo_ctx, sampler=sampler, cache_dir=tmp_path)
    assert calls == [target]
    assert idx2.get(target).domain.classes == {RAIL + "ScheduledService"}


def test_a_sample_that_types_nothing_leaves_the_side_unknown(demo_ctx, monkeypatch) -> None:
    from navqa.online.saga import schema_index as si

    target = RAIL + "runsOnLine"
    real_static = si._Builder.static
    monkeypatch.setattr(si._Builder, "static",
                        lambda self, p: (Side(), Side()) if p == target else real_static(self, p))
    idx = SchemaIndex.build(demo_ctx, sampler=lambda p: EmpiricalSample(rows=0))
    assert not idx.get(target).domain.known
    assert TypeFilter(demo_ctx, idx).compatible([RAIL + "Region"], target)


def test_stats_count_sources(demo_index) -> None:
    stats = demo_index.stats()
    assert stats["domain"]["mapping-template"] > 0
    assert "unknown" not in stats["domain"]
