"""A query that meets a stale pooled JDBC connection is sent again.

When PostgreSQL is restarted under a running Ontop, the pool still holds connections to
the old server: each query that gets one fails with "This connection has been closed"
and drops it. ``HttpSparqlEndpoint`` sends such a query again (``STALE_RETRIES`` times);
a database that stays down still ends in :class:`DatabaseUnavailableError`. The endpoint
here is a real HTTP server answering as Ontop does.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from navqa.backends.sparql_http import STALE_RETRIES, HttpSparqlEndpoint
from navqa.errors import DatabaseUnavailableError

STALE = ("RepositoryException: it.unibz.inf.ontop.exception.OntopConnectionException: "
         "org.postgresql.util.PSQLException: This connection has been closed.")
ANSWER = {"head": {"vars": ["n"]},
          "results": {"bindings": [{"n": {"type": "literal", "value": "North"}}]}}


class Server:
    """Fails the first ``stale`` queries with Ontop's stale-connection error."""

    def __init__(self, stale: int) -> None:
        self.stale, self.posts = stale, 0
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.posts += 1
                if outer.posts <= outer.stale:
                    body, status, kind = STALE.encode(), 500, "text/plain"
                else:
                    body, status = json.dumps(ANSWER).encode(), 200
                    kind = "application/sparql-results+json"
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/sparql"


@pytest.fixture()
def serve() -> Iterator[type[Server]]:
    started: list[Server] = []

    def make(stale: int) -> Server:
        s = Server(stale)
        threading.Thread(target=s.httpd.serve_forever, daemon=True).start()
        started.append(s)
        return s

    yield make  # type: ignore[misc]
    for s in started:
        s.httpd.shutdown()
        s.httpd.server_close()


def test_a_query_that_met_stale_connections_is_sent_again(serve) -> None:
    server = serve(2)
    ep = HttpSparqlEndpoint(server.url, retry_delay=0.01)
    with ep.session:
        res = ep.select("SELECT ?n WHERE {}")
    assert [r[0].value for r in res.rows] == ["North"]
    assert server.posts == 3


def test_a_database_that_stays_down_is_still_reported(serve) -> None:
    server = serve(100)
    ep = HttpSparqlEndpoint(server.url, retry_delay=0.01)
    with ep.session, pytest.raises(DatabaseUnavailableError) as ei:
        ep.select("SELECT ?n WHERE {}")
    assert "This connection has been closed" in str(ei.value)
    assert server.posts == STALE_RETRIES + 1
