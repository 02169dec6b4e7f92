"""The scripted OpenAI-compatible server, driven through the real ``openai`` client."""

from __future__ import annotations

import json
import re
import time

import openai
import pytest

from navqa.testing.scripted_llm import Fault, RecordedRequest, Rule, ScriptedLLMServer

pytestmark = pytest.mark.llm


def _client(server: ScriptedLLMServer, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=server.base_url, api_key="sk-scripted", timeout=timeout, max_retries=0
    )


def _ask(client: openai.OpenAI, user: str, system: str | None = None) -> str:
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": user})
    r = client.chat.completions.create(model="m1", messages=messages)  # type: ignore[arg-type]
    return str(r.choices[0].message.content)


def test_base_url_ends_in_v1_and_port_is_free_loopback() -> None:
    with ScriptedLLMServer() as s:
        assert s.base_url.startswith("http://127.0.0.1:")
        assert s.base_url.endswith("/v1")
        assert s.port > 0
    assert "stopped" in repr(s)


def test_rules_are_tried_in_order_with_substring_regex_callable_and_times() -> None:
    rules = [
        Rule(respond="first-only-once", match="hello", times=1),
        Rule(respond="regex", match=re.compile(r"\bwell\w*")),
        Rule(respond="system", match="You are terse", where="system"),
        Rule(
            respond=lambda r: f"echo:{r.last_user.upper()}",
            match=lambda r: r.last_user.startswith("echo "),
        ),
        Rule(respond={"k": [1, 2]}, match="as json"),
    ]
    with ScriptedLLMServer(rules, default="fallback") as s, _client(s) as c:
        assert _ask(c, "hello there") == "first-only-once"
        assert _ask(c, "hello again") == "fallback"  # the rule is used up
        assert _ask(c, "which wellbores?") == "regex"
        assert _ask(c, "anything", system="You are terse.") == "system"
        assert _ask(c, "echo abc") == "echo:ECHO ABC"
        assert json.loads(_ask(c, "answer as json")) == {"k": [1, 2]}
        assert rules[0].used == 1
        assert len(s.requests) == 6


def test_requests_are_recorded_with_body_and_headers() -> None:
    with ScriptedLLMServer(default="ok") as s, _client(s) as c:
        _ask(c, "the question", system="the system prompt")
        (req,) = s.chat_requests
        assert isinstance(req, RecordedRequest)
        assert req.path == "/v1/chat/completions"
        assert req.headers["authorization"] == "Bearer sk-scripted"
        assert req.body is not None and req.body["model"] == "m1"
        assert req.last_user == "the question"
        assert req.system == "the system prompt"
        assert "the question" in req.all_text and "the system prompt" in req.all_text


def test_usage_is_reported_from_rule_or_counted() -> None:
    rules = [Rule(respond="a b c", match="fixed", usage=(11, 7))]
    with ScriptedLLMServer(rules, default="one two") as s, _client(s) as c:
        r1 = c.chat.completions.create(model="m", messages=[{"role": "user", "content": "fixed"}])
        assert r1.usage is not None
        assert (r1.usage.prompt_tokens, r1.usage.completion_tokens) == (11, 7)
        r2 = c.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "four words right here"}]
        )
        assert r2.usage is not None
        assert (r2.usage.prompt_tokens, r2.usage.completion_tokens) == (4, 2)


def test_unmatched_request_without_default_is_a_loud_400() -> None:
    with ScriptedLLMServer([Rule(respond="x", match="never")]) as s, _client(s) as c:
        with pytest.raises(openai.BadRequestError) as info:
            _ask(c, "something else")
        assert "no rule matched" in str(info.value)
        assert s.requests[0].fault == "no_match"


def test_injected_429_carries_retry_after_then_normal_answers_resume() -> None:
    with ScriptedLLMServer(default="fine") as s, _client(s) as c:
        s.rate_limit_next(2, retry_after=7)
        for _ in range(2):
            with pytest.raises(openai.RateLimitError) as info:
                _ask(c, "q")
            assert info.value.response.headers["retry-after"] == "7"
        assert _ask(c, "q") == "fine"
        assert [r.fault for r in s.requests] == ["status:429", "status:429", None]


def test_injected_500_malformed_body_content_and_disconnect() -> None:
    with ScriptedLLMServer(default="fine") as s, _client(s) as c:
        s.fail_next(1, status=503, message="overloaded")
        s.malformed_next(1, kind="body")
        s.malformed_next(1, kind="content")
        s.disconnect_next(1)
        with pytest.raises(openai.InternalServerError, match="overloaded"):
            _ask(c, "q")
        with pytest.raises(ValueError):  # the body is not JSON
            _ask(c, "q")
        broken = _ask(c, "q")
        with pytest.raises(json.JSONDecodeError):
            json.loads(broken)
        with pytest.raises(openai.APIConnectionError):
            _ask(c, "q")
        assert _ask(c, "q") == "fine"


def test_delay_triggers_client_timeout_and_stop_cuts_the_delay_short() -> None:
    with ScriptedLLMServer(default="late") as s, _client(s, timeout=0.3) as c:
        s.delay_next(5.0)
        t0 = time.monotonic()
        with pytest.raises(openai.APITimeoutError):
            _ask(c, "q")
        assert time.monotonic() - t0 < 2.0
    # leaving the block stopped the server although a handler was still "sleeping"
    assert time.monotonic() - t0 < 3.0


def test_per_rule_fault_applies_while_the_rule_matches() -> None:
    rules = [
        Rule(match="flaky", fault=Fault.status_error(500), times=1),
        Rule(match="slowish", respond="after a pause", fault=Fault.delay(0.2)),
    ]
    with ScriptedLLMServer(rules, default="fine") as s, _client(s) as c:
        with pytest.raises(openai.InternalServerError):
            _ask(c, "flaky")
        assert _ask(c, "flaky") == "fine"
        t0 = time.monotonic()
        assert _ask(c, "slowish") == "after a pause"
        assert time.monotonic() - t0 >= 0.2
