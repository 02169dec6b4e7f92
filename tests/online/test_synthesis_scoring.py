"""The search over candidate queries: the objective and the order it looks at them in.

Synthetic plans only (no question file): a plan that restates a value of the question,
one that leaves an asked column unplaced, one that explains everything; the probe that
stands in for the endpoint's ASK says which of them answer.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from navqa.model.rules import GrammarRule
from navqa.online.synthesis.candidates import Candidate, enumerate_candidates
from navqa.online.synthesis.plan import Plan
from navqa.online.synthesis.scoring import (
    EMPTY_COST,
    RANK_COST,
    UNPLACED_COST,
    Evidence,
    choose,
    score,
)

FIXED = [("?f", "ex:name", '"TROLL"'), ("?f", "ex:name", "?name")]


def restating() -> Plan:
    return Plan(triples=list(FIXED), select=["?name"])


def asking() -> Plan:
    return Plan(triples=[*FIXED, ("?f", "ex:operator", "?c"), ("?c", "ex:name", "?op")],
                select=["?op"])


def unplaced(*phrases: str) -> Plan:
    return Plan(triples=[("?w", "ex:name", "?name")], select=["?name"],
                unplaced_columns=list(phrases))


def candidates(*plans: Plan) -> list[Candidate]:
    return [Candidate(root=f"http://ex.org/C{i}", rank=i, sparql=f"# {i}", plan=p)
            for i, p in enumerate(plans)]


class Probe:
    """The endpoint's ASK: which plans answer; records what it was asked."""

    def __init__(self, empty: tuple[int, ...] = ()) -> None:
        self.empty = set(empty)
        self.asked: list[int] = []
        self.plans: dict[int, int] = {}

    def bind(self, cands: list[Candidate]) -> Probe:
        self.plans = {id(c.plan): c.rank for c in cands}
        return self

    def __call__(self, plan: Plan) -> Evidence:
        rank = self.plans[id(plan)]
        self.asked.append(rank)
        return Evidence.EMPTY if rank in self.empty else Evidence.ANSWERS


def test_a_query_with_nothing_against_it_is_taken_without_running_anything() -> None:
    cands = candidates(asking(), restating())
    probe = Probe().bind(cands)
    choice = choose(cands, probe)
    assert choice.chosen.candidate.rank == 0
    assert probe.asked == []
    assert choice.rules == frozenset()
    assert len(choice.scored) == 1  # the search stopped there


def test_a_restated_value_that_answers_gives_way_to_the_next_root() -> None:
    cands = candidates(restating(), asking())
    choice = choose(cands, Probe().bind(cands))
    assert choice.chosen.candidate.rank == 1
    assert choice.rules == {GrammarRule.RESTATED_VALUE}
    assert choice.scored[0].restated and not choice.scored[1].restated


def test_a_restated_value_with_no_answer_is_left_to_the_repairs() -> None:
    cands = candidates(restating(), asking())
    choice = choose(cands, Probe(empty=(0,)).bind(cands))
    assert choice.chosen.candidate.rank == 0
    assert choice.rules == frozenset()


def test_a_root_that_places_the_asked_column_wins_when_it_answers() -> None:
    cands = candidates(unplaced("depth"), asking())
    choice = choose(cands, Probe().bind(cands))
    assert choice.chosen.candidate.rank == 1
    assert choice.rules == {GrammarRule.PLACED_COLUMNS}
    assert choice.chosen.cost == pytest.approx(RANK_COST)
    assert choice.scored[0].cost == pytest.approx(UNPLACED_COST)


def test_an_empty_alternative_does_not_beat_one_unplaced_column() -> None:
    cands = candidates(unplaced("depth"), asking())
    choice = choose(cands, Probe(empty=(1,)).bind(cands))
    assert choice.chosen.candidate.rank == 0
    assert choice.scored[1].cost == pytest.approx(RANK_COST + EMPTY_COST)


def test_the_earliest_of_equal_costs_is_kept() -> None:
    one = unplaced("depth")
    cands = candidates(unplaced("depth", "operator"), one, unplaced("age"))
    choice = choose(cands, Probe().bind(cands))
    # rank 1 and rank 2 leave one column each; rank 1 is cheaper by its rank
    assert choice.chosen.candidate.plan is one


def test_switched_off_rules_leave_the_best_ranked_root() -> None:
    cands = candidates(unplaced("depth"), asking())
    off = frozenset({GrammarRule.PLACED_COLUMNS})
    probe = Probe().bind(cands)
    choice = choose(cands, probe, off)
    assert choice.chosen.candidate.rank == 0 and probe.asked == []
    cands = candidates(restating(), asking())
    choice = choose(cands, Probe().bind(cands), frozenset({GrammarRule.RESTATED_VALUE}))
    assert choice.chosen.candidate.rank == 0


def test_score_counts_unplaced_columns_and_restatements() -> None:
    [c] = candidates(unplaced("depth", "age"))
    assert score(c, Evidence.UNKNOWN).unplaced == 2
    assert score(c, Evidence.UNKNOWN, frozenset({GrammarRule.PLACED_COLUMNS})).unplaced == 0
    [r] = candidates(restating())
    assert score(r, Evidence.ANSWERS).restated
    assert not score(r, Evidence.EMPTY).restated
    assert not score(r, Evidence.UNKNOWN).restated


def test_candidates_are_written_only_when_the_search_asks_for_them() -> None:
    written: list[str] = []

    def synthesize(root: str) -> tuple[str, Plan]:
        written.append(root)
        return f"# {root}", asking()

    ranked = ["http://ex.org/A", "http://ex.org/B", "http://ex.org/C"]
    lazy: Iterator[Candidate] = enumerate_candidates(ranked, synthesize, limit=2)
    choice = choose(lazy, lambda plan: Evidence.ANSWERS)
    assert choice.chosen.candidate.root == "http://ex.org/A"
    assert written == ["http://ex.org/A"]
    assert [c.root for c in enumerate_candidates(ranked, synthesize, limit=2)] == ranked[:2]


def test_no_candidate_is_an_error() -> None:
    with pytest.raises(ValueError, match="no candidate"):
        choose([], lambda plan: Evidence.ANSWERS)
