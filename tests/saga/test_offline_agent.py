"""The deterministic agent and ``repair_empty`` on the real demo VKG (Ontop + PostgreSQL).

Gold rows come from the gold queries run on the same endpoint, never from the code under
test.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from saga_common import PREFIX, pipeline_with

from navqa.evaluation.metrics import score
from navqa.model.events import (
    AgentStep,
    PropertiesJudged,
    QueryExecuted,
    QueryRepaired,
    TypeStateUpdated,
)
from navqa.online.pipeline import AskState
from navqa.online.saga.repair import repair_empty

pytestmark = [pytest.mark.ontop, pytest.mark.postgres]

QUESTIONS = {q["id"]: q for q in map(json.loads, (Path(__file__).parents[2] /
                                                   "datasets/demo/questions.jsonl")
                                       .read_text(encoding="utf-8").splitlines())}
QUESTION = "Which stations are managed by Kestrel Metro?"
GOLD = (PREFIX + 'SELECT ?name WHERE { ?s a rail:Station ; rail:name ?name ; rail:operatedBy ?op .'
        ' ?op rail:name "Kestrel Metro" . }')


def _empty_state(pipe, question: str, sparql: str) -> AskState:
    """A question whose NaVQA query (``sparql``) came back empty."""
    st = AskState(question)
    list(pipe.extract(st))
    list(pipe.ground(st))
    st.sparql = sparql
    st.result = pipe.endpoint.query(sparql)
    assert st.result.is_empty
    return st


def _rows(result) -> set[tuple[str, ...]]:
    return {tuple(str(t) for t in row) for row in result.rows}


def test_a_property_whose_domain_conflicts_is_swapped(offline_pipeline) -> None:
    pipe = offline_pipeline
    bad = GOLD.replace("rail:operatedBy", "rail:builtBy")
    st = _empty_state(pipe, QUESTION, bad)
    events = list(repair_empty(pipe, st))
    repairs = [e for e in events if isinstance(e, QueryRepaired)]
    assert repairs and all(r.method == "offline" for r in repairs)
    assert len(repairs) <= pipe.config.pipeline.repair_attempts
    assert "domain" in repairs[0].reason or "rail:builtBy" in repairs[0].reason
    assert "rail:operatedBy" in st.sparql and "builtBy" not in st.sparql
    assert _rows(st.result) == _rows(pipe.endpoint.query(GOLD))


def test_a_wrongly_cased_literal_is_relaxed_to_the_stored_form(offline_pipeline) -> None:
    pipe = offline_pipeline
    st = _empty_state(pipe, QUESTION, GOLD.replace('"Kestrel Metro"', '"KESTREL METRO"'))
    events = list(repair_empty(pipe, st))
    repaired = [e for e in events if isinstance(e, QueryRepaired)]
    assert repaired[0].reason.startswith("literal-value")
    assert '"Kestrel Metro"' in st.sparql
    assert _rows(st.result) == _rows(pipe.endpoint.query(GOLD))


def test_a_repair_that_finds_nothing_leaves_the_query_alone(offline_pipeline) -> None:
    pipe = offline_pipeline
    hopeless = GOLD.replace('"Kestrel Metro"', '"No Such Company At All"')
    st = _empty_state(pipe, QUESTION, hopeless)
    list(repair_empty(pipe, st))
    assert st.sparql == hopeless and st.result.is_empty


def test_the_pipeline_records_repairs_of_empty_results(offline_pipeline, navqa_config,
                                                      served_demo, embedder) -> None:
    q = QUESTIONS["demo-054"]   # NaVQA pins the operator's name on the manufacturer
    answer = offline_pipeline.ask(q["question"])
    repairs = answer.of(QueryRepaired)
    assert repairs, "the empty NaVQA result should have been repaired"
    assert not answer.empty
    gold = offline_pipeline.endpoint.query(q["sparql"])
    assert score(gold, answer.result).acc, answer.sparql
    executed = answer.of(QueryExecuted)
    assert executed[0].empty and not executed[-1].empty
    # with no repair attempts the empty result stands
    plain = pipeline_with(navqa_config, served_demo, embedder, repair_attempts=0)
    a0 = plain.ask(q["question"])
    assert a0.empty and not a0.of(QueryRepaired)


def test_the_offline_agent_repairs_an_empty_result(offline_pipeline) -> None:
    q = QUESTIONS["demo-054"]
    answer = offline_pipeline.ask(q["question"], strategy="agent")
    assert answer.strategy == "agent" and answer.error is None
    steps = answer.of(AgentStep)
    assert steps[0].action == "execute" and "[WARNING] empty result" in steps[0].observation
    assert steps[-1].action == "stop"
    assert any(isinstance(e, QueryRepaired) and e.method == "offline" for e in answer.events)
    assert any(isinstance(e, TypeStateUpdated) and e.source == "value" for e in answer.events)
    gold = offline_pipeline.endpoint.query(q["sparql"])
    assert score(gold, answer.result).acc, answer.sparql
    assert answer.llm_calls == 0


def test_the_offline_agent_answers_what_navqa_answers(offline_pipeline) -> None:
    answer = offline_pipeline.ask(QUESTION, strategy="agent")
    steps = answer.of(AgentStep)
    assert [s.action for s in steps] == ["execute", "stop"]
    assert _rows(answer.result) == _rows(offline_pipeline.endpoint.query(GOLD))
    assert answer.of(PropertiesJudged)   # the lookups of the expansion


def test_without_the_type_state_the_misplaced_name_is_not_recognised(
        navqa_config, served_demo, embedder) -> None:
    q = QUESTIONS["demo-054"]
    pipe = pipeline_with(navqa_config, served_demo, embedder, type_state=False)
    answer = pipe.ask(q["question"])
    assert not any(isinstance(e, TypeStateUpdated) and e.source == "value"
                   for e in answer.events)
    assert not any(r.reason.startswith("reanchor") for r in answer.of(QueryRepaired))
