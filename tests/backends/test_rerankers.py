"""Rerankers: bi-encoder (real embedder), LLM (scripted server), cross-encoder error path.

No cross-encoder model ships in any installed package and nothing can be downloaded,
so the cross-encoder is exercised on its error paths only (a missing directory, a
directory that holds no model); its scoring code runs wherever a local model exists.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from navqa.backends.llm_openai import OpenAIChat
from navqa.backends.protocols import Reranker
from navqa.backends.rerankers import (
    BiEncoderReranker,
    CrossEncoderReranker,
    LLMReranker,
    make_reranker,
    scores_schema,
)
from navqa.config import NavqaConfig
from navqa.errors import ConfigError, LLMResponseError, LLMUnavailableError
from navqa.testing.scripted_llm import RecordedRequest, Rule, ScriptedLLMServer

MakeChat = Callable[..., OpenAIChat]
QUERY = "Which wellbores were drilled in the North Sea?"
DOCS = [
    "A recipe for chocolate cake with cream.",
    "Wellbore: a hole drilled in the North Sea to explore for petroleum.",
    "The company has its headquarters in Stavanger.",
]


def _docs_in(req: RecordedRequest) -> list[str]:
    """The numbered documents as the scripted server sees them in the prompt."""
    return re.findall(r"^\[\d+\] (.*)$", req.all_text, flags=re.MULTILINE)


def _keyword_scores(req: RecordedRequest) -> str:
    """A scripted judge: 10 for documents mentioning 'wellbore', 1 otherwise."""
    scores = [10 if "wellbore" in d.lower() else 1 for d in _docs_in(req)]
    return json.dumps({"scores": scores})


def test_bi_encoder_puts_the_relevant_document_first(embedder: Any) -> None:
    rr = BiEncoderReranker(embedder)
    assert isinstance(rr, Reranker) and rr.name == "bi-encoder:all-MiniLM-L6-v2"
    scores = rr.score(QUERY, DOCS)
    assert len(scores) == 3 and all(-1.0 <= s <= 1.0 for s in scores)
    assert max(range(3), key=scores.__getitem__) == 1
    assert rr.score(QUERY, []) == []


@pytest.mark.llm
def test_llm_reranker_scores_all_documents_in_one_call(
    server: ScriptedLLMServer, make_chat: MakeChat
) -> None:
    server.add_rule(Rule(respond=_keyword_scores))
    rr = LLMReranker(make_chat())
    assert isinstance(rr, Reranker) and rr.name == "llm:test-model"
    scores = rr.score(QUERY, DOCS)
    assert scores == [1.0, 10.0, 1.0]
    (req,) = server.requests
    assert QUERY in req.last_user
    assert _docs_in(req) == DOCS  # every document, numbered, in order
    assert req.body is not None and req.body["response_format"] == {"type": "json_object"}
    assert rr.score(QUERY, []) == [] and len(server.requests) == 1


@pytest.mark.llm
def test_llm_reranker_wrong_count_is_repaired_once(
    server: ScriptedLLMServer, make_chat: MakeChat
) -> None:
    server.add_rule(Rule(respond='{"scores": [3, 9]}', times=1))
    server.add_rule(Rule(respond='{"scores": [3, 9, 1]}'))
    assert LLMReranker(make_chat()).score(QUERY, DOCS) == [3.0, 9.0, 1.0]
    assert len(server.requests) == 2
    with pytest.raises(ValidationError) as direct:  # pydantic's own wording is the oracle
        scores_schema(3).model_validate_json('{"scores": [3, 9]}')
    assert direct.value.errors()[0]["msg"] in server.requests[1].last_user


@pytest.mark.llm
def test_llm_reranker_wrong_count_after_repair_fails_loudly(
    server: ScriptedLLMServer, make_chat: MakeChat
) -> None:
    server.set_default('{"scores": [5]}')
    with pytest.raises(LLMResponseError):
        LLMReranker(make_chat()).score(QUERY, DOCS)


def test_cross_encoder_missing_path_is_a_config_error(tmp_path: Path) -> None:
    missing = tmp_path / "Qwen3-Reranker-8B"
    with pytest.raises(ConfigError, match="does not exist") as info:
        CrossEncoderReranker(missing)
    assert str(missing) in str(info.value)
    assert info.value.hint is not None and "local" in info.value.hint


def test_cross_encoder_directory_without_a_model_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot load a cross-encoder"):
        CrossEncoderReranker(tmp_path)


@pytest.mark.llm
def test_make_reranker_auto_prefers_cross_encoder_then_llm_then_bi_encoder(
    tmp_path: Path, embedder: Any, make_chat: MakeChat
) -> None:
    llm = make_chat()
    with_path = NavqaConfig.model_validate({"reranker": {"model_path": str(tmp_path / "none")}})
    with pytest.raises(ConfigError, match="does not exist"):  # auto picked the cross-encoder
        make_reranker(with_path, embedder, llm)
    plain = NavqaConfig()
    assert isinstance(make_reranker(plain, embedder, llm), LLMReranker)
    assert isinstance(make_reranker(plain, embedder, None), BiEncoderReranker)
    forced = NavqaConfig.model_validate({"reranker": {"kind": "bi-encoder"}})
    assert isinstance(make_reranker(forced, embedder, llm), BiEncoderReranker)


def test_make_reranker_explicit_kinds_need_their_backend(embedder: Any) -> None:
    with pytest.raises(LLMUnavailableError):
        make_reranker(NavqaConfig.model_validate({"reranker": {"kind": "llm"}}), embedder, None)
    with pytest.raises(ConfigError, match="model_path"):
        make_reranker(
            NavqaConfig.model_validate({"reranker": {"kind": "cross-encoder"}}), embedder, None
        )
    with pytest.raises(ConfigError, match="embedder"):
        make_reranker(NavqaConfig(), None, None)
