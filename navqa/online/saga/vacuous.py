"""An aggregate over nothing is an empty answer: tell it apart from a true 0.

``SELECT (COUNT(DISTINCT ?x) AS ?count) WHERE { … }`` whose pattern has no solution
returns one row, ``0``; ``SUM``/``AVG``/``MIN``/``MAX`` return ``0`` or an unbound value.
The result is not empty, so no repair would run and the answer would be a confident 0
from an empty join. Here:

* :func:`aggregate_query` reads an *aggregate-only* SELECT — every item of its
  projection an expression holding an aggregate, no bare variable, no ``GROUP BY`` or
  ``HAVING`` — with the query text analysis of :mod:`navqa.online.saga.sparql_text` and
  :mod:`navqa.online.saga.repair_optional` (nothing here parses SPARQL anew);
* :func:`vacuous_values` says its one row has every aggregate ``0``, empty or unbound;
* :func:`vacuity` decides with one bounded ``ASK`` of the WHERE clause, never from the 0
  alone: a true count can be 0 (then the ASK is false too, and a repair may only replace
  the answer when a repaired pattern has rows);
* :func:`detect` runs that ASK for the pipeline and yields
  :class:`~navqa.model.events.AggregateVacuous` when the pattern is empty — the event
  the repair (:func:`navqa.online.saga.repair.repair_empty`) and the confidence
  (:mod:`navqa.online.confidence`) read.

The repair works on :meth:`AggregateQuery.pattern_query` (the WHERE clause, projecting
the aggregated variables), an ordinary empty SELECT for the deterministic repairs; a
repaired pattern is written back into the aggregate with :meth:`AggregateQuery.with_where`
and kept only when that aggregate is not vacuous (:func:`accept`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import TYPE_CHECKING

from navqa.errors import EndpointError, EndpointUnreachableError
from navqa.model.events import AggregateVacuous, Event
from navqa.model.terms import AskResult, LiteralTerm, QueryResult, SelectResult
from navqa.model.xsd import XsdFamily, family
from navqa.online.saga.repair_optional import ask_text, layout
from navqa.online.saga.sparql_text import QueryText, tokenize

if TYPE_CHECKING:
    from navqa.online.state import AskState
    from navqa.online.strategies import Stages

__all__ = ["AGGREGATES", "PATTERN_LIMIT", "AggregateQuery", "Vacuity", "accept",
           "aggregate_query", "detect", "endpoint_ask", "vacuity", "vacuous_in",
           "vacuous_values"]

AGGREGATES = frozenset({"COUNT", "SUM", "AVG", "MIN", "MAX", "SAMPLE", "GROUP_CONCAT"})
"""The SPARQL 1.1 aggregate functions."""

PATTERN_LIMIT = 10
"""The pattern query the repairs work on returns at most this many rows."""


class Vacuity(StrEnum):
    """What an executed query's result says about its pattern.

    ``not-aggregate``: not an aggregate-only SELECT over one row (nothing to decide);
    ``has-value``: some aggregate is neither 0, empty nor unbound; ``true-zero``: every
    aggregate is, but the ASK of the WHERE clause found a solution; ``empty-pattern``:
    the ASK found none — the aggregate aggregates nothing; ``unknown``: the ASK failed.
    """

    NOT_AGGREGATE = "not-aggregate"
    HAS_VALUE = "has-value"
    TRUE_ZERO = "true-zero"
    EMPTY_PATTERN = "empty-pattern"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class AggregateQuery:
    """An aggregate-only SELECT without GROUP BY, and where its parts are written.

    ``select_start`` is the offset of ``SELECT``, ``where_start``/``where_end`` those of
    the WHERE clause's ``{`` and ``}``; ``variables`` are the variables the aggregates
    read, in order (none for ``COUNT(*)``).
    """

    text: str
    select_start: int
    where_start: int
    where_end: int
    variables: tuple[str, ...]

    @property
    def where(self) -> str:
        """The WHERE clause's group, braces included."""
        return self.text[self.where_start:self.where_end + 1]

    def ask(self) -> str:
        """A bounded ``ASK`` of the WHERE clause (the prologue kept):
        :func:`~navqa.online.saga.repair_optional.ask_text`'s, which reads the same layout."""
        text = ask_text(QueryText.parse(self.text))
        assert text is not None, "an AggregateQuery is built from a readable layout"
        return text

    def pattern_query(self) -> str:
        """The WHERE clause as a SELECT of the aggregated variables (all, for ``*``)."""
        head = "SELECT DISTINCT " + " ".join(self.variables) if self.variables else "SELECT *"
        return f"{self.text[:self.select_start]}{head} WHERE {self.where}\n" \
               f"LIMIT {PATTERN_LIMIT}"

    def with_where(self, sparql: str) -> str | None:
        """This aggregate over the WHERE clause (and prologue) of ``sparql``.

        ``None`` when ``sparql`` is not a SELECT whose WHERE clause can be read, or no
        longer binds every aggregated variable.
        """
        try:
            qt = QueryText.parse(sparql)
        except ValueError:
            return None
        lay = layout(qt)
        if lay is None:
            return None
        bound = qt.variables()
        if any(v not in bound for v in self.variables):
            return None
        where = sparql[lay.main:qt.groups[lay.main] + 1]
        head = self.text[self.select_start:self.where_start]
        return f"{sparql[:lay.select_start]}{head}{where}{self.text[self.where_end + 1:]}"


