"""Code-list labels the question spells out are constraints through the code (``code-value``).

"How many lighthouses are recorded?" asks for buildings whose structure function is the
code labelled "Lighthouse"@en: the mappings make ``StructureFunction`` a code list (its
instances carry only labels, and buildings point to them), its labels are fetched once,
and the classes that have the code come from one probe typed by the IRI templates. The
probes run as written against an rdflib graph standing in for the endpoint.
"""

from __future__ import annotations

import pytest
import rdflib
from synth_vkgs import XSD, GraphEndpoint, index_vkg, label_synth, nodes

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.model.iri import RDFS_LABEL
from navqa.online.code_lists import CodeLists, code_list_classes
from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions

EX = "http://example.org/topo#"
ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Building a owl:Class ; rdfs:label "building" .
:Tower a owl:Class ; rdfs:label "tower" .
:AttributeType a owl:Class ; rdfs:label "attribute type" .
:StructureFunction a owl:Class ; rdfs:subClassOf :AttributeType ;
    rdfs:label "structure function" .
:Region a owl:Class ; rdfs:label "region" .
:structureFunction a owl:ObjectProperty ; rdfs:range :StructureFunction .
:inRegion a owl:ObjectProperty ; rdfs:range :Region .
:height a owl:DatatypeProperty ; rdfs:range xsd:decimal .
:population a owl:DatatypeProperty ; rdfs:range xsd:integer .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
rdfs:\t\thttp://www.w3.org/2000/01/rdf-schema#
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tbuilding
target\t\t:building/{{id}} a :Building ; rdfs:label {{nam}}^^xsd:string ; \
:height {{h}}^^xsd:decimal ; :structureFunction :function/{{f}} ; :inRegion :region/{{r}} .
source\t\tSELECT id, nam, h, f, r FROM buildings

mappingId\ttower
target\t\t:tower/{{id}} a :Tower ; rdfs:label {{nam}}^^xsd:string ; \
:structureFunction :function/{{f}} .
source\t\tSELECT id, nam, f FROM towers

mappingId\tfunction
target\t\t:function/{{code}} a :StructureFunction ; rdfs:label {{en}}@en ; rdfs:label {{de}}@de .
source\t\tSELECT code, en, de FROM functions

