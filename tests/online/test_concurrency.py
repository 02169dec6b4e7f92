"""One pipeline, many questions at once: no question sees another's state.

``navqa eval`` workers and the service share one :class:`Pipeline` between threads. Every
answer given concurrently must equal the answer the same question gets alone.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from navqa.model.events import Answer, Event
from navqa.model.terms import QueryResult
from navqa.online.synthesis.offline import OfflineSynthesizer

pytestmark = [pytest.mark.ontop, pytest.mark.postgres]

# different shapes: a lookup through a grounded value, a count, a yes/no question, a
# superlative, a filter on a number — and the agent strategy next to NaVQA's
JOBS = [
    ("Which stations are managed by Kestrel Metro?", "navqa"),
    ("How many stations are there?", "navqa"),
    ("Is Dunmere Central a station with step-free access?", "navqa"),
    ("Which station has the most platforms?", "navqa"),
    ("Which stations have more than 4 platforms?", "agent"),
    ("Which lines does Northern Vale Rail operate?", "agent"),
]
ROUNDS = 3


def _rows(result: QueryResult | None) -> object:
    if result is None:
        return None
    return sorted(map(repr, getattr(result, "rows", [result])))


def _trace(events: tuple[Event, ...]) -> list[str]:
    """What happened, without the wall times."""
    return [type(e).__name__ for e in events]


def _fingerprint(a: Answer) -> tuple[object, ...]:
    return (a.question, a.strategy, a.sparql, _rows(a.result), a.error, a.error_kind,
            _trace(a.events), a.llm_calls)


def test_concurrent_questions_get_the_answers_they_get_alone(demo_pipeline) -> None:
    alone = {job: _fingerprint(demo_pipeline.ask(job[0], strategy=job[1])) for job in JOBS}
    assert len({fp[2] for fp in alone.values()}) == len(JOBS), "the questions must differ"
    assert all(fp[3] is not None for fp in alone.values()), alone
    work = [job for _ in range(ROUNDS) for job in JOBS]
    with ThreadPoolExecutor(max_workers=len(JOBS)) as pool:
        together = list(pool.map(lambda job: (job, _fingerprint(
            demo_pipeline.ask(job[0], strategy=job[1]))), work))
    assert len(together) == ROUNDS * len(JOBS)
    for job, fp in together:
        assert fp == alone[job], f"{job}: concurrent answer differs from the sequential one"


def test_the_offline_synthesizer_keeps_nothing_of_a_question_on_itself(demo_pipeline) -> None:
    """Per-question facts ("does the question name a month?") travel on the plan."""
    synth: OfflineSynthesizer = demo_pipeline.offline_synth
    before = dict(vars(synth))
    # the month question last: a flag left on ``self`` would differ from the one before
    for question in ("Which stations are managed by Kestrel Metro?",
                     "Which stations opened in March 1990?"):
        answer = demo_pipeline.ask(question)
        assert answer.sparql is not None
    assert vars(synth).keys() == before.keys()
    assert all(vars(synth)[k] is v for k, v in before.items())
