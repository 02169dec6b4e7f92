"""Repair a NaVQA query that came back empty, with the agent's loop.

The pipeline calls :func:`repair_empty` after an empty result when
``pipeline.repair_attempts > 0``. With an LLM the ReAct controller of
:mod:`navqa.online.saga.agent` starts from the failed query and its diagnosed
observation; without one, the deterministic repairs of :mod:`navqa.online.saga.repairs`
are tried. Either way at most ``repair_attempts`` repaired queries are executed, each
recorded as a :class:`~navqa.model.events.QueryRepaired` event (method ``llm`` or
``offline``); ``st.sparql``/``st.result`` change only when a repair returns rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from navqa.model.events import Event
from navqa.online.saga.agent import (
    AgentAction,
    AgentSession,
    LLMAgent,
    OfflineAgent,
    current_session,
    type_state_for,
)
from navqa.online.saga.tools import Executed
from navqa.online.strategies import registry

if TYPE_CHECKING:
    from navqa.online.state import AskState
    from navqa.online.strategies import Stages

__all__ = ["repair_empty"]


def repair_empty(pipe: Stages, st: AskState) -> Iterator[Event]:
    """Try to repair ``st.sparql``, whose result was empty (see the module docstring)."""
    attempts = pipe.config.pipeline.repair_attempts
    if attempts <= 0 or st.sparql is None or st.result is None or not st.result.is_empty:
        return
    original = (st.sparql, st.result)
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
    best = loop.best
    if best is not None and best.result is not None and not best.empty:
        st.sparql, st.result = best.sparql, best.result
    else:
        st.sparql, st.result = original
    st.error = None


registry.register_repair(repair_empty)
