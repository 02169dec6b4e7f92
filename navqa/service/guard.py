"""ASGI middleware in front of every route: bearer auth and the request-body limit.

Both answer before the route runs, with a small JSON body that names the limit and never
echoes a credential.
"""

from __future__ import annotations

import hmac
import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

#: Routes that answer without a token: a liveness probe reveals nothing.
OPEN_PATHS = frozenset({"/api/health"})


async def _reply(send: Send, status: int, detail: str,
                 headers: tuple[tuple[bytes, bytes], ...] = ()) -> None:
    body = json.dumps({"detail": detail}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()), *headers]})
    await send({"type": "http.response.body", "body": body})


class Guard:
    """Refuses requests without the bearer token (401) or with a body over the limit (413).

    Args:
        app: The wrapped ASGI app.
        token: The bearer token, or ``None`` (no auth).
        max_body_bytes: The largest request body accepted.
    """

    def __init__(self, app: ASGIApp, *, token: str | None, max_body_bytes: int) -> None:
        self.app = app
        self.token = token.encode() if token else None
        self.max_body = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.lower(): v for k, v in scope.get("headers", [])}
        if self.token is not None and scope["path"] not in OPEN_PATHS:
            given = headers.get(b"authorization", b"")
            scheme, _, cred = given.partition(b" ")
            if scheme.lower() != b"bearer" or not hmac.compare_digest(cred.strip(), self.token):
                await _reply(send, 401, "a bearer token is required (Authorization: Bearer …)",
                             ((b"www-authenticate", b"Bearer"),))
                return
        length = headers.get(b"content-length")
        if length is not None:
            try:
                too_big = int(length) > self.max_body
            except ValueError:
                await _reply(send, 400, "Content-Length is not a number")
                return
            if too_big:
                await _reply(send, 413, f"the request body is over {self.max_body} bytes")
                return
        seen = 0
        started = replied = False

        async def limited_receive() -> Message:
            nonlocal seen, replied
            msg = await receive()
            if msg["type"] == "http.request" and not replied:
                seen += len(msg.get("body", b""))
                if seen > self.max_body:
                    # answer 413 now; the app sees a client that went away
                    if not started:
                        await _reply(send, 413, f"the request body is over {self.max_body} "
                                     "bytes")
                    replied = True
                    return {"type": "http.disconnect"}
            return msg

        async def tracking_send(msg: Message) -> None:
            nonlocal started
            if replied:
                return  # the 413 is the answer
            if msg["type"] == "http.response.start":
                started = True
            await send(msg)

        await self.app(scope, limited_receive, tracking_send)
