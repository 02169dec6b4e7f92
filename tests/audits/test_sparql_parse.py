"""One SPARQL parse for the check, the lint and the question-file loader.

rdflib alone refuses two kinds of valid SPARQL: two prefixes bound to one namespace (its
namespace manager keeps one), and a group of 90+ triple patterns (its grammar recurses
past Python's limit). Both must pass every checker, and real Ontop answers them.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from audit_helpers import DEMO_NS, NAVQA

from navqa.errors import SparqlSyntaxError
from navqa.evaluation.dataset import load_questions
from navqa.online.check import check_query, parse
from navqa.online.context import SchemaContext

TWO_PREFIXES = (f"PREFIX r: <{DEMO_NS}>\nPREFIX rail: <{DEMO_NS}>\n"
                "SELECT ?n WHERE { ?l a rail:Line ; r:name ?n }")


def _long_query(n: int = 120) -> str:
    # n triple patterns in one group: the line and n copies of its name
    body = " .\n  ".join(["?l a rail:Line"] + [f"?l rail:name ?n{i}" for i in range(n - 1)])
    return f"PREFIX rail: <{DEMO_NS}>\nSELECT ?n0 WHERE {{\n  {body} .\n}}"


@pytest.mark.parametrize("query", [TWO_PREFIXES, _long_query()], ids=["two-prefixes", "long"])
def test_valid_queries_pass_the_check_the_lint_and_the_loader(linter, index_bundle, embedder,
                                                             tmp_path: Path, query: str) -> None:
    limit = sys.getrecursionlimit()
    res = linter("demo").lint(query)
    assert res.findings == [], res.findings
    ctx = SchemaContext(index_bundle("demo"), embedder)
    checked = check_query(ctx, query)
    assert checked.ok, checked.issues
    assert f"{DEMO_NS}name" in checked.predicates
    f = tmp_path / "q.jsonl"
    f.write_text(json.dumps({"id": "q1", "question": "?", "sparql": query}) + "\n",
                 encoding="utf-8")
    [q] = load_questions(f).questions
    assert q.sparql == query
    assert sys.getrecursionlimit() == limit  # raised only inside the parse thread


@pytest.mark.ontop
@pytest.mark.postgres
@pytest.mark.parametrize("query", [TWO_PREFIXES, _long_query()], ids=["two-prefixes", "long"])
def test_ontop_answers_those_queries(vkg, query: str) -> None:
    assert not vkg("demo").endpoint.query(query).is_empty


def test_errors_still_carry_position_and_prefix() -> None:
    with pytest.raises(SparqlSyntaxError) as e:
        parse("SELECT * WHERE { ?x foo:bar ?y }")
    assert e.value.unknown_prefix == "foo"
    with pytest.raises(SparqlSyntaxError) as e:
        parse("SELECT * WHERE {\n ?x ?y }")
    assert e.value.line == 2 and e.value.column is not None


def test_prefix_last_declaration_wins_and_base_resolves() -> None:
    q = parse("BASE <http://b/>\nPREFIX p: <http://a/>\nPREFIX p: <ns/>\n"
              "SELECT * WHERE { ?x p:y ?z }")
    [(_, pred, _)] = q.algebra.p.p.triples
    assert str(pred) == "http://b/ns/y"


def test_lint_refuses_a_jsonl_whose_sparql_is_not_a_string(cli_env, tmp_path: Path) -> None:
    f = tmp_path / "q.jsonl"
    f.write_text(json.dumps({"id": "a", "sparql": 5}) + "\n", encoding="utf-8")
    proc = subprocess.run(NAVQA + ["lint", "--vkg", "demo", "--no-embedder", str(f)],
                          env=cli_env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert f"{f}:1" in proc.stderr and "must be a string" in proc.stderr
    assert "Traceback" not in proc.stderr
    f.write_text(json.dumps({"id": "a", "question": "no query"}) + "\n", encoding="utf-8")
    proc = subprocess.run(NAVQA + ["lint", "--vkg", "demo", "--no-embedder", str(f)],
                          env=cli_env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 2 and "nothing to lint" in proc.stderr, proc.stdout + proc.stderr
