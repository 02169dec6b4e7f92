"""OpenAIChat through the real ``openai`` client against the scripted server."""

from __future__ import annotations

import json
import time
from collections.abc import Callable

import pytest
from pydantic import BaseModel, ValidationError

from navqa.backends.llm_openai import (
    InvalidOutputError,
    OpenAIChat,
    extract_json_object,
    validate_output,
)
from navqa.backends.protocols import LLM
from navqa.config import LLMConfig
from navqa.errors import (
    ConfigError,
    LLMError,
    LLMRateLimitError,
    LLMResponseError,
    LLMTimeoutError,
)
from navqa.model.llm import Message
from navqa.testing.scripted_llm import Fault, Rule, ScriptedLLMServer

MakeChat = Callable[..., OpenAIChat]
QUESTION = [
    Message.system("You answer geography questions."),
    Message.user("What is the capital of Norway?"),
]


class Answer(BaseModel):
    answer: str
    confidence: float


# --------------------------------------------------------------------------- pure helpers


def test_extract_json_object_strips_think_blocks_fences_and_prose() -> None:
    text = (
        '<think>maybe {"answer": "Bergen"}?</think>Sure! Here it is:\n'
        '```json\n{"answer": "Oslo", "confidence": 0.9}\n```\nHope that helps.'
    )
    assert json.loads(extract_json_object(text)) == {"answer": "Oslo", "confidence": 0.9}
    nested = 'Result: {"a": {"b": 1}, "c": [{"d": 2}]} done'
    assert json.loads(extract_json_object(nested)) == {"a": {"b": 1}, "c": [{"d": 2}]}
    with pytest.raises(InvalidOutputError):
        extract_json_object("no json here")


def test_validate_output_reports_pydantic_errors_per_field() -> None:
    bad = '{"answer": ["Oslo"], "confidence": "high"}'
    with pytest.raises(InvalidOutputError) as info:
        validate_output(Answer, bad)
    expected = Answer.model_validate_json  # independent oracle: pydantic itself
    with pytest.raises(ValidationError) as direct:
        expected(bad)
    for err in direct.value.errors():
        assert any(err["msg"] in line for line in info.value.errors)


def test_missing_model_is_a_config_error() -> None:
    with pytest.raises(ConfigError):
        OpenAIChat(model="")
    with pytest.raises(ConfigError, match="no model"):
        OpenAIChat.from_config(LLMConfig(provider="openai"))


# --------------------------------------------------------------------------- plain calls


@pytest.mark.llm
def test_plain_call_returns_text_usage_latency_and_sends_config(
    server: ScriptedLLMServer, make_chat: MakeChat
) -> None:
    server.add_rule(Rule(respond="Oslo.", match="capital of Norway", usage=(23, 2)))
    chat = make_chat(temperature=0.3, max_tokens=77)
    assert isinstance(chat, LLM)
    r = chat.call(QUESTION)
    assert r.text == "Oslo."
    assert r.parsed is None and not r.cached
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (23, 2)
    assert r.latency_s > 0 and r.attempts == 1 and r.model == "test-model"
    body = server.requests[0].body
    assert body is not None
    assert body["model"] == "test-model"
    assert body["temperature"] == 0.3 and body["max_tokens"] == 77
    assert "response_format" not in body
    assert body["messages"] == [
        {"role": "system", "content": "You answer geography questions."},
        {"role": "user", "content": "What is the capital of Norway?"},
    ]
    # per-call overrides win over the defaults
    chat.call(QUESTION, temperature=0.9, max_tokens=5)
    body2 = server.requests[1].body
    assert body2 is not None and body2["temperature"] == 0.9 and body2["max_tokens"] == 5
    s = chat.stats
    assert (s.calls, s.requests, s.prompt_tokens, s.completion_tokens) == (2, 2, 46, 4)
    assert s.total_latency_s >= r.latency_s


# --------------------------------------------------------------------------- retries


@pytest.mark.llm
def test_429_then_success_is_retried_once(
    server: ScriptedLLMServer, make_chat: MakeChat, sleeps: list[float]
) -> None:
    server.set_default("Oslo")
    server.rate_limit_next(1, retry_after=0)
    chat = make_chat(backoff_s=0.25)
    r = chat.call(QUESTION)
    assert r.text == "Oslo"
    assert len(server.requests) == 2
    assert [q.fault for q in server.requests] == ["status:429", None]
    assert r.attempts == 2
    assert sleeps == [0.25]
    assert chat.stats.retries == 1


