"""Three readings of the offline synthesizer, each on a small VKG built here:

* a numeral before a superlative bounds it ("Which **three** books have the most pages?"
  is LIMIT 3, and "three" is no value to filter by);
* a figure recorded at two grains next to a node (a field's reserves as a whole and per
  company) is read at the grain the question names (``coarsest-fact``);
* a year is matched to a property that records years before a date cut to its year
  (``year-property``);
* "What is the X **at** Y?" asks for an attribute, as "What is the X of Y?" does.

Comparative adjectives ("wider than") and proper-name particles ("Frankfurt am Main") are
checked on the mentions. Structure is asserted on the parsed query, never on its text.
"""

from __future__ import annotations

import pytest
from rdflib.term import Literal, URIRef
from synth_vkgs import XSD, books_vkg, index_vkg, label_synth, nodes

from navqa.model.rules import GrammarRule
from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions
from navqa.online.synthesis.plan import Plan

EX = "http://example.org/grains#"

ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Field a owl:Class ; rdfs:label "field" .
:Company a owl:Class ; rdfs:label "company" .
:CompanyReserve a owl:Class ; rdfs:label "company reserve" ;
    rdfs:comment "The reserves of a field that belong to one company." .
:FieldReserve a owl:Class ; rdfs:label "field reserve" ;
    rdfs:comment "The reserves of a field." .
:Wellbore a owl:Class ; rdfs:label "wellbore" .
:reservesForField a owl:ObjectProperty ; rdfs:label "reserves for field" ; rdfs:range :Field .
:reservesForCompany a owl:ObjectProperty ; rdfs:label "reserves for company" ;
    rdfs:domain :CompanyReserve ; rdfs:range :Company .
:wellboreForField a owl:ObjectProperty ; rdfs:label "wellbore for field" ;
    rdfs:domain :Wellbore ; rdfs:range :Field .
:remainingGas a owl:DatatypeProperty ; rdfs:label "remaining gas" ; rdfs:range xsd:decimal .
:entryYear a owl:DatatypeProperty ; rdfs:label "entry year" ; rdfs:domain :Wellbore ;
    rdfs:range xsd:integer .
:dateUpdated a owl:DatatypeProperty ; rdfs:label "date updated" ; rdfs:domain :Wellbore ;
    rdfs:range xsd:date .
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

mappingId\tcompany_reserve
target\t\t:company/{{company_id}}/reserve/{{field_id}} a :CompanyReserve ; \
:reservesForField :field/{{field_id}} ; :reservesForCompany :company/{{company_id}} ; \
:remainingGas {{gas}}^^xsd:decimal .
source\t\tSELECT company_id, field_id, gas FROM company_reserve

mappingId\tfield_reserve
target\t\t:field/{{field_id}}/reserve a :FieldReserve ; :reservesForField :field/{{field_id}} ; \
:remainingGas {{gas}}^^xsd:decimal .
source\t\tSELECT field_id, gas FROM field_reserve

