"""``navqa lint``: silent-failure findings, positions, zero false errors, mutation testing.

Expectations for the demo come from ``datasets/demo/README.md``: each trap's tempting
query (its "the tempting query" column) must be an error whose alternatives include a
term of "the mapped path"; every gold query of every question set must lint without
errors; and broken variants of the gold queries (``mutants.py``) must be caught.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from audit_helpers import DATASETS, DEMO_NS, NAVQA, REPO, gold_queries
from mutants import MutationGenerator

from navqa.audits.lint import Severity
from navqa.audits.lint_report import render_sarif

R = DEMO_NS
PRE = f"PREFIX rail: <{R}>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"

# README "Deliberately unmapped elements": (unmapped element, tempting pattern, mapped path)
TRAPS = [
    ("operatesLine", "?op rail:operatesLine ?line .", {"franchiseLine", "franchiseOperator"}),
    ("stopsAt", "?service rail:stopsAt ?station .", {"stopOfService", "stopStation"}),
    ("stationRegion", "?station rail:stationRegion ?region .",
     {"locatedInCity", "partOfRegion"}),
    ("Train", "?t a rail:Train .", {"ScheduledService"}),
    ("openingYear", "?station rail:openingYear ?y .", {"openingDate"}),
]


@pytest.mark.parametrize(("element", "pattern", "mapped_path"), TRAPS,
                         ids=[t[0] for t in TRAPS])
def test_demo_traps_are_errors_with_mapped_alternatives(linter, element, pattern,
                                                        mapped_path) -> None:
    q = PRE + "SELECT * WHERE {\n  " + pattern + "\n}"
    res = linter("demo").lint(q)
    assert not res.ok
    [f] = [f for f in res.findings if f.rule == "unmapped-term"]
    assert f.severity is Severity.ERROR and f.term == R + element
    # position: line 4 (after two PREFIX lines and SELECT), where the term is written
    line = q.splitlines()[f.line - 1]
    assert f.line == 4 and line[f.column - 1:].startswith(f"rail:{element}")
    assert f.end_column - f.column == len(f"rail:{element}")
    alts = {a.removeprefix(R) for a in f.alternatives}
    assert alts & mapped_path, f"{element}: {alts}"
    assert f.suggestion


def test_template_join_that_cannot_unify_is_an_error(linter) -> None:
    # a station's IRIs are data:station/{}, fleet numbers belong to data:stock/{}
    q = PRE + "SELECT ?n WHERE {\n  ?s a rail:Station ;\n     rail:fleetNumber ?n .\n}"
    res = linter("demo").lint(q)
    [f] = res.errors
    assert f.rule == "template-join" and f.term == "?s"
    assert "data:station/{}" in f.message and "data:stock/{}" in f.message
    assert (f.line, f.column) == (5, 6)
    # through an object property: a city is never a line
    q2 = PRE + "SELECT ?c WHERE { ?s rail:locatedInCity ?c . ?c rail:lineCode ?code }"
    assert [f.rule for f in linter("demo").lint(q2).errors] == ["template-join"]


def test_joins_valid_through_reasoning_are_not_errors(linter) -> None:
    """rail:Place is populated by its subclasses' templates; Organisation through
    headquarteredIn's domain; lineEndpoint through its sub-properties."""
    q = PRE + """SELECT * WHERE {
      ?p a rail:Place ; rail:name ?n .
      ?s rail:locatedInCity ?p .
      ?o a rail:Organisation ; rail:headquarteredIn ?p .
      ?l rail:lineEndpoint ?st . ?st a rail:Station .
      ?x rail:locatedIn ?p .
    }"""
    assert linter("demo").lint(q).findings == []


def test_optional_and_union_mismatches_are_warnings(linter) -> None:
    q = PRE + "SELECT * WHERE { ?s a rail:Station . OPTIONAL { ?s rail:fleetNumber ?n } }"
    [f] = linter("demo").lint(q).findings
    assert f.severity is Severity.WARNING and "OPTIONAL" in f.message
    q = PRE + ("SELECT * WHERE { { ?s a rail:Station } UNION { ?s a rail:Line } "
               "?s rail:stationCode ?c }")
    [f] = linter("demo").lint(q).findings
    assert f.severity is Severity.WARNING and "UNION" in f.message


