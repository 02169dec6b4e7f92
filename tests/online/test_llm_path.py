"""The LLM path end to end: real ``openai`` client → scripted server → real Ontop.

The scripted server plays the LLM: it answers each kind of prompt (mentions, batched
judge, reranker, synthesis) by rules. The tests check what navqa *sends* — no prompt
ever carries a term outside the active ontology — and what it does with the answers.
"""

from __future__ import annotations

import json
import re

import pytest

from navqa.backends.llm_factory import make_llm
from navqa.model.events import PropertiesJudged, QueryChecked, QuerySynthesized
from navqa.online.pipeline import Pipeline
from navqa.testing.scripted_llm import RecordedRequest, Rule, ScriptedLLMServer

pytestmark = [pytest.mark.llm, pytest.mark.ontop, pytest.mark.postgres]

QUESTION = "Which stations are managed by Kestrel Metro?"
GOLD = ("PREFIX rail: <http://example.org/navqa/rail#>\nSELECT ?name WHERE { ?s a rail:Station ;"
        ' rail:name ?name ; rail:operatedBy ?op . ?op rail:name "Kestrel Metro" . }')
TRAP = ("PREFIX rail: <http://example.org/navqa/rail#>\nSELECT ?name WHERE { ?op rail:operatesLine"
        ' ?l . ?op rail:name "Kestrel Metro" . ?l rail:name ?name }')
# Everything that names a deliberately unmapped demo element (datasets/demo/README.md).
UNMAPPED = ("operatesLine", "stopsAt", "stationRegion", "openingYear", "rail:Train",
            "rail#Train")

MENTIONS = {"class_mentions": ["stations"], "property_mentions": ["managed by"],
            "value_mentions": [{"text": "Kestrel Metro", "kind": "string"}],
            "answer": {"label": "stations", "kind": "entity"}}


def judge(req: RecordedRequest) -> str:
    """Select, per class block, the listed properties that lead to the answer."""
    nodes = []
    for block in req.last_user.split("class id ")[1:]:
        node = block.split()[0]
        names = re.findall(r"\((rail:[A-Za-z]+)\)", block)
        wanted = [n for n in names if n in ("rail:operatedBy", "rail:name")]
        nodes.append({"node": node, "selected": wanted})
    return json.dumps({"nodes": nodes})


def rerank(req: RecordedRequest) -> str:
    docs = re.findall(r"^\[(\d+)\] (.*)$", req.last_user, re.M)
    return json.dumps({"scores": [0.9 if "root class rail:Station " in d else 0.1
                                  for _, d in docs]})


def rules(synthesis: list[str]) -> list[Rule]:
    return [
        Rule(respond=json.dumps(MENTIONS), match="Extract the mentions", where="system"),
        Rule(respond=judge, match="exploring its schema"),
        Rule(respond=rerank, match="Documents:"),
        *[Rule(respond=json.dumps({"sparql": q}), match="Schema excerpt:", times=1)
          for q in synthesis],
    ]


def pipeline(navqa_config, vkg, embedder, server: ScriptedLLMServer) -> Pipeline:
    cfg = navqa_config.with_overrides(llm={"provider": "openai", "base_url": server.base_url,
                                           "model": "scripted", "api_key": "sk-test-key",
                                           "cache": False, "max_retries": 0})
    llm = make_llm(cfg, cache=False)
    from navqa.backends.sparql_http import HttpSparqlEndpoint
    from navqa.offline.artifacts import ensure_index

    served = vkg("demo")
    bundle = ensure_index(cfg, served.dataset, embedder=embedder)
    return Pipeline.from_index(bundle, endpoint=HttpSparqlEndpoint(served.running.url),
                               config=cfg, embedder=embedder, llm=llm)


def assert_no_unmapped_term_in_prompts(server: ScriptedLLMServer) -> None:
    assert server.chat_requests, "the LLM was never called"
    for req in server.chat_requests:
        for term in UNMAPPED:
            assert term not in req.all_text, f"{term} appeared in a prompt:\n{req.all_text}"


def test_llm_pipeline_answers_and_never_shows_unmapped_terms(navqa_config, vkg,
                                                            embedder) -> None:
    with ScriptedLLMServer(rules([GOLD])) as server:
        pipe = pipeline(navqa_config, vkg, embedder, server)
        answer = pipe.ask(QUESTION)
        assert answer.error is None, answer.error
        names = {str(r[0]) for r in answer.result.rows}
        assert names == {"Kestrel Junction", "Kestrel High Street", "Elmstead", "Fairhaven"}
        judged = answer.of(PropertiesJudged)
        assert judged and all(j.method == "llm" for j in judged)
        # One call for mentions (+ answer type), one per expansion level, one rerank, one
        # synthesis: judging is batched, never one call per property.
        levels = len({j.depth for j in judged})
        assert answer.llm_calls == 1 + levels + 1 + 1 <= 6
        assert len(server.chat_requests) == answer.llm_calls
        assert_no_unmapped_term_in_prompts(server)


def test_unmapped_term_from_the_llm_is_refused_then_repaired(navqa_config, vkg,
                                                            embedder) -> None:
    with ScriptedLLMServer(rules([TRAP, GOLD])) as server:
        pipe = pipeline(navqa_config, vkg, embedder, server)
        answer = pipe.ask(QUESTION)
        checks = answer.of(QueryChecked)
        assert [c.ok for c in checks] == [False, True]
        assert "http://example.org/navqa/rail#operatesLine" in checks[0].unmapped_terms
        assert len(answer.of(QuerySynthesized)) == 2
        assert len(answer.result.rows) == 4
        second = [r for r in server.chat_requests if "Schema excerpt:" in r.last_user][1]
        assert "no data in this VKG" in second.last_user
        assert_no_unmapped_term_in_prompts(server)


def test_llm_that_keeps_using_unmapped_terms_gets_a_refusal_not_an_empty_answer(
        navqa_config, vkg, embedder) -> None:
    with ScriptedLLMServer(rules([TRAP, TRAP])) as server:
        pipe = pipeline(navqa_config, vkg, embedder, server)
        answer = pipe.ask(QUESTION)
        assert answer.result is None, "an unmapped query must never be executed"
        assert answer.error_kind == "UnmappedTermError"
        assert "operatesLine" in answer.error and "mapped alternatives" in answer.error
