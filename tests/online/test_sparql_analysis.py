"""``navqa ask``'s check and ``navqa lint`` name the same unmapped terms and suggest the same
mapped replacements: both go through :mod:`navqa.online.sparql_analysis`."""

from __future__ import annotations

import pytest

from navqa.audits.lint import Linter
from navqa.online.check import check_query, parse
from navqa.online.sparql_analysis import (
    TermStatus,
    comparisons,
    term_status,
    used_terms,
    vocabulary_namespaces,
    vocabulary_term,
)

pytestmark = [pytest.mark.ontop, pytest.mark.postgres]

RAIL = "http://example.org/navqa/rail#"
P = f"PREFIX rail: <{RAIL}>\n"
QUERIES = [
    P + "SELECT ?l WHERE { ?o rail:operatesLine ?l }",
    P + "SELECT ?s WHERE { ?t a rail:Train ; rail:stopsAt ?s }",
    P + "SELECT ?y WHERE { ?s a rail:Station ; rail:openingYear ?y }",
    P + "SELECT ?r WHERE { ?s rail:stationRegion/rail:name ?r }",
    P + "SELECT ?x WHERE { ?x rail:operatesLinee ?l }",  # not declared at all
]


@pytest.mark.parametrize("sparql", QUERIES)
def test_lint_and_the_pipeline_check_suggest_the_same_replacements(demo_pipeline,
                                                                   sparql: str) -> None:
    ctx = demo_pipeline.ctx
    checked = check_query(ctx, sparql)
    flagged = checked.unmapped + checked.unknown
    assert flagged and not checked.ok
    linted = Linter(ctx.bundle, ctx.embedder).lint(sparql)
    by_term = {f.term: f.alternatives for f in linted.findings
               if f.rule in ("unmapped-term", "unknown-term")}
    assert sorted(by_term) == sorted(flagged)
    for term in flagged:
        assert checked.alternatives[term], term
        assert list(by_term[term]) == checked.alternatives[term], term
        assert all(ctx.active.is_active(a) for a in checked.alternatives[term])


def test_terms_of_paths_and_type_patterns_are_collected() -> None:
    preds, classes = used_terms(parse(P + "SELECT ?n WHERE { ?s a rail:Station ; "
                                          "(rail:a|^rail:b)/rail:c* ?n }"))
    assert classes == {f"{RAIL}Station"}
    assert preds == {f"{RAIL}a", f"{RAIL}b", f"{RAIL}c"}


def test_builtin_and_foreign_terms_are_not_the_vkgs_to_map() -> None:
    signature = frozenset({f"{RAIL}Station"})
    ns = vocabulary_namespaces(signature)
    assert vocabulary_term(f"{RAIL}Station", signature, ns)
    assert vocabulary_term(f"{RAIL}Nope", signature, ns)
    assert not vocabulary_term("http://www.w3.org/2000/01/rdf-schema#label", signature, ns)
    assert not vocabulary_term("http://elsewhere.org/x", signature, ns)


def test_check_and_lint_share_one_notion_of_allowed(demo_pipeline) -> None:
    """``term_status`` is what both call: a populated term is allowed, an unmapped declared
    one only when the active ontology is not enforced (the w/o-AOC ablation)."""
    ctx = demo_pipeline.ctx
    ns = vocabulary_namespaces(ctx.ontology.signature)
    unmapped = f"{RAIL}operatesLine"
    assert unmapped in ctx.ontology.signature and not ctx.active.is_active(unmapped)
    mapped = next(iter(sorted(ctx.active.classes)))
    status = {t: term_status(t, ctx.ontology, ctx.active, ns) for t in
              (unmapped, mapped, f"{RAIL}operatesLinee", "http://elsewhere.org/x")}
    assert status == {unmapped: TermStatus.UNMAPPED, mapped: TermStatus.ALLOWED,
                      f"{RAIL}operatesLinee": TermStatus.UNKNOWN,
                      "http://elsewhere.org/x": TermStatus.FOREIGN}
    assert term_status(unmapped, ctx.ontology, ctx.active, ns,
                       declared_allowed=True) is TermStatus.ALLOWED
    sparql = P + "SELECT ?l WHERE { ?o rail:operatesLine ?l }"
    assert check_query(ctx, sparql, enforce_active=False).unmapped == []
    assert check_query(ctx, sparql).unmapped == [unmapped]


def test_filter_comparisons_put_the_variable_first() -> None:
    found = comparisons(parse(P + "SELECT ?s WHERE { ?s rail:openingYear ?y ; rail:name ?n "
                                  "FILTER(1900 < ?y && ?n IN (\"A\", \"B\") && ?y != ?n) }"))
    assert [(str(c.var), c.op, [str(x) for x in c.literals]) for c in found] == [
        ("y", ">", ["1900"]), ("n", "IN", ["A", "B"])]
