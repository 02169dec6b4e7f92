"""A read-only SPARQL 1.1 protocol client over ``requests``.

* SELECT, ASK and CONSTRUCT/DESCRIBE, parsed into typed terms (:mod:`navqa.model.terms`).
* Always sends an ``Accept`` header (Ontop requires one).
* Timeouts on every request; retries **only** on connection errors — a query that
  timed out or failed is never silently re-run.
* HTTP errors become typed exceptions carrying the endpoint's own message.
* Failures of the *infrastructure* are told apart from failures of the *query*, here and
  nowhere else, as subclasses of :class:`~navqa.errors.EndpointUnreachableError`:

  - connection refused or reset (after the connection retries): ``EndpointUnreachableError``;
  - no HTTP answer within the read timeout, and no answer to a trivial ``ASK {}`` probe
    within ``probe_timeout`` either (a paused or hung endpoint):
    :class:`~navqa.errors.EndpointUnresponsiveError`. When the probe *is* answered, the
    endpoint is alive and the query itself was too slow: ``EndpointTimeoutError``;
  - a 5xx whose body is a JDBC connection failure (the database behind a live Ontop is
    stopped, restarting or dropped the connection, see :data:`DATABASE_DOWN`):
    :class:`~navqa.errors.DatabaseUnavailableError`.

  Everything else (400, other 5xx, the endpoint's own execution timeout) belongs to
  the query.
* SPARQL UPDATE is refused before anything is sent.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import requests

from navqa.errors import (
    DatabaseUnavailableError,
    EndpointError,
    EndpointTimeoutError,
    EndpointUnreachableError,
    EndpointUnresponsiveError,
    InputError,
    QueryFailedError,
    QueryRejectedError,
    SparqlSyntaxError,
    UpdateRefusedError,
)
from navqa.model.resultio import term_from_json
from navqa.model.terms import (
    AskResult,
    BNodeTerm,
    GraphResult,
    IRITerm,
    LiteralTerm,
    QueryResult,
    SelectResult,
    Term,
)

_JSON = "application/sparql-results+json"
_NT = "application/n-triples"
_PROLOGUE = re.compile(
    r"^\s*(?:(?:PREFIX\s+[A-Za-z0-9_\-.]*:\s*<[^>\s]*>)|(?:BASE\s*<[^>\s]*>))", re.IGNORECASE
)
_COMMENT = re.compile(r"(?m)(^|\s)#[^\n]*")
DATABASE_DOWN = re.compile(
    r"Connection to \S+ refused|The connection attempt failed|Connection refused"
    r"|An I/O error occurred while sending to the backend|This connection has been closed"
    r"|terminating connection due to administrator command|Connection reset"
    r"|the database system is (?:shutting down|starting up|in recovery mode|not yet accepting)"
    r"|Connection is not available, request timed out|SQLSTATE\(08\d\d\d\)",
    re.IGNORECASE)
"""What a 5xx body says when the endpoint is alive but cannot reach its database: the
PostgreSQL JDBC driver's connection-class messages (SQLSTATE 08xxx, 57P01/57P03)."""
_UPDATE_WORDS = ("INSERT", "DELETE", "LOAD", "CLEAR", "DROP", "CREATE", "ADD", "MOVE", "COPY",
                 "WITH")


def query_form(query: str) -> str:
    """The query form: ``SELECT``, ``ASK``, ``CONSTRUCT`` or ``DESCRIBE``.

    Raises:
        UpdateRefusedError: for any SPARQL UPDATE operation.
        SparqlSyntaxError: when no query form can be found.
    """
    text = _COMMENT.sub(r"\1", query)
    while True:
        m = _PROLOGUE.match(text)
        if not m:
            break
        text = text[m.end():]
    word = re.match(r"\s*([A-Za-z]+)", text)
    head = word.group(1).upper() if word else ""
    if head in ("SELECT", "ASK", "CONSTRUCT", "DESCRIBE"):
        return head
    if head in _UPDATE_WORDS:
        raise UpdateRefusedError("SPARQL UPDATE is never sent to a VKG endpoint", query=query)
    raise SparqlSyntaxError("not a SPARQL query: expected SELECT, ASK, CONSTRUCT or DESCRIBE",
                            query=query)