def test_constant_iris_and_literals_no_mapping_can_produce(linter) -> None:
    q = PRE + """SELECT * WHERE {
      ?svc rail:runsOnLine <http://example.org/navqa/rail/data/station/KSJ> .
      ?svc rail:serviceNumber 2 .
      <http://example.org/navqa/rail/data/station/KSJ> rail:name ?n .
    }"""
    res = linter("demo").lint(q)
    rules = sorted(f.rule for f in res.errors)
    assert rules == ["constant-iri", "literal-datatype"]
    const = next(f for f in res.errors if f.rule == "constant-iri")
    assert "data:line/{}" in const.suggestion and const.line == 4


def test_filter_datatype_mismatches(linter) -> None:
    q = PRE + """SELECT ?s WHERE {
      ?s rail:openingDate ?d ; rail:stationCode ?code ; rail:platformCount ?p .
      FILTER(?d > "1850")
      FILTER(?d < 1900)
      FILTER(?code = 42)
      FILTER(?p > "3")
      FILTER(?d >= "1850-01-01"^^xsd:date && YEAR(?d) < 1900 && ?p > 2 && ?code = "KSJ")
    }"""
    res = linter("demo").lint(q)
    errs = [(f.rule, f.line) for f in res.errors]
    assert errs == [("filter-datatype", 5), ("filter-datatype", 6), ("filter-datatype", 7),
                    ("filter-datatype", 8)]
    assert "YEAR(?d)" in res.errors[1].suggestion


def test_time_ordering_and_exists_are_warnings(linter) -> None:
    q = PRE + """SELECT ?s WHERE { ?s rail:departureTime ?t .
      FILTER(?t < "08:00:00"^^xsd:time) FILTER NOT EXISTS { ?s rail:usesRollingStock ?r } }"""
    res = linter("demo").lint(q)
    assert res.ok
    assert sorted(f.rule for f in res.warnings) == ["exists-unsupported", "time-ordering"]


def test_undeclared_prefix_is_reported_and_repaired(linter) -> None:
    q = "SELECT ?n WHERE { ?s a rail:Train ; rail:name ?n }"
    res = linter("demo").lint(q)
    rules = [f.rule for f in res.errors]
    assert rules == ["undeclared-prefix", "unmapped-term"]   # checks go on after the repair
    assert res.repaired is not None and res.repaired.startswith(f"PREFIX rail: <{R}>")
    pfx = res.errors[0]
    assert (pfx.line, pfx.column) == (1, q.index("rail:") + 1)
    assert f"PREFIX rail: <{R}>" in pfx.suggestion


def test_syntax_errors_unknown_terms_and_kind_misuse(linter) -> None:
    res = linter("demo").lint(PRE + "SELECT ?s WHERE { ?s rail:name ")
    assert [f.rule for f in res.findings] == ["syntax-error"] and res.findings[0].line == 3
    res = linter("demo").lint(PRE + "SELECT * WHERE { ?s rail:stationCodee ?c . "
                              "?x rail:Station ?y . ?z a rail:name }")
    assert sorted(f.rule for f in res.errors) == ["term-kind", "term-kind", "unknown-term"]
    unknown = next(f for f in res.errors if f.rule == "unknown-term")
    assert R + "stationCode" in unknown.alternatives


@pytest.mark.parametrize("name", [
    "demo", pytest.param("npd", marks=pytest.mark.npd),
    pytest.param("bgee", marks=pytest.mark.bgee), pytest.param("atkis", marks=pytest.mark.atkis)])
def test_gold_queries_have_no_false_errors(linter, name) -> None:
    gold = gold_queries(name)
    errors = {qid: [f.message for f in linter(name).lint(q, alternatives=False).errors]
              for qid, q in gold}
    bad = {k: v for k, v in errors.items() if v}
    print(f"\n{name}: {len(bad)} false errors over {len(gold)} gold queries")
    assert bad == {}


def _detection(linter, names) -> tuple[int, int, dict[str, list[str]]]:
    total, caught, missed = 0, 0, {}
    for name in names:
        gen = MutationGenerator(linter(name).bundle)
        for m in gen.mutants(gold_queries(name)):
            total += 1
            if linter(name).lint(m.sparql, alternatives=False).errors:
                caught += 1
            else:
                missed.setdefault(name, []).append(f"{m.source_id} {m.operator} {m.detail}")
    return total, caught, missed


