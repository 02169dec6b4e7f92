"""Facts that hold now ("currently", "today"): validity intervals without an end.

On a small VKG indexed here: a licence share is reified with a start and an end date
(and an amount), a licence has only an award date. Asserted on the parsed query.
"""

from __future__ import annotations

from typing import Any

import pytest
from rdflib.term import URIRef
from synth_vkgs import index_vkg, label_synth
from synth_vkgs import nodes as _nodes

from navqa.model.events import ValueMention
from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions
from navqa.online.synthesis.validity import asks_present, end_of_validity
from navqa.online.values import GroundedValue

EX = "http://example.org/shares#"
XSD = "http://www.w3.org/2001/XMLSchema#"

ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Company a owl:Class ; rdfs:label "company" .
:Licence a owl:Class ; rdfs:label "licence" .
:Share a owl:Class ; rdfs:label "licence share" .
:shareOf a owl:ObjectProperty ; rdfs:label "share of licence" ; rdfs:domain :Share ;
    rdfs:range :Licence .
:holder a owl:ObjectProperty ; rdfs:label "share holder" ; rdfs:domain :Share ;
    rdfs:range :Company .
:validFrom a owl:DatatypeProperty ; rdfs:label "share valid from" ; rdfs:range xsd:date .
:validTo a owl:DatatypeProperty ; rdfs:label "share valid to" ; rdfs:range xsd:date .
:percent a owl:DatatypeProperty ; rdfs:label "share percentage" ; rdfs:range xsd:decimal .
:awarded a owl:DatatypeProperty ; rdfs:label "date awarded" ; rdfs:range xsd:date .
:name a owl:DatatypeProperty ; rdfs:label "name" ; rdfs:range xsd:string .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tcompany
target\t\t:company/{{id}} a :Company ; :name {{name}}^^xsd:string .
source\t\tSELECT id, name FROM company

mappingId\tlicence
target\t\t:licence/{{id}} a :Licence ; :name {{name}}^^xsd:string ; \
:awarded {{awarded}}^^xsd:date .
source\t\tSELECT id, name, awarded FROM licence

mappingId\tshare
target\t\t:share/{{id}} a :Share ; :shareOf :licence/{{licence_id}} ; \
:holder :company/{{company_id}} ; :validFrom {{valid_from}}^^xsd:date ; \
:validTo {{valid_to}}^^xsd:date ; :percent {{percent}}^^xsd:decimal .
source\t\tSELECT id, licence_id, company_id, valid_from, valid_to, percent FROM share
]]
"""


@pytest.fixture(scope="module")
def shares_ctx(navqa_config, embedder, tmp_path_factory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("shares"), "shares",
                     ONTOLOGY, MAPPING)


def _synth(ctx: SchemaContext, question: str) -> str:
    mentions = extract_mentions(question)
    grounded = [GroundedValue(ValueMention("Alpha", "string"), EX + "name", "Alpha",
                              f"{EX}licence/1", (EX + "Licence",), True)]
    sparql, _ = label_synth(ctx)(question, mentions, link(ctx, question, mentions),
                                        grounded, Subgraph(EX + "Share"))
    return sparql


def _optional_props(sparql: str) -> set[Any]:
    return {t[1] for n in _nodes(sparql) if n.name == "LeftJoin"
            for m in _nodes(n["p2"]) if m.name == "BGP" for t in m["triples"]}


@pytest.mark.parametrize(("question", "present"), [
    ("Which companies currently hold a share of licence Alpha?", True),
    ("Who holds a share of licence Alpha today?", True),
    ("What is the current share of Omega in licence Alpha?", True),
    ("Which companies held a share of licence Alpha in 1990?", False),
])
def test_the_present_is_read_from_the_question(question: str, present: bool) -> None:
    assert asks_present(question) is present


def test_an_interval_is_a_start_and_an_end_date(shares_ctx) -> None:
    assert end_of_validity(shares_ctx, EX + "Share") == EX + "validTo"
    assert end_of_validity(shares_ctx, EX + "Licence") is None  # one date: no interval


def test_currently_keeps_the_facts_without_an_end(shares_ctx) -> None:
    sparql = _synth(shares_ctx, "Which shares of licence Alpha are currently held?")
    assert URIRef(EX + "validTo") in _optional_props(sparql), sparql
    names = [n.name for n in _nodes(sparql)]
    assert "Builtin_BOUND" in names and "Builtin_NOW" in names, sparql


def test_without_the_present_the_end_date_is_not_constrained(shares_ctx) -> None:
    sparql = _synth(shares_ctx, "Which shares of licence Alpha have there been?")
    assert URIRef(EX + "validTo") not in _optional_props(sparql), sparql
    assert "Builtin_NOW" not in [n.name for n in _nodes(sparql)]
