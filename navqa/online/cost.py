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
warn before running them.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from navqa.backends.protocols import CostProbe
from navqa.errors import CostUnavailableError
from navqa.model.cost import CostCheck, CostEstimate, CostVerdict, JoinHotspot
from navqa.model.mapping import MappingSet

__all__ = ["DEFAULT_MAX_COST", "NO_SQL", "CostGuard", "costly_suggestion", "plan_hotspot"]

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


def plan_hotspot(plan: Mapping[str, Any]) -> JoinHotspot | None:
    """The exploding join of ``plan`` (the root node of ``EXPLAIN (FORMAT JSON)``).

    Among the join nodes whose estimated rows grow at least :data:`GROWTH` times over
    their largest input, the one yielding the most rows; its tables are the base tables
    scanned below it, its columns those the exploding joins below it (itself included)
    compare, resolved through the scans' aliases.

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
        rel = n.get("Relation Name")
        if rel:
            table = f"{n['Schema']}.{rel}" if n.get("Schema") not in (None, "public") else rel
            tables.add(table)
            aliases[str(n.get("Alias") or rel)] = table
    columns: set[str] = set()
    texts: list[str] = []
    for n in _nodes(top):
        if n.get("Node Type") in _JOINS and _growth(n) >= GROWTH:
            conds = _conditions(n)
            # a nested loop's join condition sits in its inner index scan
            if n.get("Node Type") == "Nested Loop":
                for child in n.get("Plans", ()) or ():
                    conds += [str(child[k]) for k in ("Index Cond", "Recheck Cond")
                              if child.get(k)]
            texts += conds
            for cond in conds:
                for qual, col in _QUALIFIED.findall(cond):
                    table = aliases.get(_unquote(qual))
                    if table is not None:
                        columns.add(f"{table}.{_unquote(col)}")
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
        hotspot = plan_hotspot(plan)
        if hotspot is not None and self.mappings is not None:
            from dataclasses import replace

            hotspot = replace(hotspot, mapping_ids=mapping_ids_for(hotspot, self.mappings))
        estimate = CostEstimate(sql=sql, total_cost=float(plan.get("Total Cost", 0.0)),
                                rows=_rows(plan),
                                peak_rows=max(_rows(n) for n in _nodes(plan)), hotspot=hotspot)
        verdict = CostVerdict.COSTLY if estimate.total_cost > self.max_cost else CostVerdict.OK
        return CostCheck(verdict, self.max_cost, estimate=estimate)
