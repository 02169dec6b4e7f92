"""What a query would cost before it runs: the database's own estimate, typed.

The cost guard (:mod:`navqa.online.cost`) asks Ontop for the SQL of a SPARQL query and the
database for its plan (PostgreSQL ``EXPLAIN``, never ``ANALYZE``); these are its results.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class CostVerdict(StrEnum):
    """The guard's decision about one query."""

    OK = "ok"
    """The estimate is at most the threshold."""
    COSTLY = "costly"
    """The estimate is above the threshold: the query would likely run until the timeout."""
    UNKNOWN = "unknown"
    """No estimate could be had (no ``/ontop/reformulate``, no database access, a database
    without a cost estimate); :attr:`CostCheck.reason` says why."""


@dataclass(frozen=True, slots=True)
class JoinHotspot:
    """The join of the plan where the estimated rows explode.

    Attributes:
        node_type: The plan node (``Hash Join``, ``Nested Loop``, ``Merge Join``).
        rows: Rows the database estimates this join yields.
        growth: ``rows`` divided by the rows of its largest input.
        tables: The base tables joined below it, sorted (a table joined with itself once).
        columns: ``table.column`` the exploding joins compare, sorted.
        mapping_ids: The mapping assertions whose SQL reads these tables (and columns).
        condition: The join condition as the plan states it.
    """

    node_type: str
    rows: float
    growth: float
    tables: tuple[str, ...]
    columns: tuple[str, ...]
    mapping_ids: tuple[str, ...] = ()
    condition: str | None = None

    @property
    def self_join(self) -> bool:
        """Whether one table is joined with itself."""
        return len(self.tables) == 1


@dataclass(frozen=True, slots=True)
class CostEstimate:
    """The database's estimate for the SQL Ontop generates for one query.

    Attributes:
        sql: The SQL Ontop generates.
        total_cost: The plan's total cost (PostgreSQL cost units: one sequential page ≈ 1).
        rows: The rows the plan's root yields, estimated.
        peak_rows: The most rows any node of the plan yields, estimated (the size of the
            largest intermediate result).
        hotspot: The join where the rows explode, when there is one.
    """

    sql: str
    total_cost: float
    rows: float
    peak_rows: float = 0.0
    hotspot: JoinHotspot | None = None


@dataclass(frozen=True, slots=True)
class CostCheck:
    """The guard's answer for one query.

    Attributes:
        verdict: ok, costly or unknown.
        max_cost: The threshold it was compared with.
        estimate: The estimate (``None`` when unknown).
        reason: Why there is no estimate (``UNKNOWN`` only).
    """

    verdict: CostVerdict
    max_cost: float
    estimate: CostEstimate | None = None
    reason: str | None = None

    @property
    def costly(self) -> bool:
        return self.verdict is CostVerdict.COSTLY

    def summary(self) -> str:
        """One line: the estimate against the threshold, and the exploding join."""
        if self.estimate is None:
            return f"no cost estimate: {self.reason}"
        e = self.estimate
        text = (f"estimated cost {e.total_cost:.3g} (threshold {self.max_cost:.3g}), "
                f"{e.rows:.3g} rows")
        h = e.hotspot
        if h is not None:
            what = ("a self-join of " if h.self_join else "a join of ") + ", ".join(h.tables)
            text += f"; {what} on {', '.join(h.columns) or '?'} grows {h.growth:.3g}×"
            if h.mapping_ids:
                shown = ", ".join(h.mapping_ids[:6])
                more = len(h.mapping_ids) - 6
                text += f" (mappings {shown}{f' and {more} more' if more > 0 else ''})"
        return text
