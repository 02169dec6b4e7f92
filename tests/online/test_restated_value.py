"""A query that only gives back a value the question states answers nothing.

"What is the first station of service 1V13?" ranks the service's class first (it is the
named thing), and the offline query on it projects the service number the question gives
("1V13"). ``synthesis.plan.restates_value`` recognises such a query; the pipeline then takes
the next root of the rerank whose query asks something else (the grammar rule
``restated-value``, recorded on the query).
"""

from __future__ import annotations

from navqa.model.events import QuerySynthesized, SubgraphsReranked
from navqa.model.rules import GrammarRule
from navqa.online.pipeline import Pipeline
from navqa.online.synthesis.plan import Plan, restates_value

QUESTION = "What is the first station of service 1V13?"
RAIL = "http://example.org/navqa/rail#"


def _plan(triples: list[tuple[str, str, str]], select: list[str], **kw: object) -> Plan:
    return Plan(triples=triples, select=select, **kw)  # type: ignore[arg-type]


def test_the_name_of_the_named_entity_is_a_restatement() -> None:
    fixed = [("?f", "ex:name", '"TROLL"'), ("?f", "ex:name", "?name")]
    assert restates_value(_plan(fixed, ["?name"]))
    # another property of it, or the name of another node, asks something
    assert not restates_value(_plan([*fixed, ("?f", "ex:operator", "?c"),
                                     ("?c", "ex:name", "?op")], ["?op"]))
    assert not restates_value(_plan([*fixed, ("?f", "ex:status", "?s")], ["?s"]))
    # a second column that is not stated is an answer
    assert not restates_value(_plan([*fixed, ("?f", "ex:status", "?s")], ["?name", "?s"]))
    # yes/no, counts and groups are never restatements
    assert not restates_value(_plan(fixed, ["?name"], ask=True))
    assert not restates_value(_plan(fixed, ["(COUNT(DISTINCT ?f) AS ?count)"]))
    assert not restates_value(_plan(fixed, ["?name"], group_by=["?name"]))


def _reranked(answer) -> SubgraphsReranked:
    return next(e for e in reversed(answer.events) if isinstance(e, SubgraphsReranked))


def _chosen(answer) -> str:
    return _reranked(answer).chosen


def _rules(answer) -> set[str]:
    return {r for e in answer.events if isinstance(e, QuerySynthesized) for r in e.rules}


def test_the_pipeline_takes_the_next_root_that_asks_something(
        demo_pipeline: Pipeline) -> None:
    off = Pipeline(demo_pipeline.ctx, demo_pipeline.endpoint, demo_pipeline.config
                   .with_overrides(pipeline={"disabled_rules": [GrammarRule.RESTATED_VALUE]}))
    before = off.ask(QUESTION)
    assert _chosen(before) == RAIL + "ScheduledService"
    assert GrammarRule.RESTATED_VALUE not in _rules(before)
    assert before.sparql is not None and '"1V13"' in before.sparql
    assert "SELECT DISTINCT ?serviceNumber " in before.sparql  # the value it was given
    assert _reranked(before).passed_over == ()
    answer = demo_pipeline.ask(QUESTION)
    assert _chosen(answer) != RAIL + "ScheduledService"
    # the better-scored root it did not take is on the event (`ask --explain` shows it)
    assert RAIL + "ScheduledService" in _reranked(answer).passed_over
    assert _chosen(answer) not in _reranked(answer).passed_over
    assert GrammarRule.RESTATED_VALUE in _rules(answer)
    assert answer.sparql is not None and "rail:serviceNumber ?" not in answer.sparql
    assert answer.result is not None and not answer.result.is_empty


def test_the_first_station_is_a_station_not_one_of_its_values(
        demo_pipeline: Pipeline) -> None:
    # the attribute phrase "first station" names the target's class (entity-phrase)
    answer = demo_pipeline.ask(QUESTION)
    assert _chosen(answer) == RAIL + "Station"
    assert GrammarRule.ENTITY_PHRASE in _rules(answer)
    assert answer.sparql is not None and "SELECT DISTINCT ?name " in answer.sparql
    assert "ORDER BY ASC(?stopSequence)" in answer.sparql
    off = Pipeline(demo_pipeline.ctx, demo_pipeline.endpoint, demo_pipeline.config
                   .with_overrides(pipeline={"disabled_rules": [GrammarRule.ENTITY_PHRASE]}))
    before = off.ask(QUESTION)
    assert before.sparql is not None and "SELECT DISTINCT ?name " not in before.sparql


def test_a_name_on_a_class_that_does_not_hold_it_keeps_the_root(
        demo_pipeline: Pipeline) -> None:
    # the query on Manufacturer puts the operator's name on the manufacturer: it restates
    # nothing in the data (it is empty), so the root stays and the repairs find the path
    answer = demo_pipeline.ask(
        "Which manufacturers built the vehicles on Northern Vale Rail's services?")
    assert _chosen(answer) == RAIL + "Manufacturer"
    assert GrammarRule.RESTATED_VALUE not in _rules(answer)
    assert answer.result is not None and not answer.result.is_empty
