"""An asked column that lives on a relation between two nodes of the query
(grammar rule ``relation-column``).

A company holds a share in a field through a licensee record (a link table with
attributes), and operates it through an operatorship record with a validity interval;
the VKG also has a shortcut, the field's current operator. "Which companies hold a share
in the Alpha field, and how large is each share?" asks for a column of the licensee
record: the query joins the company and the field through it, in place of the shortcut.
The queries run as written against an rdflib graph standing in for the endpoint.
"""

from __future__ import annotations

import pytest
import rdflib
from synth_vkgs import XSD, index_vkg, label_synth, nodes

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.model.rules import GrammarRule
from navqa.online.context import DATES, SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions
from navqa.online.synthesis.plan import Plan
from navqa.online.synthesis.relations import relation_column
from navqa.online.values import GroundedValue

EX = "http://example.org/licence#"
ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Company a owl:Class ; rdfs:label "company" .
:Field a owl:Class ; rdfs:label "field" .
:Wellbore a owl:Class ; rdfs:label "wellbore" .
:FieldLicensee a owl:Class ; rdfs:label "field licensee" .
:FieldOperator a owl:Class ; rdfs:label "field operator" .
:name a owl:DatatypeProperty ; rdfs:label "name" .
:currentFieldOperator a owl:ObjectProperty ; rdfs:label "current field operator" .
:fieldLicensee a owl:ObjectProperty ; rdfs:label "field licensee" .
:licenseeForField a owl:ObjectProperty ; rdfs:label "licensee for field" .
:fieldOperator a owl:ObjectProperty ; rdfs:label "field operator" .
:operatorForField a owl:ObjectProperty ; rdfs:label "operator for field" .
:drillingCompany a owl:ObjectProperty ; rdfs:label "drilling company" .
:wellboreForField a owl:ObjectProperty ; rdfs:label "wellbore for field" .
:companyShare a owl:DatatypeProperty ; rdfs:label "company share" .
:dateLicenseeFrom a owl:DatatypeProperty ; rdfs:label "date licensee from" .
:dateLicenseeTo a owl:DatatypeProperty ; rdfs:label "date licensee to" .
:dateOperatorFrom a owl:DatatypeProperty ; rdfs:label "date operator from" .
:dateOperatorTo a owl:DatatypeProperty ; rdfs:label "date operator to" .
:dateCompleted a owl:DatatypeProperty ; rdfs:label "date completed" .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tcompany
target\t\t:company/{{id}} a :Company ; :name {{nam}}^^xsd:string .
source\t\tSELECT id, nam FROM company

mappingId\tfield
target\t\t:field/{{id}} a :Field ; :name {{nam}}^^xsd:string ; \
:currentFieldOperator :company/{{op}} .
source\t\tSELECT id, nam, op FROM field

mappingId\tlicensee
target\t\t:licensee/{{fld}}/{{cmp}} a :FieldLicensee ; :fieldLicensee :company/{{cmp}} ; \
:licenseeForField :field/{{fld}} ; :companyShare {{share}}^^xsd:decimal ; \
:dateLicenseeFrom {{f}}^^xsd:date ; :dateLicenseeTo {{t}}^^xsd:date .
source\t\tSELECT fld, cmp, share, f, t FROM field_licensee

mappingId\toperator
target\t\t:operator/{{fld}}/{{cmp}} a :FieldOperator ; :fieldOperator :company/{{cmp}} ; \
:operatorForField :field/{{fld}} ; :dateOperatorFrom {{f}}^^xsd:date ; \
:dateOperatorTo {{t}}^^xsd:date .
source\t\tSELECT fld, cmp, f, t FROM field_operator

