"""What happened to each predicted query: the outcome classes and how they are decided.

=================  =====================================================================
``non-empty``      the query ran and returned at least one row (an ASK always does)
``silent-failure`` the query ran and returned nothing: the failure NaVQA is about
``syntax-error``   not a query (UPDATE, garbage), or the endpoint rejected it as
                   malformed (HTTP 400)
``execution-error`` the endpoint failed while evaluating it (HTTP 5xx other than a
                   timeout), or returned something unusable
``timeout``        no answer within the query timeout (client-side, or the endpoint's own
                   execution-time limit)
``no-query``       the system produced no query at all (it gave up, or failed before
                   synthesis)
=================  =====================================================================

and one state that is *not* an outcome of the system (:data:`OUTCOMES` leaves it out):

=================  =====================================================================
``gold-error``     the question's gold query failed or timed out: the question is left
                   out of the metrics, listed in the report, and tried again on resume
=================  =====================================================================

A failing infrastructure is **not** an outcome either (:class:`Fault`, :func:`fault_of`):
an unreachable or unresponsive endpoint, or one whose database is down, raises a subclass
of :class:`~navqa.errors.EndpointUnreachableError` (the SPARQL client decides which,
:mod:`navqa.backends.sparql_http`); :func:`execute_prediction` re-raises it, and the
runner retries the question with backoff, then stops. Neither is a broken endpoint:
when Ontop answers that its database connection is stuck in an aborted
transaction (it happens after a query timed out inside Ontop, and then every further
query fails), :func:`classify_error` raises :class:`~navqa.errors.EvaluationError`.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from enum import StrEnum

from navqa.backends.sparql_http import HttpSparqlEndpoint
from navqa.errors import (
    DatabaseUnavailableError,
    EndpointError,
    EndpointTimeoutError,
    EndpointUnreachableError,
    EndpointUnresponsiveError,
    EvaluationError,
    QueryCheckError,
    QueryFailedError,
    QueryRejectedError,
)
from navqa.model.terms import QueryResult

__all__ = ["OUTCOMES", "Execution", "Fault", "Outcome", "classify_error",
           "execute_prediction", "fault_of", "outcome_of_result"]


class Outcome(StrEnum):
    """The outcome of one predicted query."""

    NON_EMPTY = "non-empty"
    SILENT_FAILURE = "silent-failure"
    SYNTAX_ERROR = "syntax-error"
    EXECUTION_ERROR = "execution-error"
    TIMEOUT = "timeout"
    NO_QUERY = "no-query"
    GOLD_ERROR = "gold-error"
    """Not the system's: its gold query failed (left out of the metrics)."""


OUTCOMES: tuple[Outcome, ...] = tuple(o for o in Outcome if o is not Outcome.GOLD_ERROR)
"""The outcomes of a predicted query (every one the system's own)."""


class Fault(StrEnum):
    """An infrastructure failure: never an outcome, retried, then the run stops."""

    ENDPOINT_DOWN = "endpoint-down"
    """Connection refused or reset."""
    ENDPOINT_UNRESPONSIVE = "endpoint-unresponsive"
    """No answer to the query nor to a trivial probe (paused or hung)."""
    DATABASE_DOWN = "database-down"
    """The endpoint answers, the database behind it does not."""


def fault_of(error: BaseException) -> Fault | None:
    """The infrastructure failure ``error`` stands for, or ``None`` if it is the query's."""
    if isinstance(error, DatabaseUnavailableError):
        return Fault.DATABASE_DOWN
    if isinstance(error, EndpointUnresponsiveError):
        return Fault.ENDPOINT_UNRESPONSIVE
    if isinstance(error, EndpointUnreachableError):
        return Fault.ENDPOINT_DOWN
    return None

_BROKEN_TEXT = re.compile(r"current transaction is aborted", re.IGNORECASE)
_TIMEOUT_TEXT = re.compile(
    r"timeout|timed out|QueryInterruptedException|statement timeout|maximum execution time",
    re.IGNORECASE)


def outcome_of_result(result: QueryResult) -> Outcome:
    """``non-empty`` or ``silent-failure``."""
    return Outcome.SILENT_FAILURE if result.is_empty else Outcome.NON_EMPTY


def classify_error(error: BaseException) -> Outcome:
    """The outcome a failed execution stands for.

    Raises:
        EndpointUnreachableError: ``error`` itself (or a subclass: any :class:`Fault`),
            which is never an outcome.
        EvaluationError: the endpoint is broken (its database connection is stuck in an
            aborted transaction, so every later query would fail too).
    """
    if isinstance(error, EndpointUnreachableError):
        raise error
    if isinstance(error, QueryFailedError) and _BROKEN_TEXT.search(error.server_message or ""):
        raise EvaluationError(
            f"the endpoint {error.endpoint} can no longer answer: its database connection is "
            "stuck in an aborted transaction, so every further query fails",
            hint="restart the endpoint; this happens after a query timed out inside Ontop",
        ) from error
    if isinstance(error, EndpointTimeoutError):
        return Outcome.TIMEOUT
    if isinstance(error, QueryCheckError | QueryRejectedError):
        return Outcome.SYNTAX_ERROR
    if isinstance(error, QueryFailedError) and _TIMEOUT_TEXT.search(
            error.server_message or ""):
        return Outcome.TIMEOUT
    return Outcome.EXECUTION_ERROR


@dataclass(frozen=True)
class Execution:
    """A predicted query, run.

    Attributes:
        outcome: Its outcome.
        result: The result when it ran.
        error: The error message when it did not.
        seconds: Wall time of the request.
    """

    outcome: Outcome
    result: QueryResult | None
    error: str | None = None
    seconds: float = 0.0


def execute_prediction(endpoint: HttpSparqlEndpoint, sparql: str | None, *,
                       timeout: float | None = None) -> Execution:
    """Run a predicted query and classify what happened.

    Args:
        endpoint: The VKG's SPARQL endpoint.
        sparql: The predicted query (``None`` gives ``no-query``).
        timeout: Read timeout in seconds (default: the endpoint's).

    Raises:
        EndpointUnreachableError: the endpoint is down; the caller must stop.
    """
    if sparql is None or not sparql.strip():
        return Execution(Outcome.NO_QUERY, None, "no query was produced")
    t0 = time.monotonic()
    try:
        result = endpoint.query(sparql, timeout=timeout)
    except EndpointUnreachableError:
        raise
    except (EndpointError, QueryCheckError) as e:
        return Execution(classify_error(e), None, str(e), time.monotonic() - t0)
    except ValueError as e:  # a body that is not SPARQL JSON, an unknown term type
        return Execution(Outcome.EXECUTION_ERROR, None, f"unusable answer: {e}",
                         time.monotonic() - t0)
    return Execution(outcome_of_result(result), result, None, time.monotonic() - t0)
