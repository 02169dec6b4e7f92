"""The agent loop with an LLM: real ``openai`` client → scripted server → real Ontop.

The scripted server plays the controller step by step. The tests check what the agent
*shows* the model (typed listings, the warning after an empty result, the knowledge log,
the type context, previous turns) and what it does with the answers.
"""

from __future__ import annotations

import json
import re

import pytest
from saga_common import PREFIX, RAIL

from navqa.backends.llm_factory import make_llm
from navqa.backends.sparql_http import HttpSparqlEndpoint
from navqa.model.events import (
    AgentStep,
    PropertiesJudged,
    QueryExecuted,
    QueryRepaired,
    TypeStateUpdated,
)
from navqa.offline.artifacts import ensure_index
from navqa.online.pipeline import Pipeline
from navqa.online.saga.agent import AgentSession
from navqa.testing.scripted_llm import RecordedRequest, Rule, ScriptedLLMServer

pytestmark = [pytest.mark.llm, pytest.mark.ontop, pytest.mark.postgres]

QUESTION = "Which stations are managed by Kestrel Metro?"
GOOD = (PREFIX + 'SELECT ?name WHERE { ?s a rail:Station ; rail:name ?name ; rail:operatedBy ?op .'
        ' ?op rail:name "Kestrel Metro" . }')
BAD = GOOD.replace("rail:operatedBy", "rail:builtBy")
STATIONS = {"Kestrel Junction", "Kestrel High Street", "Elmstead", "Fairhaven"}
UNMAPPED = ("operatesLine", "stopsAt", "stationRegion", "openingYear", "rail:Train",
            "rail#Train")
MENTIONS = {"class_mentions": ["stations"], "property_mentions": ["managed by"],
            "value_mentions": [{"text": "Kestrel Metro", "kind": "string"}],
            "answer": {"label": "stations", "kind": "entity"}}
CONTROLLER = "Output one thought and one action as JSON."


def act(action: str, argument: str = "", thought: str = "") -> str:
    return json.dumps({"thought": thought or action, "action": action, "argument": argument})


def mentions_rule() -> Rule:
    return Rule(respond=json.dumps(MENTIONS), match="Extract the mentions", where="system")


def pipeline(navqa_config, vkg, embedder, server: ScriptedLLMServer, **pipe) -> Pipeline:
    cfg = navqa_config.with_overrides(llm={"provider": "openai", "base_url": server.base_url,
                                           "model": "scripted", "api_key": "sk-test-key",
                                           "cache": False, "max_retries": 0},
                                      pipeline=pipe)
    served = vkg("demo")
    bundle = ensure_index(cfg, served.dataset, embedder=embedder)
    return Pipeline.from_index(bundle, endpoint=HttpSparqlEndpoint(served.running.url),
                               config=cfg, embedder=embedder, llm=make_llm(cfg, cache=False))


def rows(answer) -> set[str]:
    return {str(r[0]) for r in answer.result.rows}


def controller_prompts(server: ScriptedLLMServer) -> list[str]:
    return [r.last_user for r in server.chat_requests if CONTROLLER in r.last_user]


def assert_no_unmapped_term_in_prompts(server: ScriptedLLMServer) -> None:
    for req in server.chat_requests:
        for term in UNMAPPED:
            assert term not in req.all_text, f"{term} appeared in a prompt"


def test_the_agent_recovers_from_an_empty_result(navqa_config, vkg, embedder) -> None:
    def fixed_query(req: RecordedRequest) -> str:
        # the model sees why the last query came back empty before it tries again
        assert "[WARNING] empty result; likely cause: rail:builtBy" in req.last_user
        assert "[fail] Empty" in req.last_user
        return act("execute", GOOD, "builtBy is for rolling stock; stations use operatedBy")

    script = [act("search", "Kestrel Metro"), act("lookup", "rail:Station"),
              act("execute", BAD), fixed_query, act("stop")]
    rules = [mentions_rule(), *[Rule(respond=r, match=CONTROLLER, times=1) for r in script]]
    with ScriptedLLMServer(rules) as server:
        pipe = pipeline(navqa_config, vkg, embedder, server)
        answer = pipe.ask(QUESTION, strategy="agent")
        assert answer.error is None, answer.error
        steps = answer.of(AgentStep)
        assert [s.action for s in steps] == ["search", "lookup", "execute", "execute", "stop"]
        assert '"Kestrel Metro" is the rail:name of' in steps[0].observation
        assert "[domain: " in steps[1].observation
        assert steps[2].observation.startswith("[WARNING] empty result")
        assert rows(answer) == STATIONS
        assert [e.empty for e in answer.of(QueryExecuted)] == [True, False]
        # the lookup: typed, filtered, annotated, with the type-blind pool as "available"
        (lookup,) = answer.of(PropertiesJudged)
        assert lookup.node == RAIL + "Station" and lookup.method == "llm"
        assert lookup.filtered_out and lookup.available >= len(lookup.candidates) + len(
            lookup.filtered_out)
        assert all(c.listing.endswith("]") for c in lookup.candidates)
        tf = pipe.candidate_filter
        assert all(not tf.compatible([RAIL + "Station"], p) for p in lookup.filtered_out)
        # Θ: the company found by search, then ?op pinned to it by its name
        ts = answer.of(TypeStateUpdated)
        assert any(e.source == "lookup" and RAIL + "OperatorCompany" in e.types for e in ts)
        assert any(e.entity == "?op" and e.source == "value" for e in ts)
        prompts = controller_prompts(server)
        assert "Expected answer type: entity (rail:Station)" in prompts[0]
        assert "rail:OperatorCompany" in prompts[2]           # the type context
        assert answer.llm_calls == 1 + len(script)             # mentions + one per step
        assert_no_unmapped_term_in_prompts(server)


