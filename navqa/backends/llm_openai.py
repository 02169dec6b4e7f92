"""The :class:`~navqa.backends.protocols.LLM` seam on any OpenAI-compatible server.

:class:`OpenAIChat` talks to OpenAI, vLLM, Ollama (``/v1``) or a llama.cpp server
through the real ``openai`` package. It adds what the pipeline relies on:

* **retries it owns** (the client is built with ``max_retries=0``): HTTP 429, 5xx,
  connection errors and unparseable HTTP bodies are retried with exponential backoff
  (``backoff_s * 2**n`` plus jitter, at least the server's ``Retry-After``) up to
  ``max_retries`` times; the sleep function is injectable. Timeouts are *not* retried:
  they raise :class:`~navqa.errors.LLMTimeoutError` at once.
* **structured output**: with ``schema`` (a pydantic model class, or any type a
  :class:`pydantic.TypeAdapter` accepts) the request asks for
  ``response_format={"type": "json_object"}``; a server that rejects that with a 400
  mentioning ``response_format`` (llama.cpp, older vLLM) is asked again without it, and
  the client remembers. The JSON object is extracted from the text (``<think>`` blocks
  and code fences removed, outermost ``{...}`` taken) and validated. Invalid output gets
  **one repair call** (the bad output and the validation errors are sent back); still
  invalid raises :class:`~navqa.errors.LLMResponseError`.
* **accounting**: each :class:`~navqa.model.llm.Response` carries usage, latency and
  attempts; :attr:`OpenAIChat.stats` keeps running totals for the evaluation harness.
* **secret hygiene**: the API key never appears in logs, exception messages or reprs.
  Provider exceptions (which hold the request and its ``Authorization`` header) are not
  chained; a redacted stand-in (:class:`ProviderError`) is chained instead.
"""

from __future__ import annotations

import functools
import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from pydantic import SecretStr, TypeAdapter, ValidationError

from navqa.config import LLMConfig, redact
from navqa.errors import (
    ConfigError,
    LLMError,
    LLMRateLimitError,
    LLMResponseError,
    LLMTimeoutError,
)
from navqa.model.llm import Message, Response, Role, Usage

log = logging.getLogger(__name__)

#: Sent as the API key when none is configured (local servers ignore it; vLLM's convention).
NO_KEY = "EMPTY"
#: Longest single backoff sleep, whatever ``Retry-After`` says.
MAX_BACKOFF_S = 60.0

REPAIR_PROMPT = (
    "Your previous reply could not be used: it is not valid JSON for the required "
    "schema.\nValidation errors:\n{errors}\n\nReply again with the corrected JSON object "
    "only: no explanation, no code fences.\nThe JSON schema it must satisfy:\n{schema}"
)
SCHEMA_HINT = (
    "Answer with a single JSON object and nothing else. It must validate against this "
    "JSON schema:\n{schema}"
)


# --------------------------------------------------------------------------- stats


@dataclass
class LLMStats:
    """Running totals of one LLM instance (read by the evaluation harness).

    Attributes:
        calls: Calls to ``call()`` (each answered or failed once).
        requests: HTTP requests sent (retries and repair calls included).
        retries: Requests that were retries after a retryable failure.
        repairs: Repair calls made after invalid structured output.
        failures: Calls that ended in an exception.
        cache_hits: Calls answered from the call cache.
        tokens_saved: Tokens the cache hits would have cost (as first recorded).
        prompt_tokens: Prompt tokens reported by the server.
        completion_tokens: Completion tokens reported by the server.
        total_latency_s: Summed wall time of all calls.
    """

    calls: int = 0
    requests: int = 0
    retries: int = 0
    repairs: int = 0
    failures: int = 0
    cache_hits: int = 0
    tokens_saved: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_latency_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: LLMStats) -> LLMStats:
        a, b = asdict(self), asdict(other)
        return LLMStats(**{k: a[k] + b[k] for k in a})

    def as_dict(self) -> dict[str, float | int]:
        """A JSON-safe copy (for run reports)."""
        d: dict[str, float | int] = asdict(self)
        d["total_tokens"] = self.total_tokens
        return d


