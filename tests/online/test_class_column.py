"""An asked column that names a class linked to the answer: the linked entity, not a value
that shares only the class's name (grammar rule ``class-column``).

A discovery may be included in a field; the mapping also gives the date it was included
(``dateIncludedInField``). "…together with the field they belong to" asks for the field:
the date property matches the phrase only through the word *field*, the label of the
class ``includedInField`` links to, so the query joins the field and projects its name.
A phrase that names the date too ("…and the date they were included in a field") keeps
the date. The queries run as written against an rdflib graph standing in for the
endpoint.
"""

from __future__ import annotations

import pytest
import rdflib
from synth_vkgs import XSD, index_vkg, label_synth

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.model.rules import GrammarRule
from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions
from navqa.online.synthesis.plan import Plan

EX = "http://example.org/finds#"
ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Discovery a owl:Class ; rdfs:label "discovery" .
:Field a owl:Class ; rdfs:label "field" .
:name a owl:DatatypeProperty ; rdfs:label "name" .
:discoveryYear a owl:DatatypeProperty ; rdfs:label "discovery year" .
:dateIncludedInField a owl:DatatypeProperty ; rdfs:label "date included in field" .
:includedInField a owl:ObjectProperty ; rdfs:label "included in field" .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tfield
target\t\t:field/{{id}} a :Field ; :name {{nam}}^^xsd:string .
source\t\tSELECT id, nam FROM field

mappingId\tdiscovery
target\t\t:discovery/{{id}} a :Discovery ; :name {{nam}}^^xsd:string ; \
:discoveryYear {{yr}}^^xsd:integer .
source\t\tSELECT id, nam, yr FROM discovery

mappingId\tdiscovery-field
target\t\t:discovery/{{id}} :includedInField :field/{{fld}} ; \
:dateIncludedInField {{since}}^^xsd:date .
source\t\tSELECT id, fld, since FROM discovery WHERE fld IS NOT NULL
]]
"""
FIELDS = {"1": "NORTH", "2": "SOUTH"}
# (name, year, field, date included)
DISCOVERIES = [("D1", 2009, "1", "2011-05-01"), ("D2", 2009, "2", "2012-01-15"),
               ("D3", 2010, "1", "2013-03-03")]
QUESTION = "List the discoveries made in 2009 together with the field they belong to."


@pytest.fixture(scope="module")
def finds(navqa_config: NavqaConfig, embedder: Embedder,
          tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("finds"), "finds",
                     ONTOLOGY, MAPPING)


@pytest.fixture(scope="module")
def graph() -> rdflib.Graph:
    g = rdflib.Graph()

    def uri(local: str) -> rdflib.URIRef:
        return rdflib.URIRef(EX + local)

    for i, name in FIELDS.items():
        g.add((uri(f"field/{i}"), rdflib.RDF.type, uri("Field")))
        g.add((uri(f"field/{i}"), uri("name"), rdflib.Literal(name)))
    for name, year, fld, since in DISCOVERIES:
        d = uri(f"discovery/{name}")
        g.add((d, rdflib.RDF.type, uri("Discovery")))
        g.add((d, uri("name"), rdflib.Literal(name)))
        g.add((d, uri("discoveryYear"), rdflib.Literal(year)))
        g.add((d, uri("includedInField"), uri(f"field/{fld}")))
        g.add((d, uri("dateIncludedInField"), rdflib.Literal(since, datatype=rdflib.XSD.date)))
    return g


def _ask(ctx: SchemaContext, question: str, *, disabled: frozenset[GrammarRule] = frozenset()
         ) -> tuple[str, Plan]:
    mentions = extract_mentions(question)
    return label_synth(ctx, disabled)(
        question, mentions, link(ctx, question, mentions), [], Subgraph(EX + "Discovery"))


def _rows(graph: rdflib.Graph, sparql: str) -> set[tuple[str, ...]]:
    return {tuple(str(x) for x in row) for row in graph.query(sparql)}


def test_the_named_class_is_joined_and_named(finds: SchemaContext, graph: rdflib.Graph) -> None:
    sparql, plan = _ask(finds, QUESTION)
    assert GrammarRule.CLASS_COLUMN in plan.rules
    assert _rows(graph, sparql) == {(name, FIELDS[fld]) for name, year, fld, _ in DISCOVERIES
                                    if year == 2009}


def test_off_the_value_that_shares_the_name_is_projected(finds: SchemaContext,
                                                         graph: rdflib.Graph) -> None:
    sparql, plan = _ask(finds, QUESTION, disabled=frozenset({GrammarRule.CLASS_COLUMN}))
    assert GrammarRule.CLASS_COLUMN not in plan.rules
    assert _rows(graph, sparql) == {(name, since) for name, year, _, since in DISCOVERIES
                                    if year == 2009}


def test_a_phrase_that_names_the_value_keeps_it(finds: SchemaContext,
                                                graph: rdflib.Graph) -> None:
    sparql, plan = _ask(finds, "List the discoveries made in 2009 and the date they were "
                               "included in a field.")
    assert GrammarRule.CLASS_COLUMN not in plan.rules
    assert _rows(graph, sparql) == {(name, since) for name, year, _, since in DISCOVERIES
                                    if year == 2009}
