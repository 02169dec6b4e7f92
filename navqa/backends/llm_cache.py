"""A SQLite call cache in front of any :class:`~navqa.backends.protocols.LLM`.

:class:`CachedLLM` keys each call by the model name plus the SHA-256 of the messages,
the schema (its name and JSON Schema), the temperature and the token budget. It stores
only the key, the model name, the reply text, its token usage and a timestamp: never
the prompt, and never an API key. A hit is re-validated against the schema and comes
back as ``Response(cached=True)`` with zero usage (the tokens it saved are counted in
:attr:`CachedLLM.stats`).

Concurrency: each thread gets its own SQLite connection; the database runs in WAL mode
with a busy timeout, so several threads of one process and several processes can share
one file. Two simultaneous misses for the same key both call the model; the last
writer wins, which is harmless since either answer is valid.
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from navqa.backends.llm_openai import (
    InvalidOutputError,
    LLMStats,
    StatsKeeper,
    json_schema_of,
    schema_name,
    validate_output,
)
from navqa.backends.protocols import LLM
from navqa.errors import ConfigError
from navqa.model.llm import Message, Response, Role, Usage

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
_DDL = """
CREATE TABLE IF NOT EXISTS llm_calls (
    key               TEXT PRIMARY KEY,
    model             TEXT NOT NULL,
    schema_name       TEXT,
    text              TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created_at        REAL NOT NULL
)
"""


def cache_key(
    model: str,
    messages: Sequence[Message],
    schema: type[Any] | None,
    temperature: float | None,
    max_tokens: int | None,
) -> str:
    """The cache key of one call: SHA-256 hex of a canonical JSON rendering.

    Args:
        model: The model name.
        messages: The conversation.
        schema: The requested schema type, if any (its name and JSON Schema count).
        temperature: The effective temperature.
        max_tokens: The effective completion budget.
    """
    payload = {
        "v": SCHEMA_VERSION,
        "model": model,
        "messages": [[Role(m.role).value, m.content] for m in messages],
        "schema": None
        if schema is None
        else {"name": schema_name(schema), "json_schema": json_schema_of(schema)},
        "temperature": temperature,
        "max_tokens": max_tokens,
    }
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CachedLLM:
    """An LLM that answers repeated calls from a SQLite file.

    Args:
        inner: The LLM that answers misses.
        path: The SQLite file (created with its parent folders).
        busy_timeout_s: How long a writer waits for another one to finish.

    Raises:
        ConfigError: when the file cannot be created or is not a SQLite database.
    """

    def __init__(self, inner: LLM, path: Path | str, *, busy_timeout_s: float = 30.0) -> None:
        self.inner = inner
        self.model = str(inner.model)
        self.path = Path(path)
        self._busy_timeout_s = busy_timeout_s
        self._local = threading.local()
        self._lock = threading.Lock()
        self._connections: list[sqlite3.Connection] = []
        self._closed = False
        self._own = StatsKeeper()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            conn = self._conn()
            self._enable_wal(conn)
            with conn:
                conn.execute(_DDL)
        except (OSError, sqlite3.Error) as e:
            self.close()
            raise ConfigError(
                f"cannot use {self.path} as the LLM call cache: {e}",
                hint="delete the file or set runtime.cache_dir",
            ) from e

    def _enable_wal(self, conn: sqlite3.Connection) -> None:
        """Switch the file to WAL, waiting while another process holds it.

        Changing the journal mode needs the file to itself, and SQLite answers "database
        is locked" at once instead of waiting on the busy timeout: two evaluation processes
        that open a new cache file together would otherwise fail.
        """
        deadline = time.monotonic() + self._busy_timeout_s
        while True:
            try:
                conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as e:
                if "locked" not in str(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    @property
    def stats(self) -> LLMStats:
        """Totals of the wrapped LLM (when it keeps :class:`LLMStats`) plus the cache hits."""
        own = self._own.snapshot()
        inner = getattr(self.inner, "stats", None)
        return own + inner if isinstance(inner, LLMStats) else own

    def __repr__(self) -> str:
        return f"CachedLLM({self.inner!r}, path={str(self.path)!r})"

    # -- connections -------------------------------------------------------------------

    def _conn(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = getattr(self._local, "conn", None)
        if conn is not None:
            return conn
        if self._closed:
            raise ConfigError(f"the LLM call cache {self.path} is closed")
        conn = sqlite3.connect(
            self.path, timeout=self._busy_timeout_s, check_same_thread=False, isolation_level=None
        )
        conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_s * 1000)}")
        conn.execute("PRAGMA synchronous=NORMAL")
        self._local.conn = conn
        with self._lock:
            self._connections.append(conn)
        return conn

    def close(self) -> None:
        """Close every connection this instance opened (from any thread)."""
        with self._lock:
            conns, self._connections = self._connections, []
            self._closed = True
        for c in conns:
            c.close()
        self._local = threading.local()
        close = getattr(self.inner, "close", None)
        if callable(close):
            close()

    def __enter__(self) -> CachedLLM:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        row = self._conn().execute("SELECT COUNT(*) FROM llm_calls").fetchone()
        return int(row[0])

    # -- the LLM protocol --------------------------------------------------------------

    def call(
        self,
        messages: Sequence[Message],
        *,
        schema: type[Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Response:
        """Answer from the cache, or call the wrapped LLM and remember its answer.

        Args:
            messages: The conversation.
            schema: The pydantic model the reply must validate against, if any.
            temperature: Overrides the wrapped LLM's default.
            max_tokens: Overrides the wrapped LLM's default.

        Raises:
            LLMError: whatever the wrapped LLM raises on a miss (failures are not cached).
        """
        t0 = time.monotonic()
        eff_temp = (
            temperature if temperature is not None else getattr(self.inner, "temperature", None)
        )
        eff_max = max_tokens if max_tokens is not None else getattr(self.inner, "max_tokens", None)
        key = cache_key(self.model, messages, schema, eff_temp, eff_max)
        hit = self._lookup(key, schema)
        if hit is not None:
            text, parsed, saved = hit
            latency = time.monotonic() - t0
            self._own.add(
                calls=1, cache_hits=1, tokens_saved=saved.total_tokens, total_latency_s=latency
            )
            log.debug("LLM cache hit %s… (%s)", key[:12], self.model)
            return Response(
                text=text,
                parsed=parsed,
                usage=Usage(),
                latency_s=latency,
                model=self.model,
                cached=True,
                attempts=0,
            )
        log.debug("LLM cache miss %s… (%s)", key[:12], self.model)
        try:
            response = self.inner.call(
                messages, schema=schema, temperature=temperature, max_tokens=max_tokens
            )
        except Exception:
            if not isinstance(getattr(self.inner, "stats", None), LLMStats):
                self._own.add(calls=1, failures=1, total_latency_s=time.monotonic() - t0)
            raise
        if not isinstance(getattr(self.inner, "stats", None), LLMStats):
            self._own.add(
                calls=1,
                requests=response.attempts,
                prompt_tokens=response.usage.prompt_tokens,
                completion_tokens=response.usage.completion_tokens,
                total_latency_s=response.latency_s,
            )
        self._store(key, schema, response)
        return response

    def _lookup(self, key: str, schema: type[Any] | None) -> tuple[str, Any, Usage] | None:
        row = (
            self._conn()
            .execute(
                "SELECT text, prompt_tokens, completion_tokens FROM llm_calls WHERE key = ?",
                (key,),
            )
            .fetchone()
        )
        if row is None:
            return None
        text, p, c = str(row[0]), int(row[1]), int(row[2])
        parsed = None
        if schema is not None:
            try:
                parsed = validate_output(schema, text)
            except InvalidOutputError as e:
                log.warning(
                    "cached LLM answer %s… no longer validates against %s (%s); "
                    "calling the model again",
                    key[:12],
                    schema_name(schema),
                    e,
                )
                return None
        return text, parsed, Usage(p, c)

    def _store(self, key: str, schema: type[Any] | None, response: Response) -> None:
        conn = self._conn()
        with conn:
            conn.execute(
                "INSERT OR REPLACE INTO llm_calls (key, model, schema_name, text, "
                "prompt_tokens, completion_tokens, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    self.model,
                    None if schema is None else schema_name(schema),
                    response.text,
                    response.usage.prompt_tokens,
                    response.usage.completion_tokens,
                    time.time(),
                ),
            )


__all__ = ["CachedLLM", "cache_key"]
