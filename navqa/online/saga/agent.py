"""The SAGA agent strategy (``navqa ask --strategy agent``): a ReAct loop over the tools.

**With an LLM**, a controller makes one JSON-validated call per step
(:class:`AgentAction`: thought, action, argument) and chooses among ``search``,
``lookup``, ``examples``, ``execute`` and ``stop`` (:mod:`navqa.online.saga.tools`). Its
prompt (adapted from SAGA's, itself adapted from SPINACH) carries the question, the
expected answer type (the prior, which also asks for ``ASK`` on yes/no questions), the
most recent entries of the type state Θ, a knowledge log of the last outcomes, the
recent action history, and — in an :class:`AgentSession` — the previous turns. The step
budget is ``pipeline.agent_max_steps``; when it runs out, or at ``stop``, the last
executed query is the answer.

**Without an LLM**, :func:`run_agent` is a deterministic agent: it runs the NaVQA
stages to get a first query, executes it, and when the result is empty applies the
repairs of :mod:`navqa.online.saga.repairs` — each an :class:`~navqa.model.events.AgentStep`
and a :class:`~navqa.model.events.QueryRepaired` — until one returns rows or the budget
is spent.

Both yield the usual events (``QuerySynthesized``/``QueryChecked``/``QueryExecuted``,
``PropertiesJudged`` for lookups, ``TypeStateUpdated``) and leave the final query and
result in the :class:`~navqa.online.state.AskState`.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, field_validator

from navqa.model.answers import projection_instruction
from navqa.model.events import (
    AgentStep,
    Answer,
    AnswerKind,
    ErrorKind,
    Event,
    QueryRepaired,
    TypeStateUpdated,
)
from navqa.model.llm import Message
from navqa.online.saga.repairs import OfflineRepairer
from navqa.online.saga.tools import Executed, Tools, schema_filter
from navqa.online.saga.typestate import TypeState
from navqa.online.strategies import registry

if TYPE_CHECKING:
    from navqa.online.state import AskState
    from navqa.online.strategies import Stages

__all__ = ["AgentAction", "AgentSession", "LLMAgent", "OfflineAgent", "current_session",
           "run_agent", "type_state_for"]

KNOWLEDGE_LOG = 6
HISTORY_STEPS = 5
OBSERVATION_CHARS = 2500
VALUE_KINDS = frozenset({AnswerKind.QUANTITY, AnswerKind.DATE, AnswerKind.TEXT})
"""Answer kinds that ask for a value of the answer class's entities, not for them."""


class AgentAction(BaseModel):
    """One controller decision."""

    thought: str = ""
    action: Literal["search", "lookup", "examples", "execute", "stop"]
    argument: str = ""

    @field_validator("action", mode="before")
    @classmethod
    def _normalise(cls, v: object) -> object:
        if isinstance(v, str):
            v = v.strip().lower().split("(")[0]
            return {"search_schema": "search", "get_property_examples": "examples",
                    "execute_sparql": "execute", "get_entry": "lookup"}.get(v, v)
        return v


@dataclass
class Turn:
    """One finished question of a session."""

    question: str
    sparql: str | None
    outcome: str


@dataclass
class AgentSession:
    """What the agent keeps between questions (multi-turn use from Python).

    Θ persists across turns; previous questions and their final queries are shown to the
    controller::

        session = AgentSession()
        a1 = session.ask(pipe, "Which stations are in Dunmere?")
        a2 = session.ask(pipe, "And which of them have step-free access?")
    """

    theta: TypeState | None = None
    turns: list[Turn] = field(default_factory=list)
    knowledge: list[str] = field(default_factory=list)

    def ask(self, pipe: Stages, question: str) -> Answer:
        """Answer ``question`` with the agent strategy inside this session."""
        token = _SESSION.set(self)
        try:
            return pipe.ask(question, strategy="agent")
        finally:
            _SESSION.reset(token)

    def history(self) -> str:
        return "\n".join(f"User Question: {t.question}\nFinal query: {t.sparql or '(none)'}"
                         f" → {t.outcome}\n--" for t in self.turns[-3:])


_SESSION: contextvars.ContextVar[AgentSession | None] = contextvars.ContextVar(
    "navqa_agent_session", default=None)


def current_session() -> AgentSession | None:
    """The :class:`AgentSession` whose :meth:`AgentSession.ask` is running, if any."""
    return _SESSION.get()


def type_state_for(pipe: Stages, session: AgentSession) -> TypeState:
    """The session's Θ (a fresh one when the type state is switched off)."""
    pc = pipe.config.pipeline
    if session.theta is None or not pc.type_state:
        session.theta = TypeState(pipe.ctx, schema_filter(pipe), endpoint=pipe.endpoint,
                                  enabled=pc.type_state,
                                  timeout=pipe.config.runtime.query_timeout_s)
    return session.theta


