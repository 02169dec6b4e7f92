"""Recall evidence: what brings a gold property into the index text and the chosen subgraph.

* every textual annotation of a term (not only ``rdfs:comment``: an ontology's own
  ``definition`` annotation property, an undeclared ``skos:altLabel``) reaches the model
  (``notes``), the description that is embedded, and the lexical evidence;
* the best linked properties stay in the context on the class the schema attaches them
  to, even when the judge did not follow them.

The schema is built so that the name of the properties in question says nothing: only
their annotations do.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.offline.artifacts import build_index, load_index
from navqa.offline.descriptions import ElementKind, describe_element
from navqa.offline.ontology_parser import parse_ontology
from navqa.online.context import SchemaContext
from navqa.online.expansion import ContextRequest, Subgraph, complete
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions
from navqa.online.verbalize import edge_cost, token_count, verbalize

EX = "http://example.org/harbour#"
XSD = "http://www.w3.org/2001/XMLSchema#"
DEFINITION = "The berth where the ship is moored overnight."

ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix dcterms: <http://purl.org/dc/terms/> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:definition a owl:AnnotationProperty .
:Ship a owl:Class ; rdfs:label "ship" ; dcterms:created "2020-01-01"^^xsd:date ;
    rdfs:isDefinedBy "http://example.org/harbour/module-ships" .
:Berth a owl:Class ; rdfs:label "berth" .
:Basin a owl:Class ; rdfs:label "basin" .
:inBasin a owl:ObjectProperty ; rdfs:domain :Berth ; rdfs:range :Basin .
:q10 a owl:DatatypeProperty ; rdfs:domain :Basin ; rdfs:range xsd:integer .
:q7 a owl:DatatypeProperty ; rdfs:domain :Ship ; rdfs:range xsd:string ;
    :definition "{DEFINITION}" .
:q8 a owl:ObjectProperty ; rdfs:domain :Ship ; rdfs:range :Berth ;
    skos:altLabel "mooring place" .
:q9 a owl:DatatypeProperty ; rdfs:domain :Ship ; rdfs:range xsd:integer .
:name a owl:DatatypeProperty ; rdfs:label "name" ; rdfs:range xsd:string .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tship
target\t\t:ship/{{id}} a :Ship ; :name {{n}}^^xsd:string ; :q7 {{a}}^^xsd:string ; \
:q9 {{b}}^^xsd:integer ; :q8 :berth/{{c}} .
source\t\tSELECT id, n, a, b, c FROM t1

mappingId\tberth
target\t\t:berth/{{id}} a :Berth ; :name {{n}}^^xsd:string ; :inBasin :basin/{{b}} .
source\t\tSELECT id, n, b FROM t2

mappingId\tbasin
target\t\t:basin/{{id}} a :Basin ; :q10 {{d}}^^xsd:integer .
source\t\tSELECT id, d FROM t3
]]
"""


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d: Path = tmp_path_factory.mktemp("harbour")
    (d / "harbour.ttl").write_text(ONTOLOGY, encoding="utf-8")
    (d / "harbour.obda").write_text(MAPPING, encoding="utf-8")
    return d


@pytest.fixture(scope="module")
def harbour(navqa_config: NavqaConfig, embedder: Embedder, files: Path) -> SchemaContext:
    bundle = build_index(navqa_config, ontology_path=files / "harbour.ttl",
                         mapping_path=files / "harbour.obda", out_dir=files / "idx",
                         embedder=embedder, name="harbour")
    return SchemaContext(bundle, embedder)


def test_custom_annotation_property_reaches_the_notes(files: Path) -> None:
    onto = parse_ontology(files / "harbour.ttl")
    q7 = onto.property(EX + "q7")
    assert q7 is not None and [n.text for n in q7.notes] == [DEFINITION]
    q8 = onto.property(EX + "q8")
    assert q8 is not None and [n.text for n in q8.notes] == ["mooring place"]
    # a date and a bare IRI written as a literal are no text; the label is not repeated
    ship = onto.classes[EX + "Ship"]
    assert ship.notes == ()
    assert q7.comments == ()  # comments keep their meaning: rdfs:comment and the like


def test_custom_annotation_reaches_the_description(files: Path) -> None:
    onto = parse_ontology(files / "harbour.ttl")
    text = describe_element(onto, EX + "q7", ElementKind.DATA_PROPERTY)
    assert DEFINITION in text
    assert "mooring place" in describe_element(onto, EX + "q8", ElementKind.OBJECT_PROPERTY)


def test_index_keeps_the_notes_and_embeds_them(harbour: SchemaContext, files: Path) -> None:
    bundle = load_index(files / "idx")
    q7 = bundle.ontology.property(EX + "q7")
    assert q7 is not None and [n.text for n in q7.notes] == [DEFINITION]  # survives pickling
    assert DEFINITION in bundle.descriptions[EX + "q7"].text


