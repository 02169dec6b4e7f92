"""A read-only SPARQL 1.1 protocol client over ``requests``.

* SELECT, ASK and CONSTRUCT/DESCRIBE, parsed into typed terms (:mod:`navqa.model.terms`).
* Always sends an ``Accept`` header (Ontop requires one).
* Timeouts on every request; retries **only** on connection errors — a query that
  timed out or failed is never silently re-run.
* HTTP errors become typed exceptions carrying the endpoint's own message.
* SPARQL UPDATE is refused before anything is sent.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

import requests

from navqa.errors import (
    EndpointError,
    EndpointTimeoutError,
    EndpointUnreachableError,
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


class HttpSparqlEndpoint:
    """A SPARQL endpoint reached over HTTP.

    Args:
        url: The endpoint URL (``http://127.0.0.1:PORT/sparql``).
        timeout: Default read timeout per query, in seconds.
        connect_retries: Extra attempts after a connection error.
        session: An optional ``requests.Session`` (tests pass one with a mock adapter).
    """

    def __init__(self, url: str, *, timeout: float = 120.0, connect_retries: int = 3,
                 retry_delay: float = 0.5, session: requests.Session | None = None) -> None:
        self.url = url
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
                raise EndpointTimeoutError(f"no answer within {read_timeout:.0f}s",
                                           endpoint=self.url, query=query) from e
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
        if r.status_code == 400:
            raise QueryRejectedError("the endpoint rejected the query", endpoint=self.url,
                                     query=query, status=400, server_message=r.text)
        if r.status_code >= 500 and "timed out" in r.text:
            raise EndpointTimeoutError(f"the endpoint cancelled the query after "
                                       f"{read_timeout:.0f}s", endpoint=self.url, query=query,
                                       status=r.status_code, server_message=r.text)
        if r.status_code >= 400:
            raise QueryFailedError("the endpoint failed to answer", endpoint=self.url,
                                   query=query, status=r.status_code, server_message=r.text)
        return r


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
