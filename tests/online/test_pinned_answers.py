"""Pinned answers on the big VKGs: the offline pipeline answers these exactly.

Each case is a dev question (``datasets/<vkg>/questions.jsonl``) that the offline pipeline
answered correctly in a dev evaluation; they come from the dev split because the test
split is frozen (never read, never tuned on). The expected side is the gold query's own
result on the same endpoint, compared as canonical answers (:func:`~navqa.evaluation.
metrics.score`), never rows the code once produced: a regression in linking, grounding or
synthesis that changes any answer fails here.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from navqa.evaluation.dataset import Question, load_split
from navqa.evaluation.metrics import score
from navqa.model.events import AnswerTypePredicted, QuerySynthesized
from navqa.model.rules import GrammarRule
from navqa.online.pipeline import Pipeline

ATKIS = "http://example.org/ontologies/atkis#"
NPD = "http://sws.ifi.uio.no/vocab/npd-v2#"

PINNED: dict[str, tuple[str, ...]] = {
    # several rows, a one-hop list, a year, a numeric filter, a superlative; a negated
    # relation (MINUS), a ranking by a count; an unmapped answer class whose stand-in the
    # verb's role names ("which rig drilled", role-stand-in); columns of a relation
    # between the answer and the anchor ("… and how large is each share?",
    # relation-column)
    "npd": ("npd-003", "npd-010", "npd-037", "npd-055", "npd-127", "npd-043", "npd-076",
            "npd-074", "npd-015"),
    # a description by name, a count, a count over a join, a count of a class; a name
    # pattern, the top five by a count, an attribute of a name
    "bgee": ("bgee-001", "bgee-002", "bgee-008", "bgee-017", "bgee-007",
             "bgee-021", "bgee-005"),
    # two lists; a count within a distance, a class named by its label's head, a pattern;
    # a count and a list with a further column of things named by a code-list label
    # ("lighthouses", code-value)
    "atkis": ("atkis-004", "atkis-007", "atkis-027", "atkis-006", "atkis-008",
              "atkis-015", "atkis-016"),
}


def _questions(vkg: str) -> dict[str, Question]:
    by_id = {q.id: q for q in load_split(vkg, "dev").questions}
    missing = [i for i in PINNED[vkg] if i not in by_id]
    assert not missing, f"pinned ids not in the {vkg} dev split: {missing}"
    return {i: by_id[i] for i in PINNED[vkg]}


def _pipeline(navqa_config, vkg: Callable[..., object], embedder, name: str) -> Pipeline:
    served = vkg(name)
    return Pipeline.for_vkg(navqa_config, served.running,  # type: ignore[attr-defined]
                            embedder=embedder)


def _check(pipe: Pipeline, q: Question) -> None:
    gold = pipe.endpoint.query(q.sparql)
    assert not gold.is_empty, f"{q.id}: the gold query returned nothing"
    answer = pipe.ask(q.question)
    assert answer.error is None, f"{q.id}: {answer.error}"
    s = score(gold, answer.result, ordered=bool(q.ordered))
    assert s.acc, (f"{q.id} {q.question!r}: f1={s.f1:.2f} (precision {s.precision:.2f}, "
                   f"recall {s.recall:.2f})\n{answer.sparql}")


@pytest.fixture(scope="module")
def npd_pipeline(navqa_config, vkg, embedder) -> Pipeline:
    return _pipeline(navqa_config, vkg, embedder, "npd")


@pytest.fixture(scope="module")
def bgee_pipeline(navqa_config, vkg, embedder) -> Pipeline:
    return _pipeline(navqa_config, vkg, embedder, "bgee")


@pytest.fixture(scope="module")
def atkis_pipeline(navqa_config, vkg, embedder) -> Pipeline:
    return _pipeline(navqa_config, vkg, embedder, "atkis")


@pytest.mark.npd
@pytest.mark.ontop
@pytest.mark.parametrize("qid", PINNED["npd"])
def test_npd_pinned_answer(npd_pipeline: Pipeline, qid: str) -> None:
    _check(npd_pipeline, _questions("npd")[qid])


@pytest.mark.bgee
@pytest.mark.ontop
@pytest.mark.parametrize("qid", PINNED["bgee"])
def test_bgee_pinned_answer(bgee_pipeline: Pipeline, qid: str) -> None:
    _check(bgee_pipeline, _questions("bgee")[qid])


@pytest.mark.atkis
@pytest.mark.ontop
@pytest.mark.parametrize("qid", PINNED["atkis"])
def test_atkis_pinned_answer(atkis_pipeline: Pipeline, qid: str) -> None:
    _check(atkis_pipeline, _questions("atkis")[qid])


@pytest.mark.atkis
@pytest.mark.ontop
def test_a_code_list_label_names_the_answer_class(atkis_pipeline: Pipeline) -> None:
    # atkis-015: "lighthouses" is the label "Lighthouse"@en of a structure function; the
    # class whose instances have that code (from the probe) is the answer class
    question = _questions("atkis")["atkis-015"].question
    answer = atkis_pipeline.ask(question)
    typed = [e for e in answer.events if isinstance(e, AnswerTypePredicted)]
    assert len(typed) == 2 and typed[-1].cls == ATKIS + "Building" != typed[0].cls
    rules = {r for e in answer.events if isinstance(e, QuerySynthesized) for r in e.rules}
    assert GrammarRule.CODE_VALUE in rules
    assert answer.sparql is not None and '"Lighthouse"@en' in answer.sparql
    off = Pipeline(atkis_pipeline.ctx, atkis_pipeline.endpoint, atkis_pipeline.config
                   .with_overrides(pipeline={"disabled_rules": [GrammarRule.CODE_VALUE]}))
    before = off.ask(question)
    assert before.sparql is not None and "Lighthouse" not in before.sparql
    assert len([e for e in before.events if isinstance(e, AnswerTypePredicted)]) == 1


@pytest.mark.npd
@pytest.mark.ontop
def test_the_verb_s_role_names_the_stand_in_of_an_unmapped_class(npd_pipeline: Pipeline
                                                                 ) -> None:
    # npd-074: no mapping populates npdv:Rig; the wellbore's drillingFacility names a
    # facility in the role "drilled" says
    question = _questions("npd")["npd-074"].question
    answer = npd_pipeline.ask(question)
    (typed,) = [e for e in answer.events if isinstance(e, AnswerTypePredicted)]
    assert typed.cls == NPD + "Facility"
    rules = {r for e in answer.events if isinstance(e, QuerySynthesized) for r in e.rules}
    assert GrammarRule.ROLE_STAND_IN in rules
    assert answer.sparql is not None and "npdv:drillingFacility" in answer.sparql
    off = Pipeline(npd_pipeline.ctx, npd_pipeline.endpoint, npd_pipeline.config
                   .with_overrides(pipeline={"disabled_rules": [GrammarRule.ROLE_STAND_IN]}))
    (before,) = [e for e in off.ask(question).events if isinstance(e, AnswerTypePredicted)]
    assert before.cls != NPD + "Facility"
