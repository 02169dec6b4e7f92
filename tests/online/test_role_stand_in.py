"""A mapped class the question's role words name stands in for an unmapped one
(grammar rule ``role-stand-in``).

"Which rig drilled wellbore W-1?": the ontology has a class ``Rig``, but no mapping
populates it; a drilling rig is recorded as a facility that wellbores point to through
``drillingFacility``. Of the mapped classes that could stand in for the rig, the one an
object property names in the role the question's verb says ("drilling facility", for
"drilled") wins over a sibling of the rig under ``Equipment``. A property named
with a preposition ("wellbore for field") names no role. The queries run as written
against an rdflib graph standing in for the endpoint.
"""

from __future__ import annotations

import pytest
import rdflib
from synth_vkgs import XSD, GraphEndpoint, index_vkg, label_synth, nodes

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.answer_type import offline_answer_type
from navqa.online.reading.mentions import extract_mentions
from navqa.online.values import GroundedValue

EX = "http://example.org/drill#"
ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Equipment a owl:Class ; rdfs:label "equipment" .
:Rig a owl:Class ; rdfs:subClassOf :Equipment ; rdfs:label "rig" ;
    rdfs:comment "A derrick and the machinery used when drilling for oil or gas." .
:Crane a owl:Class ; rdfs:subClassOf :Equipment ; rdfs:label "crane" .
:Sidetrack a owl:Class ; rdfs:subClassOf :Equipment ; rdfs:label "sidetrack" .
:Facility a owl:Class ; rdfs:label "facility" .
:Wellbore a owl:Class ; rdfs:label "wellbore" .
:Field a owl:Class ; rdfs:label "field" .
:name a owl:DatatypeProperty ; rdfs:label "name" .
:drillingFacility a owl:ObjectProperty ; rdfs:label "drilling facility" .
:craneFacility a owl:ObjectProperty ; rdfs:label "crane facility" .
:wellboreForField a owl:ObjectProperty ; rdfs:label "wellbore for field" .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\twellbore
target\t\t:wellbore/{{id}} a :Wellbore ; :name {{nam}}^^xsd:string ; \
:drillingFacility :facility/{{fac}} ; :wellboreForField :field/{{fld}} .
source\t\tSELECT id, nam, fac, fld FROM wellbores

mappingId\tfacility
target\t\t:facility/{{id}} a :Facility ; :name {{nam}}^^xsd:string .
source\t\tSELECT id, nam FROM facilities

mappingId\tcrane
target\t\t:crane/{{id}} a :Crane ; :name {{nam}}^^xsd:string ; :craneFacility :facility/{{fac}} .
source\t\tSELECT id, nam, fac FROM cranes

mappingId\tfield
target\t\t:field/{{id}} a :Field ; :name {{nam}}^^xsd:string .
source\t\tSELECT id, nam FROM fields
]]
"""


@pytest.fixture(scope="module")
def drill(navqa_config: NavqaConfig, embedder: Embedder,
          tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("drill"), "drill",
                     ONTOLOGY, MAPPING)


@pytest.fixture()
def endpoint() -> GraphEndpoint:
    g = rdflib.Graph()
    name = rdflib.URIRef(EX + "name")

    def add(kind: str, i: str, label: str, **links: str) -> None:
        s = rdflib.URIRef(f"{EX}{kind.lower()}/{i}")
        g.add((s, rdflib.RDF.type, rdflib.URIRef(EX + kind)))
        g.add((s, name, rdflib.Literal(label)))  # plain: rdflib tells it from ^^xsd:string
        for prop, target in links.items():
            g.add((s, rdflib.URIRef(EX + prop), rdflib.URIRef(EX + target)))

    add("Facility", "1", "OCEAN VIKING")
    add("Facility", "2", "WEST ALPHA")
    add("Field", "1", "TROLL")
    add("Wellbore", "1", "W-1", drillingFacility="facility/1", wellboreForField="field/1")
    add("Wellbore", "2", "W-2", drillingFacility="facility/2", wellboreForField="field/1")
    add("Crane", "1", "CRANE 7", craneFacility="facility/2")
    return GraphEndpoint(g, "memory:drill")


@pytest.mark.parametrize("question", [
    "Which rig drilled wellbore W-1?",
    "Which rig has drilled wellbore W-2?",
])
def test_the_role_the_question_says_chooses_the_stand_in(drill: SchemaContext,
                                                         question: str) -> None:
    at = offline_answer_type(drill, question, extract_mentions(question))
    assert (at.cls, at.role) == (EX + "Facility", EX + "drillingFacility")
    assert "unmapped" in at.phrase and "Rig" in at.phrase


def test_off_the_sibling_of_the_unmapped_class_stands_in(drill: SchemaContext) -> None:
    question = "Which rig drilled wellbore W-1?"
    at = offline_answer_type(drill, question, extract_mentions(question), roles=False)
    assert at.cls == EX + "Crane" and at.role is None


def test_a_property_named_with_a_preposition_names_no_role(drill: SchemaContext) -> None:
    # "wellbore for field" ends in the field's name, and the question says "wellbore";
    # "a rig of a wellbore" is no field, and nothing names the rig's drilling role here
    question = "Which rig is used on wellbore W-1?"
    at = offline_answer_type(drill, question, extract_mentions(question))
    assert at.cls != EX + "Field" and at.role is None


@pytest.mark.parametrize("question", [
    # "sidetracks were drilled": the sidetracks undergo the drilling, they are not the
    # drilling facility
    "Which sidetracks were drilled on wellbore W-1?",
    # a modifier names a kind of the thing, not its role
    "Which drilling sidetracks are there?",
])
def test_only_an_active_verb_names_the_answer_s_role(drill: SchemaContext,
                                                     question: str) -> None:
    at = offline_answer_type(drill, question, extract_mentions(question))
    assert "unmapped" in at.phrase and at.role is None and at.cls != EX + "Facility"


def test_a_question_naming_a_mapped_class_needs_no_stand_in(drill: SchemaContext) -> None:
    question = "Which facility drilled wellbore W-1?"
    at = offline_answer_type(drill, question, extract_mentions(question))
    assert (at.cls, at.role) == (EX + "Facility", None)


def test_the_query_on_the_stand_in_joins_the_role(drill: SchemaContext,
                                                  endpoint: GraphEndpoint) -> None:
    question = "Which rig drilled wellbore W-1?"
    mentions = extract_mentions(question)
    (value,) = [v for v in mentions.values if v.text == "W-1"]
    grounding = GroundedValue(mention=value, prop=EX + "name", stored="W-1",
                              subject=EX + "wellbore/1", classes=(EX + "Wellbore",), exact=True)
    synth = label_synth(drill)
    sparql, _ = synth(question, mentions, link(drill, question, mentions), [grounding],
                      Subgraph(EX + "Facility"))
    triples = {t for n in nodes(sparql) if n.name == "BGP" for t in n["triples"]}
    assert any(p == rdflib.URIRef(EX + "drillingFacility") for _, p, _ in triples)
    assert [str(r[0]) for r in endpoint.graph.query(sparql)] == ["OCEAN VIKING"]
