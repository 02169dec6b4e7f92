"""A value and a further column kept together on a record (grammar rule ``record-column``).

A history table keeps a field's status with the dates it held; the VKG maps the current
status onto the field as well. "What is the status of the North field, and since when has
it had it?" asks for the status and the start of the record that holds it: both come from
the record (``FieldStatus``), whose class also carries ``status``. The field's own
``dateRegistered`` shares the word "date" with the column, so without the rule the column
lands on the field. On a small VKG indexed here; the queries run as written on rdflib.
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
from navqa.online.synthesis.plan import Plan
from navqa.online.values import GroundedValue

EX = "http://example.org/history#"
ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Field a owl:Class ; rdfs:label "field" .
:FieldStatus a owl:Class ; rdfs:label "field status" .
:name a owl:DatatypeProperty ; rdfs:label "name" .
:status a owl:DatatypeProperty ; rdfs:label "status" .
:dateRegistered a owl:DatatypeProperty ; rdfs:label "date registered" ; rdfs:range xsd:date .
:dateStatusFrom a owl:DatatypeProperty ; rdfs:label "date status from" ; rdfs:range xsd:date .
:dateStatusTo a owl:DatatypeProperty ; rdfs:label "date status to" ; rdfs:range xsd:date .
:statusForField a owl:ObjectProperty ; rdfs:label "status for field" .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tfield
target\t\t:field/{{id}} a :Field ; :name {{nam}}^^xsd:string ; :status {{st}}^^xsd:string ; \
:dateRegistered {{reg}}^^xsd:date .
source\t\tSELECT id, nam, st, reg FROM field

mappingId\tstatus
target\t\t:status/{{id}} a :FieldStatus ; :statusForField :field/{{fld}} ; \
:status {{st}}^^xsd:string ; :dateStatusFrom {{frm}}^^xsd:date ; :dateStatusTo {{til}}^^xsd:date .
source\t\tSELECT id, fld, st, frm, til FROM field_status
]]
"""
# (field id, name, current status, registered)
FIELDS = [("1", "NORTH", "PRODUCING", "1990-01-01"), ("2", "SOUTH", "SHUT DOWN", "1985-06-01")]
# (record id, field, status, from, to or None)
HISTORY = [("a", "1", "APPROVED", "1995-03-01", "1999-12-31"),
           ("b", "1", "PRODUCING", "2000-01-01", None),
           ("c", "2", "SHUT DOWN", "2010-05-05", None)]
QUESTION = "What is the status of the North field, and since when has it had it?"


@pytest.fixture(scope="module")
def history(navqa_config: NavqaConfig, embedder: Embedder,
            tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("history"), "history",
                     ONTOLOGY, MAPPING)


@pytest.fixture(scope="module")
def graph() -> rdflib.Graph:
    g = rdflib.Graph()
    u = rdflib.URIRef

    def date(d: str) -> rdflib.Literal:
        return rdflib.Literal(d, datatype=rdflib.XSD.date)

    for i, name, st, reg in FIELDS:
        f = u(f"{EX}field/{i}")
        g.add((f, rdflib.RDF.type, u(EX + "Field")))
        g.add((f, u(EX + "name"), rdflib.Literal(name)))
        g.add((f, u(EX + "status"), rdflib.Literal(st)))
        g.add((f, u(EX + "dateRegistered"), date(reg)))
    for r, fld, st, frm, til in HISTORY:
        s = u(f"{EX}status/{r}")
        g.add((s, rdflib.RDF.type, u(EX + "FieldStatus")))
        g.add((s, u(EX + "statusForField"), u(f"{EX}field/{fld}")))
        g.add((s, u(EX + "status"), rdflib.Literal(st)))
        g.add((s, u(EX + "dateStatusFrom"), date(frm)))
        if til is not None:
            g.add((s, u(EX + "dateStatusTo"), date(til)))
    return g


def _ask(ctx: SchemaContext, question: str, disabled: frozenset[GrammarRule] = frozenset()
         ) -> tuple[str, Plan]:
    mentions = extract_mentions(question)
    north = GroundedValue(ValueMention("North", "string"), EX + "name", "NORTH",
                          f"{EX}field/1", (EX + "Field",), False)
    return label_synth(ctx, disabled)(question, mentions, link(ctx, question, mentions),
                                      [north], Subgraph(EX + "Field"))


def _rows(graph: rdflib.Graph, sparql: str) -> set[tuple[str, ...]]:
    return {tuple(str(v) for v in row) for row in graph.query(sparql)}  # type: ignore[union-attr]


def test_the_status_and_its_start_come_from_the_record(history: SchemaContext,
                                                       graph: rdflib.Graph) -> None:
    sparql, plan = _ask(history, QUESTION)
    assert GrammarRule.RECORD_COLUMN in plan.rules
    # every status the field has had, each with its start: the record holds them together
    assert _rows(graph, sparql) == {(st, frm) for _, fld, st, frm, _ in HISTORY if fld == "1"}


def test_off_the_column_is_sought_on_the_field_only(history: SchemaContext,
                                                    graph: rdflib.Graph) -> None:
    sparql, plan = _ask(history, QUESTION, frozenset({GrammarRule.RECORD_COLUMN}))
    assert GrammarRule.RECORD_COLUMN not in plan.rules
    assert "FieldStatus" not in sparql
    assert _rows(graph, sparql) == {("PRODUCING", "1990-01-01")}


def test_a_column_the_node_has_itself_stays_on_the_node(history: SchemaContext,
                                                        graph: rdflib.Graph) -> None:
    """"… and when was it registered?": the field's own date, no record."""
    sparql, plan = _ask(history, "What is the status of the North field, and when was it "
                                 "registered?")
    assert GrammarRule.RECORD_COLUMN not in plan.rules
    assert _rows(graph, sparql) == {("PRODUCING", "1990-01-01")}
