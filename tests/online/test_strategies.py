"""Strategies are looked up by name in a registry; outcomes are an enum set from types."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from navqa.errors import (
    ConfigError,
    EndpointError,
    EndpointTimeoutError,
    LLMResponseError,
    NavqaError,
    QueryCheckError,
    UnmappedTermError,
)
from navqa.model.events import ErrorKind, Event, QueryExecuted
from navqa.model.events_json import answer_json
from navqa.online.state import AskState
from navqa.online.strategies import STRATEGIES, Stages, StrategyRegistry, registry


def test_every_builtin_strategy_is_registered_by_its_module() -> None:
    assert set(registry.names()) >= set(STRATEGIES)
    runs = {name: registry.get(name) for name in STRATEGIES}
    assert runs["navqa"].__module__ == "navqa.online.pipeline"
    assert runs["agent"].__module__ == "navqa.online.saga.agent"
    assert runs["cot"].__module__ == runs["sparqlgen"].__module__ == "navqa.online.baselines"
    assert registry.repair().__module__ == "navqa.online.saga.repair"


def test_an_unknown_strategy_is_a_config_error_naming_it() -> None:
    with pytest.raises(ConfigError, match=r"'nope'.*navqa, agent, cot, sparqlgen"):
        registry.get("nope")


def test_a_builtin_whose_module_is_broken_fails_loudly() -> None:
    reg = StrategyRegistry({"broken": "navqa.online.no_such_module"})
    with pytest.raises(ModuleNotFoundError):
        reg.get("broken")


def test_a_registered_strategy_runs_through_the_pipeline(demo_pipeline) -> None:
    def constant(pipe: Stages, st: AskState) -> Iterator[Event]:
        st.sparql = "ASK { ?s ?p ?o }"
        yield from pipe.execute(st)

    reg = StrategyRegistry()
    reg.register("constant", constant)
    original = demo_pipeline.strategies
    demo_pipeline.strategies = reg
    try:
        answer = demo_pipeline.ask("anything at all", strategy="constant")
    finally:
        demo_pipeline.strategies = original
    assert answer.strategy == "constant" and answer.sparql == "ASK { ?s ?p ?o }"
    assert answer.result is not None and answer.of(QueryExecuted)


@pytest.mark.parametrize(("exc", "kind"), [
    (LLMResponseError("bad JSON"), ErrorKind.LLM_RESPONSE),
    (UnmappedTermError("x", terms=("http://e/x",)), ErrorKind.UNMAPPED_TERM),
    (QueryCheckError("x"), ErrorKind.QUERY_CHECK),
    (EndpointTimeoutError("x", endpoint="http://e"), ErrorKind.ENDPOINT_TIMEOUT),
    (EndpointError("x", endpoint="http://e"), ErrorKind.ENDPOINT),
])
def test_the_error_kind_comes_from_the_exception_type(exc: Exception, kind: ErrorKind) -> None:
    assert ErrorKind.of(exc) is kind
    assert kind.value == type(exc).__name__  # the JSON keeps today's strings


def test_a_subclass_gets_its_nearest_kind_and_a_stranger_none() -> None:
    class ThrottledError(LLMResponseError):
        pass

    assert ErrorKind.of(ThrottledError("x")) is ErrorKind.LLM_RESPONSE
    with pytest.raises(ValueError, match="NavqaError"):
        ErrorKind.of(NavqaError("x"))


def test_the_agent_names_a_refusal_by_its_kind_not_its_message(demo_pipeline) -> None:
    from navqa.online.saga.agent import AgentSession, type_state_for
    from navqa.online.saga.tools import Tools

    st = AskState("Which lines are operated?")
    theta = type_state_for(demo_pipeline, AgentSession())
    tools = Tools(demo_pipeline, st, theta, "offline")
    ex, obs, _ = tools.execute("PREFIX rail: <http://example.org/navqa/rail#>\n"
                               "SELECT ?l WHERE { ?o rail:operatesLine ?l }")
    assert not ex.ok and ex.error_kind is ErrorKind.UNMAPPED_TERM
    ex, _, _ = tools.execute("SELECT ?x WHERE { ?x ?y }")
    assert not ex.ok and ex.error_kind is ErrorKind.QUERY_CHECK


def test_answer_json_keeps_the_error_kind_a_plain_string(demo_pipeline) -> None:
    from navqa.model.events import Answer

    answer = Answer(question="q", sparql=None, result=None, error="e",
                    error_kind=ErrorKind.UNMAPPED_TERM)
    data = answer_json(answer) | {"error_kind": answer.error_kind}
    assert json.loads(json.dumps(data))["error_kind"] == "UnmappedTermError"
