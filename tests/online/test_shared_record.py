"""Two values of different classes held by one record (grammar rule ``shared-record``).

A gene is expressed in tissues, in stages and in conditions, each a tissue at a stage (as
Bgee's ``isExpressedIn`` reaches anatomical entities, stages and expression conditions).
"Which genes are expressed in the head during the adult stage?" asks for genes with one
condition that is both: joined to the gene on its own, each value may come from another
condition. On a small VKG indexed here; the queries run as written on rdflib.
"""

from __future__ import annotations

import pytest
import rdflib
from synth_vkgs import XSD, index_vkg, label_synth

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.model.events import ValueMention
from navqa.model.rules import GrammarRule
from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions
from navqa.online.values import GroundedValue

EX = "http://example.org/expression#"
ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Gene a owl:Class ; rdfs:label "gene" .
:Tissue a owl:Class ; rdfs:label "tissue" .
:Stage a owl:Class ; rdfs:label "developmental stage" .
:Condition a owl:Class ; rdfs:label "expression condition" .
:name a owl:DatatypeProperty ; rdfs:label "name" .
:expressedIn a owl:ObjectProperty ; rdfs:label "is expressed in" .
:inTissue a owl:ObjectProperty ; rdfs:label "has anatomical entity" .
:atStage a owl:ObjectProperty ; rdfs:label "has developmental stage" .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tgene
target\t\t:gene/{{id}} a :Gene ; :name {{n}}^^xsd:string .
source\t\tSELECT id, n FROM gene

mappingId\ttissue
target\t\t:tissue/{{id}} a :Tissue ; :name {{n}}^^xsd:string .
source\t\tSELECT id, n FROM tissue

mappingId\tstage
target\t\t:stage/{{id}} a :Stage ; :name {{n}}^^xsd:string .
source\t\tSELECT id, n FROM stage

mappingId\tcondition
target\t\t:cond/{{id}} a :Condition ; :inTissue :tissue/{{t}} ; :atStage :stage/{{s}} .
source\t\tSELECT id, t, s FROM cond

mappingId\tin-condition
target\t\t:gene/{{g}} :expressedIn :cond/{{c}} .
source\t\tSELECT g, c FROM expr

mappingId\tin-tissue
target\t\t:gene/{{g}} :expressedIn :tissue/{{t}} .
source\t\tSELECT g, t FROM expr JOIN cond ON expr.c = cond.id

mappingId\tat-stage
target\t\t:gene/{{g}} :expressedIn :stage/{{s}} .
source\t\tSELECT g, s FROM expr JOIN cond ON expr.c = cond.id
]]
"""
# condition: (tissue, stage); each gene's conditions
CONDITIONS = {"c1": ("head", "adult stage"), "c2": ("head", "larval stage"),
              "c3": ("leg", "adult stage")}
GENES = {"g1": ["c1"], "g2": ["c2", "c3"]}
QUESTION = "Which genes are expressed in the head during the adult stage?"


@pytest.fixture(scope="module")
def expression(navqa_config: NavqaConfig, embedder: Embedder,
               tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("expression"),
                     "expression", ONTOLOGY, MAPPING)


def _iri(kind: str, name: str) -> rdflib.URIRef:
    return rdflib.URIRef(f"{EX}{kind}/{name.replace(' ', '_')}")


@pytest.fixture(scope="module")
def graph() -> rdflib.Graph:
    g = rdflib.Graph()
    u, name, into = rdflib.URIRef, rdflib.URIRef(EX + "name"), rdflib.URIRef(EX + "expressedIn")
    for c, (tissue, stage) in CONDITIONS.items():
        g.add((_iri("cond", c), rdflib.RDF.type, u(EX + "Condition")))
        g.add((_iri("cond", c), u(EX + "inTissue"), _iri("tissue", tissue)))
        g.add((_iri("cond", c), u(EX + "atStage"), _iri("stage", stage)))
        g.add((_iri("tissue", tissue), name, rdflib.Literal(tissue)))
        g.add((_iri("stage", stage), name, rdflib.Literal(stage)))
    for gene, conds in GENES.items():
        g.add((_iri("gene", gene), rdflib.RDF.type, u(EX + "Gene")))
        g.add((_iri("gene", gene), name, rdflib.Literal(gene)))
        for c in conds:
            tissue, stage = CONDITIONS[c]
            for o in (_iri("cond", c), _iri("tissue", tissue), _iri("stage", stage)):
                g.add((_iri("gene", gene), into, o))
    return g


def _genes(ctx: SchemaContext, graph: rdflib.Graph,
           disabled: frozenset[GrammarRule] = frozenset()) -> tuple[set[str], set[str]]:
    mentions = extract_mentions(QUESTION)
    values = [GroundedValue(ValueMention(text, "string"), EX + "name", text,
                            str(_iri(kind, text)), (EX + cls,), True)
              for text, kind, cls in (("head", "tissue", "Tissue"),
                                      ("adult stage", "stage", "Stage"))]
    sparql, plan = label_synth(ctx, disabled)(QUESTION, mentions,
                                              link(ctx, QUESTION, mentions), values,
                                              Subgraph(EX + "Gene"))
    rows = {str(row[0]) for row in graph.query(sparql)}  # type: ignore[union-attr]
    return rows, {r.value for r in plan.rules}


def test_both_values_come_from_one_condition(expression: SchemaContext,
                                             graph: rdflib.Graph) -> None:
    rows, rules = _genes(expression, graph)
    assert GrammarRule.SHARED_RECORD.value in rules
    assert rows == {"g1"}  # g2 is expressed in the head and at the adult stage, apart


def test_off_each_value_is_joined_on_its_own(expression: SchemaContext,
                                             graph: rdflib.Graph) -> None:
    rows, rules = _genes(expression, graph, frozenset({GrammarRule.SHARED_RECORD}))
    assert GrammarRule.SHARED_RECORD.value not in rules
    assert rows == {"g1", "g2"}
