"""owlready2, an independent OWL implementation, reads our four ontologies as our parser does."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from navqa.offline.ontology_parser import ontology_from_graph, read_ontology_graph
from navqa.offline.owl_crosscheck import Disagreement, crosscheck_with_owlready
from navqa.runtime.datasets import LocalDataset

DEMO = Path(__file__).resolve().parents[2] / "ontologies" / "demo.ttl"
X = "http://example.org/x#"

SMALL = f"""\
@prefix : <{X}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .

<http://example.org/x> a owl:Ontology ; owl:imports <http://unreachable.invalid/onto> .
:A a owl:Class .
:B a owl:Class ; rdfs:subClassOf :A .
:C a owl:Class ; rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :p ;
                                   owl:someValuesFrom :A ] .
:p a owl:ObjectProperty ; rdfs:domain [ owl:unionOf ( :B :C ) ] ; rdfs:range :A .
:q a owl:ObjectProperty ; owl:inverseOf :p .
:s a owl:ObjectProperty , owl:SymmetricProperty ; rdfs:subPropertyOf :q .
"""


def _check(path: Path, catalog: Path | None = None) -> list[Disagreement]:
    og = read_ontology_graph(path, catalog=catalog, follow_imports=catalog is not None)
    return crosscheck_with_owlready(ontology_from_graph(og), og.graph)


@pytest.mark.parametrize("name", ["npd", "bgee", "atkis"])
def test_owlready2_agrees_with_the_parser_on_the_dataset_ontologies(
    name: str, shared_dataset: Callable[[str], LocalDataset]
) -> None:
    assert _check(shared_dataset(name).path("ontology")) == []


def test_owlready2_agrees_on_atkis_with_its_imports(
    shared_dataset: Callable[[str], LocalDataset],
) -> None:
    ds = shared_dataset("atkis")
    assert _check(ds.path("ontology"), ds.path("catalog")) == []


def test_owlready2_agrees_on_the_demo_ontology() -> None:
    assert _check(DEMO) == []


def test_small_ontology_agrees_and_its_import_is_never_fetched(tmp_path: Path) -> None:
    f = tmp_path / "x.ttl"
    f.write_text(SMALL)
    # owlready2 would try to download the import (and fail: .invalid never resolves)
    assert _check(f) == []


def test_a_wrong_parent_domain_or_inverse_is_reported(tmp_path: Path) -> None:
    f = tmp_path / "x.ttl"
    f.write_text(SMALL)
    og = read_ontology_graph(f)
    onto = ontology_from_graph(og)
    c = onto.classes[X + "C"]
    p = onto.object_properties[X + "p"]
    q = onto.object_properties[X + "q"]
    # what a parser that read the restriction as a named parent, dropped a union member
    # and missed an inverseOf stated on the other side would produce
    broken = dataclasses.replace(
        onto,
        classes={**onto.classes, c.iri: dataclasses.replace(c, parents=frozenset({X + "A"}))},
        object_properties={
            **onto.object_properties,
            p.iri: dataclasses.replace(p, domains=frozenset({X + "B"})),
            q.iri: dataclasses.replace(q, inverses=frozenset()),
        },
    )
    found = {(d.aspect, d.iri) for d in crosscheck_with_owlready(broken, og.graph)}
    assert found == {("parents", X + "C"), ("domains", X + "p"), ("inverses", X + "q")}


def test_a_missing_class_is_reported(tmp_path: Path) -> None:
    f = tmp_path / "x.ttl"
    f.write_text(SMALL)
    og = read_ontology_graph(f)
    onto = ontology_from_graph(og)
    classes = {k: v for k, v in onto.classes.items() if k != X + "B"}
    found = crosscheck_with_owlready(dataclasses.replace(onto, classes=classes), og.graph)
    assert Disagreement("classes", "", frozenset(), frozenset({X + "B"})) in found
