"""A scripted OpenAI-compatible chat server for tests (stdlib only).

:class:`ScriptedLLMServer` listens on a free loopback port in a background thread and
answers ``POST /v1/chat/completions`` (and ``/chat/completions``) with OpenAI-shaped
JSON, ``usage`` included. It lets a test drive the *real* ``openai`` client end to end,
the way httpx's ``MockTransport`` lets a test drive the real transport stack::

    rules = [
        Rule(respond='{"answer": "Oslo"}', match="capital of Norway"),
        Rule(respond="I don't know"),              # no ``match``: matches everything
    ]
    with ScriptedLLMServer(rules) as server:
        server.rate_limit_next(1, retry_after=0)   # the next request gets HTTP 429
        llm = OpenAIChat(model="m", base_url=server.base_url, api_key="sk-test")
        ...
        assert server.requests[-1].last_user == "What is the capital of Norway?"

How a request is answered, in order:

1. an injected fault queued with :meth:`ScriptedLLMServer.inject` (or one of its
   shorthands :meth:`~ScriptedLLMServer.fail_next`, :meth:`~ScriptedLLMServer.rate_limit_next`,
   :meth:`~ScriptedLLMServer.delay_next`, :meth:`~ScriptedLLMServer.malformed_next`,
   :meth:`~ScriptedLLMServer.disconnect_next`) applies to the next N requests;
2. otherwise the first :class:`Rule` (in order) that matches and has uses left answers;
   a rule may carry its own :class:`Fault` (a rule that only fails, or a delay then its text);
3. otherwise ``default`` answers; without a default the server replies HTTP 400 with
   ``"scripted server: no rule matched"`` so that a missing rule is a loud failure.

Every request is recorded (:attr:`ScriptedLLMServer.requests`), faults included, with its
parsed JSON body and its headers (lower-cased), so tests can assert on the prompts and
on the ``Authorization`` header. The server itself never logs headers.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

log = logging.getLogger(__name__)

Where = Literal["last_user", "system", "any"]
Matcher = str | re.Pattern[str] | Callable[["RecordedRequest"], bool]
Responder = str | dict[str, Any] | list[Any] | Callable[["RecordedRequest"], str]

_CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received.

    Attributes:
        method: The HTTP method.
        path: The request path (query string included).
        headers: The request headers, names lower-cased.
        body: The parsed JSON body, or ``None`` when it was not JSON.
        raw_body: The body bytes as received.
        received_at: ``time.monotonic()`` at arrival.
        fault: The kind of fault injected into the answer, or ``None``.
    """

    method: str
    path: str
    headers: dict[str, str]
    body: dict[str, Any] | None
    raw_body: bytes
    received_at: float
    fault: str | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages of the body (empty when there are none)."""
        if not isinstance(self.body, dict):
            return []
        msgs = self.body.get("messages")
        return [m for m in msgs if isinstance(m, dict)] if isinstance(msgs, list) else []

    def _contents(self, role: str | None) -> list[str]:
        return [
            _content_text(m.get("content"))
            for m in self.messages
            if role is None or m.get("role") == role
        ]

    @property
    def last_user(self) -> str:
        """The content of the last ``user`` message ('' when there is none)."""
        users = self._contents("user")
        return users[-1] if users else ""

    @property
    def system(self) -> str:
        """The contents of all ``system`` messages, joined by newlines."""
        return "\n".join(self._contents("system"))

    @property
    def all_text(self) -> str:
        """The contents of every message, joined by newlines."""
        return "\n".join(self._contents(None))

    def text(self, where: Where) -> str:
        """The text a :class:`Rule` with this ``where`` looks at."""
        if where == "last_user":
            return self.last_user
        if where == "system":
            return self.system
        return self.all_text


def _content_text(content: Any) -> str:
    """Message content as text (OpenAI also allows a list of typed parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


@dataclass(frozen=True)
class Fault:
    """A failure the server injects instead of (or before) a normal answer.

    Use the constructors: :meth:`status_error`, :meth:`rate_limit`, :meth:`delay`,
    :meth:`malformed_body`, :meth:`malformed_content`, :meth:`disconnect`.

    Attributes:
        kind: ``status``, ``delay``, ``malformed_body``, ``malformed_content`` or ``disconnect``.
        status: HTTP status for ``status`` faults.
        message: The error message in the OpenAI-shaped error body.
        retry_after: Value of the ``Retry-After`` header (seconds), if any.
        delay_s: Seconds to wait before answering (``delay`` faults).
        body: Raw text to send for ``malformed_*`` faults.
    """

    kind: Literal["status", "delay", "malformed_body", "malformed_content", "disconnect"]
    status: int = 500
    message: str = "scripted failure"
    retry_after: float | None = None
    delay_s: float = 0.0
    body: str = ""

    @staticmethod
    def status_error(
        status: int, message: str = "scripted failure", *, retry_after: float | None = None
    ) -> Fault:
        """Answer with HTTP ``status`` and an OpenAI-shaped error body."""
        return Fault("status", status=status, message=message, retry_after=retry_after)

    @staticmethod
    def rate_limit(
        retry_after: float | None = 0.0, message: str = "Rate limit reached (scripted)"
    ) -> Fault:
        """Answer HTTP 429 with a ``Retry-After`` header."""
        return Fault("status", status=429, message=message, retry_after=retry_after)

    @staticmethod
    def delay(seconds: float) -> Fault:
        """Wait ``seconds`` and then answer normally (to trigger client timeouts)."""
        return Fault("delay", delay_s=seconds)

    @staticmethod
    def malformed_body(body: str = '{"choices": [ {"message": ') -> Fault:
        """Answer HTTP 200 with a body that is not valid JSON."""
        return Fault("malformed_body", body=body)

    @staticmethod
    def malformed_content(body: str = '{"answer": "unterminated') -> Fault:
        """Answer a well-formed completion whose *content* is broken JSON."""
        return Fault("malformed_content", body=body)

    @staticmethod
    def disconnect() -> Fault:
        """Close the connection without answering (a connection error for the client)."""
        return Fault("disconnect")


@dataclass
class Rule:
    """Answers requests that match.

    Args:
        respond: The reply text, a dict/list (sent as JSON text), or a callable
            ``(RecordedRequest) -> str``. May be ``None`` when ``fault`` is a failure.
        match: ``None`` (always), a substring, a compiled regex (``search``), or a
            callable ``(RecordedRequest) -> bool``.
        where: Which text a substring/regex looks at: ``last_user`` (default),
            ``system`` or ``any`` message.
        times: How many requests this rule answers; ``None`` for unlimited.
        fault: A fault to inject whenever this rule answers (a ``delay`` still
            sends ``respond`` afterwards).
        usage: ``(prompt_tokens, completion_tokens)`` to report; by default both are
            counted as whitespace-separated words.
        name: A label for error messages and :attr:`used`.
    """

    respond: Responder | None = None
    match: Matcher | None = None
    where: Where = "last_user"
    times: int | None = None
    fault: Fault | None = None
    usage: tuple[int, int] | None = None
    name: str = ""
    used: int = field(default=0, init=False)

    def matches(self, request: RecordedRequest) -> bool:
        """Whether this rule has uses left and matches ``request``."""
        if self.times is not None and self.used >= self.times:
            return False
        m = self.match
        if m is None:
            return True
        if isinstance(m, str):
            return m in request.text(self.where)
        if isinstance(m, re.Pattern):
            return m.search(request.text(self.where)) is not None
        return bool(m(request))

    def reply_text(self, request: RecordedRequest) -> str:
        """The assistant text for ``request``."""
        r = self.respond
        if r is None:
            return ""
        if isinstance(r, str):
            return r
        if isinstance(r, dict | list):
            return json.dumps(r)
        return str(r(request))


@dataclass
class _Plan:
    """What to do with one request: a fault and/or a reply."""

    fault: Fault | None
    text: str | None
    usage: tuple[int, int] | None = None
    no_match: bool = False


class ScriptedLLMServer:
    """A local OpenAI-compatible server answering from rules (see the module docstring).

    Args:
        rules: Rules evaluated in order.
        default: What answers when no rule matches (text, dict, or callable);
            ``None`` makes an unmatched request an HTTP 400.
        model: The model name reported when the request names none.
        host: The loopback address to bind.

    Use it as a context manager, or call :meth:`start` and :meth:`stop`.
    """

    def __init__(
        self,
        rules: Sequence[Rule] = (),
        *,
        default: Responder | None = None,
        model: str = "scripted-model",
        host: str = "127.0.0.1",
    ) -> None:
        self._rules: list[Rule] = list(rules)
        self._default = default
        self.model = model
        self._host = host
        self._lock = threading.Lock()
        self._requests: list[RecordedRequest] = []
        self._faults: list[Fault] = []
        self._closing = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._counter = 0

    # -- lifecycle ---------------------------------------------------------------------

    def start(self) -> ScriptedLLMServer:
        """Bind a free port and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        self._closing.clear()
        handler = _make_handler(self)
        httpd = ThreadingHTTPServer((self._host, 0), handler)
        httpd.daemon_threads = True
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name="scripted-llm-server",
            daemon=True,
        )
        self._thread.start()
        log.debug("scripted LLM server listening on %s", self.base_url)
        return self

    def stop(self) -> None:
        """Stop serving and release the port (pending delays are cut short)."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        self._closing.set()
        httpd.shutdown()
        httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The TCP port the server listens on."""
        if self._httpd is None:
            raise RuntimeError("the scripted server is not running")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """The URL to give an OpenAI client, ending in ``/v1``."""
        return f"http://{self._host}:{self.port}/v1"

    def __repr__(self) -> str:
        where = self.base_url if self._httpd is not None else "stopped"
        return f"ScriptedLLMServer({where}, rules={len(self._rules)})"

    # -- scripting ---------------------------------------------------------------------

    def add_rule(self, rule: Rule) -> Rule:
        """Append a rule (evaluated after the existing ones) and return it."""
        with self._lock:
            self._rules.append(rule)
        return rule

    def set_default(self, default: Responder | None) -> None:
        """Replace what answers unmatched requests."""
        with self._lock:
            self._default = default

    def inject(self, fault: Fault, n: int = 1) -> None:
        """Apply ``fault`` to the next ``n`` requests (after any already queued)."""
        with self._lock:
            self._faults.extend([fault] * n)

    def fail_next(
        self,
        n: int = 1,
        status: int = 500,
        message: str = "scripted failure",
        *,
        retry_after: float | None = None,
    ) -> None:
        """Answer the next ``n`` requests with HTTP ``status``."""
        self.inject(Fault.status_error(status, message, retry_after=retry_after), n)

    def rate_limit_next(self, n: int = 1, retry_after: float | None = 0.0) -> None:
        """Answer the next ``n`` requests with HTTP 429 and ``Retry-After``."""
        self.inject(Fault.rate_limit(retry_after), n)

    def delay_next(self, seconds: float, n: int = 1) -> None:
        """Delay the next ``n`` answers by ``seconds``."""
        self.inject(Fault.delay(seconds), n)

    def malformed_next(self, n: int = 1, kind: Literal["body", "content"] = "body") -> None:
        """Send a non-JSON HTTP body (``body``) or broken JSON content (``content``)."""
        fault = Fault.malformed_body() if kind == "body" else Fault.malformed_content()
        self.inject(fault, n)

    def disconnect_next(self, n: int = 1) -> None:
        """Drop the connection without an answer for the next ``n`` requests."""
        self.inject(Fault.disconnect(), n)

    def clear_requests(self) -> None:
        """Forget the recorded requests."""
        with self._lock:
            self._requests.clear()

    @property
    def requests(self) -> list[RecordedRequest]:
        """A snapshot of every request received so far, oldest first."""
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        """The recorded requests to a chat-completions path."""
        return [r for r in self.requests if r.path.split("?")[0] in _CHAT_PATHS]

    def iter_requests(self) -> Iterator[RecordedRequest]:
        """Iterate over a snapshot of :attr:`requests`."""
        return iter(self.requests)

    # -- answering (called from handler threads) ----------------------------------------

    def _plan(self, request: RecordedRequest) -> _Plan:
        with self._lock:
            queued = self._faults.pop(0) if self._faults else None
            rule = None
            if queued is None or queued.kind in ("delay", "malformed_content"):
                rule = next((r for r in self._rules if r.matches(request)), None)
                if rule is not None:
                    rule.used += 1
            default = self._default
        fault = queued or (rule.fault if rule is not None else None)
        if fault is not None and fault.kind not in ("delay", "malformed_content"):
            return _Plan(fault=fault, text=None)
        if fault is not None and fault.kind == "malformed_content":
            return _Plan(fault=fault, text=fault.body)
        if rule is not None:
            return _Plan(fault=fault, text=rule.reply_text(request), usage=rule.usage)
        if default is not None:
            return _Plan(fault=fault, text=Rule(respond=default).reply_text(request))
        return _Plan(fault=fault, text=None, no_match=True)

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(request)

    def _next_id(self) -> int:
        with self._lock:
            self._counter += 1
            return self._counter


def _make_handler(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        server_version = "ScriptedLLM/1.0"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
            # Only the request line and status; never headers (they carry the API key).
            log.debug("scripted server: " + format, *args)

        def do_GET(self) -> None:  # noqa: N802 - stdlib naming
            if self.path.split("?")[0] in ("/v1/models", "/models"):
                self._json(
                    200,
                    {
                        "object": "list",
                        "data": [{"id": server.model, "object": "model", "owned_by": "scripted"}],
                    },
                )
                return
            self._json(404, _error_body("not found", "not_found"))

        def do_POST(self) -> None:  # noqa: N802 - stdlib naming
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body = json.loads(raw.decode("utf-8")) if raw else None
            except (UnicodeDecodeError, json.JSONDecodeError):
                body = None
            headers = {k.lower(): v for k, v in self.headers.items()}
            req = RecordedRequest(
                method="POST",
                path=self.path,
                headers=headers,
                body=body if isinstance(body, dict) else None,
                raw_body=raw,
                received_at=time.monotonic(),
            )
            if self.path.split("?")[0] not in _CHAT_PATHS:
                server._record(req)
                self._json(404, _error_body(f"unknown path {self.path}", "not_found"))
                return
            if req.body is None:
                server._record(req)
                self._json(
                    400, _error_body("request body is not a JSON object", "invalid_request_error")
                )
                return
            plan = server._plan(req)
            fault = plan.fault
            server._record(_with_fault(req, fault, plan.no_match))
            try:
                self._answer(req, plan)
            except (BrokenPipeError, ConnectionResetError):
                # The client gave up (a timeout we provoked on purpose).
                self.close_connection = True

        def _answer(self, req: RecordedRequest, plan: _Plan) -> None:
            fault = plan.fault
            if fault is not None and fault.kind == "delay" and server._closing.wait(fault.delay_s):
                self.close_connection = True
                return
            if fault is not None and fault.kind == "disconnect":
                self.close_connection = True
                return
            if fault is not None and fault.kind == "status":
                extra = {}
                if fault.retry_after is not None:
                    extra["Retry-After"] = _fmt_seconds(fault.retry_after)
                etype = (
                    "rate_limit_error"
                    if fault.status == 429
                    else ("server_error" if fault.status >= 500 else "invalid_request_error")
                )
                self._json(fault.status, _error_body(fault.message, etype), extra)
                return
            if fault is not None and fault.kind == "malformed_body":
                self._raw(200, fault.body.encode("utf-8"), "application/json")
                return
            if plan.no_match:
                self._json(
                    400,
                    _error_body(
                        "scripted server: no rule matched the request and there is no default",
                        "scripted_no_match",
                    ),
                )
                return
            text = plan.text or ""
            body = req.body or {}
            prompt_tokens, completion_tokens = plan.usage or (
                sum(len(_content_text(m.get("content")).split()) for m in req.messages),
                len(text.split()),
            )
            n = server._next_id()
            self._json(
                200,
                {
                    "id": f"chatcmpl-scripted-{n}",
                    "object": "chat.completion",
                    "created": int(time.time()),
                    "model": str(body.get("model") or server.model),
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": text},
                            "finish_reason": "stop",
                            "logprobs": None,
                        }
                    ],
                    "usage": {
                        "prompt_tokens": prompt_tokens,
                        "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens,
                    },
                },
            )

        def _json(self, status: int, payload: Any, extra: dict[str, str] | None = None) -> None:
            self._raw(status, json.dumps(payload).encode("utf-8"), "application/json", extra)

        def _raw(
            self, status: int, data: bytes, ctype: str, extra: dict[str, str] | None = None
        ) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            for k, v in (extra or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

    return Handler


def _with_fault(req: RecordedRequest, fault: Fault | None, no_match: bool) -> RecordedRequest:
    label: str | None = fault.kind if fault is not None else ("no_match" if no_match else None)
    if fault is not None and fault.kind == "status":
        label = f"status:{fault.status}"
    if label is None:
        return req
    return RecordedRequest(
        req.method, req.path, req.headers, req.body, req.raw_body, req.received_at, label
    )


def _error_body(message: str, etype: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": etype, "param": None, "code": None}}


def _fmt_seconds(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"


__all__ = ["Fault", "RecordedRequest", "Rule", "ScriptedLLMServer"]