def run_agent(pipe: Stages, st: AskState, session: AgentSession | None = None
              ) -> Iterator[Event]:
    """The agent strategy (see the module docstring)."""
    session = session or current_session() or AgentSession()
    theta = type_state_for(pipe, session)
    loop: LLMAgent | OfflineAgent
    if pipe.llm is not None:
        loop = LLMAgent(pipe, st, session, theta)
    else:
        loop = OfflineAgent(pipe, st, session, theta)
    yield from loop.run()
    session.turns.append(Turn(st.question, st.sparql, loop.outcome()))


# -- shared ------------------------------------------------------------------------------------


class _Loop:
    method = "offline"

    def __init__(self, pipe: Stages, st: AskState, session: AgentSession,
                 theta: TypeState) -> None:
        self.pipe = pipe
        self.st = st
        self.session = session
        self.theta = theta
        self.tools = Tools(pipe, st, theta, self.method)
        self.budget = pipe.config.pipeline.agent_max_steps
        self.steps = 0
        self.last: Executed | None = None
        self.best: Executed | None = None

    def outcome(self) -> str:
        if self.last is None:
            return "no query ran"
        if self.last.result is None:
            return "failed"
        return "empty" if self.last.empty else "answered"

    def note(self, entry: str) -> None:
        self.session.knowledge.append(entry)
        del self.session.knowledge[:-KNOWLEDGE_LOG]

    def seed(self) -> Iterator[Event]:
        """Mentions, linking, the answer-type prior and the value groundings; Θ from them."""
        yield from self.pipe.extract(self.st)
        yield from self.pipe.ground(self.st)
        yield from self.seed_theta()

    def seed_theta(self) -> Iterator[Event]:
        """Θ from the answer-type prior and the grounded values (already in the state)."""
        theta = self.theta
        at = self.st.answer_type
        if self.pipe.config.pipeline.answer_type_prior and at is not None:
            ev = theta.set_answer_type(at.cls)
            if ev:
                yield ev
        else:
            theta.answer_classes = frozenset()
        if theta.enabled:
            for g in self.st.groundings:
                for ev in theta.bind(g.prop, g.stored, g.subject):
                    yield ev
                    self.note(f"[info] {ev.entity} is a "
                              f"{', '.join(self.pipe.ctx.compact(t) for t in ev.types)}")

    def record(self, ex: Executed) -> None:
        """Keep the last executed query (and the best: a non-empty one) in the state."""
        if ex.result is None:
            return
        self.last = ex
        if not ex.empty or self.best is None:
            self.best = ex
        self.st.sparql, self.st.result = ex.sparql, ex.result
        self.st.error = None

    def finish(self) -> None:
        """The answer: the last executed query, or the best one when the last was empty."""
        final = self.last
        if final is not None and final.empty and self.best is not None and not self.best.empty:
            final = self.best
        if final is None:
            if self.st.error is None:
                self.st.error = "the agent did not execute any query"
                self.st.error_kind = ErrorKind.AGENT_NO_QUERY
            return
        self.st.sparql, self.st.result = final.sparql, final.result
        self.st.error = None

    def boolean(self) -> bool:
        at = self.st.answer_type
        return bool(self.pipe.config.pipeline.answer_type_prior and at is not None
                    and at.kind is AnswerKind.BOOLEAN)


# -- the deterministic agent -----------------------------------------------------------------


