"""An aggregate over nothing is an empty answer, and gets repaired.

Unit tests read query texts and results (which queries are aggregate-only, when their
one row says nothing, and that only the ASK of the pattern decides); the end-to-end tests
run on the real demo VKG (Ontop 5.1.2 over PostgreSQL) and check counts against SQL on
the demo database, never against the code under test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from navqa.model.events import (
    AggregateVacuous,
    ConfidenceLevel,
    ConfidenceReason,
    Event,
    QueryRepaired,
    QuerySynthesized,
)
from navqa.model.iri import XSD
from navqa.model.terms import AskResult, LiteralTerm, SelectResult
from navqa.online.confidence import assess
from navqa.online.pipeline import AskState, Pipeline, run_navqa
from navqa.online.saga.repair import repair_empty
from navqa.online.saga.vacuous import Vacuity, aggregate_query, vacuity, vacuous_values

HEAD = "PREFIX : <http://example.org/v#>\n"
BODY = '{ ?w a :Well ; :field ?f . ?f :name "TROLL" . }'
COUNT = f"{HEAD}SELECT (COUNT(DISTINCT ?w) AS ?count) WHERE {BODY}"


def row(*values: str | None, dt: str = XSD + "integer") -> SelectResult:
    return SelectResult(variables=tuple(f"v{i}" for i in range(len(values))),
                        rows=(tuple(None if v is None else LiteralTerm(v, dt)
                                    for v in values),))


ZERO = row("0")


class Asker:
    """A stand-in for the endpoint's ASK, recording what it was asked."""

    def __init__(self, answer: bool | None) -> None:
        self.answer = answer
        self.asked: list[str] = []

    def __call__(self, text: str) -> bool | None:
        self.asked.append(text)
        return self.answer


def test_a_count_of_zero_over_an_empty_pattern_is_vacuous() -> None:
    ask = Asker(False)
    assert vacuity(COUNT, ZERO, ask) is Vacuity.EMPTY_PATTERN
    # the pattern is asked, with the prologue, not guessed from the 0
    assert ask.asked == [f"{HEAD}ASK {BODY}"]


def test_a_true_zero_is_told_apart_by_the_ask() -> None:
    assert vacuity(COUNT, ZERO, Asker(True)) is Vacuity.TRUE_ZERO


def test_a_failed_ask_decides_nothing() -> None:
    assert vacuity(COUNT, ZERO, Asker(None)) is Vacuity.UNKNOWN


def test_a_non_zero_count_needs_no_ask() -> None:
    ask = Asker(False)
    assert vacuity(COUNT, row("3"), ask) is Vacuity.HAS_VALUE
    assert ask.asked == []


@pytest.mark.parametrize("select", [
    "(AVG(?d) AS ?avg)", "(SUM(?d) AS ?s)", "(MAX(?d) AS ?m)", "(MIN(?d) AS ?m)",
    "DISTINCT (COUNT(*) AS ?n)", "(COUNT(?w) AS ?n) (AVG(?d) AS ?avg)",
])
def test_every_aggregate_only_select_is_read(select: str) -> None:
    q = f"{HEAD}SELECT {select} WHERE {{ ?w :depth ?d . }}"
    assert aggregate_query(q) is not None
    assert vacuity(q, row(None), Asker(False)) is Vacuity.EMPTY_PATTERN


@pytest.mark.parametrize("query", [
    # a grouped count: one row per group, a 0 is not about the whole pattern
    f"{HEAD}SELECT ?f (COUNT(?w) AS ?n) WHERE {BODY} GROUP BY ?f",
    f"{HEAD}SELECT (COUNT(?w) AS ?n) WHERE {BODY} GROUP BY ?f",
    f"{HEAD}SELECT (COUNT(?w) AS ?n) WHERE {BODY} HAVING (COUNT(?w) > 0)",
    # a plain SELECT, a projected expression without an aggregate
    f"{HEAD}SELECT ?w WHERE {BODY}",
    f"{HEAD}SELECT (STR(?w) AS ?s) WHERE {BODY}",
    f"{HEAD}SELECT * WHERE {BODY}",
    # an ASK is its own answer
    f"{HEAD}ASK {BODY}",
])
def test_other_queries_are_not_aggregates_over_nothing(query: str) -> None:
    ask = Asker(False)
    assert aggregate_query(query) is None
    assert vacuity(query, ZERO, ask) is Vacuity.NOT_AGGREGATE
    assert ask.asked == []


def test_an_ask_result_and_several_rows_are_not_vacuous_values() -> None:
    assert not vacuous_values(AskResult(False))
    two = SelectResult(variables=("n",), rows=((LiteralTerm("0", XSD + "integer"),),) * 2)
    assert not vacuous_values(two)
    assert vacuous_values(row("0.0", dt=XSD + "decimal"))
    assert vacuous_values(row(None))
    assert not vacuous_values(row("0", dt=XSD + "date"))


def test_the_pattern_query_and_its_way_back() -> None:
    agg = aggregate_query(COUNT + "\nLIMIT 1")
    assert agg is not None and agg.variables == ("?w",)
    pattern = agg.pattern_query()
    assert pattern.startswith(HEAD + "SELECT DISTINCT ?w WHERE " + BODY)
    repaired = pattern.replace(":field", ":inField")
    back = agg.with_where(repaired)
    assert back == COUNT.replace(":field", ":inField") + "\nLIMIT 1"
    # a repaired pattern that lost the counted variable is not written back
    assert agg.with_where(f"{HEAD}SELECT ?f WHERE {{ ?f :name \"TROLL\" . }}") is None


