"""The I/O behind the cost guard: Ontop's SQL for a query, and the database's plan for it.

* :class:`OntopReformulator`: ``GET /ontop/reformulate?query=…&format=sql`` of an Ontop
  endpoint started in dev mode (navqa's launcher, ``--dev``).
* :class:`PostgresExplainer`: ``EXPLAIN (FORMAT JSON)`` of that SQL, in a read-only
  transaction with a statement timeout. Never ``ANALYZE``: nothing is executed.
* :class:`OntopPostgresProbe`: both, as the :class:`~navqa.backends.protocols.CostProbe`
  the guard uses.

A probe that cannot estimate at all (the endpoint is not in dev mode) raises
:class:`~navqa.errors.CostUnavailableError`, which the guard reports as an unknown cost,
with the reason;
every other failure (endpoint down, SQL rejected) is raised as navqa's error.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import requests

from navqa.errors import (
    CostUnavailableError,
    EndpointError,
    EndpointUnreachableError,
    PostgresError,
)

__all__ = ["LeasedPostgresExplainer", "OntopPostgresProbe", "OntopReformulator",
           "PostgresExplainer", "probe_for"]


class OntopReformulator:
    """The SQL Ontop generates for a SPARQL query.

    Args:
        sparql_url: The endpoint's ``…/sparql`` URL (the launcher serves
            ``/ontop/reformulate`` next to it in dev mode).
        timeout: Seconds per request.
        session: An optional ``requests.Session``.
    """

    def __init__(self, sparql_url: str, *, timeout: float = 60.0,
                 session: requests.Session | None = None) -> None:
        base = sparql_url.rsplit("/sparql", 1)[0]
        self.url = f"{base}/ontop/reformulate"
        self.timeout = timeout
        self.session = session or requests.Session()

    def sql(self, query: str) -> str:
        """The native SQL of ``query``.

        Raises:
            CostUnavailableError: the endpoint is not in dev mode (HTTP 404).
            EndpointUnreachableError: the endpoint cannot be reached.
            EndpointError: Ontop could not reformulate the query (its message).
        """
        try:
            r = self.session.get(self.url, params={"query": query, "format": "sql"},
                                 timeout=self.timeout)
        except requests.RequestException as e:
            raise EndpointUnreachableError(f"cannot reach {self.url}", endpoint=self.url,
                                           query=query) from e
        if r.status_code == 404:
            raise CostUnavailableError("the endpoint is not in dev mode (no /ontop/reformulate)")
        if r.status_code != 200:
            raise EndpointError("Ontop could not reformulate the query", endpoint=self.url,
                                query=query, status=r.status_code, server_message=r.text)
        return r.text.strip()


class PostgresExplainer:
    """PostgreSQL's plan for a statement, estimated only (``EXPLAIN``, never ``ANALYZE``).

    Args:
        conninfo: psycopg connection keywords (``host``, ``port``, ``dbname``, ``user``…).
        timeout_s: Statement timeout for the ``EXPLAIN`` itself.
    """

    def __init__(self, conninfo: Mapping[str, Any], *, timeout_s: float = 30.0) -> None:
        self.conninfo = dict(conninfo)
        self.timeout_s = timeout_s

    def __repr__(self) -> str:
        return (f"PostgresExplainer(host={self.conninfo.get('host')!r}, "
                f"dbname={self.conninfo.get('dbname')!r})")

    def explain(self, sql: str) -> Mapping[str, Any]:
        """The root plan node of ``EXPLAIN (FORMAT JSON) sql``.

        Raises:
            PostgresError: no connection, or PostgreSQL refused the statement.
        """
        import psycopg

        where = f"{self.conninfo.get('host')}:{self.conninfo.get('port')}/" \
                f"{self.conninfo.get('dbname')}"
        kw = {"connect_timeout": 10, **self.conninfo}
        try:
            with psycopg.connect(**kw) as conn:
                conn.read_only = True
                with conn.transaction(), conn.cursor() as cur:
                    cur.execute("SELECT set_config('statement_timeout', %s, true)",
                                (str(max(1, int(self.timeout_s * 1000))),))
                    cur.execute(f"EXPLAIN (FORMAT JSON) {sql}".encode())
                    row = cur.fetchone()
        except psycopg.Error as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise PostgresError(f"EXPLAIN failed on {where}: {first}",
                                hint="the SQL is Ontop's; `navqa lint --cost` shows it") from e
        if row is None:
            raise PostgresError(f"EXPLAIN returned no plan on {where}")
        doc = row[0] if not isinstance(row[0], str) else json.loads(row[0])
        try:
            plan = doc[0]["Plan"]
        except (IndexError, KeyError, TypeError) as e:
            raise PostgresError(f"EXPLAIN returned an unexpected document on {where}") from e
        return plan


class OntopPostgresProbe:
    """Ontop's SQL for a query, explained by PostgreSQL (a
    :class:`~navqa.backends.protocols.CostProbe`).

    Args:
        reformulator: The endpoint's reformulation service.
        explainer: The database's plans, or ``None`` when navqa cannot reach the
            database (then every estimate raises
            :class:`~navqa.errors.CostUnavailableError` with ``why``).
        why: Why there is no explainer.
    """

    def __init__(self, reformulator: OntopReformulator,
                 explainer: PostgresExplainer | LeasedPostgresExplainer | None,
                 *, why: str = "navqa has no access to the database") -> None:
        self.reformulator = reformulator
        self.explainer = explainer
        self.why = why

    def sql(self, query: str) -> str:
        return self.reformulator.sql(query)

    def explain(self, sql: str) -> Mapping[str, Any]:
        if self.explainer is None:
            raise CostUnavailableError(self.why)
        return self.explainer.explain(sql)


class LeasedPostgresExplainer:
    """``EXPLAIN`` on a database of navqa's configured server (``NAVQA_PG_DSN`` or the
    private cluster), taking a lease on the cluster for each call only (stateless).

    Used for an endpoint navqa did not start in this process (``navqa endpoint up``),
    whose database it knows from the endpoint's record.

    Args:
        config: navqa configuration (which server, the cluster's folder).
        database: The database name.
        timeout_s: Statement timeout for the ``EXPLAIN`` itself.
    """

    def __init__(self, config: Any, database: str, *, timeout_s: float = 30.0) -> None:
        self.config = config
        self.database = database
        self.timeout_s = timeout_s

    def __repr__(self) -> str:
        return f"LeasedPostgresExplainer(database={self.database!r})"

    def explain(self, sql: str) -> Mapping[str, Any]:
        """See :meth:`PostgresExplainer.explain`.

        Raises:
            PostgresError: the server cannot be reached, or refused the statement.
        """
        from navqa.runtime.postgres import postgres

        with postgres(self.config) as pg:
            return PostgresExplainer({"conninfo": pg.conninfo(self.database)},
                                     timeout_s=self.timeout_s).explain(sql)


def _recorded(url: str, config: Any, endpoints: Sequence[Any] | None
              ) -> tuple[Any | None, str | None]:
    """The database behind an endpoint recorded by ``navqa endpoint up`` (an
    :class:`~navqa.runtime.vkg.EndpointState`) when it is one navqa's configuration reaches,
    else ``None`` and why not."""
    from navqa.runtime.vkg import database_id, endpoint_states

    states = endpoints if endpoints is not None else endpoint_states(config)
    mine = [st for st in states if st.url.rstrip("/") == url.rstrip("/")]
    if not mine:
        return None, (f"{url} is not an endpoint navqa started (`navqa endpoint up`), so "
                      "navqa does not know its database")
    st = mine[0]
    if st.database.same_database(database_id(config, None, st.db_name)):
        return st, None
    return None, (f"{url} reads {st.database}, not a database of the PostgreSQL navqa is "
                  "configured for (NAVQA_PG_DSN or its private cluster)")


def probe_for(url: str, *, bundled_pg: Any = None, database: str | None = None,
              source: Any = None, timeout_s: float = 30.0, config: Any = None,
              endpoints: Sequence[Any] | None = None) -> OntopPostgresProbe:
    """The probe for an endpoint navqa serves, with whatever database access it has.

    Args:
        url: The endpoint's ``…/sparql`` URL.
        bundled_pg: A :class:`~navqa.runtime.postgres.PgConnection` to navqa's own
            database (bundled VKGs), with ``database`` its name.
        database: The database name on ``bundled_pg``.
        source: A :class:`~navqa.model.vkg_source.VkgSource` whose ``database`` is the
            user's (PostgreSQL only).
        timeout_s: Statement timeout of each ``EXPLAIN``.
        config: navqa configuration: with it, an endpoint navqa did not start here (a
            reused one, ``--endpoint``) is looked up among the records of
            ``navqa endpoint up``, whose database navqa then explains on.
        endpoints: Those records (:class:`~navqa.runtime.vkg.EndpointState`); by default
            the live ones of ``config``'s cache.
    """
    reformulator = OntopReformulator(url, timeout=max(timeout_s, 60.0))
    if bundled_pg is not None and database is not None:
        return OntopPostgresProbe(reformulator, PostgresExplainer(
            {"conninfo": bundled_pg.conninfo(database)}, timeout_s=timeout_s))
    db = getattr(source, "database", None)
    if db is not None and db.is_postgresql:
        from navqa.runtime.project import libpq_conninfo

        return OntopPostgresProbe(reformulator, PostgresExplainer(
            libpq_conninfo(db, timeout_s), timeout_s=timeout_s))
    if db is not None:
        why = f"no cost estimate for {db.jdbc_url.split(':')[1]} databases"
    elif config is not None:
        st, why_not = _recorded(url, config, endpoints)
        if st is not None:
            return OntopPostgresProbe(reformulator, LeasedPostgresExplainer(
                config, st.db_name, timeout_s=timeout_s))
        why = why_not or "navqa has no access to the endpoint's database"
    elif getattr(source, "endpoint", None):
        why = "navqa has no access to the database behind --endpoint"
    else:
        why = "navqa has no access to the database of a reused endpoint"
    return OntopPostgresProbe(reformulator, None, why=why)