class OfflineAgent(_Loop):
    """NaVQA's query first; deterministic, type-driven repairs when it comes back empty."""

    method = "offline"

    def run(self) -> Iterator[Event]:
        pipe, st = self.pipe, self.st
        yield from self.seed()
        yield from pipe.expand_all(st)
        yield from pipe.rerank(st)
        t = time.perf_counter()
        yield from pipe.synthesize(st)
        assert st.sparql is not None
        ex, obs, events = self.tools.execute(st.sparql, synthesized=False)
        yield from events
        self.steps += 1
        yield AgentStep(step=self.steps, thought="run the query NaVQA built", action="execute",
                        argument=ex.sparql, observation=obs[:OBSERVATION_CHARS],
                        seconds=time.perf_counter() - t)
        if not ex.ok:
            st.error = ex.error
            st.error_kind = ex.error_kind
            return
        self.record(ex)
        self.note(("[fail] empty: " + (ex.findings[0].message if ex.findings else "no cause"))
                  if ex.empty else "[ok] found results")
        if ex.empty:
            yield from self.repair(ex)
        self.finish()
        yield AgentStep(step=self.steps + 1, thought="done", action="stop", argument="",
                        observation=f"final query returns {_size(self.st)}")

    def repair(self, ex: Executed, attempts: int | None = None) -> Iterator[Event]:
        """Deterministic repairs of an empty result, one step each."""
        if self.is_ask(ex) and not ex.findings:
            return  # an ASK that says false is an answer unless something is clearly wrong
        lk, at = self.st.linking, self.st.answer_type
        rep = OfflineRepairer(self.pipe.ctx, self.theta, self.pipe.endpoint,
                              relevance=dict(lk.property_scores) if lk is not None else {},
                              class_relevance=dict(lk.class_scores) if lk is not None else {},
                              timeout=self.pipe.config.runtime.query_timeout_s,
                              value_answer=at is not None and at.kind in VALUE_KINDS)
        limit = attempts if attempts is not None else self.budget - self.steps
        before = ex.sparql
        for attempt, cand in enumerate(rep.candidates(ex.sparql, ex.findings), start=1):
            if attempt > limit:
                break
            t = time.perf_counter()
            new, obs, events = self.tools.execute(cand.sparql, synthesized=True,
                                                  diagnose_empty=False)
            yield from events
            self.steps += 1
            yield AgentStep(step=self.steps, thought=cand.reason, action="execute",
                            argument=new.sparql, observation=obs[:OBSERVATION_CHARS],
                            seconds=time.perf_counter() - t)
            ok = new.ok and new.result is not None and not new.empty
            yield QueryRepaired(attempt=attempt, before=before, after=new.sparql,
                                reason=f"{cand.kind}: {cand.reason} → "
                                       f"{'rows' if ok else 'still empty' if new.ok else 'failed'}",
                                method="offline")
            if ok:
                self.record(new)
                self.note(f"[ok] {cand.kind} repaired the empty result")
                return
            self.note(f"[fail] {cand.kind}: {cand.reason[:80]}")
        self.st.repair_probes = rep.probes

    @staticmethod
    def is_ask(ex: Executed) -> bool:
        from navqa.model.terms import AskResult

        return isinstance(ex.result, AskResult)


def _size(st: AskState) -> str:
    r = st.result
    if r is None:
        return "nothing"
    from navqa.model.terms import AskResult

    if isinstance(r, AskResult):
        return "true" if r.value else "false"
    return f"{len(r)} row(s)" if hasattr(r, "__len__") else "a result"


# -- the LLM agent -----------------------------------------------------------------------------

_SYSTEM = """Your task is to write a SPARQL query that answers the user's question over a virtual
knowledge graph (an ontology mapped onto a relational database; only mapped classes and
properties have data). Work step by step:
1. Start with very simple fragments of the query and execute them to check them.
2. Confirm your assumptions about the schema (lookup, examples) before relying on them.
3. Build the complete query one piece at a time. Do NOT repeat an action: the result
   would be the same.
4. The question has an answer in this graph: continue until you find it.
5. For a yes/no question, finish with an ASK query.
6. Project what is asked: {entities}, one COUNT for "how many".
7. When the last executed query returns the answer, use stop.

## Schema-guided property selection
- Listings show each property as: label (prefix:name): description [domain: X | range: Y].
- Domain = the type of the subject; range = the type of the object (or the datatype).
- Prefer properties whose domain matches the known type of your subject and whose range
  matches the expected answer type. lookup already hides properties whose domain
  conflicts with the node's type.
- If execute returns an empty result with a [WARNING], it names the likely cause (a
  type conflict, IRI templates that never join, a literal of the wrong datatype or
  spelling): fix that, or try a different property or path (see the Knowledge Log).
- [REFUSED] means the query used a term with no data; use the suggested terms.

## Actions
- search(text): classes and properties matching the text (with [domain | range]), and where
  the text occurs as a stored name (with the entity's IRI and classes).
- lookup(x): x is a class (prefix:Name), a variable of your last query (?x) or an entity
  <iri>: its types and the properties it can take part in.
- examples(property): a few triples of the property.
- execute(sparql): runs the query (SELECT or ASK) and shows the first rows.
- stop(): the last executed query is the final answer.

Answer with JSON only: {{"thought": "...", "action": "search|lookup|examples|execute|stop",
"argument": "..."}}"""


