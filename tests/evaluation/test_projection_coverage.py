"""The projection diagnostic and the linking coverage figures (recall@k, chosen subgraph,
verbalized tokens): hand-made results and events, then one real offline demo run."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from navqa.config import NavqaConfig
from navqa.evaluation.dataset import QuestionSet, default_question_files, load_questions
from navqa.evaluation.diagnostics import (
    count_tokens,
    grounding_of,
    recall_at_k,
    summarize_grounding,
)
from navqa.evaluation.metrics import score
from navqa.evaluation.projection import (
    MATCH_THRESHOLD,
    ProjectionVerdict,
    column_score,
    projection_of,
    summarize_projection,
)
from navqa.evaluation.report import RECALL_FIGURE, REPORT_FILE
from navqa.evaluation.runner import RESULTS_FILE, run_eval
from navqa.evaluation.shape import analyse_query
from navqa.evaluation.summary import SUMMARY_KEYS
from navqa.model.events import (
    Linked,
    ScoredTerm,
    SubgraphExpanded,
    SubgraphsReranked,
    SubgraphVerbalized,
)
from navqa.model.graph import Edge
from navqa.model.terms import AskResult, IRITerm, LiteralTerm, SelectResult

INT = "http://www.w3.org/2001/XMLSchema#integer"
X = "http://x/"


def iri(name: str) -> IRITerm:
    return IRITerm(X + name)


def lit(v: str) -> LiteralTerm:
    return LiteralTerm(v)


def num(v: int) -> LiteralTerm:
    return LiteralTerm(str(v), datatype=INT)


def sel(variables: tuple[str, ...], *rows: tuple[Any, ...]) -> SelectResult:
    return SelectResult(variables=variables, rows=tuple(rows))


def verdict(gold: Any, pred: Any) -> ProjectionVerdict:
    acc = score(gold, pred).acc
    return projection_of(gold, pred, acc=acc).verdict


GOLD = sel(("name",), (lit("Ann"),), (lit("Bob"),), (lit("Cid"),), (lit("Dan"),))


def test_column_score() -> None:
    a = {("lit", "Ann", "s", ""), ("lit", "Bob", "s", "")}
    b = {("lit", "Ann", "s", ""), ("lit", "Bob", "s", ""), ("lit", "Cid", "s", "")}
    assert column_score(a, b) == 1.0          # a subset of the gold values
    assert column_score(b, a) == 1.0          # a superset
    assert column_score(a, {("lit", "Ann", "s", ""), ("lit", "Eve", "s", "")}) == 0.5
    assert column_score(a, {("iri", "x", "", "")}) == 0.0
    assert column_score(set(), a) == 0.0


def test_right_answer_whatever_the_variable_names() -> None:
    pred = sel(("n",), (lit("Dan"),), (lit("Cid"),), (lit("Bob"),), (lit("Ann"),))
    p = projection_of(GOLD, pred, acc=True)
    assert p.verdict == ProjectionVerdict.RIGHT_ANSWER and p.right_projection is True
    assert [(m.pred, m.gold, m.score) for m in p.matches] == [("n", "name", 1.0)]


def test_right_projection_wrong_entities() -> None:
    # a superset (extra rows), a subset (missing rows), half of them shared
    assert verdict(GOLD, sel(("n",), *[(lit(x),) for x in "Ann Bob Cid Dan Eve".split()])
                   ) == ProjectionVerdict.WRONG_ENTITIES
    assert verdict(GOLD, sel(("n",), (lit("Ann"),))) == ProjectionVerdict.WRONG_ENTITIES
    half = sel(("n",), (lit("Ann"),), (lit("Bob"),), (lit("Eve"),), (lit("Fay"),))
    assert verdict(GOLD, half) == ProjectionVerdict.WRONG_ENTITIES
    # a count over the wrong entities: single numeric values match by kind
    assert verdict(sel(("c",), (num(4),)), sel(("k",), (num(7),))
                   ) == ProjectionVerdict.WRONG_ENTITIES


def test_wrong_projection() -> None:
    # the entities' IRIs instead of their names: no value in common
    iris = sel(("p",), *[(iri(x),) for x in "Ann Bob Cid Dan".split()])
    p = projection_of(GOLD, iris, acc=False)
    assert p.verdict == ProjectionVerdict.WRONG_PROJECTION and p.right_projection is False
    # below the threshold: 1 of 4 values in both directions
    assert MATCH_THRESHOLD == 0.5
    quarter = sel(("n",), (lit("Ann"),), (lit("Eve"),), (lit("Fay"),), (lit("Gus"),))
    assert verdict(GOLD, quarter) == ProjectionVerdict.WRONG_PROJECTION
    # an extra column is a projection error even with the right names in it
    extra = sel(("n", "p"), *[(lit(x), iri(x)) for x in "Ann Bob Cid Dan".split()])
    assert verdict(GOLD, extra) == ProjectionVerdict.WRONG_PROJECTION
    # a missing column: gold has name and count, the prediction names only
    two = sel(("name", "c"), (lit("Ann"), num(3)), (lit("Bob"), num(5)))
    assert verdict(two, sel(("n",), (lit("Ann"),), (lit("Bob"),))
                   ) == ProjectionVerdict.WRONG_PROJECTION
    # the count of names against names; an ASK against a SELECT gold
    assert verdict(GOLD, sel(("c",), (num(4),))) == ProjectionVerdict.WRONG_PROJECTION
    assert verdict(GOLD, AskResult(True)) == ProjectionVerdict.WRONG_PROJECTION


def test_two_columns_are_paired_one_to_one() -> None:
    two = sel(("name", "c"), (lit("Ann"), num(3)), (lit("Bob"), num(5)))
    swapped = sel(("k", "n"), (num(3), lit("Ann")), (num(6), lit("Bob")))
    p = projection_of(two, swapped, acc=False)
    assert p.verdict == ProjectionVerdict.WRONG_ENTITIES
    assert sorted((m.pred, m.gold) for m in p.matches) == [("k", "c"), ("n", "name")]


def test_no_answer_and_not_applicable() -> None:
    assert verdict(GOLD, None) == ProjectionVerdict.NO_ANSWER
    assert verdict(GOLD, sel(("n",))) == ProjectionVerdict.NO_ANSWER
    assert projection_of(GOLD, None, acc=False).right_projection is None
    assert verdict(AskResult(True), AskResult(True)) == ProjectionVerdict.NOT_APPLICABLE
    assert verdict(sel(("n",)), sel(("n",))) == ProjectionVerdict.NOT_APPLICABLE
    assert verdict(sel(("n",), (None,)), GOLD) == ProjectionVerdict.NOT_APPLICABLE


def test_summarize_projection() -> None:
    recs = [{"projection": {"verdict": v}} for v in (
        "right-answer", "right-answer", "wrong-entities", "wrong-projection", "no-answer",
        "not-applicable")] + [{"projection": None}]
    s = summarize_projection(recs)
    assert s["n"] == 6 and s["right-answer"] == 2 and s["wrong-entities"] == 1
    assert s["wrong-projection"] == 1 and s["no-answer"] == 1 and s["not-applicable"] == 1
    assert s["right_projection_rate"] == pytest.approx(3 / 4)
    assert summarize_projection([])["right_projection_rate"] is None


def test_recall_at_k() -> None:
    ranks = [(1,), (2, 3), (1, None), (5,)]
    assert recall_at_k(ranks, 5) == [0.25, 0.25, 0.5, 0.5, 0.75]
    assert recall_at_k([], 3) == [None, None, None]


def test_count_tokens() -> None:
    assert count_tokens("rail:operatedBy → rail:Company (3 edges)") == 11
    assert count_tokens("") == 0


GOLD_Q = """PREFIX : <http://x/>
SELECT ?n WHERE { ?c a :Company . ?c :name ?n . ?c :operates ?l . ?l a :Line }"""


def test_grounding_ranks_and_tokens() -> None:
    shape = analyse_query(GOLD_Q)
    events = [
        Linked(classes=(ScoredTerm(X + "Line", 0.9), ScoredTerm(X + "Depot", 0.8),
                        ScoredTerm(X + "Company", 0.7)),
               properties=(ScoredTerm(X + "name", 0.9), ScoredTerm(X + "code", 0.5))),
        SubgraphExpanded(root=X + "Company", depth=1,
                         edges=(Edge(X + "Company", X + "operates", X + "Line"),)),
        SubgraphVerbalized(root=X + "Company", text="Company operates Line."),
        SubgraphExpanded(root=X + "Depot", depth=0, edges=()),
        SubgraphVerbalized(root=X + "Depot", text="Depot has many, many words here"),
        SubgraphsReranked(scores=(), chosen=X + "Company", method="offline"),
    ]
    g = grounding_of(shape, events)
    assert g.gold_class_ranks == (3, 1)          # Company, Line (sorted by IRI)
    assert g.gold_property_ranks == (1, None)    # name, operates (not linked)
    assert g.classes_shown == 3 and g.properties_shown == 2
    assert g.context_tokens == 4                 # only the chosen root's text
    assert g.subgraph_class_recall == 1.0 and g.subgraph_property_recall == 0.5
    assert json.loads(json.dumps(g.to_json()))["gold_property_ranks"] == [1, None]
    # without linking events there is nothing to rank
    assert grounding_of(shape, []).gold_class_ranks is None


def test_summarize_coverage() -> None:
    gs = [
        {"gold_class_ranks": [1], "gold_property_ranks": [2, 4], "classes_shown": 5,
         "properties_shown": 12, "subgraph_class_recall": 1.0,
         "subgraph_property_recall": 1.0, "context_tokens": 100},
        {"gold_class_ranks": [None], "gold_property_ranks": [1], "classes_shown": 5,
         "properties_shown": 12, "subgraph_class_recall": 0.0,
         "subgraph_property_recall": 1.0, "context_tokens": 300},
        {"gold_class_ranks": [], "gold_property_ranks": [3], "classes_shown": 5,
         "properties_shown": 12, "subgraph_class_recall": None,
         "subgraph_property_recall": 0.5, "context_tokens": 200},
        {},  # a question without events (e.g. gold): left out
    ]
    out = summarize_grounding([{"grounding": g} for g in gs])["grounding"]
    cls, props = out["recall_at_k"]["classes"], out["recall_at_k"]["properties"]
    assert cls["k"] == [1, 2, 3, 4, 5] and cls["n"] == 2
    assert cls["recall"] == [0.5] * 5
    assert props["n"] == 3 and props["recall"][:4] == pytest.approx([1 / 3, 1 / 3, 2 / 3, 1.0])
    assert out["subgraph_all_classes"] == {"rate": 0.5, "n": 2}
    assert out["subgraph_all_properties"]["rate"] == pytest.approx(2 / 3)
    assert out["subgraph_all"]["rate"] == pytest.approx(1 / 3)
    assert out["context_tokens"]["median"] == 200 and out["context_tokens"]["p90"] == 300


@pytest.mark.ontop
@pytest.mark.postgres
def test_demo_run_records_projection_and_coverage(
        navqa_config: NavqaConfig, vkg: Callable[..., Any], tmp_path: Path) -> None:
    """A real offline run on demo questions: the new summary keys are there, agree with the
    records, and reach the report."""
    qs = load_questions(*default_question_files("demo"))
    subset = QuestionSet(tuple(qs.questions[:8]))
    run = tmp_path / "run"
    s = run_eval(navqa_config, vkg=vkg("demo").running, questions=subset, strategy="navqa",
                 llm="none", out_dir=run, gold_cache_dir=tmp_path / "gold")
    assert "projection" in SUMMARY_KEYS and set(SUMMARY_KEYS) <= set(s)
    recs = [json.loads(x) for x in (run / RESULTS_FILE).read_text().splitlines() if x]
    assert len(recs) == 8
    p = s["projection"]
    assert p["n"] == 8 and sum(p[v.value] for v in ProjectionVerdict) == 8
    for r in recs:
        v = ProjectionVerdict(r["projection"]["verdict"])
        ask_or_empty = r["gold_size"] == 0 or r["gold_sample"] in (["true"], ["false"])
        assert (v == ProjectionVerdict.NOT_APPLICABLE) == ask_or_empty
        if not ask_or_empty:
            assert (v == ProjectionVerdict.RIGHT_ANSWER) == bool(r["acc"])
            assert bool(r["projection"]["gold_columns"])
        if r["outcome"] != "non-empty":
            assert v in (ProjectionVerdict.NO_ANSWER, ProjectionVerdict.NOT_APPLICABLE)
    g = s["grounding"]
    for kind, ranks_key in (("classes", "gold_class_ranks"),
                            ("properties", "gold_property_ranks")):
        curve = g["recall_at_k"][kind]
        assert curve["n"] > 0 and curve["k"][0] == 1
        assert curve["recall"] == sorted(curve["recall"])             # non-decreasing
        ranks = [r["grounding"][ranks_key] for r in recs if r["grounding"][ranks_key]]
        at_k = sum(1 for rs in ranks if None not in rs) / len(ranks)
        assert curve["recall"][-1] == pytest.approx(at_k)
    k_classes = g["recall_at_k"]["classes"]["k"][-1]
    assert k_classes == navqa_config.pipeline.top_k
    tokens = sorted(r["grounding"]["context_tokens"] for r in recs)
    assert tokens[0] > 0 and tokens[0] <= g["context_tokens"]["median"] <= tokens[-1]
    keys = ("subgraph_class_recall", "subgraph_property_recall")
    judged = [r["grounding"] for r in recs
              if any(r["grounding"][k] is not None for k in keys)]
    full = [x for x in judged if all(x[k] is None or x[k] == 1.0 for k in keys)]
    assert g["subgraph_all"] == {"rate": len(full) / len(judged), "n": len(judged)}
    with_classes = [r["grounding"]["subgraph_class_recall"] for r in recs
                    if r["grounding"]["subgraph_class_recall"] is not None]
    assert g["subgraph_all_classes"]["rate"] == pytest.approx(
        sum(1 for x in with_classes if x == 1.0) / len(with_classes))
    text = (run / REPORT_FILE).read_text()
    assert "## Projection" in text and "### Linking recall@k" in text
    assert f"median {g['context_tokens']['median']} tokens" in text
    assert (run / RECALL_FIGURE).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_asked_column_recall_counts_the_gold_columns_a_prediction_matches() -> None:
    """Two asked columns (name and count): the name alone matches one of two; an extra
    column matches none more; no answer matches none; an ASK counts no column."""
    two = sel(("name", "c"), (lit("Ann"), num(3)), (lit("Bob"), num(5)))
    names = sel(("n",), (lit("Ann"),), (lit("Bob"),))
    both = sel(("n", "k"), (lit("Ann"), num(3)), (lit("Bob"), num(5)))
    recs = [{"projection": projection_of(two, pred, acc=False).to_json()}
            for pred in (names, both, None)]
    recs.append({"projection": projection_of(AskResult(True), AskResult(True),
                                             acc=True).to_json()})
    s = summarize_projection(recs)
    assert (s["gold_columns"], s["matched_columns"]) == (6, 3)
    assert s["asked_column_recall"] == pytest.approx(3 / 6)
    assert summarize_projection([])["asked_column_recall"] is None
