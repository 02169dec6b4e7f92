"""The cost guard: refuse to wait for a query the database says will never finish.

Before a query runs, :class:`CostGuard` asks Ontop for its SQL and the database for its
*estimated* plan (PostgreSQL ``EXPLAIN`` in JSON, never ``ANALYZE``: nothing executes). A
total cost above ``max_cost`` makes the query *costly*; the guard then names the join
where the estimated rows explode (:func:`plan_hotspot`): its tables and columns and,
through the parsed mappings (:mod:`navqa.offline.mapping_sql`), the mapping assertions
they come from. The typical cause is a join on a column without a key — Ontop cannot
drop a self-join of such a table — which typing the variable or going through a keyed
table avoids (:func:`costly_suggestion`).

``navqa lint --cost`` reports costly queries as errors; ``ask``, ``eval`` and ``sparql``
warn before running them. With the offline backend, NaVQA's strategy first writes a costly
query again without the properties of the exploding join (:func:`avoid_costly`,
:func:`offline_rewrite`): the synthesizer then reaches the same columns another way (a
keyed table), and the rewrite is kept when it asks the same thing (:func:`same_shape`)
and the guard estimates it under the threshold.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from navqa.backends.protocols import CostProbe
from navqa.errors import CostUnavailableError, EndpointUnreachableError, NavqaError
from navqa.model.answers import EntityAnswer
from navqa.model.cost import CostCheck, CostEstimate, CostVerdict, JoinHotspot
from navqa.model.events import CheaperQueryTried, Event, QueryCostChecked
from navqa.model.iri import IRI
from navqa.model.mapping import MappingSet, TermType
from navqa.online.cost_sql import sql_aliases

if TYPE_CHECKING:
    from navqa.online.context import SchemaContext
    from navqa.online.state import AskState

__all__ = ["DEFAULT_MAX_COST", "NO_SQL", "CostGuard", "avoid_costly", "cost_event",
           "costly_suggestion", "exploding_properties", "offline_rewrite", "plan_hotspot",
           "same_shape"]

DEFAULT_MAX_COST = 1e11
"""Default threshold, in PostgreSQL cost units. Measured on the gold queries of the bundled
question sets (dev + test): demo max 10.5, NPD max 1.5e5, ATKIS max 7.5e5, Bgee max 2.6e8
(bgee-t027, which answers in seconds: PostgreSQL over-estimates its join on
``replace(anatentityid)``); the NPD question over ``wellbore_formation_top`` that never
finishes is estimated at 2.5e13. 1e11 leaves more than two orders of magnitude on both
sides."""

_JOINS = ("Hash Join", "Merge Join", "Nested Loop")
_CONDITIONS = ("Hash Cond", "Merge Cond", "Join Filter", "Index Cond", "Recheck Cond",
               "Filter")
_NAME = r'(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)'
_QUALIFIED = re.compile(rf"({_NAME})\.({_NAME})")
NO_SQL = "Ontop generated no SQL for the query"
"""The reason of an unknown verdict for a query that answers nothing by construction."""
GROWTH = 2.0
"""A join whose estimated rows exceed its largest input's this many times 'explodes'."""


def _unquote(name: str) -> str:
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


