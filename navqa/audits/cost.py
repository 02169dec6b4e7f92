"""``navqa lint --cost``: the cost guard's verdict as lint findings.

For each query the guard (:class:`navqa.online.cost.CostGuard`) gets Ontop's SQL and the
database's estimated plan (``EXPLAIN``, never ``ANALYZE``). A query estimated above the
threshold gets one ``costly-query`` error naming the estimate, the join that explodes
(tables, columns, mapping ids) and the fix. A query Ontop generates no SQL for gets a
note. When no estimate can be had at all (the endpoint is not in dev mode, no database
access) :class:`~navqa.errors.CostUnavailableError` is raised: ``--cost`` was asked for,
so silence would be wrong.
"""

from __future__ import annotations

from navqa.audits.lint import Finding, LintResult, Severity
from navqa.errors import CostUnavailableError
from navqa.model.cost import CostCheck, CostVerdict
from navqa.online.cost import NO_SQL, CostGuard, costly_suggestion

__all__ = ["cost_finding", "lint_cost"]


def cost_finding(check: CostCheck) -> Finding | None:
    """The finding for one verdict: an error when costly, a note without SQL, else none.

    Raises:
        CostUnavailableError: the verdict is unknown for another reason than "no SQL".
    """
    if check.verdict is CostVerdict.OK:
        return None
    if check.verdict is CostVerdict.UNKNOWN:
        if check.reason == NO_SQL:
            return Finding("costly-query", Severity.NOTE, f"no cost estimate: {NO_SQL} "
                           "(it answers nothing)", "see the other findings of this query")
        raise CostUnavailableError(f"lint --cost cannot estimate queries: {check.reason}",
                                   hint="serve the VKG in dev mode over a PostgreSQL database "
                                   "navqa can reach (a bundled VKG, or -p PROPERTIES)")
    return Finding("costly-query", Severity.ERROR,
                   f"the query would likely not finish: {check.summary()}",
                   costly_suggestion(check))


def lint_cost(result: LintResult, guard: CostGuard) -> LintResult:
    """Add the cost finding of ``result``'s query (the repaired one when there is one).

    Queries with syntax errors are not estimated. ``result`` is changed in place and
    returned.

    Raises:
        CostUnavailableError: see :func:`cost_finding`.
        EndpointError, PostgresError: the endpoint or the database failed.
    """
    if any(f.rule == "syntax-error" for f in result.findings):
        return result
    finding = cost_finding(guard.check(result.repaired or result.sparql))
    if finding is not None:
        result.findings.append(finding)
    return result
