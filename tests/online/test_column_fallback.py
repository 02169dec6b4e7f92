"""An asked column that no property of the query's nodes gives: the entity an object
property links the answer to, when the phrase names that property (grammar rule
``column-fallback``).

A pipeline runs from one facility to another. "Which pipelines start at the Alpha
platform, and where do they end?" asks for a second column, the facility at the other
end, which is no value of the pipeline: the query joins it through ``pipelineToFacility``
and projects its name. The queries run as written against an rdflib graph standing in
for the endpoint.
"""

from __future__ import annotations

import pytest
import rdflib
from synth_vkgs import XSD, index_vkg, label_synth, nodes

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.model.rules import GrammarRule
from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions
from navqa.online.synthesis.plan import Plan
from navqa.online.values import GroundedValue

EX = "http://example.org/pipes#"
ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Pipeline a owl:Class ; rdfs:label "pipeline" .
:Facility a owl:Class ; rdfs:label "facility" .
:name a owl:DatatypeProperty ; rdfs:label "name" .
:pipelineFromFacility a owl:ObjectProperty ; rdfs:label "pipeline from facility" .
:pipelineToFacility a owl:ObjectProperty ; rdfs:label "pipeline to facility" .
:pipelineDimension a owl:DatatypeProperty ; rdfs:label "pipeline dimension" .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tfacility
target\t\t:facility/{{id}} a :Facility ; :name {{nam}}^^xsd:string .
source\t\tSELECT id, nam FROM facility

mappingId\tpipeline
target\t\t:pipeline/{{id}} a :Pipeline ; :name {{nam}}^^xsd:string ; \
:pipelineFromFacility :facility/{{src}} ; :pipelineToFacility :facility/{{dst}} ; \
:pipelineDimension {{dim}}^^xsd:decimal .
source\t\tSELECT id, nam, src, dst, dim FROM pipeline
]]
"""
FACILITIES = {"1": "ALPHA", "2": "BRAVO", "3": "CHARLIE"}
PIPELINES = [("P1", "1", "2"), ("P2", "1", "3"), ("P3", "2", "3")]  # (name, from, to)


@pytest.fixture(scope="module")
def pipes(navqa_config: NavqaConfig, embedder: Embedder,
          tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("pipes"), "pipes",
                     ONTOLOGY, MAPPING)


@pytest.fixture(scope="module")
def graph() -> rdflib.Graph:
    g = rdflib.Graph()

    def uri(local: str) -> rdflib.URIRef:
        return rdflib.URIRef(EX + local)

    for i, name in FACILITIES.items():
        g.add((uri(f"facility/{i}"), rdflib.RDF.type, uri("Facility")))
        g.add((uri(f"facility/{i}"), uri("name"), rdflib.Literal(name)))
    for name, src, dst in PIPELINES:
        p = uri(f"pipeline/{name}")
        g.add((p, rdflib.RDF.type, uri("Pipeline")))
        g.add((p, uri("name"), rdflib.Literal(name)))
        g.add((p, uri("pipelineFromFacility"), uri(f"facility/{src}")))
        g.add((p, uri("pipelineToFacility"), uri(f"facility/{dst}")))
        g.add((p, uri("pipelineDimension"), rdflib.Literal("20", datatype=rdflib.XSD.decimal)))
    return g


def _ask(ctx: SchemaContext, question: str, *, disabled: frozenset[GrammarRule] = frozenset()
         ) -> tuple[str, Plan]:
    mentions = extract_mentions(question)
    (value,) = [v for v in mentions.values if v.text == "Alpha"]
    grounding = GroundedValue(mention=value, prop=EX + "name", stored="ALPHA",
                              subject=EX + "facility/1", classes=(EX + "Facility",),
                              exact=True)
    return label_synth(ctx, disabled)(
        question, mentions, link(ctx, question, mentions), [grounding],
        Subgraph(EX + "Pipeline"))


def _props(sparql: str) -> set[str]:
    return {str(p) for n in nodes(sparql) if n.name == "BGP" for _, p, _ in n["triples"]}


QUESTION = "Which pipelines start at the Alpha facility, and where do they end?"


def test_the_other_end_is_joined_and_named(pipes: SchemaContext, graph: rdflib.Graph) -> None:
    sparql, plan = _ask(pipes, QUESTION)
    assert GrammarRule.COLUMN_FALLBACK in plan.rules
    assert {EX + "pipelineFromFacility", EX + "pipelineToFacility"} <= _props(sparql)
    rows = {tuple(str(x) for x in row) for row in graph.query(sparql)}
    assert rows == {(name, FACILITIES[dst]) for name, src, dst in PIPELINES if src == "1"}


def test_off_the_column_is_reported_as_not_placed(pipes: SchemaContext) -> None:
    sparql, plan = _ask(pipes, QUESTION, disabled=frozenset({GrammarRule.COLUMN_FALLBACK}))
    assert EX + "pipelineToFacility" not in _props(sparql)
    assert GrammarRule.COLUMN_FALLBACK not in plan.rules
    assert any("no property for the asked column" in line for line in plan.explain)


SIDES = {"start": EX + "pipelineFromFacility", "end": EX + "pipelineToFacility"}


@pytest.mark.parametrize("side", sorted(SIDES))
def test_the_side_said_before_a_value_picks_its_edge(pipes: SchemaContext, side: str) -> None:
    """Grammar rule ``anchor-side``: "start at Alpha" joins Alpha as the pipeline's start,
    "end at Alpha" as its end."""
    sparql, plan = _ask(pipes, f"Which pipelines {side} at the Alpha facility?")
    assert GrammarRule.ANCHOR_SIDE in plan.rules
    assert SIDES[side] in _props(sparql)
    assert (set(SIDES.values()) - {SIDES[side]}).isdisjoint(_props(sparql))


def test_off_the_side_is_not_read(pipes: SchemaContext) -> None:
    off = frozenset({GrammarRule.ANCHOR_SIDE})
    edges = {side: _props(_ask(pipes, f"Which pipelines {side} at the Alpha facility?",
                               disabled=off)[0]) & set(SIDES.values()) for side in SIDES}
    assert edges["start"] == edges["end"]