@pytest.mark.llm
def test_retry_after_header_is_honoured(
    server: ScriptedLLMServer, make_chat: MakeChat, sleeps: list[float]
) -> None:
    server.set_default("ok")
    server.rate_limit_next(1, retry_after=3)
    make_chat(backoff_s=0.25).call(QUESTION)
    assert sleeps == [3.0]


@pytest.mark.llm
def test_persistent_429_raises_rate_limit_after_exponential_backoff(
    server: ScriptedLLMServer, make_chat: MakeChat, sleeps: list[float]
) -> None:
    server.set_default("never reached")
    server.rate_limit_next(10, retry_after=0)
    chat = make_chat(max_retries=3, backoff_s=0.5)
    with pytest.raises(LLMRateLimitError) as info:
        chat.call(QUESTION)
    assert len(server.requests) == 4  # the first try and three retries
    assert sleeps == [0.5, 1.0, 2.0]
    assert "429" in str(info.value) and "3 retries" in str(info.value)
    s = chat.stats
    assert (s.calls, s.failures, s.requests, s.retries) == (1, 1, 4, 3)


@pytest.mark.llm
def test_5xx_and_dropped_connections_are_retried(
    server: ScriptedLLMServer, make_chat: MakeChat
) -> None:
    server.set_default("recovered")
    server.fail_next(1, status=502)
    server.disconnect_next(1)
    r = make_chat(max_retries=2).call(QUESTION)
    assert r.text == "recovered"
    assert [q.fault for q in server.requests] == ["status:502", "disconnect", None]


@pytest.mark.llm
def test_5xx_beyond_retries_is_an_llm_error(server: ScriptedLLMServer, make_chat: MakeChat) -> None:
    server.fail_next(5, status=500, message="the GPU fell over")
    with pytest.raises(LLMError) as info:
        make_chat(max_retries=1).call(QUESTION)
    assert not isinstance(info.value, LLMRateLimitError)
    assert "500" in str(info.value) and "the GPU fell over" in str(info.value)
    assert len(server.requests) == 2


@pytest.mark.llm
def test_4xx_is_not_retried(
    server: ScriptedLLMServer, make_chat: MakeChat, sleeps: list[float]
) -> None:
    server.fail_next(1, status=404, message="model 'nope' not found")
    with pytest.raises(LLMError, match="model 'nope' not found") as info:
        make_chat().call(QUESTION)
    assert len(server.requests) == 1 and sleeps == []
    assert info.value.hint is not None and "base_url" in info.value.hint


@pytest.mark.llm
def test_timeout_raises_llm_timeout_error_quickly(
    server: ScriptedLLMServer, make_chat: MakeChat
) -> None:
    server.set_default("too late")
    server.delay_next(1.5)
    chat = make_chat(timeout_s=0.3, max_retries=3)
    t0 = time.monotonic()
    with pytest.raises(LLMTimeoutError, match="0.3s"):
        chat.call(QUESTION)
    assert time.monotonic() - t0 < 1.4  # not retried, and well under the server delay
    assert len(server.requests) == 1


@pytest.mark.llm
def test_malformed_http_body_is_retried_then_reported(
    server: ScriptedLLMServer, make_chat: MakeChat
) -> None:
    server.set_default("fine")
    server.malformed_next(1)
    assert make_chat(max_retries=1).call(QUESTION).text == "fine"
    server.clear_requests()
    server.malformed_next(3)
    with pytest.raises(LLMResponseError, match="not an OpenAI chat completion"):
        make_chat(max_retries=1).call(QUESTION)
    assert len(server.requests) == 2


# --------------------------------------------------------------------------- structured output


@pytest.mark.llm
def test_schema_asks_for_json_mode_and_parses_fenced_reply(
    server: ScriptedLLMServer, make_chat: MakeChat
) -> None:
    server.set_default('Here you go:\n```json\n{"answer": "Oslo", "confidence": 0.8}\n```')
    r = make_chat().call(QUESTION, schema=Answer)
    assert r.parsed == Answer(answer="Oslo", confidence=0.8)
    req = server.requests[0]
    assert req.body is not None
    assert req.body["response_format"] == {"type": "json_object"}
    # the JSON schema is appended to the caller's (first) system message
    assert req.messages[0]["role"] == "system"
    assert req.system.startswith("You answer geography questions.")
    assert json.dumps(Answer.model_json_schema()) in req.system


