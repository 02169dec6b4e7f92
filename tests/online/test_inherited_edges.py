"""A property mapped on a class and on one of its subclasses stays a property of the
class's other subclasses.

In a VKG the mappings often state a property twice: on the general class (every
facility has a name) and again on a subclass with a table of its own (the units of a
terminal have names too). The schema context's most specific view of Ga must not let the
subclass's edge replace the general one, or the other subclasses lose the property: the
name of a platform would then be looked for among its codes.
"""

from __future__ import annotations

import pytest
from synth_vkgs import XSD, index_vkg

from navqa.online.context import SchemaContext

EX = "http://example.org/inherited#"

ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Facility a owl:Class ; rdfs:label "facility" .
:Platform a owl:Class ; rdfs:subClassOf :Facility ; rdfs:label "platform" .
:Terminal a owl:Class ; rdfs:subClassOf :Facility ; rdfs:label "terminal" .
:Operator a owl:Class ; rdfs:label "operator" .
:name a owl:DatatypeProperty ; rdfs:label "name" ; rdfs:range xsd:string .
:code a owl:DatatypeProperty ; rdfs:label "code" ; rdfs:range xsd:string .
:waterDepth a owl:DatatypeProperty ; rdfs:label "water depth" ; rdfs:range xsd:decimal .
:operatedBy a owl:ObjectProperty ; rdfs:label "operated by" .
"""

MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tfacility
target\t\t:facility/{{id}} a :Facility ; :name {{name}}^^xsd:string ; \
:operatedBy :operator/{{operator_id}} .
source\t\tSELECT id, name, operator_id FROM facility

mappingId\tplatform
target\t\t:facility/{{id}} a :Platform ; :code {{code}}^^xsd:string ; \
:waterDepth {{depth}}^^xsd:decimal .
source\t\tSELECT id, code, depth FROM platform

mappingId\tterminal
target\t\t:terminal/{{id}} a :Terminal ; :name {{name}}^^xsd:string ; \
:operatedBy :operator/{{operator_id}} .
source\t\tSELECT id, name, operator_id FROM terminal

mappingId\toperator
target\t\t:operator/{{id}} a :Operator ; :name {{name}}^^xsd:string .
source\t\tSELECT id, name FROM operator
]]
"""


@pytest.fixture(scope="module")
def ctx(navqa_config, embedder, tmp_path_factory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("inherited"), "inherited",
                     ONTOLOGY, MAPPING)


def _data(ctx: SchemaContext, cls: str) -> set[str]:
    return {e.prop.removeprefix(EX) for e in ctx.data_properties_of(EX + cls)}


def test_a_subclass_mapping_does_not_hide_the_general_one(ctx) -> None:
    # the name is mapped on Facility and again on Terminal; Platform has only codes itself
    assert {"name", "code", "waterDepth"} <= _data(ctx, "Platform")
    assert ctx.name_property(EX + "Platform") == EX + "name"
    assert ctx.name_property(EX + "Terminal") == EX + "name"
    assert ctx.name_property(EX + "Facility") == EX + "name"


def test_object_edges_of_the_general_class_reach_every_subclass(ctx) -> None:
    out = {(n.edge.prop.removeprefix(EX), n.other.removeprefix(EX))
           for n in ctx.neighbours(EX + "Platform", data=False) if n.direction == "out"}
    assert ("operatedBy", "Operator") in out


def test_the_subclass_edge_adds_nothing_next_to_the_general_one(ctx) -> None:
    # one ⟨·, name, string⟩ edge for the facility lineage: Terminal's is subsumed
    ends = {e.source.removeprefix(EX) for e in ctx.specific_edges if e.prop == EX + "name"}
    assert "Facility" in ends and "Terminal" not in ends
