"""The class graph Ga: edge provenance (declared / entailed / mapping-template) and typing."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from rdflib import RDFS, URIRef

from navqa.model.graph import ClassGraph, EdgeSource
from navqa.model.iri import OWL_THING, XSD
from navqa.offline.class_graph import (
    build_class_graph,
    class_templates,
    template_classes,
    typing_stats,
)
from navqa.offline.closure import build_active_ontology, load_ontology_graph
from navqa.offline.obda_parser import parse_obda, parse_obda_text
from navqa.offline.ontology_parser import parse_ontology
from navqa.runtime.datasets import LocalDataset

G = "http://example.org/g#"
D, E, T = EdgeSource.DECLARED, EdgeSource.ENTAILED, EdgeSource.TEMPLATE

ONTOLOGY = """\
@prefix : <http://example.org/g#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

:Place a owl:Class .
:Station a owl:Class ; rdfs:subClassOf :Place .
:City a owl:Class ; rdfs:subClassOf :Place .
:Company a owl:Class .
:OperatorCompany a owl:Class ; rdfs:subClassOf :Company .

:locatedIn a owl:ObjectProperty ; rdfs:domain :Station ; rdfs:range :City .
:locatedInGeneral a owl:ObjectProperty ; rdfs:domain :Company ; rdfs:range :City .
:hasHQ a owl:ObjectProperty ; rdfs:subPropertyOf :locatedInGeneral .
:operatedBy a owl:ObjectProperty .
:serves a owl:ObjectProperty ; rdfs:domain :Company ; rdfs:range :Station .
:servedBy a owl:ObjectProperty ; owl:inverseOf :serves .
:name a owl:DatatypeProperty ; rdfs:domain :Place ; rdfs:range xsd:string .
:population a owl:DatatypeProperty ; rdfs:domain :City .
:code a owl:DatatypeProperty .
"""

MAPPING = """\
[PrefixDeclaration]
:		http://example.org/g#
d:		http://example.org/data/
xsd:		http://www.w3.org/2001/XMLSchema#

