"""A bare number after a noun naming a class is the numbered thing's name (``numbered-name``).

"production licence 501" names the licence whose name is "501"; "an area of 501" and
"more than 501" are quantities. The rule needs both: the noun right before the number
names the class of an entity that stores the number as its name. The probe runs as
written against an rdflib graph standing in for the endpoint.
"""

from __future__ import annotations

import pytest
import rdflib
from synth_vkgs import XSD, GraphEndpoint, index_vkg

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.model.events import ValueMention
from navqa.online.context import SchemaContext
from navqa.online.reading.mentions import extract_mentions
from navqa.online.values import numbered_names

EX = "http://example.org/licences#"
ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Licence a owl:Class ; rdfs:label "licence" .
:ProductionLicence a owl:Class ; rdfs:subClassOf :Licence .
:Block a owl:Class ; rdfs:label "block" .
:name a owl:DatatypeProperty ; rdfs:label "name" ; rdfs:range xsd:string .
:area a owl:DatatypeProperty ; rdfs:label "area" ; rdfs:range xsd:integer .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tlicence
target\t\t:licence/{{id}} a :ProductionLicence ; :name {{n}}^^xsd:string ; \
:area {{a}}^^xsd:integer .
source\t\tSELECT id, n, a FROM licences

mappingId\tblock
target\t\t:block/{{id}} a :Block ; :name {{n}}^^xsd:string .
source\t\tSELECT id, n FROM blocks
]]
"""
LICENCES = [("501", 12), ("018", 501)]
BLOCKS = ["34"]


@pytest.fixture(scope="module")
def licences(navqa_config: NavqaConfig, embedder: Embedder,
             tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("licences"), "licences",
                     ONTOLOGY, MAPPING)


@pytest.fixture()
def endpoint() -> GraphEndpoint:
    g = rdflib.Graph()
    name, area = rdflib.URIRef(EX + "name"), rdflib.URIRef(EX + "area")
    for i, (n, a) in enumerate(LICENCES):
        s = rdflib.URIRef(f"{EX}licence/{i}")
        g.add((s, rdflib.RDF.type, rdflib.URIRef(EX + "ProductionLicence")))
        g.add((s, name, rdflib.Literal(n, datatype=rdflib.XSD.string)))
        g.add((s, area, rdflib.Literal(a, datatype=rdflib.XSD.integer)))
    for i, n in enumerate(BLOCKS):
        s = rdflib.URIRef(f"{EX}block/{i}")
        g.add((s, rdflib.RDF.type, rdflib.URIRef(EX + "Block")))
        g.add((s, name, rdflib.Literal(n, datatype=rdflib.XSD.string)))
    return GraphEndpoint(g, "memory:licences")


def _numbers(question: str) -> list[ValueMention]:
    return [v for v in extract_mentions(question).values if v.kind == "number"]


def test_a_number_after_the_class_noun_is_the_entity_name(licences: SchemaContext,
                                                          endpoint: GraphEndpoint) -> None:
    question = "Which wellbores were drilled in production licence 501?"
    found, probes = numbered_names(licences, endpoint, question, _numbers(question))
    assert probes == 1
    assert [(g.mention, g.stored, g.prop, g.classes) for g in found] == [
        (ValueMention("501", "string"), "501", EX + "name", (EX + "ProductionLicence",))]


@pytest.mark.parametrize("question", [
    "In production licence 501, which wellbores were drilled?",
    "List the wellbores drilled in production licence 501.",
])
def test_punctuation_after_the_number_ends_the_name(licences: SchemaContext,
                                                    endpoint: GraphEndpoint,
                                                    question: str) -> None:
    found, _ = numbered_names(licences, endpoint, question, _numbers(question))
    assert [(g.stored, g.classes) for g in found] == [("501", (EX + "ProductionLicence",))]


def test_the_noun_must_name_the_class_of_the_entity(licences: SchemaContext,
                                                    endpoint: GraphEndpoint) -> None:
    # "34" is stored as the name of a block, not of a licence
    question = "Which licences lie in licence 34?"
    assert numbered_names(licences, endpoint, question, _numbers(question))[0] == []
    question = "Which wellbores were drilled in block 34?"
    assert [g.classes for g in numbered_names(licences, endpoint, question,
                                              _numbers(question))[0]] == [(EX + "Block",)]


@pytest.mark.parametrize("question", [
    "Which licences have an area of 501?",  # "of": a quantity
    "Which licences have an area larger than 501?",  # a comparison
    "Which licences have 501 wellbores?",  # the number before the noun
    "Which licences lie in block 501.5?",  # a decimal, not a name
])
def test_a_quantity_stays_a_number(licences: SchemaContext, endpoint: GraphEndpoint,
                                   question: str) -> None:
    found, _ = numbered_names(licences, endpoint, question, _numbers(question))
    assert found == []
    assert _numbers(question), "the question has a number mention to leave alone"


def test_no_candidate_no_probe(licences: SchemaContext, endpoint: GraphEndpoint) -> None:
    assert numbered_names(licences, endpoint, "Which licences are there?", []) == ([], 0)
    assert endpoint.queries == []
