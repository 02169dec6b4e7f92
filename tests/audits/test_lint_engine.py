"""Lint rules for queries Ontop rejects or answers with nothing, checked against real Ontop.

Each query is valid-looking SPARQL that rdflib accepts; the lint must flag it with a
position and a suggestion, and the claim in its message (rejected / nothing) is verified
on the served demo VKG. The corrected query must lint clean and return rows.
"""

from __future__ import annotations

import pytest
from audit_helpers import DEMO_NS

from navqa.audits.lint import RULES, Severity
from navqa.errors import QueryFailedError, QueryRejectedError

pytestmark = [pytest.mark.ontop, pytest.mark.postgres]

PRE = f"PREFIX rail: <{DEMO_NS}>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"

# (rule, bad query, what Ontop does with it, the corrected query, text at the position)
CASES = [
    ("values-arity",
     'SELECT ?l WHERE {\n  VALUES (?n ?x) { ("Aster Coast Line" 1) ("Foo") }\n  ?l rail:name ?n }',
     "rejected",
     'SELECT ?l WHERE {\n  VALUES (?n ?x) { ("Aster Coast Line" 1) ("Foo" UNDEF) }\n'
     '  ?l rail:name ?n }', "VALUES"),
    ("aggregate-grouping",
     "SELECT ?l (COUNT(?n) AS ?c) WHERE {\n  ?l a rail:Line ; rail:name ?n }",
     "rejected",
     "SELECT ?l (COUNT(?n) AS ?c) WHERE {\n  ?l a rail:Line ; rail:name ?n } GROUP BY ?l",
     "?l"),
    ("ill-typed-literal",
     'SELECT ?c WHERE {\n  ?c rail:population ?p FILTER(?p != "abc"^^xsd:integer) }',
     "rejected",
     'SELECT ?c WHERE {\n  ?c rail:population ?p FILTER(?p != 0) }', '"abc"'),
    ("named-graph",
     "SELECT ?l ?n WHERE {\n  GRAPH ?g { ?l a rail:Line ; rail:name ?n } }",
     "empty",
     "SELECT ?l ?n WHERE {\n  ?l a rail:Line ; rail:name ?n }", "GRAPH"),
    ("named-graph",
     "SELECT ?l ?n FROM <http://example.org/g>\nWHERE { ?l a rail:Line ; rail:name ?n }",
     "empty",
     "SELECT ?l ?n\nWHERE { ?l a rail:Line ; rail:name ?n }", "FROM"),
    ("relative-iri",
     "SELECT ?l WHERE {\n  ?l a <Line> }",
     "rejected",
     "SELECT ?l WHERE {\n  ?l a rail:Line }", "<Line>"),
]


@pytest.mark.parametrize(("rule", "bad", "ontop", "good", "at"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_rule_flags_what_ontop_rejects_or_answers_with_nothing(linter, vkg, rule, bad, ontop,
                                                                good, at) -> None:
    assert rule in RULES
    q = PRE + bad
    res = linter("demo").lint(q)
    [f] = [f for f in res.findings if f.rule == rule]
    assert f.severity is Severity.ERROR and f.suggestion
    assert q.splitlines()[f.line - 1][f.column - 1:].startswith(at), (f.line, f.column)
    assert [x.rule for x in res.errors] == [rule], res.errors
    endpoint = vkg("demo").endpoint
    if ontop == "rejected":
        with pytest.raises((QueryRejectedError, QueryFailedError)):
            endpoint.query(q)
    else:
        assert endpoint.query(q).is_empty
    fixed = PRE + good
    assert linter("demo").lint(fixed).errors == []
    assert not endpoint.query(fixed).is_empty


def test_relative_iri_with_base_is_fine(linter) -> None:
    q = f"BASE <{DEMO_NS}>\n" + PRE + "SELECT ?l WHERE { ?l a <Line> }"
    assert linter("demo").lint(q).errors == []


def test_explicit_sample_is_not_a_grouping_error(linter) -> None:
    q = PRE + ("SELECT ?l (SAMPLE(?n) AS ?any) WHERE { ?l a rail:Line ; rail:name ?n } "
               "GROUP BY ?l")
    assert linter("demo").lint(q).errors == []