mappingId\twellbore
target\t\t:wellbore/{{id}} a :Wellbore ; :name {{name}}^^xsd:string ; \
:entryYear {{entry_year}}^^xsd:integer ; :dateUpdated {{updated}}^^xsd:date ; \
:wellboreForField :field/{{field_id}} .
source\t\tSELECT id, name, entry_year, updated, field_id FROM wellbore
]]
"""


@pytest.fixture(scope="module")
def ctx(navqa_config, embedder, tmp_path_factory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("grains"), "grains",
                     ONTOLOGY, MAPPING)


def _synth(ctx: SchemaContext, question: str, root: str,
           disabled: frozenset[GrammarRule] = frozenset()) -> tuple[str, Plan]:
    mentions = extract_mentions(question)
    return label_synth(ctx, disabled)(
        question, mentions, link(ctx, question, mentions), [], Subgraph(EX + root))


def _typed(sparql: str) -> set[URIRef]:
    rdf_type = URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
    return {t[2] for n in nodes(sparql) if n.name == "BGP" for t in n["triples"]
            if t[1] == rdf_type}


def _props(sparql: str) -> set[URIRef]:
    return {t[1] for n in nodes(sparql) if n.name == "BGP" for t in n["triples"]}


def _constants(sparql: str) -> set[str]:
    return {str(v) for n in nodes(sparql) for v in n.values() if isinstance(v, Literal)}


# -- a numeral bounds a superlative --------------------------------------------------------

BOOKS = "http://example.org/bounds#"


@pytest.fixture(scope="module")
def books(navqa_config, embedder, tmp_path_factory) -> SchemaContext:
    ontology, mapping = books_vkg(BOOKS)
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("bounds"), "bounds",
                     ontology, mapping)


@pytest.mark.parametrize(("question", "limit"), [
    ("Which three books have the most pages?", 3),
    ("Which book has the most pages?", 1),
])
def test_a_numeral_before_a_superlative_is_its_bound(books, question: str, limit: int) -> None:
    mentions = extract_mentions(question)
    sparql, _ = label_synth(books)(question, mentions, link(books, question, mentions),
                                          [], Subgraph(BOOKS + "Book"))
    [sl] = [n for n in nodes(sparql) if n.name == "Slice"]
    assert sl["length"] == limit, sparql
    assert "Filter" not in [n.name for n in nodes(sparql)], sparql  # "three" is no value


# -- the grain of a reified fact -----------------------------------------------------------


def test_a_figure_is_read_at_the_grain_the_question_names(ctx) -> None:
    sparql, plan = _synth(ctx, "Which field has the largest remaining gas?", "Field")
    typed = _typed(sparql)
    assert URIRef(EX + "FieldReserve") in typed and URIRef(EX + "CompanyReserve") not in typed
    assert URIRef(EX + "remainingGas") in _props(sparql), sparql
    assert GrammarRule.COARSEST_FACT in plan.rules


def test_the_grain_rule_switched_off_is_not_recorded(ctx) -> None:
    # both grains tie on this VKG: off, the choice is no longer the field's own reserves
    sparql, plan = _synth(ctx, "Which field has the largest remaining gas?", "Field",
                          frozenset({GrammarRule.COARSEST_FACT}))
    assert URIRef(EX + "remainingGas") in _props(sparql), sparql
    assert URIRef(EX + "FieldReserve") not in _typed(sparql), sparql
    assert GrammarRule.COARSEST_FACT not in plan.rules


def test_an_attribute_asked_at_an_entity_is_projected(ctx) -> None:
    # "What is the X at Y?" asks for an attribute as "What is the X of Y?" does
    sparql, plan = _synth(ctx, "What is the remaining gas at the field?", "Field")
    [(_, _, gas)] = [t for n in nodes(sparql) if n.name == "BGP" for t in n["triples"]
                     if t[1] == URIRef(EX + "remainingGas")]
    assert [str(v) for v in nodes(sparql)[0]["PV"]] == [str(gas)], sparql


# -- a year against a property that records years ------------------------------------------


def test_a_year_is_matched_to_a_year_property_before_a_date(ctx) -> None:
    sparql, plan = _synth(ctx, "Which wellbores were drilled in 2005?", "Wellbore")
    props = _props(sparql)
    assert URIRef(EX + "entryYear") in props and URIRef(EX + "dateUpdated") not in props
    assert "2005" in _constants(sparql) and "2005-01-01" not in _constants(sparql), sparql
    assert GrammarRule.YEAR_PROPERTY in plan.rules


def test_the_year_rule_switched_off_is_not_recorded(ctx) -> None:
    # off, the date (cut to its year) wins on this VKG: the rule is what chose the year
    sparql, plan = _synth(ctx, "Which wellbores were drilled in 2005?", "Wellbore",
                          frozenset({GrammarRule.YEAR_PROPERTY}))
    assert URIRef(EX + "entryYear") not in _props(sparql), sparql
    assert GrammarRule.YEAR_PROPERTY not in plan.rules


# -- mentions: comparative adjectives and name particles ------------------------------------


@pytest.mark.parametrize(("question", "op"), [
    ("Which pipelines are wider than 40 inches?", ">"),
    ("Which wells are deeper than 3000 m?", ">"),
    ("Which lakes are shallower than 3 m?", "<"),
    ("Which pipes are narrower than 12 inches?", "<"),
])
def test_a_comparative_adjective_is_a_comparison(question: str, op: str) -> None:
    [v] = [v for v in extract_mentions(question).values if v.kind == "number"]
    assert v.comparator == op


@pytest.mark.parametrize(("question", "name"), [
    ("Which buildings lie inside the Frankfurt am Main airport?", "Frankfurt am Main"),
    ("Is Halle an der Saale a city?", "Halle an der Saale"),
])
def test_a_name_particle_stays_inside_the_name(question: str, name: str) -> None:
    assert [v.text for v in extract_mentions(question).values if v.kind == "string"] == [name]

