"""Projection diagnostic: is a wrong answer a wrong *projection* or wrong *entities*?

Beside the bag F1/Acc (the headline), each question gets one :class:`ProjectionVerdict`
from the values of its answer columns (SELECT results only):

* A **column's value set** is the set of canonical terms (:func:`canonical_term`) bound
  in that variable; unbound cells are skipped, a column bound nowhere is dropped.
* The **match score** of a predicted column ``p`` against a gold column ``g`` is
  ``max(|p ∩ g| / |p|, |p ∩ g| / |g|)`` over those sets: the larger of the share of the
  predicted values that are gold values and the share of the gold values that were
  predicted. A superset or a subset of the right values scores 1; a column of other
  things (names instead of IRIs, a count instead of names) scores 0.
* Two columns **match** when the score is at least :data:`MATCH_THRESHOLD` (0.5), or when
  both hold exactly one distinct value and both values are numbers (an aggregate with the
  wrong count is a right projection over wrong entities; its score is then 0).
* The projection is **right** when the predicted and the gold columns can be paired one
  to one, every pair matching: the same number of columns and a greedy assignment by
  descending score that pairs them all.

The verdict, in this order:

=============================  ==========================================================
``not-applicable``             the gold answer is not a non-empty SELECT result (ASK,
                               CONSTRUCT, or no gold rows): there is no column to match
``no-answer``                  no predicted result (no query, an error), or no rows
``right-answer``               Acc = 1 (the answer is right, so is its projection)
``wrong-entities``             right projection, Acc = 0 (other, missing or extra rows;
                               for ordered gold, also the wrong order)
``wrong-projection``           no one-to-one column match (a predicted ASK/CONSTRUCT
                               against a SELECT gold is one too)
=============================  ==========================================================

Two rates summarize a run (:func:`summarize_projection`):

* **right projection**: right ÷ (right + wrong projection), over the answers judged (an
  answer with rows against a SELECT gold with rows);
* **asked-column recall**: the gold answer columns matched by a predicted column (in the
  one-to-one assignment above), over all gold answer columns, for every question whose
  gold has columns: a question without an answer matches none of its columns. It says how
  much of what was asked is projected, whether or not the rows are right.

Limits: values decide, so right-projection answers that share less than half their values
with gold in both directions (wholly wrong entities) count as ``wrong-projection``; the
``wrong-projection`` count is an upper bound, ``wrong-entities`` a lower one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from navqa.evaluation.metrics import CanonicalTerm, canonical_term
from navqa.model.terms import QueryResult, SelectResult

__all__ = [
    "MATCH_THRESHOLD",
    "ColumnMatch",
    "Projection",
    "ProjectionVerdict",
    "column_score",
    "projection_of",
    "summarize_projection",
]

MATCH_THRESHOLD = 0.5
"""Least match score for a predicted column to count as a gold column."""


class ProjectionVerdict(StrEnum):
    """One question's projection diagnostic (see the module docstring)."""

    RIGHT_ANSWER = "right-answer"
    WRONG_ENTITIES = "wrong-entities"
    WRONG_PROJECTION = "wrong-projection"
    NO_ANSWER = "no-answer"
    NOT_APPLICABLE = "not-applicable"


@dataclass(frozen=True)
class ColumnMatch:
    """A predicted column paired with a gold column, and its match score."""

    pred: str
    gold: str
    score: float

    def to_json(self) -> dict[str, Any]:
        return {"pred": self.pred, "gold": self.gold, "score": self.score}


@dataclass(frozen=True)
class Projection:
    """The projection diagnostic of one answer.

    Attributes:
        verdict: See :class:`ProjectionVerdict`.
        gold_columns / pred_columns: The columns that hold a value (empty when not
            applicable).
        matches: The one-to-one pairs found (all of them matching when the projection
            is right; the partial assignment otherwise).
    """

    verdict: ProjectionVerdict
    gold_columns: tuple[str, ...] = ()
    pred_columns: tuple[str, ...] = ()
    matches: tuple[ColumnMatch, ...] = field(default_factory=tuple)

    @property
    def right_projection(self) -> bool | None:
        """Whether the projection is right; ``None`` when there is nothing to judge."""
        if self.verdict in (ProjectionVerdict.NO_ANSWER, ProjectionVerdict.NOT_APPLICABLE):
            return None
        return self.verdict != ProjectionVerdict.WRONG_PROJECTION

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict.value, "right_projection": self.right_projection,
                "gold_columns": list(self.gold_columns),
                "pred_columns": list(self.pred_columns),
                "matches": [m.to_json() for m in self.matches]}


