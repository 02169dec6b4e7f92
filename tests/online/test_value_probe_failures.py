"""A value probe that times out or fails is not a question failure.

Value grounding sends bounded probes (a mention's exact and substring match, the nearest
stored values of an unmatched mention, a categorical value set). One that times
out or errors is recorded on :class:`ValuesGrounded`, the pipeline goes on without that
grounding, the mention is reported as not placed and the answer's confidence drops. An
unreachable endpoint still stops the question. The stand-in endpoint below fails only the
probe queries and sends everything else to the real demo endpoint.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from navqa.backends.protocols import SparqlEndpoint
from navqa.errors import EndpointTimeoutError, EndpointUnreachableError
from navqa.model.events import (
    ConfidenceLevel,
    ConfidenceReason,
    UngroundedWhy,
    UnplacedWhy,
    ValueProbe,
    ValuesGrounded,
)
from navqa.model.terms import AskResult, GraphResult, QueryResult, SelectResult
from navqa.online.pipeline import Pipeline
from navqa.online.values import LIMIT, NEAR_LIMIT, probe_query

pytestmark = [pytest.mark.ontop, pytest.mark.postgres]

QUESTION = "Which company currently operates the Aster Coast Line?"


class FailingProbes:
    """The real endpoint, except that SELECTs ``fails(query)`` picks raise ``error``."""

    def __init__(self, inner: SparqlEndpoint, fails: Callable[[str], bool],
                 error: type[EndpointTimeoutError | EndpointUnreachableError]) -> None:
        self.inner = inner
        self.url = inner.url
        self.fails = fails
        self.error = error
        self.failed: list[str] = []
        self.timeouts: dict[str, float | None] = {}

    def select(self, query: str, *, timeout: float | None = None) -> SelectResult:
        self.timeouts[query] = timeout
        if self.fails(query):
            self.failed.append(query)
            raise self.error("no answer within 1s", endpoint=self.url, query=query)
        return self.inner.select(query, timeout=timeout)

    def ask(self, query: str, *, timeout: float | None = None) -> AskResult:
        return self.inner.ask(query, timeout=timeout)

    def construct(self, query: str, *, timeout: float | None = None) -> GraphResult:
        return self.inner.construct(query, timeout=timeout)

    def query(self, query: str, *, timeout: float | None = None) -> QueryResult:
        return self.inner.query(query, timeout=timeout)


def _mention_probe(q: str) -> bool:
    return (q.startswith("SELECT ?s ?p ?v") and q.endswith(f"LIMIT {LIMIT}")
            and "aster coast line" in q)


def _nearest_probe(q: str) -> bool:
    return q.startswith("SELECT ?s ?p ?v") and q.endswith(f"LIMIT {NEAR_LIMIT}")


def _pipeline(demo_pipeline: Pipeline, endpoint: FailingProbes) -> Pipeline:
    return Pipeline(demo_pipeline.ctx, endpoint, demo_pipeline.config)


def _grounded(answer) -> ValuesGrounded:
    [ev] = answer.of(ValuesGrounded)
    assert isinstance(ev, ValuesGrounded)
    return ev


def test_the_real_endpoint_grounds_the_mention(demo_pipeline) -> None:
    """The control: with every probe answered, the line is grounded, nothing failed."""
    answer = demo_pipeline.ask(QUESTION)
    ev = _grounded(answer)
    assert ev.failures == () and ev.ungrounded == ()
    assert any(g.mention == "Aster Coast Line" for g in ev.groundings)
    assert answer.confidence is not None
    assert all(r.kind is not ConfidenceReason.VALUE_PROBE_FAILED
               for r in answer.confidence.reasons)


def test_a_failed_mention_probe_leaves_the_question_answered_and_the_mention_unplaced(
        demo_pipeline) -> None:
    ep = FailingProbes(demo_pipeline.endpoint, _mention_probe, EndpointTimeoutError)
    answer = _pipeline(demo_pipeline, ep).ask(QUESTION)
    assert ep.failed, "the stand-in failed no probe"
    assert answer.error is None, answer.error
    assert answer.result is not None, answer.sparql
    ev = _grounded(answer)
    assert [(f.probe, f.mention) for f in ev.failures] == [
        (ValueProbe.EXACT, "Aster Coast Line")]
    assert "no answer within 1s" in ev.failures[0].error
    assert all(g.mention != "Aster Coast Line" for g in ev.groundings)
    [u] = [u for u in ev.ungrounded if u.mention == "Aster Coast Line"]
    assert u.why is UngroundedWhy.PROBE_FAILED and not u.kept and u.nearest == ()
    # the substring probe is not sent after the exact one failed; no nearest probe either
    assert len([q for q in ep.failed if _mention_probe(q)]) == 1
    [part] = [p for p in answer.unplaced if p.text == "Aster Coast Line"]
    assert part.why is UnplacedWhy.PROBE_FAILED
    assert answer.confidence is not None
    assert answer.confidence.level is ConfidenceLevel.LOW
    assert any(r.kind is ConfidenceReason.VALUE_PROBE_FAILED and "Aster Coast Line" in r.text
               for r in answer.confidence.reasons)


def test_a_failed_nearest_probe_still_reports_the_value_as_not_found(demo_pipeline) -> None:
    ep = FailingProbes(demo_pipeline.endpoint, _nearest_probe, EndpointTimeoutError)
    answer = _pipeline(demo_pipeline, ep).ask("Which company operates the Foo Bar Line?")
    assert ep.failed, "the stand-in failed no probe"
    assert answer.error is None, answer.error
    ev = _grounded(answer)
    assert [(f.probe, f.mention) for f in ev.failures] == [
        (ValueProbe.NEAREST, "Foo Bar Line")]
    [u] = ev.ungrounded
    # the exact and substring probes ran and found nothing: not found, with no nearest
    assert u.mention == "Foo Bar Line" and u.why is UngroundedWhy.NOT_FOUND
    assert u.nearest == ()
    assert answer.confidence is not None
    assert any(r.kind is ConfidenceReason.VALUE_PROBE_FAILED for r in answer.confidence.reasons)


def test_an_unreachable_endpoint_still_stops_the_question(demo_pipeline) -> None:
    ep = FailingProbes(demo_pipeline.endpoint, _mention_probe, EndpointUnreachableError)
    with pytest.raises(EndpointUnreachableError):
        _pipeline(demo_pipeline, ep).ask(QUESTION)


def test_the_union_probe_finds_what_the_values_probe_finds(demo_pipeline) -> None:
    """One ``UNION`` branch per property (cheap for Ontop to reformulate) returns the rows
    of ``VALUES ?p { ... }`` with one ``FILTER`` (the form it replaces)."""
    props = [p for p in demo_pipeline.ctx.name_like_properties][:6]
    assert len(props) >= 2, props
    cond = 'CONTAINS(LCASE(STR(?v)), "line") || LCASE(STR(?v)) = "aster coast line"'
    values = " ".join(f"<{p}>" for p in props)
    old = (f"SELECT ?s ?p ?v WHERE {{ VALUES ?p {{ {values} }} ?s ?p ?v . "
           f"FILTER({cond}) }} LIMIT 1000")

    def rows(q: str) -> set[tuple[str, ...]]:
        return {tuple(t.value for t in r) for r in demo_pipeline.endpoint.select(q).rows}

    new = rows(probe_query(props, cond, 1000))
    assert new and len(new) < 1000
    assert new == rows(old)
    assert {p for _, p, _ in new} <= set(props)



def test_value_probes_get_their_own_timeout(demo_pipeline) -> None:
    cfg = demo_pipeline.config.with_overrides(runtime={"value_probe_timeout_s": 7.0})
    assert cfg.runtime.query_timeout_s != 7.0
    ep = FailingProbes(demo_pipeline.endpoint, lambda q: False, EndpointTimeoutError)
    answer = Pipeline(demo_pipeline.ctx, ep, cfg).ask(QUESTION)
    assert answer.error is None, answer.error
    probes = {q: t for q, t in ep.timeouts.items()
              if _mention_probe(q) or _nearest_probe(q)}
    assert probes and set(probes.values()) == {7.0}