def _nodes(plan: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    yield plan
    for child in plan.get("Plans", ()) or ():
        yield from _nodes(child)


def _rows(node: Mapping[str, Any]) -> float:
    return float(node.get("Plan Rows", 0) or 0)


def _growth(node: Mapping[str, Any]) -> float:
    children = node.get("Plans", ()) or ()
    biggest = max((_rows(c) for c in children), default=0.0)
    return _rows(node) / max(1.0, biggest)


def _conditions(node: Mapping[str, Any]) -> list[str]:
    return [str(node[k]) for k in _CONDITIONS if node.get(k)]


_PASS_THROUGH = ("Memoize", "Materialize", "Sort", "Incremental Sort", "Hash", "Gather",
                 "Gather Merge", "Result", "Bitmap Heap Scan", "BitmapAnd", "BitmapOr")
"""Nodes between a nested loop and the scan that carries its join condition."""
_SCAN_CONDITIONS = ("Index Cond", "Recheck Cond")
_CAST = re.compile(rf"::\s*{_NAME}(?:\s+(?:varying|precision|with(?:out)? time zone))?"
                   r"(?:\[\])?")
_STRING = re.compile(r"'(?:[^']|'')*'")
_BARE = re.compile(rf"({_NAME})(\s*\()?")


def _inner_conditions(node: Mapping[str, Any]) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """The index conditions of the scans feeding a nested loop (its join condition sits
    there), reached through memoize, materialize, sort and bitmap nodes; each with its scan."""
    for child in node.get("Plans", ()) or ():
        for k in _SCAN_CONDITIONS:
            if child.get(k) and child.get("Relation Name"):
                yield str(child[k]), child
        if child.get("Node Type") in _PASS_THROUGH:
            yield from _inner_conditions(child)


def _unqualified(cond: str) -> list[str]:
    """The column names a condition reads without a table alias (those of the scan itself)."""
    text = _CAST.sub(" ", _STRING.sub(" ", cond))
    text = _QUALIFIED.sub(" ", text)
    return [_unquote(m.group(1)) for m in _BARE.finditer(text)
            if m.group(2) is None and _unquote(m.group(1)).lower() not in _SQL_WORDS
            and not m.group(1)[0].isdigit()]


_SQL_WORDS = frozenset({"and", "or", "not", "null", "is", "any", "all", "array", "true",
                        "false", "in", "like", "ilike", "between", "some", "distinct", "from"})


def _table_of(node: Mapping[str, Any]) -> str:
    rel = str(node["Relation Name"])
    return f"{node['Schema']}.{rel}" if node.get("Schema") not in (None, "public") else rel


def plan_hotspot(plan: Mapping[str, Any], sql: str | None = None) -> JoinHotspot | None:
    """The exploding join of ``plan`` (the root node of ``EXPLAIN (FORMAT JSON)``).

    Among the join nodes whose estimated rows grow at least :data:`GROWTH` times over
    their largest input, the one yielding the most rows; its tables are the base tables
    scanned below it, its columns those the exploding joins below it (itself included)
    compare, resolved through the scans' aliases and, for the columns of Ontop's
    subqueries (``v7."lsuNpdidLithoStrat3m78"``), through ``sql``
    (:func:`navqa.online.cost_sql.sql_aliases`).

    Returns:
        ``None`` when no join grows (the plan has no explosion to name).
    """
    exploding = [n for n in _nodes(plan)
                 if n.get("Node Type") in _JOINS and _growth(n) >= GROWTH]
    if not exploding:
        return None
    top = max(exploding, key=_rows)
    aliases: dict[str, str] = {}
    tables: set[str] = set()
    for n in _nodes(top):
        if n.get("Relation Name"):
            table = _table_of(n)
            tables.add(table)
            aliases[str(n.get("Alias") or n["Relation Name"])] = table
    resolved = sql_aliases(sql) if sql else None
    columns: set[str] = set()
    texts: list[str] = []

    def resolve(qual: str, col: str) -> None:
        table = aliases.get(qual)
        if table is not None:
            columns.add(f"{table}.{col}")
        elif resolved is not None:
            columns.update(resolved.resolve(qual, col))

    for n in _nodes(top):
        if n.get("Node Type") in _JOINS and _growth(n) >= GROWTH:
            conds = _conditions(n)
            texts += conds
            for cond in conds:
                for qual, col in _QUALIFIED.findall(cond):
                    resolve(_unquote(qual), _unquote(col))
            # a nested loop's join condition sits in its inner index scan
            if n.get("Node Type") == "Nested Loop":
                for cond, scan in _inner_conditions(n):
                    texts.append(cond)
                    for qual, col in _QUALIFIED.findall(cond):
                        resolve(_unquote(qual), _unquote(col))
                    columns.update(f"{_table_of(scan)}.{c}" for c in _unqualified(cond))
    return JoinHotspot(node_type=str(top.get("Node Type")), rows=_rows(top),
                       growth=_growth(top), tables=tuple(sorted(tables)),
                       columns=tuple(sorted(columns)),
                       condition="; ".join(dict.fromkeys(texts)) or None)


def _same_table(mapped: str, planned: str) -> bool:
    return mapped == planned or mapped.rsplit(".", 1)[-1] == planned.rsplit(".", 1)[-1]


def mapping_ids_for(hotspot: JoinHotspot, mappings: MappingSet) -> tuple[str, ...]:
    """The assertions whose SQL reads the hotspot's columns (else, its tables)."""
    by_column: list[str] = []
    by_table: list[str] = []
    for a in mappings.assertions:
        if not any(_same_table(t, h) for t in a.tables for h in hotspot.tables):
            continue
        by_table.append(a.id)
        if any(_same_table(c.rsplit(".", 1)[0], h.rsplit(".", 1)[0])
               and c.rsplit(".", 1)[-1] == h.rsplit(".", 1)[-1]
               for c in a.columns for h in hotspot.columns):
            by_column.append(a.id)
    return tuple(dict.fromkeys(by_column or by_table))


def costly_suggestion(check: CostCheck) -> str:
    """What to do about a costly query, in the terms of its exploding join."""
    h = check.estimate.hotspot if check.estimate is not None else None
    if h is None:
        return ("narrow the query (a FILTER on a value, a LIMIT), or raise --max-cost if the "
                "database can afford it")
    cols = ", ".join(h.columns) or "the joined columns"
    what = f"{h.tables[0]} is joined with itself" if h.self_join else \
        f"{', '.join(h.tables)} are joined"
    return (f"{what} on {cols}, which has no key, so Ontop cannot remove the join: type the "
            "variable bound to it with a class whose mapping reads a keyed table, or go "
            "through a property mapped from a keyed table (or add a primary key / unique "
            "constraint on the column)")


class CostGuard:
    """Estimates a query's cost before it runs and compares it with a threshold.

    Stateless: every call is independent.

    Args:
        probe: Ontop's SQL and the database's plan.
        mappings: The parsed, annotated mappings (for the mapping ids of the hotspot), or
            ``None``.
        max_cost: Threshold in the database's cost units.
    """

    def __init__(self, probe: CostProbe, *, mappings: MappingSet | None = None,
                 max_cost: float = DEFAULT_MAX_COST) -> None:
        self.probe = probe
        self.mappings = mappings
        self.max_cost = max_cost

    def check(self, query: str) -> CostCheck:
        """The verdict for ``query``.

        An endpoint without ``/ontop/reformulate`` or a database navqa cannot reach gives
        :attr:`~navqa.model.cost.CostVerdict.UNKNOWN` with the reason.

        Raises:
            EndpointError: the endpoint failed (down, or Ontop could not reformulate).
            PostgresError: the database refused the ``EXPLAIN``.
        """
        try:
            sql = self.probe.sql(query)
            if not sql:
                return CostCheck(CostVerdict.UNKNOWN, self.max_cost, reason=NO_SQL)
            plan = self.probe.explain(sql)
        except CostUnavailableError as e:
            return CostCheck(CostVerdict.UNKNOWN, self.max_cost, reason=e.message)
        hotspot = plan_hotspot(plan, sql)
        if hotspot is not None and self.mappings is not None:
            from dataclasses import replace

            hotspot = replace(hotspot, mapping_ids=mapping_ids_for(hotspot, self.mappings))
        estimate = CostEstimate(sql=sql, total_cost=float(plan.get("Total Cost", 0.0)),
                                rows=_rows(plan),
                                peak_rows=max(_rows(n) for n in _nodes(plan)), hotspot=hotspot)
        verdict = CostVerdict.COSTLY if estimate.total_cost > self.max_cost else CostVerdict.OK
        return CostCheck(verdict, self.max_cost, estimate=estimate)


# -- a cheaper path for a costly query ------------------------------------------------------

MAX_REWRITES = 4
"""At most this many rewrites are estimated for one costly query (each is one
reformulation and one ``EXPLAIN``)."""

Rewrite = Callable[[frozenset[IRI]], "tuple[str, Any] | None"]
"""Writes the question's query again without some properties: ``(sparql, plan)``, or
``None`` when no checked query avoids them."""


def exploding_properties(check: CostCheck, mappings: MappingSet | None,
                         used: Iterable[IRI]) -> tuple[IRI, ...]:
    """The properties of the query (``used``) that the hotspot's mapping assertions map:
    data properties first (their self-joins are what explodes), then object properties,
    each group sorted."""
    h = check.estimate.hotspot if check.estimate is not None else None
    if h is None or mappings is None or not h.mapping_ids:
        return ()
    ids = set(h.mapping_ids)
    data: dict[IRI, None] = {}
    objects: dict[IRI, None] = {}
    mapped: dict[IRI, bool] = {}
    for a, atom in mappings.atoms():
        if a.id in ids and not atom.is_class:
            is_data = atom.object is not None and atom.object.term_type is TermType.LITERAL
            mapped[atom.predicate] = mapped.get(atom.predicate, False) or is_data
    for p in sorted(used):
        if p in mapped:
            (data if mapped[p] else objects)[p] = None
    return (*data, *objects)


def _rewrites(props: tuple[IRI, ...]) -> list[frozenset[IRI]]:
    """Which properties to leave out, in order: each alone, then all together."""
    out = [frozenset({p}) for p in props]
    if len(props) > 1:
        out.append(frozenset(props))
    return out[:MAX_REWRITES]


def avoid_costly(guard: CostGuard, sparql: str, used: Iterable[IRI],
                 rewrite: Rewrite | None) -> Generator[Event, None, tuple[str, Any] | None]:
    """The cost guard before a query runs, trying a cheaper equivalent when it is costly.

    Yields the :class:`~navqa.model.events.QueryCostChecked` event of ``sparql``; when it is
    costly and ``rewrite`` is given (the offline synthesizer), the query is written again
    without each property of the exploding join in turn (:func:`exploding_properties`; the
    synthesizer then takes another path in Ga, or another property), and the first rewrite
    the guard estimates under the threshold is kept: a
    :class:`~navqa.model.events.CheaperQueryTried` event says what was tried and which query
    runs, followed by the kept query's own ``QueryCostChecked``. A rewrite the guard cannot
    estimate is never kept.

    Returns:
        The kept rewrite (``(sparql, plan)``), or ``None``: run ``sparql`` as it is.

    Raises:
        EndpointUnreachableError: the endpoint is down.
    """
    check, first = cost_event(guard, sparql)
    yield first
    if check is None or not check.costly or rewrite is None:
        return None
    t = time.perf_counter()
    props = exploding_properties(check, guard.mappings, used)
    seen = {sparql}
    tried = 0
    for without in _rewrites(props):
        alt = rewrite(without)
        if alt is None or alt[0] in seen:
            continue
        seen.add(alt[0])
        tried += 1
        alt_check, alt_event = cost_event(guard, alt[0])
        if alt_check is not None and alt_check.verdict is CostVerdict.OK:
            assert alt_check.estimate is not None
            yield CheaperQueryTried(
                original=sparql, original_cost=_total(check), sparql=alt[0],
                total_cost=alt_check.estimate.total_cost, kept_cheaper=True,
                without=tuple(sorted(without)), tried=tried,
                summary=(f"a cheaper query leaves out {', '.join(sorted(without))}: "
                         f"estimated cost {alt_check.estimate.total_cost:.3g} instead of "
                         f"{_total(check) or 0:.3g}"), seconds=time.perf_counter() - t)
            yield alt_event
            return alt
    yield CheaperQueryTried(
        original=sparql, original_cost=_total(check), sparql=sparql,
        total_cost=_total(check), kept_cheaper=False, tried=tried,
        summary=(f"no cheaper query: {tried} rewrite(s) without the properties of the "
                 "exploding join were estimated above the threshold or could not be "
                 "estimated" if tried else "no cheaper query: no other path avoids the "
                 "properties of the exploding join"),
        seconds=time.perf_counter() - t)
    return None


def _total(check: CostCheck) -> float | None:
    return check.estimate.total_cost if check.estimate is not None else None


def cost_event(guard: CostGuard, sparql: str) -> tuple[CostCheck | None, QueryCostChecked]:
    """The guard's verdict on ``sparql`` and its event; a query Ontop cannot reformulate (or
    PostgreSQL cannot explain) is said so (no check) and still runs, so that its own failure
    is reported.

    Raises:
        EndpointUnreachableError: the endpoint is down.
    """
    t = time.perf_counter()
    try:
        check = guard.check(sparql)
    except EndpointUnreachableError:
        raise
    except NavqaError as e:
        return None, QueryCostChecked(sparql=sparql, verdict=CostVerdict.UNKNOWN.value,
                                      summary=f"no cost estimate: {str(e).splitlines()[0]}",
                                      seconds=time.perf_counter() - t)
    return check, QueryCostChecked(
        sparql=sparql, verdict=check.verdict.value, summary=check.summary(),
        total_cost=_total(check),
        suggestion=costly_suggestion(check) if check.costly else None,
        seconds=time.perf_counter() - t)


_SELECT_CLAUSE = re.compile(r"\bSELECT\b(.*?)\bWHERE\b", re.IGNORECASE | re.DOTALL)
_VAR = re.compile(r"[?$]\w+")
_SOLUTION = re.compile(r"\b(?:FILTER|ORDER\s+BY|LIMIT|OFFSET|GROUP\s+BY|HAVING|MINUS|"
                       r"OPTIONAL|VALUES|COUNT|SUM|AVG|MIN|MAX)\b", re.IGNORECASE)


def same_shape(original: str, original_classes: Iterable[IRI], rewrite: str,
               rewrite_classes: Iterable[IRI]) -> bool:
    """Whether ``rewrite`` still asks what ``original`` asks, structurally: as many
    projected variables, the same filters, orderings, limits and aggregates (as many of
    each keyword) and every class of the original. A rewrite that dropped a constraint or
    a column (rather than reaching it another way) is not equivalent."""
    def projected(q: str) -> int:
        m = _SELECT_CLAUSE.search(q)
        return len(_VAR.findall(m.group(1))) if m else -1

    def solution(q: str) -> list[str]:
        return sorted(re.sub(r"\s+", " ", k.upper()) for k in _SOLUTION.findall(q))

    return (projected(original) == projected(rewrite)
            and solution(original) == solution(rewrite)
            and set(original_classes) <= set(rewrite_classes))


class _WithoutProperties:
    """A schema context in which some properties may not be used (everything else is the
    wrapped context's): the offline synthesizer then takes other paths and properties."""

    def __init__(self, ctx: SchemaContext, without: frozenset[IRI]) -> None:
        self._ctx = ctx
        self._without = without

    def allowed(self, iri: IRI) -> bool:
        return iri not in self._without and self._ctx.allowed(iri)

    @property
    def name_like_properties(self) -> list[IRI]:
        return [p for p in self._ctx.name_like_properties if p not in self._without]

    def name_property(self, cls: IRI) -> IRI | None:
        """The wrapped context's rule, among the properties still allowed."""
        props = {e.prop for e in self._ctx.data_properties_of(cls)}
        return next((p for p in self.name_like_properties if p in props), None)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._ctx, name)