# -- end to end, on the demo VKG ----------------------------------------------------------------

RAIL = "PREFIX rail: <http://example.org/navqa/rail#>\n"
MANAGED = RAIL + """SELECT (COUNT(DISTINCT ?station) AS ?count) WHERE {
  ?station a rail:Station ; rail:operatedBy ?company .
  ?company rail:name "Kestrel Metro" .
}"""
# joined through the wrong property: a station is not built by anyone
WRONG = MANAGED.replace("rail:operatedBy", "rail:builtBy")
QUESTION = "How many stations does Kestrel Metro manage?"
SQL = ("SELECT count(DISTINCT s.station_code) FROM station s JOIN company c "
       "ON c.company_id = s.facility_operator_id WHERE c.name = '{}'")


def _counted(pipe: Pipeline, question: str, sparql: str) -> tuple[AskState, list[Event]]:
    """``sparql`` executed for ``question`` as the pipeline's query, and the repair."""
    st = AskState(question)
    st.events += [*pipe.extract(st), *pipe.ground(st)]
    st.sparql = sparql
    st.result = pipe.endpoint.query(sparql)
    assert vacuous_values(st.result)
    st.events += list(repair_empty(pipe, st))
    return st, st.events


def _count(st: AskState) -> int:
    assert isinstance(st.result, SelectResult) and len(st.result.rows) == 1
    term = st.result.rows[0][0]
    assert isinstance(term, LiteralTerm)
    return int(term.value)


@pytest.mark.ontop
@pytest.mark.postgres
def test_a_count_over_a_wrong_join_is_repaired_to_the_true_count(
        demo_pipeline: Pipeline, vkg: Callable[..., Any]) -> None:
    pipe = demo_pipeline
    ((want,),) = vkg("demo").sql(SQL.format("Kestrel Metro"))
    assert want > 0
    st, events = _counted(pipe, QUESTION, WRONG)
    assert any(isinstance(e, AggregateVacuous) and e.sparql == WRONG for e in events)
    assert st.sparql is not None
    assert "rail:operatedBy" in st.sparql and "builtBy" not in st.sparql
    assert st.sparql.startswith(RAIL + "SELECT (COUNT(DISTINCT ?station) AS ?count) WHERE")
    assert _count(st) == want
    final = [e for e in events if isinstance(e, QueryRepaired)][-1]
    assert final.before == WRONG and final.after == st.sparql
    assert final.reason.startswith("empty-aggregate:") and final.reason.endswith("→ rows")
    conf = assess(QUESTION, events, sparql=st.sparql, result=st.result, error=None).confidence
    assert not any(r.kind is ConfidenceReason.EMPTY_AGGREGATE for r in conf.reasons)


@pytest.mark.ontop
@pytest.mark.postgres
def test_a_true_zero_stays_zero_with_lowered_confidence(
        demo_pipeline: Pipeline, vkg: Callable[..., Any]) -> None:
    pipe = demo_pipeline
    name = "No Such Company At All"  # no company of that name: no station it manages
    ((want,),) = vkg("demo").sql(SQL.format(name))
    assert want == 0
    query = MANAGED.replace("Kestrel Metro", name)
    question = QUESTION.replace("Kestrel Metro", name)
    st, events = _counted(pipe, question, query)
    assert st.sparql == query and _count(st) == 0
    assert any(isinstance(e, AggregateVacuous) for e in events)
    conf = assess(question, events, sparql=st.sparql, result=st.result, error=None).confidence
    assert conf.level in (ConfidenceLevel.LOW, ConfidenceLevel.NONE)
    assert any(r.kind is ConfidenceReason.EMPTY_AGGREGATE and "matched nothing" in r.text
               for r in conf.reasons)


class Writes:
    """The demo pipeline, except that its synthesizer writes ``sparql``."""

    def __init__(self, pipe: Pipeline, sparql: str) -> None:
        self.pipe = pipe
        self.sparql = sparql

    def __getattr__(self, name: str) -> Any:
        return getattr(self.pipe, name)

    def synthesize(self, st: AskState, feedback: str | None = None) -> Iterator[Event]:
        st.sparql = self.sparql
        yield QuerySynthesized(sparql=self.sparql, method="offline")


@pytest.mark.ontop
@pytest.mark.postgres
def test_run_navqa_repairs_a_count_over_nothing(
        demo_pipeline: Pipeline, vkg: Callable[..., Any]) -> None:
    ((want,),) = vkg("demo").sql(SQL.format("Kestrel Metro"))
    st = AskState(QUESTION)
    for ev in run_navqa(Writes(demo_pipeline, WRONG), st):
        st.events.append(ev)
    assert [e.sparql for e in st.events if isinstance(e, AggregateVacuous)] == [WRONG]
    assert "rail:operatedBy" in (st.sparql or "") and _count(st) == want
    # a count whose pattern has rows is not asked about again, nor repaired
    st2 = AskState(QUESTION)
    for ev in run_navqa(Writes(demo_pipeline, MANAGED), st2):
        st2.events.append(ev)
    assert st2.sparql == MANAGED and _count(st2) == want
    assert not any(isinstance(e, AggregateVacuous | QueryRepaired) for e in st2.events)