@pytest.mark.llm
def test_invalid_json_gets_one_repair_call_with_the_validation_error(
    server: ScriptedLLMServer, make_chat: MakeChat
) -> None:
    bad = '{"answer": ["Oslo"], "confidence": "very"}'
    server.add_rule(Rule(respond=bad, match="capital of Norway", times=1, usage=(30, 9)))
    server.add_rule(Rule(respond='{"answer": "Oslo", "confidence": 1}', usage=(50, 8)))
    chat = make_chat()
    r = chat.call(QUESTION, schema=Answer)
    assert r.parsed == Answer(answer="Oslo", confidence=1.0)
    assert len(server.requests) == 2 and r.attempts == 2
    assert (r.usage.prompt_tokens, r.usage.completion_tokens) == (80, 17)
    repair = server.requests[1]
    with pytest.raises(ValidationError) as direct:
        Answer.model_validate_json(bad)
    for err in direct.value.errors():  # pydantic's own messages, not ours
        assert err["msg"] in repair.last_user
    assert repair.messages[-2] == {"role": "assistant", "content": bad}
    assert chat.stats.repairs == 1


@pytest.mark.llm
def test_unterminated_json_is_repaired(server: ScriptedLLMServer, make_chat: MakeChat) -> None:
    server.inject(Fault.malformed_content('{"answer": "Oslo", "confidence": 0.'))
    server.set_default('{"answer": "Oslo", "confidence": 0.5}')
    r = make_chat().call(QUESTION, schema=Answer)
    assert r.parsed.confidence == 0.5
    assert "Invalid JSON" in server.requests[1].last_user


@pytest.mark.llm
def test_still_invalid_after_repair_raises_response_error(
    server: ScriptedLLMServer, make_chat: MakeChat
) -> None:
    server.set_default("I think it is Oslo, but I cannot give JSON.")
    chat = make_chat()
    with pytest.raises(LLMResponseError, match="even after one repair"):
        chat.call(QUESTION, schema=Answer)
    assert len(server.requests) == 2
    assert chat.stats.failures == 1 and chat.stats.repairs == 1


@pytest.mark.llm
def test_server_rejecting_response_format_gets_one_fallback_and_is_remembered(
    server: ScriptedLLMServer, make_chat: MakeChat
) -> None:
    server.add_rule(
        Rule(
            match=lambda r: r.body is not None and "response_format" in r.body,
            fault=Fault.status_error(400, "Unsupported parameter: response_format"),
        )
    )
    server.set_default('{"answer": "Oslo", "confidence": 0.7}')
    chat = make_chat()
    r = chat.call(QUESTION, schema=Answer)
    assert r.parsed.answer == "Oslo"
    bodies = [q.body or {} for q in server.requests]
    assert ["response_format" in b for b in bodies] == [True, False]
    chat.call(QUESTION, schema=Answer)
    assert "response_format" not in (server.requests[-1].body or {})
    assert len(server.requests) == 3


@pytest.mark.llm
def test_other_400s_with_schema_are_not_retried_without_json_mode(
    server: ScriptedLLMServer, make_chat: MakeChat
) -> None:
    server.fail_next(1, status=400, message="context length exceeded")
    with pytest.raises(LLMError, match="context length exceeded"):
        make_chat().call(QUESTION, schema=Answer)
    assert len(server.requests) == 1


@pytest.mark.llm
def test_from_config_uses_every_llm_setting() -> None:
    with ScriptedLLMServer(default="hi") as s:
        cfg = LLMConfig(
            provider="openai",
            base_url=s.base_url,
            model="cfg-model",
            api_key="sk-cfg",
            temperature=0.2,
            max_tokens=33,
            timeout_s=4,
            max_retries=1,
            backoff_s=0.1,
        )
        with OpenAIChat.from_config(cfg, sleep=lambda _s: None) as chat:
            assert (chat.timeout_s, chat.max_retries, chat.backoff_s) == (4, 1, 0.1)
            chat.call([Message.user("hello")])
        req = s.requests[0]
        assert req.body is not None
        assert (req.body["model"], req.body["temperature"], req.body["max_tokens"]) == (
            "cfg-model",
            0.2,
            33,
        )
        assert req.headers["authorization"] == "Bearer sk-cfg"
