"""The active-ontology closure: conformance folders, properties, the Ta counting rule, NPD/Bgee.

Conformance folders (``tests/conformance/closure/<case>/``) hold ``ontology.ttl``,
``mapping.obda`` and a hand-written ``expected.json``::

    {"about": "...",
     "seeds":    [local names],            # E0
     "steps":    [[added at step 1], ..., []],   # the last step adds nothing
     "active":   [local names],            # E
     "inactive": [declared names that must stay out],
     "ta":       {"triples": [|T|, |Ta|], "axioms": [|T|, |Ta|]}}   # optional

Names are local names in ``http://example.org/closure#``; everything is compared as sets.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdflib import Graph

from navqa.model.ontology import EntityKind, OntClass, Ontology, OntProperty
from navqa.offline.closure import (
    build_active_ontology,
    close,
    count_by_kind,
    dependencies,
    load_ontology_graph,
    restrict_to_signature,
)
from navqa.offline.obda_parser import parse_obda
from navqa.offline.ontology_parser import parse_ontology
from navqa.runtime.datasets import LocalDataset

CASES = Path(__file__).resolve().parents[1] / "conformance" / "closure"
BASE = "http://example.org/closure#"


def _iris(names: list[str]) -> frozenset[str]:
    return frozenset(BASE + n for n in names)


def _case_dirs() -> list[Path]:
    return sorted(p for p in CASES.iterdir() if p.is_dir())


@pytest.mark.parametrize("case", _case_dirs(), ids=lambda p: p.name)
def test_closure_conformance(case: Path) -> None:
    expected: dict[str, Any] = json.loads((case / "expected.json").read_text(encoding="utf-8"))
    onto = parse_ontology(case / "ontology.ttl")
    maps = parse_obda(case / "mapping.obda")
    active = build_active_ontology(onto, maps)

    assert active.mapped == _iris(expected["seeds"])
    assert [s.added for s in active.steps] == [_iris(x) for x in expected["steps"]]
    assert [s.step for s in active.steps] == list(range(1, len(expected["steps"]) + 1))
    assert active.signature == _iris(expected["active"])
    assert not active.signature & _iris(expected.get("inactive", []))
    assert active.stats is not None
    assert active.stats.steps == len(expected["steps"])
    if "ta" in expected:
        assert [active.stats.full_triples, active.stats.active_triples] == expected["ta"][
            "triples"
        ]
        assert [active.stats.full_axioms, active.stats.active_axioms] == expected["ta"]["axioms"]


def test_every_case_has_its_files() -> None:
    cases = {p.name for p in _case_dirs()}
    assert {"superclass_chain", "property_domain_range", "superproperty_chain", "union_domain",
            "cycle", "unmapped_branch"} <= cases
    for name in cases:
        for f in ("ontology.ttl", "mapping.obda", "expected.json"):
            assert (CASES / name / f).is_file(), f"{name}/{f}"


def test_undeclared_seed_is_kept_and_reported() -> None:
    case = CASES / "unmapped_branch"
    active = build_active_ontology(parse_ontology(case / "ontology.ttl"),
                                   parse_obda(case / "mapping.obda"))
    assert active.undeclared_mapped == {BASE + "undeclared"}
    assert active.stats is not None
    assert active.stats.seeds == {"class": 1, "object_property": 1, "data_property": 0,
                                  "annotation_property": 0, "other": 1}
    assert active.stats.active["class"] == 3  # M, Top, and Owned through owns' inverse


# -- properties on random small ontologies -------------------------------------------------------

N_CLASSES = 8
N_PROPS = 6


def _c(i: int) -> str:
    return f"http://r/C{i}"


def _p(i: int) -> str:
    return f"http://r/p{i}"


@st.composite
def ontologies(draw: st.DrawFn) -> Ontology:
    """Random ontologies over C0..C7 and p0..p5 (p0..p3 object, p4..p5 data), cycles allowed."""
    sub = st.frozensets(st.integers(0, N_CLASSES - 1), max_size=3)
    classes = {}
    for i in range(N_CLASSES):
        classes[_c(i)] = OntClass(
            _c(i),
            parents=frozenset(_c(j) for j in draw(sub) if j != i),
            equivalents=frozenset(_c(j) for j in draw(st.frozensets(
                st.integers(0, N_CLASSES - 1), max_size=1)) if j != i),
        )
    obj, data = {}, {}
    for i in range(N_PROPS):
        kind = EntityKind.OBJECT_PROPERTY if i < 4 else EntityKind.DATA_PROPERTY
        parents = draw(st.frozensets(st.integers(0, N_PROPS - 1), max_size=2))
        same_kind = [j for j in parents if j != i and (j < 4) == (i < 4)]
        prop = OntProperty(
            _p(i),
            kind,
            parents=frozenset(_p(j) for j in same_kind),
            domains=frozenset(_c(j) for j in draw(sub)),
            ranges=(frozenset(_c(j) for j in draw(sub)) if kind is EntityKind.OBJECT_PROPERTY
                    else frozenset({"http://www.w3.org/2001/XMLSchema#string"})),
        )
        (obj if kind is EntityKind.OBJECT_PROPERTY else data)[_p(i)] = prop
    return Ontology(classes=classes, object_properties=obj, data_properties=data)


ELEMENTS = [_c(i) for i in range(N_CLASSES)] + [_p(i) for i in range(N_PROPS)]
seed_sets = st.frozensets(st.sampled_from(ELEMENTS + ["http://r/undeclared"]), max_size=5)


@settings(max_examples=150, deadline=None)
@given(ontologies(), seed_sets, seed_sets)
def test_closure_is_monotone(onto: Ontology, a: frozenset[str], b: frozenset[str]) -> None:
    small, _ = close(onto, a)
    large, _ = close(onto, a | b)
    assert small <= large


@settings(max_examples=150, deadline=None)
@given(ontologies(), seed_sets)
def test_closure_is_idempotent_and_contains_its_seeds(onto: Ontology,
                                                      seeds: frozenset[str]) -> None:
    closed, steps = close(onto, seeds)
    assert seeds <= closed
    again, steps2 = close(onto, closed)
    assert again == closed
    assert [s.added for s in steps2] == [frozenset()]
    # the steps partition E - E0, the last one is empty, and every element is declared
    assert steps[-1].added == frozenset()
    added = [s.added for s in steps]
    assert frozenset().union(*added) == closed - seeds
    assert sum(len(x) for x in added) == len(closed - seeds)
    assert closed - seeds <= onto.signature


@settings(max_examples=150, deadline=None)
@given(ontologies(), seed_sets)
def test_closure_is_closed_under_dep(onto: Ontology, seeds: frozenset[str]) -> None:
    closed, _ = close(onto, seeds)
    for e in closed:
        assert dependencies(onto, e) <= closed


# -- Dep and the Ta counting rule -----------------------------------------------------------------

SMALL = """\
@prefix : <http://x/> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

