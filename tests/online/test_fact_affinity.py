"""Different facts that share a property: the one the question speaks of (``fact-affinity``).

A field's yearly production and its yearly investment both record a year. "How much oil
did the field produce in 1990?" puts 1990 on the production, whose own properties (the
oil) the question names, not on the investment, though the investment is the coarser
fact here (the production also names its operator, so ``coarsest-fact`` alone would pick
the investment). The same figure at two grains (the reserves, ``coarsest-fact``) is
covered in ``test_grains_and_years.py``. Structure is asserted on the parsed query.
"""

from __future__ import annotations

import pytest
from rdflib.term import Literal, URIRef
from synth_vkgs import XSD, index_vkg, label_synth, nodes

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.model.rules import GrammarRule
from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions
from navqa.online.synthesis.plan import Plan

EX = "http://example.org/facts#"

ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Field a owl:Class ; rdfs:label "field" .
:Company a owl:Class ; rdfs:label "company" .
:YearlyInvestment a owl:Class ; rdfs:label "yearly investment" .
:YearlyProduction a owl:Class ; rdfs:label "yearly production" .
:investmentForField a owl:ObjectProperty ; rdfs:label "investment for field" ;
    rdfs:domain :YearlyInvestment ; rdfs:range :Field .
:productionForField a owl:ObjectProperty ; rdfs:label "production for field" ;
    rdfs:domain :YearlyProduction ; rdfs:range :Field .
:productionOperator a owl:ObjectProperty ; rdfs:label "production operator" ;
    rdfs:domain :YearlyProduction ; rdfs:range :Company .
:productionYear a owl:DatatypeProperty ; rdfs:label "production year" ;
    rdfs:range xsd:integer .
:producedOil a owl:DatatypeProperty ; rdfs:label "produced oil" ; rdfs:range xsd:decimal .
:investmentNOK a owl:DatatypeProperty ; rdfs:label "investment in NOK" ;
    rdfs:range xsd:decimal .
:name a owl:DatatypeProperty ; rdfs:label "name" ; rdfs:range xsd:string .
"""

MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tfield
target\t\t:field/{{id}} a :Field ; :name {{name}}^^xsd:string .
source\t\tSELECT id, name FROM field

mappingId\tcompany
target\t\t:company/{{id}} a :Company ; :name {{name}}^^xsd:string .
source\t\tSELECT id, name FROM company

mappingId\tinvestment
target\t\t:field/{{field_id}}/investment/{{year}} a :YearlyInvestment ; \
:investmentForField :field/{{field_id}} ; :productionYear {{year}}^^xsd:integer ; \
:investmentNOK {{nok}}^^xsd:decimal .
source\t\tSELECT field_id, year, nok FROM investment

mappingId\tproduction
target\t\t:field/{{field_id}}/production/{{year}} a :YearlyProduction ; \
:productionForField :field/{{field_id}} ; :productionOperator :company/{{company_id}} ; \
:productionYear {{year}}^^xsd:integer ; :producedOil {{oil}}^^xsd:decimal .
source\t\tSELECT field_id, company_id, year, oil FROM production
]]
"""
QUESTION = "How much oil did the field produce in 1990?"


@pytest.fixture(scope="module")
def ctx(navqa_config: NavqaConfig, embedder: Embedder,
        tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("facts"), "facts",
                     ONTOLOGY, MAPPING)


def _synth(ctx: SchemaContext, question: str,
           disabled: frozenset[GrammarRule] = frozenset()) -> tuple[str, Plan]:
    mentions = extract_mentions(question)
    return label_synth(ctx, disabled)(
        question, mentions, link(ctx, question, mentions), [], Subgraph(EX + "Field"))


def _year_on(sparql: str) -> set[URIRef]:
    """The classes of the nodes the year is read from."""
    triples = [t for n in nodes(sparql) if n.name == "BGP" for t in n["triples"]]
    rdf_type = URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    subjects = {s for s, p, _ in triples if p == URIRef(EX + "productionYear")}
    return {o for s, p, o in triples if p == rdf_type and s in subjects}


def test_the_year_goes_on_the_fact_the_question_speaks_of(ctx: SchemaContext) -> None:
    sparql, plan = _synth(ctx, QUESTION)
    assert _year_on(sparql) == {URIRef(EX + "YearlyProduction")}, sparql
    assert URIRef(EX + "YearlyInvestment") not in {
        o for n in nodes(sparql) if n.name == "BGP" for _, _, o in n["triples"]}, sparql
    assert "1990" in {str(v) for n in nodes(sparql) for v in n.values()
                      if isinstance(v, Literal)}, sparql
    assert GrammarRule.FACT_AFFINITY in plan.rules


def test_switched_off_the_coarser_fact_takes_the_year(ctx: SchemaContext) -> None:
    # off, only the grain decides: the investment names fewer further things
    sparql, plan = _synth(ctx, QUESTION, frozenset({GrammarRule.FACT_AFFINITY}))
    assert _year_on(sparql) == {URIRef(EX + "YearlyInvestment")}, sparql
    assert GrammarRule.FACT_AFFINITY not in plan.rules


def test_a_question_about_neither_fact_leaves_the_grain_to_decide(ctx: SchemaContext) -> None:
    # "in 1990" alone names no property of either fact: no affinity, the coarser one
    sparql, plan = _synth(ctx, "Which fields were recorded in 1990?")
    assert _year_on(sparql) == {URIRef(EX + "YearlyInvestment")}, sparql
    assert GrammarRule.FACT_AFFINITY not in plan.rules