@pytest.mark.npd
@pytest.mark.bgee
@pytest.mark.atkis
def test_mutants_of_the_gold_queries_are_caught(linter) -> None:
    total, caught, missed = _detection(linter, DATASETS)
    rate = caught / total
    print(f"\nmutation testing: {caught}/{total} mutants flagged as errors ({rate:.1%})")
    assert total >= 100
    assert rate >= 0.95, missed


@pytest.mark.ontop
@pytest.mark.postgres
def test_demo_mutants_are_really_silent_failures(linter, vkg) -> None:
    """Checks the oracle: on the live demo every template-break mutant returns nothing
    (a count of 0), and the lint flags every mutant."""
    from navqa.model.terms import AskResult

    ep = vkg("demo").endpoint
    gen = MutationGenerator(linter("demo").bundle)
    mutants = gen.mutants(gold_queries("demo"))
    assert len(mutants) >= 100
    for m in mutants:
        assert linter("demo").lint(m.sparql, alternatives=False).errors, m
        if m.operator != "template-break":
            continue
        res = ep.query(m.sparql)
        if isinstance(res, AskResult):
            assert not res.value, m
        else:
            values = [getattr(t, "value", None) for row in res.rows for t in row
                      if t is not None]
            assert all(v in ("0",) for v in values), (m, res.rows[:3])


def test_sarif_output_has_the_basic_structure(linter) -> None:
    q = PRE + ("SELECT * WHERE {\n  ?t a rail:Train ; rail:departureTime ?d .\n"
               "  FILTER(?d < \"08:00:00\"^^xsd:time)\n}")
    res = linter("demo").lint(q, source="queries/trains.rq")
    doc = json.loads(render_sarif([res], vkg="demo", version="0.1.0"))
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-2.1.0.json")
    [run] = doc["runs"]
    driver = run["tool"]["driver"]
    assert driver["name"] == "navqa-lint" and driver["rules"]
    rule_ids = [r["id"] for r in driver["rules"]]
    assert len(set(rule_ids)) == len(rule_ids)
    for r in driver["rules"]:
        assert r["shortDescription"]["text"] and r["defaultConfiguration"]["level"] in (
            "error", "warning", "note")
    assert len(run["results"]) == len(res.findings) == 2
    for item in run["results"]:
        assert item["level"] in ("none", "note", "warning", "error")
        assert item["message"]["text"]
        assert rule_ids[item["ruleIndex"]] == item["ruleId"]
        [loc] = item["locations"]
        phys = loc["physicalLocation"]
        assert phys["artifactLocation"]["uri"] == "queries/trains.rq"
        region = phys["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert region["endLine"] >= region["startLine"]
    levels = {i["ruleId"]: i["level"] for i in run["results"]}
    assert levels == {"unmapped-term": "error", "time-ordering": "warning"}


def test_lint_cli_formats_and_exit_codes(cli_env, tmp_path) -> None:
    bad = tmp_path / "bad.rq"
    bad.write_text(PRE + "SELECT ?r WHERE { ?s rail:stationRegion ?r }\n", encoding="utf-8")
    good = tmp_path / "good.rq"
    good.write_text(PRE + "SELECT ?n WHERE { ?s a rail:Station ; rail:name ?n }\n",
                    encoding="utf-8")
    proc = subprocess.run(NAVQA + ["lint", "--vkg", "demo", str(bad), "--no-embedder"],
                          env=cli_env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 1, proc.stderr[-2000:]
    col = bad.read_text().splitlines()[2].index("rail:stationRegion") + 1
    assert f"{bad}:3:{col}: error [unmapped-term]" in proc.stdout
    # without the embedder, the ontology's neighbours are the alternatives
    assert "rail:locatedInCity" in proc.stdout and "rail:partOfRegion" in proc.stdout
    proc = subprocess.run(NAVQA + ["lint", "--vkg", "demo", str(good)], env=cli_env,
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    proc = subprocess.run(NAVQA + ["lint", "--vkg", "demo", "--format", "sarif", str(bad),
                                   str(good)], env=cli_env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 1
    doc = json.loads(proc.stdout)
    [result] = doc["runs"][0]["results"]
    assert result["ruleId"] == "unmapped-term"
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == str(bad)
    proc = subprocess.run(NAVQA + ["lint", "--vkg", "demo", "--format", "json",
                                   "--no-embedder", str(REPO / "datasets/demo/questions.jsonl")],
                          env=cli_env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-2000:]
    out = json.loads(proc.stdout)
    assert out["queries"] == 67 and out["errors"] == 0