@dataclass
class EndpointStats:
    """Running totals for benchmarks."""

    requests: int = 0
    seconds: float = 0.0


STALE_CONNECTION = re.compile(r"This connection has been closed", re.IGNORECASE)
"""What Ontop says when it hands a query a pooled JDBC connection that died with its
database (PostgreSQL restarted under a running endpoint): each such failure drops one
stale connection from the pool, so the same query, sent again, gets a live one."""
STALE_RETRIES = 4
"""Extra attempts of a query that met a stale pooled connection."""


class HttpSparqlEndpoint:
    """A SPARQL endpoint reached over HTTP.

    Args:
        url: The endpoint URL (``http://127.0.0.1:PORT/sparql``).
        timeout: Default read timeout per query, in seconds.
        connect_retries: Extra attempts after a connection error.
        retry_delay: Seconds before the first extra attempt (then 2×, 3×, …).
        probe_timeout: Seconds a trivial ``ASK {}`` probe gets after a read timeout, to
            tell a slow query (probe answered) from a dead endpoint (probe unanswered).
        session: An optional ``requests.Session`` (tests pass one with a mock adapter).
    """

    def __init__(self, url: str, *, timeout: float = 120.0, connect_retries: int = 3,
                 retry_delay: float = 0.5, probe_timeout: float = 10.0,
                 session: requests.Session | None = None) -> None:
        self.url = url
        self.probe_timeout = probe_timeout
        self.timeout = timeout
        self.connect_retries = connect_retries
        self.retry_delay = retry_delay
        self.session = session or requests.Session()
        self.stats = EndpointStats()

    def __repr__(self) -> str:
        return f"HttpSparqlEndpoint({self.url!r})"

    # -- public API --------------------------------------------------------------------

    def query(self, query: str, *, timeout: float | None = None) -> QueryResult:
        """Run any read-only query and return the result type matching its form."""
        form = query_form(query)
        if form in ("SELECT",):
            return self.select(query, timeout=timeout)
        if form == "ASK":
            return self.ask(query, timeout=timeout)
        return self.construct(query, timeout=timeout)

    def select(self, query: str, *, timeout: float | None = None) -> SelectResult:
        """Run a SELECT query."""
        self._expect(query, ("SELECT",))
        data = self._post(query, _JSON, timeout).json()
        try:
            variables = tuple(data["head"].get("vars", []))
            rows = tuple(
                tuple(term_from_json(b[v]) if v in b else None for v in variables)
                for b in data["results"]["bindings"]
            )
        except (KeyError, TypeError, AttributeError, InputError) as e:
            raise EndpointError("malformed SPARQL JSON results", endpoint=self.url,
                                query=query) from e
        return SelectResult(variables=variables, rows=rows)

    def ask(self, query: str, *, timeout: float | None = None) -> AskResult:
        """Run an ASK query."""
        self._expect(query, ("ASK",))
        data = self._post(query, _JSON, timeout).json()
        if not isinstance(data.get("boolean"), bool):
            raise EndpointError("ASK answered without a boolean", endpoint=self.url, query=query)
        return AskResult(bool(data["boolean"]))

    def construct(self, query: str, *, timeout: float | None = None) -> GraphResult:
        """Run a CONSTRUCT or DESCRIBE query; triples are parsed from N-Triples."""
        self._expect(query, ("CONSTRUCT", "DESCRIBE"))
        text = self._post(query, _NT, timeout).text
        return GraphResult(ntriples=text, triples=_parse_ntriples(text))

    # -- internals ---------------------------------------------------------------------

    def _expect(self, query: str, forms: tuple[str, ...]) -> None:
        form = query_form(query)
        if form not in forms:
            raise SparqlSyntaxError(f"expected a {'/'.join(forms)} query, got {form}", query=query)

    def _post(self, query: str, accept: str, timeout: float | None) -> requests.Response:
        read_timeout = timeout or self.timeout
        data = {"query": query, "timeout": str(int(read_timeout))}
        r = self._send(query, data, accept, read_timeout)
        for stale in range(STALE_RETRIES):
            if r.status_code < 500 or not STALE_CONNECTION.search(r.text):
                break
            # the database came back under the endpoint: the pool drops one dead
            # connection per failure, so the query is sent again (read-only, harmless)
            time.sleep(self.retry_delay * (stale + 1))
            r = self._send(query, data, accept, read_timeout)
        return self._check(r, query, read_timeout)

    def _send(self, query: str, data: dict[str, str], accept: str,
              read_timeout: float) -> requests.Response:
        """One POST, with the connection-error retries; timeouts raise."""
        attempt = 0
        t0 = time.monotonic()
        while True:
            try:
                # The server gets ``timeout`` to cancel the query itself; the client waits
                # a little longer so that the server's clean cancellation wins.
                r = self.session.post(self.url, data=data, headers={"Accept": accept},
                                      timeout=(5.0, read_timeout + 10.0))
                break
            except requests.exceptions.ConnectTimeout as e:
                err: Exception = e
            except requests.exceptions.Timeout as e:
                if self._responsive():
                    raise EndpointTimeoutError(f"no answer within {read_timeout:.0f}s",
                                               endpoint=self.url, query=query) from e
                raise EndpointUnresponsiveError(
                    f"no answer within {read_timeout:.0f}s, nor to a probe within "
                    f"{self.probe_timeout:g}s", endpoint=self.url, query=query,
                    hint="is the endpoint paused or overloaded?") from e
            except requests.exceptions.ConnectionError as e:
                err = e
            attempt += 1
            if attempt > self.connect_retries:
                raise EndpointUnreachableError(
                    f"cannot connect after {attempt} attempts", endpoint=self.url, query=query,
                    hint="is the endpoint running? `navqa endpoint status`") from err
            time.sleep(self.retry_delay * attempt)
        self.stats.requests += 1
        self.stats.seconds += time.monotonic() - t0
        return r

    def _check(self, r: requests.Response, query: str, read_timeout: float
               ) -> requests.Response:
        """``r`` when it is an answer; the matching :class:`EndpointError` otherwise."""
        if r.status_code == 400:
            raise QueryRejectedError("the endpoint rejected the query", endpoint=self.url,
                                     query=query, status=400, server_message=r.text)
        if r.status_code >= 500 and DATABASE_DOWN.search(r.text):
            from navqa.runtime.ontop import jdbc_cause  # the launcher's chain, said once

            raise DatabaseUnavailableError(
                "the database behind the endpoint is unreachable", endpoint=self.url,
                query=query, status=r.status_code, server_message=jdbc_cause(r.text),
                hint="`navqa endpoint status` checks it; a navqa command on this VKG starts "
                "navqa's own PostgreSQL again, else `navqa endpoint down` and start it again")
        if r.status_code >= 500 and "timed out" in r.text:
            raise EndpointTimeoutError(f"the endpoint cancelled the query after "
                                       f"{read_timeout:.0f}s", endpoint=self.url, query=query,
                                       status=r.status_code, server_message=r.text)
        if r.status_code >= 400:
            raise QueryFailedError("the endpoint failed to answer", endpoint=self.url,
                                   query=query, status=r.status_code, server_message=r.text)
        return r

    def _responsive(self) -> bool:
        """Whether the endpoint answers a trivial query within ``probe_timeout``."""
        try:
            r = self.session.post(self.url, data={"query": "ASK {}"},
                                  headers={"Accept": _JSON},
                                  timeout=(self.probe_timeout, self.probe_timeout))
        except requests.exceptions.RequestException:
            return False
        return r.status_code == 200


def _parse_ntriples(text: str) -> tuple[tuple[Term, Term, Term], ...]:
    from rdflib import BNode, Graph, Literal, URIRef

    g = Graph()
    g.parse(data=text, format="nt")

    def conv(x: object) -> Term:
        if isinstance(x, URIRef):
            return IRITerm(str(x))
        if isinstance(x, Literal):
            return LiteralTerm(str(x), datatype=str(x.datatype) if x.datatype else None,
                               lang=x.language)
        if isinstance(x, BNode):
            return BNodeTerm(str(x))
        raise ValueError(f"unexpected node {x!r}")

    return tuple((conv(s), conv(p), conv(o)) for s, p, o in g)
