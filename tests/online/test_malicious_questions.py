"""Quotes, braces and SPARQL keywords in a question cannot change a query's structure."""

from __future__ import annotations

import pytest
from rdflib.plugins.sparql.parser import parseQuery

from navqa.audits.sparql import Locator
from navqa.backends.sparql_http import query_form
from navqa.model.events import ValueMention
from navqa.model.terms import SelectResult
from navqa.online.check import parse, used_terms
from navqa.online.synthesis.offline import literal
from navqa.online.values import ground_values

NASTY = [
    'Kestrel Metro" } ; DELETE WHERE { ?s ?p ?o } #',
    "a\\\" } UNION { ?x ?y ?z",
    "line\nbreak \"quoted\" {braces} 'single'",
]


@pytest.mark.parametrize("text", NASTY)
def test_literal_keeps_any_text_a_single_literal(text: str) -> None:
    q = f"SELECT ?s WHERE {{ ?s <http://x/p> {literal(text)} }}"
    algebra = parse(q)
    bgp = algebra.algebra.p.p  # Project → BGP
    assert len(bgp["triples"]) == 1
    assert str(bgp["triples"][0][2]) == text


class RecordingEndpoint:
    """Captures the probe queries value grounding sends (and answers nothing)."""

    url = "memory://probe"

    def __init__(self) -> None:
        self.queries: list[str] = []

    def select(self, query: str, *, timeout: float | None = None) -> SelectResult:
        self.queries.append(query)
        return SelectResult(variables=("s", "p", "v"), rows=())


@pytest.mark.parametrize("text", NASTY)
def test_value_probes_escape_what_the_question_says(demo_pipeline, text: str) -> None:
    ep = RecordingEndpoint()
    found, probes = ground_values(demo_pipeline.ctx, ep, [ValueMention(text, "string")])
    assert found == [] and probes == 2 == len(ep.queries)
    for q in ep.queries:
        assert query_form(q) == "SELECT"
        tree = parseQuery(q)  # raises if the question broke out of the literal
        assert tree is not None
        assert text.lower().replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") in q


@pytest.mark.ontop
@pytest.mark.postgres
@pytest.mark.parametrize("question", [
    'Which stations are managed by "Kestrel Metro\\" } DELETE WHERE { ?s ?p ?o } #"?',
    "Which stations are managed by Kestrel Metro } UNION { ?s ?p ?o } LIMIT 1000 ?",
    "How many stations are there? ; DROP ALL ; INSERT DATA { <a> <b> <c> }",
])
def test_malicious_question_yields_a_well_formed_read_only_query(demo_pipeline,
                                                                question: str) -> None:
    answer = demo_pipeline.ask(question)
    assert answer.sparql is not None
    assert query_form(answer.sparql) in ("SELECT", "ASK")
    preds, classes = used_terms(parse(answer.sparql))
    ctx = demo_pipeline.ctx
    assert all(ctx.active.is_active(t) for t in preds | classes)
    # outside string literals (a value found nowhere is kept as written, escaped)
    code = Locator(answer.sparql).masked.upper()
    for word in ("DELETE", "DROP", "INSERT", "UNION"):
        assert word not in code
    # The data is untouched: the regions are all still there.
    regions = demo_pipeline.endpoint.select(
        "PREFIX rail: <http://example.org/navqa/rail#> SELECT ?r WHERE { ?r a rail:Region }")
    assert len(regions.rows) == 5