<http://x/onto> a owl:Ontology ; rdfs:comment "header" .
:note a owl:AnnotationProperty .
:A a owl:Class ; rdfs:label "A"@en ; :note "about A" .
:B a owl:Class ; rdfs:label "B"@en .
:p a owl:ObjectProperty ; rdfs:domain :A ; rdfs:range :B ; a owl:FunctionalProperty .
:d a owl:DatatypeProperty ; rdfs:domain :A ; rdfs:range xsd:string .
:A rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ; owl:someValuesFrom :B ] .
[] a owl:AllDisjointClasses ; owl:members ( :A :B ) .
:a1 a owl:NamedIndividual , :A ; :p :b1 ; rdfs:label "a one" .
:b1 a owl:NamedIndividual , :B ; rdfs:label "b one" .
"""


def _small_graph() -> Graph:
    return Graph().parse(data=SMALL, format="turtle")


def _x(*names: str) -> frozenset[str]:
    return frozenset("http://x/" + n for n in names)


def test_ta_counting_rule_keeps_everything_when_all_is_active() -> None:
    g = _small_graph()
    counts = restrict_to_signature(g, _x("A", "B", "p", "d"), _x("A", "B", "p", "d"))
    # 32 triples: header 2, note 1, A 3, B 2, p 4, d 3, A ⊑ ∃p.B 4, disjointness 6
    # (bnode type + members + 2 list cells x 2), a1 4, b1 3 -> nothing dropped.
    assert counts.full_triples == len(g) == 32
    assert counts.active_triples == 32
    # logical: p domain, p range, p functional, d domain, d range, A ⊑ ∃p.B,
    # AllDisjointClasses, a1:A, b1:B, p(a1, b1)
    assert counts.full_axioms == counts.active_axioms == 10
    assert counts.dropped_elements == {}


def test_ta_counting_rule_drops_axioms_with_an_inactive_element() -> None:
    g = _small_graph()
    counts = restrict_to_signature(g, _x("A", "B", "p", "d"), _x("A", "d"))
    # kept: header 2, note decl 1, A decl/label/note 3, d decl/domain/range 3,
    # a1's triples that mention no inactive element: a1 a NamedIndividual, a1 a A,
    # a1 label -> 3 (a1 is active: typed by A). Dropped: B (2), p (4), A ⊑ ∃p.B (4),
    # AllDisjointClasses (6), a1 p b1 (1), b1's 3 (b1 is typed by inactive B).
    assert counts.active_triples == 2 + 1 + 3 + 3 + 3 == 12
    # logical kept: d domain, d range, a1:A
    assert counts.active_axioms == 3
    # p blocks its 4 axioms, the restriction and the assertion p(a1, b1)
    assert counts.dropped_elements["http://x/p"] == 6


def test_dep_uses_stated_parents_domains_and_object_ranges_only() -> None:
    case = CASES / "property_domain_range"
    onto = parse_ontology(case / "ontology.ttl")
    assert dependencies(onto, BASE + "p") == _iris(["Dom", "Rng"])
    assert dependencies(onto, BASE + "d") == _iris(["Dom2"])  # xsd:string is no element
    assert dependencies(onto, BASE + "Dom") == _iris(["Top"])
    assert dependencies(onto, "http://nowhere/x") == frozenset()


def test_count_by_kind() -> None:
    onto = parse_ontology(CASES / "unmapped_branch" / "ontology.ttl")
    counts = count_by_kind(onto, _iris(["M", "owns", "label2", "nope"]))
    assert counts == {"class": 1, "object_property": 1, "data_property": 0,
                      "annotation_property": 1, "other": 1}


# -- the real VKGs ---------------------------------------------------------------------------------


@pytest.mark.npd
def test_npd_closure_figures(shared_dataset: Callable[[str], LocalDataset]) -> None:
    """NPD (npd-v2-ql.owl + npd-v2-ql.obda), checked by reasoning, not just re-printed.

    * T declares 342 classes, 142 object and 238 data properties (722 elements) in
      13,448 distinct triples.
    * E0: the 1,177 mapping assertions use 138 distinct classes, 100 object properties
      and 226 data properties (464), all declared in T (checked below against the
      mapping file with a regular expression, independently of the parser).
    * Ontop also serves the class and property assertions of T's own ABox: 21 terms
      (skos:Concept, broader/narrower, GeochronologicEra, the time-coordinate and
      boundary classes...) seed E as well (docs/active-ontology.md).
    * Step 1 adds 25: stated superclasses of mapped classes (Facility, Agent, Area,
      Survey, Licensee, Owner, Operator...), domain/range classes of mapped properties,
      the super-properties wellboreAgeHc, wellboreForField, wellboreFormationHc, and
      what T's ABox terms are included in (semanticRelation, BFO classes...). Step 2 adds
      6 classes one level up (Entity, DependentContinuant, MaterialEntity, Feature,
      SpatialObject, SpecificallyDependentContinuant); step 3 adds nothing. Hence 3
      steps and |E| = 180 classes + 109 object + 227 data properties = 516 — the 516
      elements a live Ontop answers ASK true for or that are mapped but data-empty
      (tests/oracle: 0 disagreements on all 722).
    * Ta keeps 12,067 of the 13,448 triples and 3,885 of the 4,186 logical axioms: the
      individuals of T's ABox are active because Ontop serves them
      (docs/active-ontology.md explains the rule and the gap to NaVQA's 6,688).
    """
    ds = shared_dataset("npd")
    onto = parse_ontology(ds.path("ontology"))
    maps = parse_obda(ds.path("mapping"))
    assert (len(onto.classes), len(onto.object_properties), len(onto.data_properties),
            onto.triple_count) == (342, 142, 238, 13_448)

    # Independent of the parser: the mapped names are the npdv:/ptl: CURIEs of the
    # targets; the classes are those after ``a``.
    text = ds.path("mapping").read_text(encoding="utf-8")
    targets = re.findall(r"^target\s+(.*)$", text, flags=re.M)
    assert len(targets) == 1177
    assert len({m for t in targets for m in re.findall(r"((?:npdv|ptl):\w+)", t)}) == 464
    assert len({m for t in targets for m in re.findall(r"\ba\s+((?:npdv|ptl):\w+)", t)}) == 138

    active = build_active_ontology(onto, maps)
    st_ = active.stats
    assert st_ is not None
    assert len(active.mapped) == 464
    assert st_.seeds == {"class": 138, "object_property": 100, "data_property": 226,
                         "annotation_property": 0, "other": 0}
    assert active.undeclared_mapped == frozenset()
    assert [len(s.added) for s in active.steps] == [25, 6, 0]
    assert st_.steps == 3
    assert st_.active == {"class": 180, "object_property": 109, "data_property": 227,
                          "annotation_property": 0, "other": 0}
    assert len(active.signature) == 516
    assert (st_.full_triples, st_.active_triples) == (13_448, 12_067)
    assert (st_.full_axioms, st_.active_axioms) == (4_186, 3_885)


@pytest.mark.bgee
def test_bgee_closure_figures(shared_dataset: Callable[[str], LocalDataset]) -> None:
    """Bgee (bgee_v14_genex.owl + .obda).

    * T: 32 classes, 23 object, 6 data properties, 882 triples.
    * E0 = 26: 8 classes, 10 object properties, 3 data properties, 1 declared annotation
      property (dcterms:description) and 4 terms T does not declare (rdfs:label,
      rdfs:seeAlso, dcterms:identifier, lscr:xrefEnsemblGene).
    * Three steps add 7, 5 and 2 elements (superclasses up to BFO, the domain/range
      classes of the mapped genex properties, RO super- and inverse properties), the
      fourth adds nothing: |E| = 20 classes + 13 object + 3 data + 1 annotation + 4
      other = 41. Union members of domains and ranges (Expression, AbsenceExpression...)
      are not populated: Ontop ignores unions there (tests/oracle agrees on all 61).
    * Ta keeps 534 of 882 triples and 65 of 106 logical axioms.
    """
    ds = shared_dataset("bgee")
    onto = parse_ontology(ds.path("ontology"))
    active = build_active_ontology(onto, parse_obda(ds.path("mapping")))
    st_ = active.stats
    assert st_ is not None
    assert (len(onto.classes), len(onto.object_properties), len(onto.data_properties),
            onto.triple_count) == (32, 23, 6, 882)
    assert st_.seeds == {"class": 8, "object_property": 10, "data_property": 3,
                         "annotation_property": 1, "other": 4}
    assert [len(s.added) for s in active.steps] == [7, 5, 2, 0]
    assert st_.active == {"class": 20, "object_property": 13, "data_property": 3,
                          "annotation_property": 1, "other": 4}
    assert (st_.full_triples, st_.active_triples) == (882, 534)
    assert (st_.full_axioms, st_.active_axioms) == (106, 65)


def test_load_ontology_graph_matches_the_parser_count() -> None:
    path = CASES / "union_domain" / "ontology.ttl"
    assert len(load_ontology_graph(path)) == parse_ontology(path).triple_count == 14


def test_ta_counting_rule_covers_rootless_blank_node_cycles() -> None:
    g = Graph().parse(data="""
        @prefix : <http://x/> . @prefix owl: <http://www.w3.org/2002/07/owl#> .
        :A a owl:Class .
        _:b1 :link _:b2 . _:b2 :link _:b1 . _:b2 :about :A .
    """, format="turtle")
    assert restrict_to_signature(g, _x("A"), _x("A")).active_triples == 4
    counts = restrict_to_signature(g, _x("A"), frozenset())
    assert counts.active_triples == 0
    assert counts.dropped_elements == {"http://x/A": 2}
