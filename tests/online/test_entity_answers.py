"""An entity answer is the entity and its label (navqa.model.answers); NaVQA's convention,
the label alone, stays one switch away.

On a small VKG indexed here (fields, the companies that operate them, water depths), each
question is synthesized in both conventions and the query runs as written against an
rdflib graph standing in for the endpoint. What the two conventions must agree on: an
asked attribute is its value, a count is one number. What they differ in: the entities
asked for (each answer, each group of a per-group count, each ranked answer) come with
their IRI in the entity convention.
"""

from __future__ import annotations

import pytest
import rdflib
from synth_vkgs import XSD, index_vkg

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.model.answers import EntityAnswer
from navqa.model.events import ValueMention
from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions
from navqa.online.synthesis.offline import OfflineSynthesizer
from navqa.online.synthesis.plan import Plan, restates_value
from navqa.online.values import GroundedValue

EX = "http://example.org/basin#"
ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Field a owl:Class ; rdfs:label "field" .
:Company a owl:Class ; rdfs:label "company" .
:name a owl:DatatypeProperty ; rdfs:label "name" .
:waterDepth a owl:DatatypeProperty ; rdfs:label "water depth" ; rdfs:range xsd:integer .
:operator a owl:ObjectProperty ; rdfs:label "operator" ; rdfs:domain :Field ;
    rdfs:range :Company .
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
:waterDepth {{depth}}^^xsd:integer ; :operator :company/{{op}} .
source\t\tSELECT id, nam, depth, op FROM field
]]
"""
COMPANIES = {"1": "Acme Oil", "2": "Borealis"}
# (id, name, water depth, operator)
FIELDS = [("1", "NORTH", 120, "1"), ("2", "SOUTH", 85, "1"), ("3", "EAST", 300, "2")]


def _field(i: str) -> str:
    return f"{EX}field/{i}"


def _company(i: str) -> str:
    return f"{EX}company/{i}"


@pytest.fixture(scope="module")
def basin(navqa_config: NavqaConfig, embedder: Embedder,
          tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("basin"), "basin",
                     ONTOLOGY, MAPPING)


@pytest.fixture(scope="module")
def graph() -> rdflib.Graph:
    g = rdflib.Graph()
    u = rdflib.URIRef
    for i, name in COMPANIES.items():
        g.add((u(_company(i)), rdflib.RDF.type, u(EX + "Company")))
        g.add((u(_company(i)), u(EX + "name"), rdflib.Literal(name)))
    for i, name, depth, op in FIELDS:
        f = u(_field(i))
        g.add((f, rdflib.RDF.type, u(EX + "Field")))
        g.add((f, u(EX + "name"), rdflib.Literal(name)))
        g.add((f, u(EX + "waterDepth"), rdflib.Literal(depth)))
        g.add((f, u(EX + "operator"), u(_company(op))))
    return g


def _acme() -> GroundedValue:
    return GroundedValue(ValueMention("Acme Oil", "string"), EX + "name", "Acme Oil",
                         _company("1"), (EX + "Company",), True)


def _ask(ctx: SchemaContext, question: str, convention: EntityAnswer, root: str,
         grounded: list[GroundedValue]) -> tuple[str, Plan]:
    mentions = extract_mentions(question)
    return OfflineSynthesizer(ctx, entity_answer=convention)(
        question, mentions, link(ctx, question, mentions), grounded, Subgraph(EX + root))


def _rows(graph: rdflib.Graph, sparql: str) -> list[tuple[object, ...]]:
    def py(v: object) -> object:
        if isinstance(v, rdflib.Literal):
            return v.toPython()
        return None if v is None else str(v)

    return sorted((tuple(py(v) for v in row) for row in graph.query(sparql)),  # type: ignore[union-attr]
                  key=repr)


def test_the_default_is_the_entity_and_its_label() -> None:
    assert NavqaConfig().pipeline.entity_answer is EntityAnswer.ENTITY


@pytest.mark.parametrize("convention", list(EntityAnswer))
def test_an_entity_question_answers_the_entities(basin: SchemaContext, graph: rdflib.Graph,
                                                 convention: EntityAnswer) -> None:
    sparql, _ = _ask(basin, "Which fields are operated by Acme Oil?", convention, "Field",
                     [_acme()])
    operated = [(i, name) for i, name, _, op in FIELDS if op == "1"]
    if convention is EntityAnswer.ENTITY:
        expected = [(_field(i), name) for i, name in operated]
    else:
        expected = [(name,) for _, name in operated]
    assert _rows(graph, sparql) == sorted(expected, key=repr)


@pytest.mark.parametrize("convention", list(EntityAnswer))
def test_an_asked_attribute_is_its_value_in_both(basin: SchemaContext, graph: rdflib.Graph,
                                                convention: EntityAnswer) -> None:
    north = GroundedValue(ValueMention("North", "string"), EX + "name", "NORTH",
                          _field("1"), (EX + "Field",), False)
    sparql, _ = _ask(basin, "What is the water depth of the North field?", convention,
                     "Field", [north])
    assert _rows(graph, sparql) == [(120,)]


@pytest.mark.parametrize("convention", list(EntityAnswer))
def test_a_count_is_one_number_in_both(basin: SchemaContext, graph: rdflib.Graph,
                                       convention: EntityAnswer) -> None:
    sparql, _ = _ask(basin, "How many fields does Acme Oil operate?", convention, "Field",
                     [_acme()])
    assert _rows(graph, sparql) == [(2,)]


@pytest.mark.parametrize("convention", list(EntityAnswer))
def test_each_group_of_a_count_is_an_entity(basin: SchemaContext, graph: rdflib.Graph,
                                            convention: EntityAnswer) -> None:
    sparql, _ = _ask(basin, "How many fields are there per company?", convention, "Field", [])
    per = {c: sum(op == c for *_, op in FIELDS) for c in COMPANIES}
    if convention is EntityAnswer.ENTITY:
        expected = [(_company(c), COMPANIES[c], n) for c, n in per.items()]
    else:
        expected = [(COMPANIES[c], n) for c, n in per.items()]
    assert _rows(graph, sparql) == sorted(expected, key=repr)


def test_a_ranked_entity_keeps_its_iri_first(basin: SchemaContext, graph: rdflib.Graph) -> None:
    sparql, _ = _ask(basin, "Which field has the greatest water depth?", EntityAnswer.ENTITY,
                     "Field", [])
    assert _rows(graph, sparql) == [(_field("3"), "EAST")]


def test_the_entity_beside_a_restated_name_is_still_a_restatement() -> None:
    """"Who operates the Troll field?" answered with the field and its name "TROLL" gives
    back what the question says, whichever convention projects it."""
    plan = Plan(triples=[("?f", "ex:name", '"TROLL"'), ("?f", "ex:name", "?name")],
                select=["?f", "?name"], var_class={"?f": EX + "Field"})
    assert restates_value(plan)
    plan.select = ["?f"]
    assert not restates_value(plan)  # the entity alone: nothing restated to judge


def test_an_entity_answer_is_read_by_its_labels() -> None:
    """What the web page, the API's ``answer`` and MCP show: the labels beside the
    entities, a plain first column otherwise, the IRIs when there is nothing else."""
    from navqa.model.answers import shown_column
    from navqa.model.terms import IRITerm, LiteralTerm, SelectResult

    iri, name = IRITerm(_field("1")), LiteralTerm("NORTH")
    assert shown_column(SelectResult(("f", "name"), ((iri, name),))) == 1
    assert shown_column(SelectResult(("name", "f"), ((name, iri),))) == 0
    assert shown_column(SelectResult(("f",), ((iri,),))) == 0
    assert shown_column(SelectResult(("f", "name"), ((iri, None),))) == 0


def test_an_asked_column_with_nothing_behind_it_is_reported_not_dropped(
        basin: SchemaContext, graph: rdflib.Graph) -> None:
    """"… and their licence holders?": no property, relation or class of this VKG is about
    licences. The query answers the rest; the column is recorded as unplaced, and the
    answer's confidence says so (an unplaced part of kind ``column``)."""
    from navqa.model.events import (
        ConfidenceLevel,
        ConfidenceReason,
        PartKind,
        QuerySynthesized,
    )
    from navqa.model.terms import SelectResult
    from navqa.online.confidence import assess

    question = "Which fields does Acme Oil operate, and who are their licence holders?"
    sparql, plan = _ask(basin, question, EntityAnswer.ENTITY, "Field", [_acme()])
    assert plan.unplaced_columns == ["licence holders"]
    assert len(_rows(graph, sparql)) == 2  # the rest of the question is answered
    result = graph.query(sparql)
    rows = SelectResult(tuple(str(v) for v in result.vars or ()), tuple(
        tuple(None for _ in row) for row in result))  # the cells do not matter here
    events = [QuerySynthesized(sparql=sparql, method="offline",
                               unplaced_columns=tuple(plan.unplaced_columns))]
    a = assess(question, events, sparql=sparql, result=rows, error=None)
    assert [(p.text, p.kind) for p in a.unplaced] == [("licence holders", PartKind.COLUMN)]
    assert ConfidenceReason.UNPLACED_COLUMN in [r.kind for r in a.confidence.reasons]
    assert a.confidence.level is ConfidenceLevel.LOW