class LLMAgent(_Loop):
    """The ReAct controller: one JSON call per step."""

    method = "llm"

    def __init__(self, pipe: Stages, st: AskState, session: AgentSession,
                 theta: TypeState) -> None:
        super().__init__(pipe, st, session, theta)
        self.history: list[tuple[AgentAction, str]] = []
        self.executes = 0

    def prompt(self) -> str:
        ctx = self.pipe.ctx
        at = self.st.answer_type
        if self.pipe.config.pipeline.answer_type_prior and at is not None:
            cls = f" ({ctx.compact(at.cls)})" if at.cls else ""
            answer = f"{at.kind.value}{cls}"
            if at.kind is AnswerKind.BOOLEAN:
                answer += " — answer with an ASK query"
        else:
            answer = "(not predicted)"
        prefixes = "\n".join(f"PREFIX {p}: <{ns}>" for p, ns in sorted(ctx.prefixes.items())
                             if p not in ("owl", "rdfs", "skos"))
        values = "\n".join(f'- "{g.mention.text}" is stored as "{g.stored}" '
                           f"({ctx.compact(g.prop)})" for g in self.st.groundings) or "- (none)"
        steps = []
        for a, obs in self.history[-HISTORY_STEPS:]:
            steps.append(f"Thought: {a.thought}\nAction: {a.action}({a.argument})\n"
                         f"Observation: {obs[:OBSERVATION_CHARS]}")
        prior = self.session.history()
        return (f"{('Previous turns:' + chr(10) + prior + chr(10)) if prior else ''}"
                f"User Question: {self.st.question}\n\n"
                f"## Current type context\nExpected answer type: {answer}\n"
                f"Known types:\n{self.theta.render() if self.theta.enabled else '(not kept)'}\n\n"
                f"## Knowledge log (recent steps)\n"
                f"{chr(10).join(self.session.knowledge[-KNOWLEDGE_LOG:]) or '(empty)'}\n"
                "([ok] = found results; [fail] = empty or refused; [info] = type discovered; "
                "avoid repeating failed approaches)\n\n"
                f"Prefixes:\n{prefixes}\n\nValues found in the data:\n{values}\n\n"
                f"## Steps so far (step {self.steps + 1} of {self.budget})\n"
                f"{chr(10).join(steps) or '(none)'}\n\n"
                "Output one thought and one action as JSON.")

    def decide(self) -> AgentAction:
        assert self.pipe.llm is not None
        system = _SYSTEM.format(entities=projection_instruction(
            self.pipe.config.pipeline.entity_answer))
        resp = self.pipe.llm.call([Message.system(system), Message.user(self.prompt())],
                                  schema=AgentAction)
        action: AgentAction = resp.parsed
        return action

    def act(self, a: AgentAction) -> tuple[str, list[Event], Executed | None]:
        t = self.tools
        if a.action == "search":
            obs, evs = t.search(a.argument)
            return obs, evs, None
        if a.action == "lookup":
            obs, evs = t.lookup(a.argument)
            return obs, evs, None
        if a.action == "examples":
            obs, evs = t.examples(a.argument)
            return obs, evs, None
        if a.action == "execute":
            ex, obs, evs = t.execute(_strip_fences(a.argument))
            return obs, evs, ex
        return "stopped", [], None

    def run(self, *, seeded: bool = False, attempts: int | None = None,
            before: str | None = None) -> Iterator[Event]:
        """The loop. ``attempts`` bounds the ``execute`` actions (for repairs)."""
        if not seeded:
            yield from self.seed()
        while self.steps < self.budget:
            t = time.perf_counter()
            a = self.decide()
            self.steps += 1
            if a.action == "stop":
                yield AgentStep(step=self.steps, thought=a.thought, action="stop",
                                argument="", observation="final answer: the last executed "
                                                         "query", seconds=time.perf_counter() - t)
                break
            if a.action == "execute" and attempts is not None and self.executes >= attempts:
                break
            obs, events, ex = self.act(a)
            yield from events
            yield AgentStep(step=self.steps, thought=a.thought, action=a.action,
                            argument=a.argument, observation=obs[:OBSERVATION_CHARS],
                            seconds=time.perf_counter() - t)
            self.history.append((a, obs))
            if ex is not None:
                self.executes += 1
                prev = self.last.sparql if self.last is not None else before
                self.record(ex)
                if ex.result is None:
                    self.note(f"[fail] refused: {(ex.error or '')[:80]}")
                elif ex.empty:
                    cause = ex.findings[0].message[:100] if ex.findings else "no cause found"
                    self.note(f"[fail] Empty: {cause}")
                else:
                    self.note(f"[ok] {obs.splitlines()[0][:60]}")
                if attempts is not None:
                    ok = ex.result is not None and not ex.empty
                    yield QueryRepaired(attempt=self.executes, before=prev or "",
                                        after=ex.sparql, reason=a.thought[:300] + (
                                            " → rows" if ok else " → still empty"),
                                        method="llm")
                    if ok:
                        break
            for ev in events:
                if isinstance(ev, TypeStateUpdated):
                    names = ", ".join(self.pipe.ctx.compact(x) for x in ev.types)
                    self.note(f"[info] {ev.entity} is a {names}")
        if attempts is None:
            self.finish()


def _strip_fences(text: str) -> str:
    t = text.strip()
    if t.startswith("```"):
        t = t.strip("`")
        if t.lower().startswith("sparql"):
            t = t[6:]
    return t.strip()


registry.register("agent", run_agent)
