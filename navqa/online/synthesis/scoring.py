"""Choose among the candidate queries (:mod:`navqa.online.synthesis.candidates`) by an
objective instead of taking the best-ranked root's query outright.

The objective is a sum of penalties, lower is better:

* **rank**: :data:`RANK_COST` per place below the best-scored root of the rerank, so the
  rerank decides between queries that have nothing else against them;
* **restated value** (grammar rule ``restated-value``): a query that only gives back a value
  the question states (:func:`navqa.online.synthesis.plan.restates_value`) and has an
  answer in the data answers nothing (:data:`RESTATED_COST`); an empty one is left to the
  repairs, which may find the path a misplaced name needs;
* **unplaced columns** (grammar rule ``placed-columns``): each asked column the query could
  not place on any element (:attr:`Plan.unplaced_columns`) is a phrase of the question the
  query does not explain (:data:`UNPLACED_COST` each);
* **execution**: another root's query is only worth taking if it answers: an empty one
  costs :data:`EMPTY_COST` (one bounded ASK per such candidate).

:func:`choose` walks the candidates in rank order and stops at the first one with no
penalty but its rank (no later one can beat it); it never looks at more than the
candidates it is given.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum

from navqa.model.rules import GrammarRule
from navqa.online.synthesis.candidates import Candidate
from navqa.online.synthesis.plan import Plan, restates_value

__all__ = ["EMPTY_COST", "RANK_COST", "RESTATED_COST", "UNPLACED_COST", "Choice", "Evidence",
           "Scored", "choose", "score"]

RANK_COST = 0.1
"""Per place below the best-scored root."""
RESTATED_COST = 1.0
"""A query that only restates a value of the question and has an answer."""
UNPLACED_COST = 0.3
"""Per asked column the query leaves unplaced."""
EMPTY_COST = 0.5
"""A lower-ranked root's query that has no answer."""


class Evidence(StrEnum):
    """What running a candidate (as a bounded ASK) showed."""

    ANSWERS = "answers"
    EMPTY = "empty"
    UNKNOWN = "unknown"
    """Not run, or the endpoint refused or timed out."""


@dataclass(frozen=True, slots=True)
class Scored:
    """A candidate and the terms of its objective (:func:`score`)."""

    candidate: Candidate
    evidence: Evidence
    restated: bool
    """It only restates a value of the question and has an answer."""
    unplaced: int
    """Asked columns it leaves unplaced (0 when ``placed-columns`` is off)."""
    cost: float

    @property
    def penalised(self) -> bool:
        """Whether anything but its rank counts against it."""
        return self.cost > RANK_COST * self.candidate.rank + 1e-9


@dataclass(frozen=True, slots=True)
class Choice:
    """The chosen candidate, every candidate scored on the way, and the rules that made
    the choice differ from the best-ranked root (empty when it did not)."""

    chosen: Scored
    scored: tuple[Scored, ...]
    rules: frozenset[GrammarRule]


def _needs_evidence(plan: Plan, rank: int, disabled: frozenset[GrammarRule]) -> bool:
    if rank > 0:
        return True
    return ((GrammarRule.RESTATED_VALUE not in disabled and restates_value(plan))
            or (GrammarRule.PLACED_COLUMNS not in disabled and bool(plan.unplaced_columns)))


def score(candidate: Candidate, evidence: Evidence,
          disabled: frozenset[GrammarRule] = frozenset()) -> Scored:
    """The objective of one candidate given what running it showed."""
    plan = candidate.plan
    restated = (GrammarRule.RESTATED_VALUE not in disabled and evidence is Evidence.ANSWERS
                and restates_value(plan))
    unplaced = (len(plan.unplaced_columns)
                if GrammarRule.PLACED_COLUMNS not in disabled else 0)
    cost = RANK_COST * candidate.rank + UNPLACED_COST * unplaced
    if restated:
        cost += RESTATED_COST
    if candidate.rank > 0 and evidence is Evidence.EMPTY:
        cost += EMPTY_COST
    return Scored(candidate=candidate, evidence=evidence, restated=restated,
                  unplaced=unplaced, cost=round(cost, 6))


def choose(candidates: Iterable[Candidate], probe: Callable[[Plan], Evidence],
           disabled: frozenset[GrammarRule] = frozenset()) -> Choice:
    """The candidate of least cost (the earliest among equals).

    ``probe`` runs a candidate's query as a bounded ASK; it is called only for the
    best-ranked candidate when a penalty depends on its answer, and for every lower-ranked
    candidate looked at.

    Raises:
        ValueError: no candidate.
    """
    scored: list[Scored] = []
    for c in candidates:
        evidence = (probe(c.plan) if _needs_evidence(c.plan, c.rank, disabled)
                    else Evidence.UNKNOWN)
        s = score(c, evidence, disabled)
        scored.append(s)
        if not s.penalised:
            break
    if not scored:
        raise ValueError("no candidate query to choose from")
    best = min(scored, key=lambda s: (s.cost, s.candidate.rank))
    first = scored[0]
    rules: set[GrammarRule] = set()
    if best is not first:
        if first.restated and not best.restated:
            rules.add(GrammarRule.RESTATED_VALUE)
        if best.unplaced < first.unplaced:
            rules.add(GrammarRule.PLACED_COLUMNS)
    return Choice(chosen=best, scored=tuple(scored), rules=frozenset(rules))