mappingId\tregion
target\t\t:region/{{id}} a :Region ; rdfs:label {{nam}}^^xsd:string ; \
:population {{p}}^^xsd:integer .
source\t\tSELECT id, nam, p FROM regions
]]
"""
FUNCTIONS = [("1", "Lighthouse", "Leuchtturm"), ("2", "Museum", "Museum"),
             ("3", "Transmission tower, radio tower", "Sendeturm, Funkturm"),
             ("4", "Tower", "Turm"), ("5", "Mill", "Mühle")]
BUILDINGS = [("1", "Roter Sand", "1"), ("2", "Kunsthalle", "2"), ("3", "Westerhever", "1")]
TOWERS = [("1", "Fernsehturm", "3")]


@pytest.fixture(scope="module")
def topo(navqa_config: NavqaConfig, embedder: Embedder,
         tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("topo"), "topo",
                     ONTOLOGY, MAPPING)


@pytest.fixture()
def endpoint() -> GraphEndpoint:
    g = rdflib.Graph()
    label, sf = rdflib.RDFS.label, rdflib.URIRef(EX + "structureFunction")
    for code, en, de in FUNCTIONS:
        s = rdflib.URIRef(f"{EX}function/{code}")
        g.add((s, rdflib.RDF.type, rdflib.URIRef(EX + "StructureFunction")))
        g.add((s, rdflib.RDF.type, rdflib.URIRef(EX + "AttributeType")))  # as Ontop infers
        g.add((s, label, rdflib.Literal(en, lang="en")))
        g.add((s, label, rdflib.Literal(de, lang="de")))
    for cls, rows in (("Building", BUILDINGS), ("Tower", TOWERS)):
        for i, name, f in rows:
            s = rdflib.URIRef(f"{EX}{cls.lower()}/{i}")
            g.add((s, rdflib.RDF.type, rdflib.URIRef(EX + cls)))
            g.add((s, label, rdflib.Literal(name, datatype=rdflib.XSD.string)))
            g.add((s, sf, rdflib.URIRef(f"{EX}function/{f}")))
    return GraphEndpoint(g, "memory:topo")


def test_code_lists_come_from_the_mappings(topo: SchemaContext) -> None:
    # only labels, pointed to by buildings and towers (the superclass through its
    # subclass); a region has a population
    assert code_list_classes(topo) == [EX + "AttributeType", EX + "StructureFunction"]


def test_a_plural_names_the_code_and_the_classes_that_have_it(
        topo: SchemaContext, endpoint: GraphEndpoint) -> None:
    # the label is on the code list and on its superclass: the code list's, once
    codes = CodeLists(topo, endpoint)
    found, probes = codes.match("How many lighthouses are recorded?", [])
    assert [(m.grounding.stored, m.grounding.lang, m.grounding.prop, m.grounding.classes,
             m.grounding.mention.text, m.owners) for m in found] == [
        ("Lighthouse", "en", RDFS_LABEL, (EX + "StructureFunction",), "lighthouses",
         (EX + "Building",))]
    assert probes == 3  # the labels of both classes, then the owners of the code
    found, probes = codes.match("Which lighthouses are there?", [])
    assert [m.grounding.stored for m in found] == ["Lighthouse"] and probes == 1


def test_a_synonym_in_a_label_matches_and_the_whole_label_is_the_value(
        topo: SchemaContext, endpoint: GraphEndpoint) -> None:
    found, _ = CodeLists(topo, endpoint).match("Which radio towers are the tallest?", [])
    assert [(m.grounding.stored, m.owners) for m in found] == [
        ("Transmission tower, radio tower", (EX + "Tower",))]


def test_class_names_short_labels_and_named_spans_do_not_match(
        topo: SchemaContext, endpoint: GraphEndpoint) -> None:
    codes = CodeLists(topo, endpoint)
    # "Tower" is a class's name: the class, not the code; "Mill" is too short
    assert codes.match("Which towers stand near a mill?", [])[0] == []
    question = "Where is the museum 'Museum Folkwang'?"
    start = question.index("Museum Folkwang")
    found, _ = codes.match(question, [(start, start + len("Museum Folkwang"))])
    assert [m.start for m in found] == [question.index("museum")]


def test_only_labels_in_the_question_language_match(topo: SchemaContext,
                                                     endpoint: GraphEndpoint) -> None:
    question = "Which Leuchtturm stands on Roter Sand?"
    assert CodeLists(topo, endpoint).match(question, [])[0] == []
    found, _ = CodeLists(topo, endpoint, language="de").match(question, [])
    assert [(m.grounding.stored, m.grounding.lang) for m in found] == [("Leuchtturm", "de")]


def test_a_code_no_feature_has_has_no_owner(topo: SchemaContext,
                                            endpoint: GraphEndpoint) -> None:
    endpoint.graph.remove((None, rdflib.URIRef(EX + "structureFunction"),
                           rdflib.URIRef(EX + "function/2")))
    (m,) = CodeLists(topo, endpoint).match("How many museums are recorded?", [])[0]
    assert m.grounding.stored == "Museum" and m.owners == ()


def test_a_vkg_without_code_lists_asks_nothing(navqa_config: NavqaConfig, embedder: Embedder,
                                               tmp_path_factory: pytest.TempPathFactory
                                               ) -> None:
    ontology = ONTOLOGY.replace(":StructureFunction a owl:Class", ":StructureFunction "
                                "a owl:Class ; rdfs:comment \"coded\"")
    mapping = MAPPING.replace("rdfs:label {de}@de", ":height {h}^^xsd:decimal") \
        .replace("SELECT code, en, de FROM functions", "SELECT code, en, h FROM functions")
    ctx = index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("plain"), "plain",
                    ontology, mapping)
    assert code_list_classes(ctx) == []
    empty = GraphEndpoint(rdflib.Graph())
    assert CodeLists(ctx, empty).match("How many lighthouses are recorded?", []) == ([], 0)
    assert empty.queries == []


def test_the_query_joins_the_code_by_its_label_and_language(
        topo: SchemaContext, endpoint: GraphEndpoint) -> None:
    question = "How many lighthouses are recorded?"
    (m,) = CodeLists(topo, endpoint).match(question, [])[0]
    mentions = extract_mentions(question)
    sparql, _ = label_synth(topo)(question, mentions, link(topo, question, mentions),
                                         [m.grounding], Subgraph(EX + "Building"))
    triples = {t for n in nodes(sparql) if n.name == "BGP" for t in n["triples"]}
    (sf,) = [o for s, p, o in triples if p == rdflib.URIRef(EX + "structureFunction")]
    assert (sf, rdflib.RDFS.label, rdflib.Literal("Lighthouse", lang="en")) in triples
    # run as written: the buildings with the code, not the code's other-language twin
    assert [int(r[0]) for r in endpoint.graph.query(sparql)] == [2]