[MappingDeclaration] @collection [[
mappingId	station
target		d:station/{id} a :Station ; :name {n}^^xsd:string ; :code {c}^^xsd:string ;
			:locatedIn d:city/{city} ; :operatedBy d:company/{op} .
source		SELECT id, n, c, city, op FROM station

mappingId	served
target		d:station/{id} :servedBy d:company/{x} .
source		SELECT id, x FROM service

mappingId	city
target		d:city/{id} a :City ; :population {p}^^xsd:integer .
source		SELECT id, p FROM city

mappingId	company
target		d:company/{id} a :Company ; :hasHQ d:city/{c} .
source		SELECT id, c FROM company

mappingId	operator
target		d:company/{id} a :OperatorCompany .
source		SELECT id FROM company WHERE is_operator
]]
"""


@pytest.fixture
def small(tmp_path: Path) -> tuple[ClassGraph, object, object]:
    path = tmp_path / "g.ttl"
    path.write_text(ONTOLOGY, encoding="utf-8")
    onto = parse_ontology(path)
    maps = parse_obda_text(MAPPING)
    active = build_active_ontology(onto, maps)
    return build_class_graph(active, maps), active, maps


def _edges(graph: ClassGraph) -> dict[tuple[str, str, str], frozenset[EdgeSource]]:
    def short(i: str) -> str:
        return i.replace(G, "").replace(XSD, "xsd:").replace(OWL_THING, "Thing")

    return {(short(e.source), short(e.prop), short(e.target)): e.provenance for e in graph}


def test_small_graph_edges_and_provenance(small: tuple[ClassGraph, object, object]) -> None:
    graph, _, _ = small
    assert _edges(graph) == {
        # stated on p, and confirmed by the templates station/{} -> city/{}
        ("Station", "locatedIn", "City"): {D, T},
        # hasHQ states nothing: its super-property does (entailed); templates agree
        ("Company", "hasHQ", "City"): {E, T},
        # the super-property is active (Dep of hasHQ) but unmapped: ontology only
        ("Company", "locatedInGeneral", "City"): {D},
        # no domain, no range: typed by the mapping templates alone
        ("Station", "operatedBy", "Company"): {T},
        # the inverse of serves: domain Station and range Company are entailed
        ("Station", "servedBy", "Company"): {E, T},
        # data properties: stated domain and range; the mapping adds the subclass
        ("Place", "name", "xsd:string"): {D},
        ("Station", "name", "xsd:string"): {T},
        # no stated range: the datatype comes from the mapping literal
        ("City", "population", "xsd:integer"): {D, T},
        ("Station", "code", "xsd:string"): {T},
        # serves is not mapped, but it is the inverse of the mapped servedBy: Ontop
        # populates it (tests/oracle), so it is active and has its stated edge
        ("Company", "serves", "Station"): {D},
    }
    assert graph.classes == {G + c for c in ("Place", "Station", "City", "Company",
                                             "OperatorCompany")}


def test_graph_indexes(small: tuple[ClassGraph, object, object]) -> None:
    graph, _, _ = small
    assert {e.prop for e in graph.out_edges(G + "Station")} == {
        G + p for p in ("locatedIn", "operatedBy", "servedBy", "name", "code")}
    assert {e.prop for e in graph.in_edges(G + "City")} == {
        G + p for p in ("locatedIn", "hasHQ", "locatedInGeneral")}
    assert graph.typed_by([T]) == {G + p for p in ("locatedIn", "hasHQ", "operatedBy",
                                                   "servedBy")}


def test_typing_stats_small(small: tuple[ClassGraph, object, object]) -> None:
    graph, active, maps = small
    st = typing_stats(graph, active, maps)  # type: ignore[arg-type]
    assert (st.object_properties, st.declared, st.entailed, st.template, st.ontology,
            st.template_only, st.untyped, st.untyped_mapped) == (6, 3, 2, 4, 5, 1, 0, 0)
    assert st.edges == {"declared": 5, "entailed": 2, "mapping-template": 7, "total": 10,
                        "object": 6, "data": 4, "to_thing": 0}


def test_shared_template_attaches_to_the_common_superclass(
        small: tuple[ClassGraph, object, object]) -> None:
    graph, active, maps = small
    direct = class_templates(maps, active.classes)  # type: ignore[attr-defined]
    key = "http://example.org/data/company/{}"
    assert direct[key] == {G + "Company", G + "OperatorCompany"}
    assert template_classes(active.ontology, direct)[key] == {G + "Company"}  # type: ignore


def test_unrelated_classes_sharing_a_template_both_get_the_edge(tmp_path: Path) -> None:
    path = tmp_path / "o.ttl"
    path.write_text(
        "@prefix : <http://example.org/g#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        ":Stage a owl:Class . :Organ a owl:Class . :Cond a owl:Class .\n"
        ":p a owl:ObjectProperty . :q a owl:ObjectProperty .\n", encoding="utf-8")
    maps = parse_obda_text(
        "[PrefixDeclaration]\n:\thttp://example.org/g#\nobo:\thttp://obo/\nd:\thttp://d/\n\n"
        "[MappingDeclaration] @collection [[\n"
        "mappingId\ts\ntarget\t\tobo:{stage} a :Stage .\nsource\t\tSELECT stage FROM s\n\n"
        "mappingId\to\ntarget\t\tobo:{organ} a :Organ .\nsource\t\tSELECT organ FROM o\n\n"
        "mappingId\tc\ntarget\t\td:c/{id} a :Cond ; :p obo:{stage} ; :q obo:{level} .\n"
        "source\t\tSELECT id, stage, level FROM c\n]]\n")
    active = build_active_ontology(parse_ontology(path), maps)
    edges = _edges(build_class_graph(active, maps))
    # same key obo:{}: the placeholder column picks Stage for p; for q (no class uses
    # the column "level") both classes sharing the key are kept
    assert set(edges) == {("Cond", "p", "Stage"), ("Cond", "q", "Stage"), ("Cond", "q", "Organ")}


def test_unknown_object_side_goes_to_owl_thing(tmp_path: Path) -> None:
    path = tmp_path / "o.ttl"
    path.write_text(
        "@prefix : <http://example.org/g#> . @prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        ":W a owl:Class . :url a owl:ObjectProperty ; rdfs:domain :W .\n"
        ":era a owl:ObjectProperty .\n", encoding="utf-8")
    maps = parse_obda_text(
        "[PrefixDeclaration]\n:\thttp://example.org/g#\nd:\thttp://d/\n\n"
        "[MappingDeclaration] @collection [[\n"
        "mappingId\tw\ntarget\t\td:w/{id} a :W ; :url <{page}> ; :era <http://eras/Jurassic> .\n"
        "source\t\tSELECT id, page FROM w\n]]\n")
    active = build_active_ontology(parse_ontology(path), maps)
    graph = build_class_graph(active, maps)
    assert _edges(graph) == {("W", "url", "Thing"): {D, T}, ("W", "era", "Thing"): {T}}
    assert OWL_THING in graph.classes
    st = typing_stats(graph, active, maps)
    assert (st.declared, st.template, st.untyped, st.both_ends) == (1, 2, 0, 0)


@pytest.mark.npd
def test_npd_template_typing(shared_dataset: Callable[[str], LocalDataset]) -> None:
    """How NPD's 109 active object properties are typed.

    (With Ontop's reasoning, docs/active-ontology.md, six unmapped ones are active beyond
    the three super-properties: hasGeometry, and the SKOS relations broader, narrower,
    their transitive super-properties and semanticRelation, which T's own ABox uses. They
    add 2 declared, 5 entailed and 7 ontology-typed properties and one template-only one
    less. The breakdown below is for the 103 of the earlier rule.)

    * T states an ``rdfs:domain`` for 100 of its 142 object properties; 73 of the 103
      active ones have one (checked on the raw RDF below), 71 of the 100 mapped ones.
    * ``declared`` = 70: those 73 minus wellboreAgeHcLevel1/2/3, whose domain
      (ExplorationWellbore) is stated but whose range is inherited from wellboreAgeHc,
      so their edges are ``entailed``; ``entailed`` = 5: those three plus
      development/explorationWellboreForField (range from wellboreForField).
    * ``mapping-template`` = 100: every mapped object property — each of its subject
      templates is some mapped class's template; the object may be a constant (countries,
      geochronologic eras), an IRI column (fact-page URLs) or an unmapped template
      (block/{}), which then gives an edge to owl:Thing.
    * ``template_only`` = 29 = the mapped object properties without a stated domain
      (100 − 71); ``untyped`` = 1: wellboreFormationHc, an unmapped super-property with
      neither domain nor range.
    """
    ds = shared_dataset("npd")
    onto = parse_ontology(ds.path("ontology"))
    maps = parse_obda(ds.path("mapping"))
    active = build_active_ontology(onto, maps)
    graph = build_class_graph(active, maps)
    st = typing_stats(graph, active, maps)

    rdf = load_ontology_graph(ds.path("ontology"))
    with_domain = {p for p in onto.object_properties
                   if next(rdf.objects(URIRef(p), RDFS.domain), None) is not None}
    mapped_ops = maps.properties() & set(onto.object_properties)
    assert len(with_domain) == 100
    assert len(with_domain & active.object_properties) == 75
    assert len(with_domain & mapped_ops) == 71
    assert len(mapped_ops) == 100

    assert (st.object_properties, st.declared, st.entailed, st.template, st.ontology,
            st.template_only, st.untyped, st.untyped_mapped) == (109, 72, 10, 100, 80, 28, 1, 0)
    assert graph.typed_by([T]) == mapped_ops
    assert st.edges["total"] == len(graph)


@pytest.mark.bgee
def test_bgee_template_typing(shared_dataset: Callable[[str], LocalDataset]) -> None:
    """Bgee: 15 active object properties — 13 declared ones (10 mapped genex/orth/up/RO
    properties, the 2 RO super-properties RO_0002206, RO_0002330, and RO_0002292, the
    inverse of a mapped one, which Ontop populates) and 2 undeclared terms mapped to IRIs
    (rdfs:seeAlso, lscr:xrefEnsemblGene).

    * The ontology types 12: every declared one except RO_0002162 ("in taxon"), which
      states no domain or range.
    * The templates type the 12 mapped ones; template-only: RO_0002162, rdfs:seeAlso,
      lscr:xrefEnsemblGene (3). Nothing is left untyped.
    """
    ds = shared_dataset("bgee")
    maps = parse_obda(ds.path("mapping"))
    active = build_active_ontology(parse_ontology(ds.path("ontology")), maps)
    st = typing_stats(build_class_graph(active, maps), active, maps)
    assert (st.object_properties, st.ontology, st.template, st.template_only, st.untyped) == (
        15, 12, 12, 3, 0)