def offline_rewrite(ctx: SchemaContext, st: AskState, *, enforce_active: bool = True,
                    entity_answer: EntityAnswer = EntityAnswer.ENTITY) -> Rewrite:
    """The offline synthesizer's :data:`Rewrite` for the question of ``st``: the same
    question, mentions, values and chosen subgraph, without some properties (left out of
    the subgraph and not allowed anywhere), statically checked like the first query."""
    from typing import cast

    from navqa.online.check import check_query
    from navqa.online.expansion import Subgraph
    from navqa.online.synthesis.offline import OfflineSynthesizer

    def rewrite(without: frozenset[IRI]) -> tuple[str, Any] | None:
        if st.mentions is None or st.linking is None or st.chosen is None:
            return None
        sub = st.subgraphs[st.chosen]
        narrowed = Subgraph(sub.root, edges=[e for e in sub.edges if e.prop not in without],
                            data=[e for e in sub.data if e.prop not in without],
                            depth=sub.depth, nodes=set(sub.nodes))
        view = cast("SchemaContext", _WithoutProperties(ctx, without))
        synth = OfflineSynthesizer(view, entity_answer=entity_answer)
        sparql, plan = synth(st.question, st.mentions, st.linking, st.groundings, narrowed,
                             ungrounded=st.ungrounded)
        res = check_query(ctx, sparql, enforce_active=enforce_active)
        if not res.ok or without & set(res.predicates) or st.check is None \
                or not same_shape(st.check.sparql, st.check.classes, res.sparql, res.classes):
            return None
        return res.sparql, plan

    return rewrite