def test_custom_annotation_is_lexical_evidence(harbour: SchemaContext) -> None:
    question = "Where is each ship moored overnight?"
    lk = link(harbour, question, extract_mentions(question), k=2, k_props=2)
    assert lk.lexical.get(EX + "q7", 0.0) > 0.0
    assert EX + "q9" not in lk.lexical


def _complete(ctx: SchemaContext, sub: Subgraph, request: ContextRequest) -> Subgraph:
    return complete(ctx, sub, request, lambda g, e: edge_cost(ctx, g, e),
                    token_count(verbalize(ctx, sub)))


def test_top_linked_property_stays_in_the_subgraph(harbour: SchemaContext) -> None:
    # the judge followed nothing (empty expansion), the linking ranked q9 then q8 first
    sub = Subgraph(root=EX + "Ship", nodes={EX + "Ship"})
    quiet = ContextRequest(per_class=0)
    assert EX + "q9" not in {e.prop for e in _complete(harbour, sub, quiet).all_edges}
    out = _complete(harbour, sub, ContextRequest(per_class=0, linked=(EX + "q9", EX + "q8")))
    triples = {e.triple for e in out.all_edges}
    assert any(s == EX + "Ship" and p == EX + "q9" for s, p, _ in triples)
    # an object property brings its other end
    assert (EX + "Ship", EX + "q8", EX + "Berth") in triples and EX + "Berth" in out.classes
    assert sub.context == []  # the input is not changed


def test_only_the_first_linked_properties_enter(harbour: SchemaContext) -> None:
    sub = Subgraph(root=EX + "Ship", nodes={EX + "Ship"})
    out = _complete(harbour, sub, ContextRequest(per_class=0, linked=(EX + "q9", EX + "q7"),
                                                 linked_k=1))
    props = {e.prop for e in out.all_edges}
    assert EX + "q9" in props and EX + "q7" not in props


def test_linked_property_far_from_the_subgraph_does_not_enter(harbour: SchemaContext) -> None:
    # q10 hangs on Basin, two edges from a subgraph of Ship alone: nothing is added
    sub = Subgraph(root=EX + "Ship", nodes={EX + "Ship"})
    out = _complete(harbour, sub, ContextRequest(per_class=0, linked=(EX + "q10",)))
    assert EX + "q10" not in {e.prop for e in out.all_edges}
    near = Subgraph(root=EX + "Berth", nodes={EX + "Berth"})
    out = _complete(harbour, near, ContextRequest(per_class=0, linked=(EX + "q10",)))
    assert EX + "q10" in {e.prop for e in out.all_edges}


def test_linked_properties_respect_the_budget(harbour: SchemaContext) -> None:
    sub = Subgraph(root=EX + "Ship", nodes={EX + "Ship"})
    out = _complete(harbour, sub, ContextRequest(per_class=0, linked=(EX + "q9",), budget=0))
    assert out.context == []


def test_linked_property_one_edge_away_comes_with_its_edge(harbour: SchemaContext) -> None:
    # q9 hangs on Ship, one q8 edge from a subgraph of Berth alone
    sub = Subgraph(root=EX + "Berth", nodes={EX + "Berth"})
    out = _complete(harbour, sub, ContextRequest(per_class=0, linked=(EX + "q9",)))
    triples = {e.triple for e in out.all_edges}
    assert (EX + "Ship", EX + "q8", EX + "Berth") in triples
    assert any(s == EX + "Ship" and p == EX + "q9" for s, p, _ in triples)


def test_property_chain_is_shown_on_the_root(harbour: SchemaContext) -> None:
    # a chain the question needs (a spatial one: geometry, then its WKT) enters on the root
    sub = Subgraph(root=EX + "Ship", nodes={EX + "Ship"})
    chain = (EX + "q8", EX + "inBasin")
    plain = _complete(harbour, sub, ContextRequest(per_class=0))
    assert (EX + "Berth", EX + "inBasin", EX + "Basin") not in {e.triple for e in plain.all_edges}
    out = _complete(harbour, sub, ContextRequest(per_class=0, chains=((EX + "q7",), chain)))
    triples = {e.triple for e in out.all_edges}
    assert (EX + "Ship", EX + "q7", XSD + "string") in triples  # the first chain it has
    assert (EX + "Berth", EX + "inBasin", EX + "Basin") not in triples
    out = _complete(harbour, sub, ContextRequest(per_class=0, chains=(chain,)))
    triples = {e.triple for e in out.all_edges}
    assert {(EX + "Ship", EX + "q8", EX + "Berth"),
            (EX + "Berth", EX + "inBasin", EX + "Basin")} <= triples
    # a chain the schema breaks adds nothing
    broken = _complete(harbour, sub, ContextRequest(per_class=0, chains=((EX + "q7", EX + "q8"),)))
    assert broken.context == plain.context
