"""The settings of one ``navqa serve``: where it listens, who may call it, its limits."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class Limits(BaseModel):
    """What one request may ask of the service.

    Attributes:
        max_body_bytes: Request bodies above this are refused with 413.
        max_question_chars: Longer questions are refused with 422.
        max_query_chars: Longer SPARQL (``/api/sparql``, ``/api/lint``) is refused with 422.
        request_timeout_s: A request still working after this answers 504.
        workers: Requests worked on at once (threads sharing the pipeline).
        queue: Requests that may wait for a worker; beyond ``workers + queue`` → 503.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    max_body_bytes: Annotated[int, Field(gt=0)] = 65_536
    max_question_chars: Annotated[int, Field(gt=0)] = 1_000
    max_query_chars: Annotated[int, Field(gt=0)] = 20_000
    request_timeout_s: Annotated[float, Field(gt=0)] = 120.0
    workers: Annotated[int, Field(gt=0)] = 4
    queue: Annotated[int, Field(ge=0)] = 32


class ServiceSettings(BaseModel):
    """How the service is reached.

    Attributes:
        host: The address to bind (``127.0.0.1`` by default).
        port: The TCP port.
        token: When set, every route but ``/api/health`` needs ``Authorization: Bearer``.
        cors_origins: Origins allowed by CORS (none: CORS off).
        limits: See :class:`Limits`.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str = "127.0.0.1"
    port: Annotated[int, Field(ge=0, le=65535)] = 8765
    token: SecretStr | None = None
    cors_origins: tuple[str, ...] = ()
    limits: Limits = Limits()

    @property
    def loopback(self) -> bool:
        return self.host in ("127.0.0.1", "localhost", "::1")
