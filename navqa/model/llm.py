"""Provider-neutral LLM messages and responses (the one LLM seam's data)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Role(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message."""

    role: Role
    content: str

    @staticmethod
    def system(text: str) -> Message:
        return Message(Role.SYSTEM, text)

    @staticmethod
    def user(text: str) -> Message:
        return Message(Role.USER, text)

    @staticmethod
    def assistant(text: str) -> Message:
        return Message(Role.ASSISTANT, text)


@dataclass(frozen=True, slots=True)
class Usage:
    """Token accounting of one call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True, slots=True)
class Response:
    """One LLM answer.

    Attributes:
        text: The raw text the model returned.
        parsed: The validated object when a schema was requested (a pydantic model).
        usage: Tokens used (zero for cache hits).
        latency_s: Wall time of the call, including retries.
        model: The model that answered.
        cached: Whether the answer came from the call cache.
        attempts: HTTP attempts made (retries included), plus repair calls.
    """

    text: str
    parsed: Any = None
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    model: str = ""
    cached: bool = False
    attempts: int = 1
