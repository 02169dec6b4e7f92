"""A planted API key must reach the server and nowhere else.

The run goes through ``make_llm`` (config -> CachedLLM(OpenAIChat)) with the real openai
client, and exercises success, a 429 retry, a repair, a timeout and an HTTP 401 whose
body *echoes the Authorization header back* (as some proxies do). Then the key is looked
for in every log record (navqa, openai, httpx2/httpcore2 at DEBUG), in the exceptions
(messages, reprs, cause chains, formatted tracebacks), in reprs and stats, and in the
bytes of the SQLite cache files.
"""

from __future__ import annotations

import json
import logging
import traceback
from pathlib import Path

import pytest
from pydantic import BaseModel

from navqa.backends.llm_cache import CachedLLM
from navqa.backends.llm_factory import make_llm
from navqa.config import load_config
from navqa.errors import LLMError, LLMTimeoutError
from navqa.model.llm import Message
from navqa.testing.scripted_llm import Fault, Rule, ScriptedLLMServer

pytestmark = pytest.mark.llm
PLANTED = "sk-test-PLANTED-123"


class Verdict(BaseModel):
    relevant: bool


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    cur: BaseException | None = exc
    while cur is not None and cur not in seen:
        seen.append(cur)
        cur = cur.__cause__ or cur.__context__
    return seen


def test_planted_key_is_sent_but_never_leaks(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # root: navqa.*, openai.*, httpx2, httpcore2.*
    for name in ("navqa", "openai", "httpx", "httpx2", "httpcore", "httpcore2"):
        caplog.set_level(logging.DEBUG, logger=name)
    echo = f"invalid credentials; you sent 'Authorization: Bearer {PLANTED}'"
    rules = [
        Rule(match="echo me", fault=Fault.status_error(401, echo)),
        Rule(match="slow", respond="late", fault=Fault.delay(1.0)),
        Rule(match="judge", respond='{"relevant": "perhaps"}', times=1),
        Rule(match="judge", respond='{"relevant": true}', where="any"),  # the repair
    ]
    with ScriptedLLMServer(rules, default="plain answer") as server:
        (tmp_path / "navqa.yaml").write_text(
            "llm:\n  provider: openai\n  model: m\n  api_key: ${OPENAI_API_KEY}\n"
            f"  base_url: {server.base_url}\n  timeout_s: 0.4\n  max_retries: 2\n"
            "  backoff_s: 0.01\n",
            encoding="utf-8",
        )
        config = load_config(
            tmp_path / "navqa.yaml",
            env={"OPENAI_API_KEY": PLANTED, "NAVQA_CACHE_DIR": str(tmp_path / "cache")},
        )
        assert config.llm.api_key is not None
        assert config.llm.api_key.get_secret_value() == PLANTED

        llm = make_llm(config)
        assert isinstance(llm, CachedLLM)
        errors: list[BaseException] = []
        responses = []
        try:
            server.rate_limit_next(1, retry_after=0)
            responses.append(llm.call([Message.user("hello")]))  # 429, then success
            responses.append(llm.call([Message.user("hello")]))  # cache hit
            responses.append(llm.call([Message.user("judge this")], schema=Verdict))  # repair
            with pytest.raises(LLMError) as auth:
                llm.call([Message.user("echo me")])
            errors.append(auth.value)
            with pytest.raises(LLMTimeoutError) as slow:
                llm.call([Message.user("slow")])
            errors.append(slow.value)
        finally:
            llm.close()

        # the key really was used: it reached the server in the Authorization header
        auths = {r.headers.get("authorization") for r in server.requests}
        assert auths == {f"Bearer {PLANTED}"}
        assert responses[0].text == "plain answer" and responses[1].cached
        assert responses[2].parsed == Verdict(relevant=True)

    # logs: every record, formatted, at DEBUG
    assert caplog.records, "expected DEBUG records from navqa and openai"
    names = {r.name.split(".")[0] for r in caplog.records}
    assert {"navqa", "openai"} <= names
    for record in caplog.records:
        assert PLANTED not in record.getMessage(), record.name
    assert PLANTED not in caplog.text

    # exceptions: messages, reprs, the whole cause chain, formatted tracebacks
    assert "invalid credentials" in str(errors[0])  # the server's text survives, redacted
    assert "***" in str(errors[0])
    for exc in errors:
        formatted = "".join(traceback.format_exception(exc))
        assert PLANTED not in formatted
        for link in _chain(exc):
            assert PLANTED not in str(link) and PLANTED not in repr(link)
            assert PLANTED not in repr(vars(link))
            # no provider exception (which holds the request and its headers) is kept
            assert not type(link).__module__.startswith("openai")

    # reprs, responses, stats, the config's own dump
    for obj in (llm, llm.inner, llm.stats, *responses, config):
        assert PLANTED not in repr(obj)
    assert PLANTED not in repr(vars(llm)) and PLANTED not in repr(vars(llm.inner))
    assert PLANTED not in json.dumps(llm.stats.as_dict())
    assert PLANTED not in json.dumps(config.dump())

    # the SQLite cache files (the database and any WAL / shared-memory side files)
    cache_files = sorted((tmp_path / "cache").glob("llm-cache.sqlite*"))
    assert cache_files and cache_files[0].name == "llm-cache.sqlite"
    for f in cache_files:
        data = f.read_bytes()
        assert PLANTED.encode() not in data
        assert b"judge this" not in data  # prompts are stored only as a hash
