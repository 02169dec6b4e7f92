"""Repair a NaVQA query that came back empty, with the agent's loop.

The pipeline calls :func:`repair_empty` after an empty result when
``pipeline.repair_attempts > 0``. With an LLM the ReAct controller of
:mod:`navqa.online.saga.agent` starts from the failed query and its diagnosed
observation; without one, the deterministic repairs of :mod:`navqa.online.saga.repairs`
are tried. Either way at most ``repair_attempts`` repaired queries are executed, each
recorded as a :class:`~navqa.model.events.QueryRepaired` event (method ``llm`` or
``offline``); ``st.sparql``/``st.result`` change only when a repair returns rows.

An aggregate over nothing (a one-row COUNT/AVG/… of 0 or unbound whose WHERE clause has
no solution, :mod:`navqa.online.saga.vacuous`) is repaired the same way, on its pattern;
the repaired aggregate replaces it only when it aggregates something.
"""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING

from navqa.errors import EndpointError, EndpointUnreachableError
from navqa.model.events import Event, QueryExecuted, QueryRepaired
from navqa.model.terms import SelectResult
from navqa.online.saga.agent import (
    AgentAction,
    AgentSession,
    LLMAgent,
    OfflineAgent,
    current_session,
    type_state_for,
)
from navqa.online.saga.tools import Executed
from navqa.online.saga.vacuous import accept, aggregate_query, detect, endpoint_ask, vacuous_in
from navqa.online.strategies import registry

if TYPE_CHECKING:
    from navqa.online.state import AskState
    from navqa.online.strategies import Stages

__all__ = ["repair_empty"]


def repair_empty(pipe: Stages, st: AskState) -> Iterator[Event]:
    """Try to repair ``st.sparql``, whose result was empty (see the module docstring).

    An aggregate over nothing (:mod:`navqa.online.saga.vacuous`) is an empty result too:
    its pattern is repaired, and the repaired aggregate kept only when it aggregates
    something.
    """
    attempts = pipe.config.pipeline.repair_attempts
    if attempts <= 0 or st.sparql is None or st.result is None:
        return
    if not st.result.is_empty:
        if vacuous_in(st.events, st.sparql) is None:
            found: list[Event] = list(detect(pipe, st))
            yield from found
            if not found:
                return
        yield from _repair_aggregate(pipe, st, attempts)
        return
    original = (st.sparql, st.result)
    best = yield from _search(pipe, st, attempts)
    if best is not None and best.result is not None and not best.empty:
        st.sparql, st.result = best.sparql, best.result
    else:
        st.sparql, st.result = original
    st.error = None


def _search(pipe: Stages, st: AskState, attempts: int) -> Generator[Event, None, Executed | None]:
    """The repair loop on ``st.sparql`` (empty ``st.result``); the best query it found."""
    assert st.sparql is not None and st.result is not None
    session = current_session() or AgentSession()
    theta = type_state_for(pipe, session)
    loop: LLMAgent | OfflineAgent
    loop = LLMAgent(pipe, st, session, theta) if pipe.llm is not None else \
        OfflineAgent(pipe, st, session, theta)
    yield from loop.seed_theta()
    yield from theta.observe_query(st.sparql)
    findings = loop.tools.findings(st.sparql)
    failed = Executed(st.sparql, True, result=st.result, findings=findings)
    loop.last = failed
    if isinstance(loop, LLMAgent):
        from navqa.online.saga.diagnose import render_findings

        loop.history.append((AgentAction(thought="the query NaVQA built", action="execute",
                                         argument=st.sparql), render_findings(findings)))
        loop.note("[fail] Empty: " + (findings[0].message[:100] if findings else
                                      "no cause found"))
        yield from loop.run(seeded=True, attempts=attempts, before=st.sparql)
    else:
        yield from loop.repair(failed, attempts=attempts)
    return loop.best


def _repair_aggregate(pipe: Stages, st: AskState, attempts: int) -> Iterator[Event]:
    """Repair the pattern of an aggregate over nothing; keep the aggregate of a repaired
    pattern only when it aggregates something (else the vacuous answer stands)."""
    assert st.sparql is not None and st.result is not None
    agg = aggregate_query(st.sparql)
    if agg is None:
        return
    original = (st.sparql, st.result)
    pattern = agg.pattern_query()
    st.sparql = pattern
    st.result = SelectResult(variables=tuple(v[1:] for v in agg.variables))
    reasons: dict[str, str] = {}
    found: Executed | None = None
    search = _search(pipe, st, attempts)
    try:
        while True:
            ev = next(search)
            if isinstance(ev, QueryRepaired):
                reasons[ev.after] = ev.reason
            yield ev
    except StopIteration as stop:
        found = stop.value
    st.sparql, st.result = original
    st.error = None
    if found is None or found.result is None or found.empty:
        return
    repaired = agg.with_where(found.sparql)
    if repaired is None:
        return
    t = time.perf_counter()
    try:
        result = pipe.endpoint.query(repaired, timeout=pipe.config.runtime.query_timeout_s)
    except EndpointUnreachableError:
        raise
    except EndpointError:
        return  # the vacuous answer stands, flagged; a failure is no answer
    yield QueryExecuted(sparql=repaired, rows=len(result) if hasattr(result, "__len__") else 1,
                        empty=result.is_empty, seconds=time.perf_counter() - t)
    ok = not result.is_empty and accept(repaired, result, endpoint_ask(pipe))
    why = reasons.get(found.sparql, "the repaired pattern has rows")
    yield QueryRepaired(attempt=1, before=original[0], after=repaired,
                        reason=f"empty-aggregate: the aggregated pattern matched nothing; "
                               f"{why} → {'rows' if ok else 'still empty'}",
                        method="llm" if pipe.llm is not None else "offline")
    if ok:
        st.sparql, st.result = repaired, result


registry.register_repair(repair_empty)
