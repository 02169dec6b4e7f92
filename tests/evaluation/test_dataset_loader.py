"""Question files: every bad line is reported with its number, in one error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from navqa.errors import EvaluationError
from navqa.evaluation.dataset import (
    QuestionFileError,
    Split,
    default_question_files,
    load_questions,
    load_split,
)
from navqa.model.iri import XSD
from navqa.model.terms import AskResult, IRITerm, LiteralTerm, SelectResult
from navqa.runtime.paths import repo_root

Q = "PREFIX : <http://example.org/> SELECT ?a WHERE { ?a a :A }"


def line(**fields: object) -> str:
    return json.dumps(fields)


def write(tmp_path: Path, lines: list[str], name: str = "q.jsonl") -> Path:
    p = tmp_path / name
    p.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return p


def test_valid_file(tmp_path: Path) -> None:
    p = write(tmp_path, [
        line(id="q1", question="Which As?", sparql=Q),
        "",
        line(id="q2", question="Which As, again?", sparql=Q, hops=2, features=["filter"],
             vkg="demo", sql="SELECT 1", trap="http://example.org/unmapped", note="n"),
        line(id="q3", question="And?", sparql=Q, trap=["http://x/a", "http://x/b"]),
    ])
    qs = load_questions(p)
    assert qs.ids() == ["q1", "q2", "q3"]
    q2 = qs.by_id()["q2"]
    assert (q2.hops, q2.features, q2.vkg, q2.trap) == (
        2, ("filter",), "demo", ("http://example.org/unmapped",))
    assert qs.by_id()["q3"].trap == ("http://x/a", "http://x/b")
    assert qs.lines is not None and qs.lines["q2"] == (p, 3)
    assert qs.sources == (p,)


def test_every_bad_line_is_reported_by_number(tmp_path: Path) -> None:
    p = write(tmp_path, [
        line(id="q1", question="fine", sparql=Q),                        # 1
        '{"id": "q2", "question": "broken", ',                           # 2 bad JSON
        line(id="q3", question="no query"),                              # 3 missing sparql
        line(id="q4", question="typo", sparql=Q, feature=["filter"]),    # 4 unknown: warning
        line(id="q1", question="again", sparql=Q),                       # 5 duplicate id
        line(id="q6", question="bad sparql", sparql="SELECT ?a WHERE { ?a"),  # 6
        line(id="q7", question="update", sparql="DELETE WHERE { ?s ?p ?o }"),  # 7
        line(id="q8", question="hops", sparql=Q, hops=-1),               # 8
        "[1, 2]",                                                        # 9 not an object
        line(id="", question="blank id", sparql=Q),                      # 10
        line(id="q11", question="fine too", sparql=Q),                   # 11
    ])
    with pytest.raises(QuestionFileError) as info:
        load_questions(p)
    err = info.value
    assert [ln for ln, _msg in err.problems] == [2, 3, 5, 6, 7, 8, 9, 10]
    msgs = dict(err.problems)
    assert "not valid JSON" in msgs[2]
    assert "sparql: required key missing" in msgs[3]
    assert "duplicate id 'q1' (first used on line 1)" in msgs[5]
    assert msgs[6].startswith("sparql:")
    assert "UPDATE" in msgs[7]
    assert msgs[8].startswith("hops:")
    assert "not a JSON object" in msgs[9]
    assert msgs[10].startswith("id:")
    text = str(err)
    assert "8 invalid lines" in text
    for n in (2, 3, 5, 6, 7, 8, 9, 10):
        assert f"{p}:{n}:" in text
    assert isinstance(err, EvaluationError)


def test_duplicate_ids_across_files(tmp_path: Path) -> None:
    a = write(tmp_path, [line(id="q1", question="a", sparql=Q)], "a.jsonl")
    b = write(tmp_path, [line(id="q2", question="b", sparql=Q),
                         line(id="q1", question="c", sparql=Q)], "b.jsonl")
    with pytest.raises(QuestionFileError) as info:
        load_questions(a, b)
    assert info.value.path == b
    assert info.value.problems == [(2, f"duplicate id 'q1' (first used on {a}:1)")]


def test_sparql_check_can_be_skipped(tmp_path: Path) -> None:
    p = write(tmp_path, [line(id="q1", question="a", sparql="SELECT nonsense")])
    assert load_questions(p, check_sparql=False).ids() == ["q1"]


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="does not exist"):
        load_questions(tmp_path / "nope.jsonl")
    with pytest.raises(EvaluationError):
        load_questions()


def test_default_question_file_of_the_demo() -> None:
    files = default_question_files("demo")
    assert files == [repo_root() / "datasets/demo/questions.jsonl"]
    qs = load_questions(*files)
    assert len(qs) > 0 and all(q.vkg in (None, "demo") for q in qs)


def test_unknown_keys_are_warnings(tmp_path: Path) -> None:
    """Benchmark files carry metadata: an unknown key is ignored and reported, not fatal."""
    p = write(tmp_path, [
        line(id="q1", question="a", sparql=Q, source="LC-QuAD", difficulty=3),
        line(id="q2", question="b", sparql=Q),
    ])
    qs = load_questions(p)
    assert qs.ids() == ["q1", "q2"]
    assert qs.warnings == ((p, 1, "unknown keys ignored: difficulty, source"),)


def test_reference_answers(tmp_path: Path) -> None:
    p = write(tmp_path, [
        line(id="q1", question="a", sparql=Q, answer=[["<http://x/a>", "Aster", 3, 2.5, True,
                                                      None]], ordered=True),
        line(id="q2", question="b", sparql="ASK { ?s ?p ?o }", answer=False),
        line(id="q3", question="c", sparql=Q, answer=[[{"type": "literal", "value": "x",
                                                       "xml:lang": "en"}]]),
        line(id="q4", question="d", sparql=Q),
        line(id="q5", question="e", sparql=Q, answer=[[["nested"]]]),
        line(id="q6", question="f", sparql=Q, answer=["not a row"]),
    ])
    with pytest.raises(QuestionFileError) as info:
        load_questions(p)
    assert sorted({ln for ln, _msg in info.value.problems}) == [5, 6]
    assert all(m.startswith("answer") for _ln, m in info.value.problems)
    p.write_text("\n".join(p.read_text().splitlines()[:4]) + "\n")
    qs = load_questions(p).by_id()
    ref = qs["q1"].reference()
    assert isinstance(ref, SelectResult) and qs["q1"].ordered is True
    assert ref.rows == ((IRITerm("http://x/a"), LiteralTerm("Aster"),
                         LiteralTerm("3", datatype=XSD + "integer"),
                         LiteralTerm("2.5", datatype=XSD + "decimal"),
                         LiteralTerm("true", datatype=XSD + "boolean"), None),)
    assert qs["q2"].reference() == AskResult(False)
    assert qs["q3"].reference() == SelectResult(("_1",), ((LiteralTerm("x", lang="en"),),))
    assert qs["q4"].reference() is None and qs["q4"].ordered is None


def test_splits(tmp_path: Path) -> None:
    dev = load_split("demo")
    assert dev.split == Split.DEV
    assert list(dev.sources) == [repo_root() / "datasets/demo/questions.jsonl"]
    assert load_questions(*dev.sources).split == Split.CUSTOM
    validation = load_split("demo", "validation")
    assert validation.split == Split.VALIDATION
    assert list(validation.sources) == [repo_root() / "datasets/demo/questions-validation.jsonl"]
    assert not set(validation.ids()) & set(dev.ids())
    test = load_split("npd", "test", check_sparql=False)
    assert test.split == Split.TEST
    assert list(test.sources) == [repo_root() / "datasets/npd/questions-test.jsonl"]
    # the demo VKG has a validation split and no test split: asking for it says so
    with pytest.raises(EvaluationError, match="no test split"):
        load_split("demo", "test")
    with pytest.raises(EvaluationError, match="unknown split"):
        default_question_files("demo", "custom")