class StatsKeeper:
    """An :class:`LLMStats` updated under a lock (calls may come from several threads)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._stats = LLMStats()

    def add(self, **deltas: float | int) -> None:
        with self._lock:
            for k, v in deltas.items():
                setattr(self._stats, k, getattr(self._stats, k) + v)

    def snapshot(self) -> LLMStats:
        with self._lock:
            return LLMStats(**asdict(self._stats))

    def reset(self) -> None:
        with self._lock:
            self._stats = LLMStats()


# --------------------------------------------------------------------------- JSON output


class InvalidOutputError(ValueError):
    """Model output that is not a JSON object valid for the schema.

    Attributes:
        errors: One line per problem (``loc: message``), suitable for a repair prompt.
    """

    def __init__(self, errors: list[str]) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors


_THINK = re.compile(r"<think>.*?(?:</think>|\Z)", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)


def extract_json_object(text: str) -> str:
    """The JSON object inside model output.

    Removes ``<think>...</think>`` blocks, prefers the first code fence holding a ``{``,
    then takes the text from the first ``{`` to the last ``}`` (or to the end when the
    object is unterminated, so that validation reports where the JSON breaks).

    Raises:
        InvalidOutputError: when there is no ``{`` at all.
    """
    body = _THINK.sub("", text)
    for m in _FENCE.finditer(body):
        if "{" in m.group(1):
            body = m.group(1)
            break
    start, end = body.find("{"), body.rfind("}")
    if start < 0:
        raise InvalidOutputError(["the reply contains no JSON object ({...})"])
    if end <= start:
        return body[start:].strip()  # unterminated: let the JSON parser say where it broke
    return body[start : end + 1]


@functools.lru_cache(maxsize=256)
def _adapter(schema: Any) -> TypeAdapter[Any]:
    return TypeAdapter(schema)


def schema_name(schema: Any) -> str:
    """The name of a schema type (``__name__``, else its ``repr``)."""
    return str(getattr(schema, "__name__", repr(schema)))


def json_schema_of(schema: Any) -> dict[str, Any]:
    """The JSON Schema of a pydantic model class (or any TypeAdapter-able type)."""
    return _adapter(schema).json_schema()


def validate_output(schema: Any, text: str) -> Any:
    """Extract the JSON object from ``text`` and validate it against ``schema``.

    Returns:
        The validated object (a model instance for a pydantic model class).

    Raises:
        InvalidOutputError: no JSON object, malformed JSON, or schema violations.
    """
    candidate = extract_json_object(text)
    try:
        return _adapter(schema).validate_json(candidate)
    except ValidationError as e:
        lines = []
        for err in e.errors(include_url=False):
            loc = ".".join(str(p) for p in err.get("loc", ())) or "(root)"
            lines.append(f"{loc}: {err.get('msg', 'invalid')}")
        raise InvalidOutputError(lines or [str(e)]) from None


# --------------------------------------------------------------------------- errors


class ProviderError(Exception):
    """A redacted stand-in for the provider exception behind an :class:`LLMError`.

    The ``openai`` exceptions keep the request (with its ``Authorization`` header) and
    the raw response; they are never chained. This one keeps only text and the status.

    Attributes:
        kind: The provider exception's class name.
        status: The HTTP status, when a response arrived.
    """

    def __init__(self, kind: str, message: str, status: int | None = None) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind
        self.status = status


@dataclass
class _Completion:
    text: str
    usage: Usage
    requests: int


class _Failure(Exception):
    """Internal: a classified failure of one request."""

    def __init__(self, error: LLMError, *, retryable: bool, retry_after: float | None = None):
        super().__init__(str(error))
        self.error = error
        self.retryable = retryable
        self.retry_after = retry_after


# --------------------------------------------------------------------------- the client


class OpenAIChat:
    """An :class:`~navqa.backends.protocols.LLM` on an OpenAI-compatible chat server.

    Args:
        model: The model name the server expects.
        base_url: The server's ``/v1`` URL; ``None`` means the OpenAI API.
        api_key: The API key (``None`` sends a placeholder, fine for local servers).
        temperature: Default sampling temperature.
        max_tokens: Default completion budget.
        timeout_s: Per-request timeout in seconds.
        max_retries: Retries after 429 / 5xx / connection errors.
        backoff_s: First backoff; doubled for each further retry.
        jitter: Relative random jitter added to each backoff (0 disables it).
        sleep: The function used to wait between retries (tests pass a recorder).
        schema_hint: Add the JSON schema to the system prompt when ``schema`` is given.
        extra_secrets: More strings to scrub from logs and errors.
        client: An already built ``openai.OpenAI`` (its own retries should be 0).

    Raises:
        ConfigError: when ``model`` is empty.
    """

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None = None,
        api_key: str | SecretStr | None = None,
        temperature: float = 0.0,
        max_tokens: int = 1024,
        timeout_s: float = 60.0,
        max_retries: int = 4,
        backoff_s: float = 1.0,
        jitter: float = 0.1,
        sleep: Callable[[float], None] = time.sleep,
        schema_hint: bool = True,
        extra_secrets: Sequence[str] = (),
        client: Any = None,
    ) -> None:
        if not model:
            raise ConfigError(
                "an OpenAI-compatible LLM needs a model name",
                hint="set llm.model or NAVQA_LLM_MODEL",
            )
        self.model = model
        self.base_url = base_url
        key = api_key.get_secret_value() if isinstance(api_key, SecretStr) else api_key
        self._api_key = SecretStr(key or "")
        # SecretStr even here, so that dumping the instance's __dict__ shows no key.
        self._secrets = tuple(SecretStr(s) for s in (key, *extra_secrets) if s)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.max_retries = max(0, int(max_retries))
        self.backoff_s = max(0.0, backoff_s)
        self.jitter = max(0.0, jitter)
        self.schema_hint = schema_hint
        self._sleep = sleep
        self._stats = StatsKeeper()
        self._json_mode = True
        self._client = client if client is not None else self._build_client()

    @classmethod
    def from_config(cls, cfg: LLMConfig, **kwargs: Any) -> OpenAIChat:
        """Build from an :class:`~navqa.config.LLMConfig` (keyword arguments override).

        Raises:
            ConfigError: when no model is configured.
        """
        if not cfg.model:
            raise ConfigError(
                "llm.provider is openai but no model is configured",
                hint="set llm.model in navqa.yaml or NAVQA_LLM_MODEL",
            )
        params: dict[str, Any] = dict(
            model=cfg.model,
            base_url=cfg.base_url,
            api_key=cfg.api_key,
            temperature=cfg.temperature,
            max_tokens=cfg.max_tokens,
            timeout_s=cfg.timeout_s,
            max_retries=cfg.max_retries,
            backoff_s=cfg.backoff_s,
        )
        params.update(kwargs)
        return cls(**params)

    def _build_client(self) -> Any:
        import openai  # heavy-ish; only needed when an LLM is configured

        return openai.OpenAI(
            base_url=self.base_url,
            api_key=self._api_key.get_secret_value() or NO_KEY,
            timeout=self.timeout_s,
            max_retries=0,
        )

    # -- public surface ----------------------------------------------------------------

    @property
    def stats(self) -> LLMStats:
        """A snapshot of the running totals."""
        return self._stats.snapshot()

    def reset_stats(self) -> None:
        """Zero the running totals."""
        self._stats.reset()

    def close(self) -> None:
        """Close the HTTP connection pool."""
        close = getattr(self._client, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> OpenAIChat:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        where = self._redact(self.base_url) if self.base_url else "api.openai.com"
        return f"OpenAIChat(model={self.model!r}, base_url={where!r})"

    def call(
        self,
        messages: Sequence[Message],
        *,
        schema: type[Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Response:
        """Send one chat completion (and, for invalid structured output, one repair).

        Args:
            messages: The conversation.
            schema: A pydantic model class the reply must validate against, or ``None``
                for free text.
            temperature: Overrides the default temperature.
            max_tokens: Overrides the default completion budget.

        Returns:
            The answer; ``parsed`` holds the validated object when ``schema`` is given.

        Raises:
            LLMTimeoutError: the server did not answer within ``timeout_s``.
            LLMRateLimitError: still HTTP 429 after ``max_retries`` retries.
            LLMResponseError: output invalid even after one repair, or an unusable body.
            LLMError: any other failure (HTTP 4xx, 5xx after retries, connection).
        """
        t0 = time.monotonic()
        temp = self.temperature if temperature is None else temperature
        budget = self.max_tokens if max_tokens is None else max_tokens
        wire = [{"role": Role(m.role).value, "content": m.content} for m in messages]
        if schema is not None and self.schema_hint:
            wire = _with_schema_hint(wire, schema)
        done: list[_Completion] = []
        ok = False
        try:
            first = self._complete(
                wire, json_mode=schema is not None, temperature=temp, max_tokens=budget
            )
            done.append(first)
            text, parsed = first.text, None
            if schema is not None:
                parsed, text = self._parse_or_repair(wire, first.text, schema, temp, budget, done)
            ok = True
        finally:
            latency = time.monotonic() - t0
            self._stats.add(
                calls=1,
                failures=0 if ok else 1,
                prompt_tokens=sum(c.usage.prompt_tokens for c in done),
                completion_tokens=sum(c.usage.completion_tokens for c in done),
                total_latency_s=latency,
            )
        usage = Usage(
            sum(c.usage.prompt_tokens for c in done), sum(c.usage.completion_tokens for c in done)
        )
        log.debug(
            "LLM %s answered in %.3fs (%d request(s), %d+%d tokens)",
            self.model,
            latency,
            sum(c.requests for c in done),
            usage.prompt_tokens,
            usage.completion_tokens,
        )
        return Response(
            text=text,
            parsed=parsed,
            usage=usage,
            latency_s=latency,
            model=self.model,
            cached=False,
            attempts=sum(c.requests for c in done),
        )

    # -- structured output -------------------------------------------------------------

    def _parse_or_repair(
        self,
        wire: list[dict[str, str]],
        text: str,
        schema: type[Any],
        temperature: float,
        max_tokens: int,
        done: list[_Completion],
    ) -> tuple[Any, str]:
        try:
            return validate_output(schema, text), text
        except InvalidOutputError as e:
            log.info(
                "LLM %s returned invalid %s output (%s); asking once for a repair",
                self.model,
                schema_name(schema),
                self._redact(str(e))[:300],
            )
            errors = e.errors
        self._stats.add(repairs=1)
        repair = [
            *wire,
            {"role": "assistant", "content": text},
            {
                "role": "user",
                "content": REPAIR_PROMPT.format(
                    errors="\n".join(f"- {line}" for line in errors),
                    schema=json.dumps(json_schema_of(schema)),
                ),
            },
        ]
        second = self._complete(
            repair, json_mode=True, temperature=temperature, max_tokens=max_tokens
        )
        done.append(second)
        try:
            return validate_output(schema, second.text), second.text
        except InvalidOutputError as e:
            raise LLMResponseError(
                self._redact(
                    f"model {self.model!r} returned output that does not validate against "
                    f"{schema_name(schema)}, even after one repair: {e}; "
                    f"the reply began {second.text[:200]!r}"
                ),
                hint="use a stronger model, or a server that supports JSON mode",
            ) from None

    # -- one completion with retries ---------------------------------------------------

    def _complete(
        self, wire: list[dict[str, str]], *, json_mode: bool, temperature: float, max_tokens: int
    ) -> _Completion:
        requests = retries = 0
        fell_back = False
        while True:
            use_json = json_mode and self._json_mode
            kwargs: dict[str, Any] = dict(
                model=self.model, messages=wire, temperature=temperature, max_tokens=max_tokens
            )
            if use_json:
                kwargs["response_format"] = {"type": "json_object"}
            requests += 1
            self._stats.add(requests=1)
            try:
                completion = self._client.chat.completions.create(**kwargs)
                return self._unpack(completion, requests)
            except Exception as e:  # noqa: BLE001 - classified right below
                failure = self._classify(e)
            # Outside the except block: the provider exception is not kept as __context__.
            if (
                use_json
                and not fell_back
                and failure.error.__cause__ is not None
                and getattr(failure.error.__cause__, "status", None) == 400
                and "response_format" in str(failure.error.__cause__)
            ):
                log.warning(
                    "server %s rejected response_format=json_object; asking again "
                    "without it (and not using it from now on)",
                    self._where(),
                )
                self._json_mode = False
                fell_back = True
                continue
            if failure.retryable and retries < self.max_retries:
                retries += 1
                self._stats.add(retries=1)
                delay = self._backoff(retries, failure.retry_after)
                log.warning(
                    "LLM request failed (%s); retry %d of %d in %.2fs",
                    failure.error.message,
                    retries,
                    self.max_retries,
                    delay,
                )
                self._sleep(delay)
                continue
            if failure.retryable and retries:
                _append(failure.error, f" (gave up after {retries} retries)")
            raise failure.error

    def _unpack(self, completion: Any, requests: int) -> _Completion:
        choices = getattr(completion, "choices", None) or []
        text = None
        if choices:
            message = getattr(choices[0], "message", None)
            text = getattr(message, "content", None)
        if not isinstance(text, str):
            raise LLMResponseError(
                f"server {self._where()} returned a completion without message content "
                f"(model {self.model!r})"
            )
        u = getattr(completion, "usage", None)
        usage = Usage(
            int(getattr(u, "prompt_tokens", 0) or 0), int(getattr(u, "completion_tokens", 0) or 0)
        )
        return _Completion(text=text, usage=usage, requests=requests)

    def _backoff(self, retry: int, retry_after: float | None) -> float:
        delay = self.backoff_s * (2 ** (retry - 1))
        delay *= 1.0 + self.jitter * random.random()
        if retry_after is not None:
            delay = max(delay, retry_after)
        return min(delay, MAX_BACKOFF_S)

    def _classify(self, e: Exception) -> _Failure:
        """Turn a provider exception into a redacted :class:`LLMError` (not chained to ``e``)."""
        import openai

        where = self._where()
        status = getattr(e, "status_code", None)
        detail = self._redact(_provider_message(e))
        cause = ProviderError(type(e).__name__, detail, status)

        def err(cls: type[LLMError], msg: str, hint: str | None = None) -> LLMError:
            error = cls(self._redact(msg), hint=hint)
            error.__cause__ = cause
            error.__suppress_context__ = True
            return error

        if isinstance(e, openai.APITimeoutError):
            return _Failure(
                err(
                    LLMTimeoutError,
                    f"LLM server {where} did not answer within {self.timeout_s:g}s",
                    "raise llm.timeout_s or use a faster model",
                ),
                retryable=False,
            )
        if isinstance(e, openai.RateLimitError):
            return _Failure(
                err(
                    LLMRateLimitError,
                    f"LLM server {where} is rate limiting (HTTP 429): {detail}",
                    "wait, lower concurrency, or raise llm.max_retries",
                ),
                retryable=True,
                retry_after=_retry_after(e),
            )
        if isinstance(e, openai.APIConnectionError):
            return _Failure(
                err(
                    LLMError,
                    f"cannot reach the LLM server {where}: {detail}",
                    "is the server running? check llm.base_url",
                ),
                retryable=True,
            )
        if isinstance(e, openai.APIStatusError):
            code = int(e.status_code)
            hint = None
            if code in (401, 403):
                hint = "check the API key (OPENAI_API_KEY or llm.api_key)"
            elif code == 404:
                hint = "check llm.base_url (it usually ends in /v1) and llm.model"
            return _Failure(
                err(LLMError, f"LLM server {where} answered HTTP {code}: {detail}", hint),
                retryable=code >= 500,
                retry_after=_retry_after(e),
            )
        if isinstance(e, ValueError | TypeError):
            # json.JSONDecodeError and friends: the body is not an OpenAI completion.
            return _Failure(
                err(
                    LLMResponseError,
                    f"LLM server {where} returned a body that is not an OpenAI "
                    f"chat completion: {detail}",
                ),
                retryable=True,
            )
        if isinstance(e, openai.OpenAIError):
            return _Failure(
                err(LLMError, f"LLM client error talking to {where}: {detail}"), retryable=False
            )
        raise e

    def _where(self) -> str:
        return self._redact(self.base_url or "https://api.openai.com/v1")

    def _redact(self, text: str) -> str:
        return redact(text, [s.get_secret_value() for s in self._secrets])


def _append(error: LLMError, text: str) -> None:
    error.message += text
    error.args = (error.message,)


def _provider_message(e: Exception) -> str:
    msg = getattr(e, "message", None) or str(e) or type(e).__name__
    return str(msg).strip()[:1000]


def _retry_after(e: Exception) -> float | None:
    response = getattr(e, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    for name, scale in (("retry-after-ms", 0.001), ("retry-after", 1.0)):
        value = headers.get(name)
        if value is None:
            continue
        try:
            return max(0.0, float(value) * scale)
        except ValueError:
            continue  # an HTTP date: fall back to our own backoff
    return None


def _with_schema_hint(wire: list[dict[str, str]], schema: type[Any]) -> list[dict[str, str]]:
    """Put the JSON-schema instruction into the (first) system message.

    Some chat templates (Qwen, Llama via llama.cpp) only accept a system message in
    first position, so the hint is appended to it rather than added as a new message.
    """
    hint = SCHEMA_HINT.format(schema=json.dumps(json_schema_of(schema)))
    if wire and wire[0]["role"] == "system":
        first = {"role": "system", "content": f"{wire[0]['content']}\n\n{hint}"}
        return [first, *wire[1:]]
    return [{"role": "system", "content": hint}, *wire]


__all__ = [
    "InvalidOutputError",
    "LLMStats",
    "OpenAIChat",
    "ProviderError",
    "StatsKeeper",
    "extract_json_object",
    "json_schema_of",
    "schema_name",
    "validate_output",
]