def aggregate_query(sparql: str) -> AggregateQuery | None:
    """``sparql`` read as an aggregate-only SELECT without GROUP BY/HAVING, else ``None``."""
    try:
        qt = QueryText.parse(sparql)
        toks = tokenize(sparql)
    except ValueError:
        return None
    lay = layout(qt)
    if lay is None or lay.projected or lay.star:
        return None
    close = qt.groups[lay.main]
    head = [t for t in toks if lay.select_start < t.start < lay.main]
    items: list[list[str]] = []
    depth = 0
    for tok in head:
        if tok.text == "(":
            if depth == 0:
                items.append([])
            depth += 1
        elif tok.text == ")":
            depth -= 1
        elif depth > 0:
            items[-1].append(tok.text)
        elif tok.kind == "word" and tok.text.upper() in ("DISTINCT", "REDUCED", "WHERE"):
            continue
        else:
            return None  # something else at the top of the projection
    if not items:
        return None
    variables: list[str] = []
    for item in items:
        words = [w.upper() for w in item]
        if not AGGREGATES.intersection(words):
            return None
        inner = item[:-2] if len(item) >= 2 and words[-2] == "AS" else item
        for w in inner:
            if w.startswith(("?", "$")) and w not in variables:
                variables.append(w)
    tail = [t for t in toks if t.start > close]
    if any(t.kind == "word" and t.text.upper() in ("GROUP", "HAVING") for t in tail):
        return None
    return AggregateQuery(sparql, lay.select_start, lay.main, close, tuple(variables))


def vacuous_values(result: QueryResult) -> bool:
    """One row whose every value is unbound, numeric 0 or the empty string."""
    if not isinstance(result, SelectResult) or len(result.rows) != 1:
        return False
    return all(_nothing(t) for t in result.rows[0])


def _nothing(term: object) -> bool:
    if term is None:
        return True
    if not isinstance(term, LiteralTerm):
        return False
    if term.value.strip() == "":
        return True
    if term.datatype is not None and family(term.datatype) is not XsdFamily.NUMERIC:
        return False
    try:
        return Decimal(term.value.strip()) == 0
    except InvalidOperation:
        return False


def vacuity(sparql: str, result: QueryResult, ask: Callable[[str], bool | None]) -> Vacuity:
    """Whether ``result`` (of ``sparql``) aggregates a pattern with no solution.

    ``ask`` runs one bounded ASK (``None``: it failed); it is called only for an
    aggregate-only query whose one row is all 0, empty or unbound.
    """
    agg = aggregate_query(sparql)
    if agg is None or not isinstance(result, SelectResult) or len(result.rows) != 1:
        return Vacuity.NOT_AGGREGATE
    if not vacuous_values(result):
        return Vacuity.HAS_VALUE
    found = ask(agg.ask())
    if found is None:
        return Vacuity.UNKNOWN
    return Vacuity.TRUE_ZERO if found else Vacuity.EMPTY_PATTERN


def accept(sparql: str, result: QueryResult, ask: Callable[[str], bool | None]) -> bool:
    """A repaired aggregate is kept only when it aggregates something: a value not 0,
    empty or unbound, or a 0 over a pattern with rows (an unbound aggregate over rows —
    an AVG of values that are not numbers — is no answer either)."""
    verdict = vacuity(sparql, result, ask)
    if verdict is Vacuity.HAS_VALUE:
        return True
    return verdict is Vacuity.TRUE_ZERO and isinstance(result, SelectResult) and \
        all(t is not None for t in result.rows[0])


def endpoint_ask(pipe: Stages) -> Callable[[str], bool | None]:
    """One bounded ASK on the pipeline's endpoint; ``None`` when it fails (a dead
    endpoint still raises)."""
    def ask(text: str) -> bool | None:
        try:
            res = pipe.endpoint.query(text, timeout=pipe.config.runtime.query_timeout_s)
        except EndpointUnreachableError:
            raise
        except EndpointError:
            return None
        return res.value if isinstance(res, AskResult) else None

    return ask


def detect(pipe: Stages, st: AskState) -> Iterator[Event]:
    """Yield :class:`AggregateVacuous` when ``st``'s one-row aggregate counts nothing."""
    if st.sparql is None or st.result is None or st.result.is_empty:
        return
    verdict = vacuity(st.sparql, st.result, endpoint_ask(pipe))
    if verdict is Vacuity.EMPTY_PATTERN:
        agg = aggregate_query(st.sparql)
        assert agg is not None
        yield AggregateVacuous(sparql=st.sparql, ask=agg.ask())


def vacuous_in(events: Sequence[Event], sparql: str | None) -> AggregateVacuous | None:
    """The :class:`AggregateVacuous` event of ``sparql`` among ``events``, if any."""
    return next((e for e in reversed(events)
                 if isinstance(e, AggregateVacuous) and e.sparql == sparql), None)