def _columns(result: SelectResult) -> dict[str, set[CanonicalTerm]]:
    cols: dict[str, set[CanonicalTerm]] = {}
    for var in result.variables:
        values = {canonical_term(t) for t in result.column(var) if t is not None}
        if values:
            cols[var] = values
    return cols


def column_score(pred: set[CanonicalTerm], gold: set[CanonicalTerm]) -> float:
    """``max(|p ∩ g| / |p|, |p ∩ g| / |g|)``; 0 when either set is empty."""
    if not pred or not gold:
        return 0.0
    common = len(pred & gold)
    return max(common / len(pred), common / len(gold))


def _matches(pred: set[CanonicalTerm], gold: set[CanonicalTerm], score: float) -> bool:
    if score >= MATCH_THRESHOLD:
        return True
    return (len(pred) == 1 and len(gold) == 1
            and next(iter(pred))[0] == "num" and next(iter(gold))[0] == "num")


def projection_of(gold: QueryResult, pred: QueryResult | None, *, acc: bool) -> Projection:
    """The projection diagnostic of a predicted result against the gold one.

    Args:
        gold: The gold result.
        pred: The predicted result, ``None`` when there is none.
        acc: The question's Acc (:func:`~navqa.evaluation.metrics.score`).
    """
    if not isinstance(gold, SelectResult) or gold.is_empty:
        return Projection(ProjectionVerdict.NOT_APPLICABLE)
    g_cols = _columns(gold)
    if not g_cols:
        return Projection(ProjectionVerdict.NOT_APPLICABLE)
    if pred is None or pred.is_empty:
        return Projection(ProjectionVerdict.NO_ANSWER, tuple(g_cols))
    if not isinstance(pred, SelectResult):
        return Projection(ProjectionVerdict.WRONG_PROJECTION, tuple(g_cols))
    p_cols = _columns(pred)
    pairs = sorted(((column_score(pv, gv), p, g) for p, pv in p_cols.items()
                    for g, gv in g_cols.items()
                    if _matches(pv, gv, column_score(pv, gv))),
                   key=lambda t: (-t[0], t[1], t[2]))
    used_p: set[str] = set()
    used_g: set[str] = set()
    matches: list[ColumnMatch] = []
    for s, p, g in pairs:
        if p not in used_p and g not in used_g:
            used_p.add(p)
            used_g.add(g)
            matches.append(ColumnMatch(p, g, s))
    right = len(p_cols) == len(g_cols) == len(matches)
    if acc:
        verdict = ProjectionVerdict.RIGHT_ANSWER
    elif right:
        verdict = ProjectionVerdict.WRONG_ENTITIES
    else:
        verdict = ProjectionVerdict.WRONG_PROJECTION
    return Projection(verdict, tuple(g_cols), tuple(p_cols), tuple(matches))


def summarize_projection(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Counts per verdict over the records that have a ``projection`` field, and the two
    rates of the module docstring.

    Returns:
        ``{verdict: count for every verdict, "n": records counted,
        "right_projection_rate": right ÷ (right + wrong projection) or None,
        "gold_columns": gold answer columns counted, "matched_columns": those matched,
        "asked_column_recall": matched ÷ gold columns or None}``.
    """
    counts = {v.value: 0 for v in ProjectionVerdict}
    n = gold_columns = matched = 0
    for r in records:
        p = r.get("projection")
        if not p:
            continue
        verdict = ProjectionVerdict(p["verdict"])
        counts[verdict.value] += 1
        n += 1
        if verdict is not ProjectionVerdict.NOT_APPLICABLE:
            gold_columns += len(p.get("gold_columns") or ())
            matched += len(p.get("matches") or ())
    right = counts[ProjectionVerdict.RIGHT_ANSWER] + counts[ProjectionVerdict.WRONG_ENTITIES]
    judged = right + counts[ProjectionVerdict.WRONG_PROJECTION]
    return {**counts, "n": n, "right_projection_rate": right / judged if judged else None,
            "gold_columns": gold_columns, "matched_columns": matched,
            "asked_column_recall": matched / gold_columns if gold_columns else None}