mappingId\twellbore
target\t\t:wellbore/{{id}} a :Wellbore ; :name {{nam}}^^xsd:string ; \
:drillingCompany :company/{{cmp}} ; :wellboreForField :field/{{fld}} ; \
:dateCompleted {{d}}^^xsd:date .
source\t\tSELECT id, nam, cmp, fld, d FROM wellbore
]]
"""
COMPANIES = {"1": "AKER", "2": "BORR", "3": "CASTOR"}
LICENSEES = [("1", "60.5", "2001-01-01"), ("2", "39.5", "1995-03-01")]  # (company, share, from)
OPERATORS = [("3", "1980-01-01", "2000-12-31"), ("1", "2001-01-01", None)]  # (company, from, to)


@pytest.fixture(scope="module")
def licence(navqa_config: NavqaConfig, embedder: Embedder,
            tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("licence"), "licence",
                     ONTOLOGY, MAPPING)


@pytest.fixture(scope="module")
def graph() -> rdflib.Graph:
    g = rdflib.Graph()

    def uri(local: str) -> rdflib.URIRef:
        return rdflib.URIRef(EX + local)

    def date(d: str) -> rdflib.Literal:
        return rdflib.Literal(d, datatype=rdflib.XSD.date)

    for i, name in COMPANIES.items():
        g.add((uri(f"company/{i}"), rdflib.RDF.type, uri("Company")))
        g.add((uri(f"company/{i}"), uri("name"), rdflib.Literal(name)))
    field = uri("field/1")
    g.add((field, rdflib.RDF.type, uri("Field")))
    g.add((field, uri("name"), rdflib.Literal("ALPHA")))
    g.add((field, uri("currentFieldOperator"), uri("company/1")))
    for cmp, share, start in LICENSEES:
        lic = uri(f"licensee/1/{cmp}")
        g.add((lic, rdflib.RDF.type, uri("FieldLicensee")))
        g.add((lic, uri("fieldLicensee"), uri(f"company/{cmp}")))
        g.add((lic, uri("licenseeForField"), field))
        g.add((lic, uri("companyShare"), rdflib.Literal(share, datatype=rdflib.XSD.decimal)))
        g.add((lic, uri("dateLicenseeFrom"), date(start)))
    for cmp, start, end in OPERATORS:
        op = uri(f"operator/1/{cmp}")
        g.add((op, rdflib.RDF.type, uri("FieldOperator")))
        g.add((op, uri("fieldOperator"), uri(f"company/{cmp}")))
        g.add((op, uri("operatorForField"), field))
        g.add((op, uri("dateOperatorFrom"), date(start)))
        if end:
            g.add((op, uri("dateOperatorTo"), date(end)))
    wb = uri("wellbore/1")
    g.add((wb, rdflib.RDF.type, uri("Wellbore")))
    g.add((wb, uri("name"), rdflib.Literal("A-1")))
    g.add((wb, uri("drillingCompany"), uri("company/2")))
    g.add((wb, uri("wellboreForField"), field))
    g.add((wb, uri("dateCompleted"), date("1999-05-05")))
    return g


def _ask(ctx: SchemaContext, question: str, *, disabled: frozenset[GrammarRule] = frozenset()
         ) -> str:
    mentions = extract_mentions(question)
    (value,) = [v for v in mentions.values if v.text == "Alpha"]
    grounding = GroundedValue(mention=value, prop=EX + "name", stored="ALPHA",
                              subject=EX + "field/1", classes=(EX + "Field",), exact=True)
    sparql, _ = label_synth(ctx, disabled)(
        question, mentions, link(ctx, question, mentions), [grounding], Subgraph(EX + "Company"))
    return sparql


def _props(sparql: str) -> set[str]:
    return {str(p) for n in nodes(sparql) if n.name == "BGP" for _, p, _ in n["triples"]}


def _rows(graph: rdflib.Graph, sparql: str) -> set[tuple[str, ...]]:
    return {tuple(str(x) for x in row) for row in graph.query(sparql)}


def test_a_column_of_the_relation_joins_through_it(licence: SchemaContext,
                                                   graph: rdflib.Graph) -> None:
    sparql = _ask(licence, "Which companies hold a share in the Alpha field, and how large "
                           "is each share?")
    assert EX + "companyShare" in _props(sparql)
    assert EX + "currentFieldOperator" not in _props(sparql)  # the shortcut is replaced
    assert _rows(graph, sparql) == {(COMPANIES[c], share) for c, share, _ in LICENSEES}


def test_the_relation_the_question_names_gives_the_start_date(licence: SchemaContext,
                                                              graph: rdflib.Graph) -> None:
    # both relations have a start date; "operated" names the operatorship, "from when"
    # its start, not its end
    sparql = _ask(licence, "Which companies have operated the Alpha field, and from when?")
    assert {EX + "fieldOperator", EX + "dateOperatorFrom"} <= _props(sparql)
    assert _rows(graph, sparql) == {(COMPANIES[c], start) for c, start, _ in OPERATORS}


def test_off_the_column_is_looked_for_on_the_query_nodes_only(licence: SchemaContext) -> None:
    sparql = _ask(licence, "Which companies hold a share in the Alpha field, and how large "
                           "is each share?", disabled=frozenset({GrammarRule.RELATION_COLUMN}))
    assert EX + "companyShare" not in _props(sparql)


def test_a_named_thing_linking_both_is_no_relation(licence: SchemaContext) -> None:
    # a wellbore links a company and a field too, but it is a thing with a name
    plan = Plan()
    plan.var_class.update({"?company": EX + "Company", "?field": EX + "Field"})
    plan.add("?field", "ns:currentFieldOperator", "?company")
    found = relation_column(licence, plan, "?company", frozenset(DATES),
                            lambda p: 1.0 if p == EX + "dateCompleted" else 0.1)
    assert found is not None and found.cls != EX + "Wellbore"
    assert found.shortcut == ("?field", "ns:currentFieldOperator", "?company")
