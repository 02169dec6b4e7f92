"""The cost guard's options and wiring, shared by ``lint --cost``, ``sparql``, ``ask``, ``eval``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from navqa.model.mapping import MappingSet
from navqa.online.cost import DEFAULT_MAX_COST, CostGuard


def _positive(value: float | None) -> float | None:
    if value is not None and not value > 0:
        raise typer.BadParameter(f"must be a positive number, got {value:g}")
    return value


MaxCostOpt = Annotated[float | None, typer.Option(
    "--max-cost", callback=_positive, help="Cost guard threshold, in the database's cost "
    f"units (PostgreSQL EXPLAIN). Default: {DEFAULT_MAX_COST:g}.")]


def guard_for(served: Any, *, mappings: MappingSet | None, max_cost: float | None,
              timeout_s: float = 30.0, config: Any = None) -> CostGuard:
    """The guard for a :class:`~navqa.runtime.serve.ServedSource` (or a
    :class:`~navqa.runtime.vkg.RunningVkg`), with the database access navqa has; with
    ``config``, a reused or ``--endpoint`` endpoint of ``navqa endpoint up`` is explained on
    the database its record names."""
    from navqa.backends.cost_probe import probe_for

    bundled = getattr(served, "bundled", served)
    pg = getattr(bundled, "pg", None)
    database = getattr(bundled, "database", None) if pg is not None else None
    probe = probe_for(served.url, bundled_pg=pg, database=database,
                      source=getattr(served, "source", None), timeout_s=timeout_s,
                      config=config)
    return CostGuard(probe, mappings=mappings, max_cost=max_cost or DEFAULT_MAX_COST)


def warn_if_costly(err: Any, served: Any, query: str, *, max_cost: float | None,
                   mappings: MappingSet | None = None, timeout_s: float = 30.0,
                   config: Any = None) -> None:
    """Print one warning line (and the fix) when the guard finds ``query`` costly.

    An unknown cost is said only when ``--max-cost`` was given (the user asked for it). When
    Ontop cannot reformulate the query or PostgreSQL refuses the ``EXPLAIN``, a warning says
    so and the query runs (its own failure is then reported); an unreachable endpoint raises.
    """
    from rich.markup import escape

    from navqa.errors import EndpointUnreachableError, NavqaError
    from navqa.model.cost import CostVerdict
    from navqa.online.cost import costly_suggestion

    try:
        check = guard_for(served, mappings=mappings, max_cost=max_cost,
                          timeout_s=timeout_s, config=config).check(query)
    except EndpointUnreachableError:
        raise
    except NavqaError as e:  # the query itself runs next and reports its own failure
        err.print(f"[yellow]warning[/]: no cost estimate: {escape(str(e).splitlines()[0])}")
        return
    if check.verdict is CostVerdict.COSTLY:
        err.print(f"[yellow]warning[/]: \\[costly-query] the query would likely not finish: "
                  f"{escape(check.summary())}")
        err.print(f"    suggestion: {escape(costly_suggestion(check))}")
    elif check.verdict is CostVerdict.UNKNOWN and max_cost is not None:
        err.print(f"[yellow]warning[/]: --max-cost: {escape(check.summary())}")