def test_an_empty_navqa_result_is_repaired_by_the_llm(navqa_config, vkg, embedder) -> None:
    def judge(req: RecordedRequest) -> str:
        nodes = [{"node": b.split()[0], "selected": [n for n in re.findall(
            r"\((rail:[A-Za-z]+)\)", b) if n in ("rail:builtBy", "rail:name")]}
            for b in req.last_user.split("class id ")[1:]]
        return json.dumps({"nodes": nodes})

    def rerank(req: RecordedRequest) -> str:
        docs = re.findall(r"^\[(\d+)\] (.*)$", req.last_user, re.M)
        return json.dumps({"scores": [0.9 if "root class rail:Station " in d else 0.1
                                      for _, d in docs]})

    def repair(req: RecordedRequest) -> str:
        assert "the query NaVQA built" in req.last_user and "[WARNING]" in req.last_user
        return act("execute", GOOD, "use operatedBy")

    rules = [mentions_rule(), Rule(respond=judge, match="exploring its schema"),
             Rule(respond=rerank, match="Documents:"),
             Rule(respond=json.dumps({"sparql": BAD}), match="Schema excerpt:", times=1),
             Rule(respond=repair, match=CONTROLLER, times=1)]
    with ScriptedLLMServer(rules) as server:
        pipe = pipeline(navqa_config, vkg, embedder, server)
        answer = pipe.ask(QUESTION)
        (rep,) = answer.of(QueryRepaired)
        assert rep.method == "llm" and rep.attempt == 1 and "builtBy" in rep.before
        assert "operatedBy" in rep.after and rep.reason.endswith("→ rows")
        assert rows(answer) == STATIONS and "operatedBy" in answer.sparql
        assert_no_unmapped_term_in_prompts(server)


def test_a_session_keeps_the_type_state_and_the_previous_turns(navqa_config, vkg,
                                                              embedder) -> None:
    second = "And which of them have step-free access?"
    follow = (PREFIX + 'SELECT ?name WHERE { ?s a rail:Station ; rail:name ?name ; '
              'rail:stepFreeAccess true ; rail:operatedBy ?op . ?op rail:name "Kestrel Metro" }')

    def second_turn(req: RecordedRequest) -> str:
        assert "Previous turns:" in req.last_user and QUESTION in req.last_user
        return act("execute", follow)

    script = [act("search", "Kestrel Metro"), act("execute", GOOD), act("stop"),
              second_turn, act("stop")]
    rules = [mentions_rule(), *[Rule(respond=r, match=CONTROLLER, times=1) for r in script]]
    with ScriptedLLMServer(rules) as server:
        pipe = pipeline(navqa_config, vkg, embedder, server)
        session = AgentSession()
        a1 = session.ask(pipe, QUESTION)
        assert rows(a1) == STATIONS
        known = dict(session.theta.types)
        a2 = session.ask(pipe, second)
        assert a2.error is None and rows(a2) <= STATIONS
        assert len(session.turns) == 2
        # what turn 1 learnt about the operator is still known in turn 2
        assert any(k.startswith("<") for k in known)
        assert all(k in session.theta.types for k in known if k.startswith("<"))


def test_ablations_change_what_the_controller_sees(navqa_config, vkg, embedder) -> None:
    script = [act("lookup", "rail:Station"), act("stop")]
    seen = {}
    for name, pipe_cfg in (("full", {}), ("no-type-filter", {"type_filter": False}),
                           ("no-type-state", {"type_state": False}),
                           ("no-answer-type", {"answer_type_prior": False})):
        rules = [mentions_rule(), *[Rule(respond=r, match=CONTROLLER, times=1) for r in script]]
        with ScriptedLLMServer(rules) as server:
            pipe = pipeline(navqa_config, vkg, embedder, server, **pipe_cfg)
            answer = pipe.ask(QUESTION, strategy="agent")
            (lookup,) = answer.of(PropertiesJudged)
            seen[name] = (lookup, controller_prompts(server))
    full, nf = seen["full"][0], seen["no-type-filter"][0]
    assert full.filtered_out and not nf.filtered_out
    assert len(nf.candidates) > len(full.candidates) and nf.available == full.available
    assert "Known types:\n(not kept)" in seen["no-type-state"][1][0]
    assert "Expected answer type: (not predicted)" in seen["no-answer-type"][1][0]
    assert "Expected answer type: entity" in seen["full"][1][0]


def test_malformed_controller_output_is_an_error_not_an_empty_answer(navqa_config, vkg,
                                                                    embedder) -> None:
    # every controller call (and the backend's one "fix your JSON" retry) gets prose
    rules = [mentions_rule(), Rule(respond="I think I will look around.")]
    with ScriptedLLMServer(rules) as server:
        pipe = pipeline(navqa_config, vkg, embedder, server)
        answer = pipe.ask(QUESTION, strategy="agent")
        assert answer.result is None
        assert answer.error_kind == "LLMResponseError"
