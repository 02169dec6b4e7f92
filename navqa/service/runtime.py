"""One VKG ready to answer, and the (blocking) work a request does on it.

A :class:`VkgService` is built once per VKG when the service starts (index, embedder,
LLM client, pipelines, linter, audit report) and then shared, read-only, by every request
thread: the pipeline is stateless per question, and the linter's lazily built context is
guarded by a lock. The functions below run on a worker thread of
:class:`~navqa.service.pool.WorkerPool`; they return plain JSON-ready data and raise
:class:`~navqa.errors.NavqaError` subclasses, which the app maps to HTTP statuses.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from navqa.config import NavqaConfig
from navqa.errors import ConfigError, InputError
from navqa.model.events import (
    Answer,
    Answered,
    QueryChecked,
    ValuesGrounded,
)
from navqa.model.events_json import answer_json, event_json, result_json
from navqa.model.vkg_source import VkgSource
from navqa.online.strategies import STRATEGIES

if TYPE_CHECKING:
    from navqa.audits.coverage import AuditReport
    from navqa.audits.lint import Linter
    from navqa.backends.sparql_http import HttpSparqlEndpoint
    from navqa.offline.artifacts import IndexBundle
    from navqa.online.pipeline import Pipeline

#: Strategies a request may choose (the pipeline's own list).


class LlmChoice(StrEnum):
    """Which LLM answers a request: ``none`` (the offline backend) or ``openai``."""

    none = "none"
    openai = "openai"


@dataclass(frozen=True)
class VkgService:
    """One VKG, loaded once and shared by every request.

    Attributes:
        source: The VKG's descriptor (never serialised with secrets).
        url: Its SPARQL endpoint (Ontop).
        bundle: Its index.
        pipelines: One pipeline per LLM choice (``none`` always; ``openai`` when configured).
        default_llm: The choice used when a request names none.
        endpoint: The SPARQL client (read-only queries).
        linter: The linter over the index.
        audit: The audit report (static: coverage, unmapped elements, findings).
        ontop_managed: Whether this service started Ontop (else it reuses one).
    """

    source: VkgSource
    url: str
    bundle: IndexBundle
    pipelines: Mapping[LlmChoice, Pipeline]
    default_llm: LlmChoice
    endpoint: HttpSparqlEndpoint
    linter: Linter
    audit: AuditReport
    ontop_managed: bool = True
    lint_lock: threading.Lock = field(default_factory=threading.Lock, compare=False)

    @property
    def name(self) -> str:
        return self.source.name

    def pipeline(self, llm: LlmChoice | None) -> Pipeline:
        """The pipeline for ``llm`` (the default one for ``None``).

        Raises:
            ConfigError: ``openai`` was asked for and no LLM is configured.
        """
        choice = llm or self.default_llm
        if choice not in self.pipelines:
            raise ConfigError(f"llm {choice.value!r} is not configured on this service "
                              f"(it has: {', '.join(c.value for c in self.pipelines)})")
        return self.pipelines[choice]

    def describe_json(self) -> dict[str, Any]:
        """What ``/api/vkgs`` shows: names, files, kind — no credentials."""
        s = self.source
        return {"name": s.name, "kind": s.kind.value, "ontology": str(s.ontology),
                "mapping": str(s.mapping), "endpoint": self.url,
                "llms": [c.value for c in self.pipelines], "default_llm": self.default_llm.value,
                "coverage": round(self.audit.coverage.coverage, 1),
                "prefixes": dict(self.pipelines[LlmChoice.none].ctx.prefixes)}


def build_service(config: NavqaConfig, source: VkgSource, url: str, *,
                  ontop_managed: bool = True) -> VkgService:
    """Load everything a VKG needs to answer (index built first when missing or stale).

    Raises:
        ConfigError: the configured LLM cannot be used.
        IndexError_, InputError: the index cannot be built or loaded.
    """
    from navqa.audits.coverage import audit
    from navqa.audits.lint import Linter
    from navqa.backends.embedder_factory import make_embedder
    from navqa.backends.llm_factory import make_llm
    from navqa.backends.sparql_http import HttpSparqlEndpoint
    from navqa.offline.artifacts import ensure_index
    from navqa.online.pipeline import Pipeline

    emb = make_embedder(config.embedder)
    backend = make_llm(config)
    bundle = ensure_index(config, source, embedder=emb, llm=backend)
    endpoint = HttpSparqlEndpoint(url, timeout=config.runtime.query_timeout_s)
    offline_cfg = config.with_overrides(llm={"provider": "none"})
    pipelines: dict[LlmChoice, Pipeline] = {
        LlmChoice.none: Pipeline.from_index(bundle, endpoint=endpoint, config=offline_cfg,
                                            embedder=emb, llm=None)}
    if backend is not None:
        pipelines[LlmChoice.openai] = Pipeline.from_index(bundle, endpoint=endpoint,
                                                          config=config, embedder=emb,
                                                          llm=backend)
    ctx = pipelines[LlmChoice.none].ctx
    return VkgService(
        source=source, url=url, bundle=bundle, pipelines=pipelines,
        default_llm=LlmChoice.openai if backend is not None else LlmChoice.none,
        endpoint=endpoint, linter=Linter(bundle, embedder=ctx.embedder),
        audit=audit(bundle, source.name), ontop_managed=ontop_managed)


# -- the work of one request ------------------------------------------------------------------

EventSink = Callable[[str, dict[str, Any]], None]


def lint_json(svc: VkgService, sparql: str) -> dict[str, Any]:
    """Lint one query (never runs it): its findings with positions, and a repair if any."""
    with svc.lint_lock:
        res = svc.linter.lint(sparql)
    return res.as_dict()


def triage(svc: VkgService, answer: Answer, lint: dict[str, Any] | None) -> list[str]:
    """Why an empty result may be empty: lint findings, values not found, refused checks."""
    out: list[str] = []
    for f in (lint or {}).get("findings", []):
        out.append(f"{f.get('rule')}: {f.get('message')}")
    for ev in answer.of(ValuesGrounded):
        assert isinstance(ev, ValuesGrounded)
        for u in ev.ungrounded:
            near = ", ".join(repr(v) for v in u.nearest) or "none"
            out.append(f"{u.mention!r} was not found in the data (nearest stored values: {near})")
    for ev in answer.of(QueryChecked):
        assert isinstance(ev, QueryChecked)
        out.extend(ev.issues)
    if not out:
        out.append("no lint finding and every value was found: the data may simply hold no "
                   "such answer")
    return out


def ask(svc: VkgService, question: str, *, strategy: str = "navqa",
        llm: LlmChoice | None = None, sink: EventSink | None = None) -> dict[str, Any]:
    """Answer one question; every pipeline event goes to ``sink`` as it happens.

    The result is ``navqa ask --json``'s object (with the answer's ``confidence``,
    ``unplaced`` parts and ``alternatives``, from :mod:`navqa.online.confidence`) plus
    ``vkg``, ``answer`` (the shown column's values), ``lint`` (findings on the SPARQL)
    and, for an empty result, ``triage``.

    Raises:
        ConfigError: unknown strategy or LLM, or an empty question.
        EndpointError: Ontop failed (a dead endpoint is never "no answer").
    """
    if strategy not in STRATEGIES:
        raise ConfigError(f"unknown strategy {strategy!r}; choose from {', '.join(STRATEGIES)}")
    pipe = svc.pipeline(llm)
    answer: Answer | None = None
    for ev in pipe.stream(question, strategy=strategy):
        if isinstance(ev, Answered):
            answer = ev.answer
        elif sink is not None:
            sink("event", event_json(ev))
    assert answer is not None
    out = answer_json(answer)
    out["vkg"] = svc.name
    out["error_kind"] = answer.error_kind
    out["answer"] = answer_values(answer)
    lint = lint_json(svc, answer.sparql) if answer.sparql else None
    out["lint"] = lint
    if sink is not None and lint is not None:
        sink("lint", lint)
    if answer.empty:
        out["triage"] = triage(svc, answer, lint)
        if sink is not None:
            sink("triage", {"reasons": out["triage"]})
    return out


def answer_values(answer: Answer) -> list[str]:
    """The answer as plain strings: the column a person reads it by (an entity answer's
    labels, :func:`~navqa.model.answers.shown_column`; else the first column of a SELECT),
    ``true``/``false``."""
    from navqa.model.answers import shown_column
    from navqa.model.terms import AskResult, SelectResult

    r = answer.result
    if isinstance(r, AskResult):
        return ["true" if r.value else "false"]
    if isinstance(r, SelectResult) and r.variables:
        j = shown_column(r)
        return [t.value if hasattr(t, "value") else str(t) for row in r.rows
                for t in row[j:j + 1] if t is not None]
    return []


def sparql(svc: VkgService, query: str) -> dict[str, Any]:
    """Run a read-only query (UPDATE is refused before anything is sent).

    Raises:
        QueryCheckError: an UPDATE or a query that does not parse.
        EndpointError: Ontop failed.
    """
    from navqa.backends.sparql_http import query_form

    query_form(query)
    return result_json(svc.endpoint.query(query))


def describe(svc: VkgService, term: str, *, samples: int = 5) -> dict[str, Any]:
    """A class or property with its mapped neighbourhood and sample values.

    Args:
        term: A full IRI, ``<iri>``, or a prefixed name (``rail:Company``).

    Raises:
        InputError: the term is not declared in the ontology.
        EndpointError: the sample query failed.
    """
    from navqa.audits.coverage import neighbours
    from navqa.model.iri import expand

    ctx = svc.pipelines[LlmChoice.none].ctx
    onto, active = svc.bundle.ontology, svc.bundle.active
    iri = term.strip()
    if not iri.startswith(("http://", "https://", "urn:")):
        try:
            iri = expand(iri, ctx.prefixes)
        except KeyError as e:
            raise InputError(f"{term!r}: unknown prefix (known: "
                             f"{', '.join(sorted(ctx.prefixes))})") from e
    kind = onto.kind(iri)
    if kind is None:
        raise InputError(f"{term!r} is not a class or property of {svc.name}")
    near = sorted(neighbours(svc.bundle, iri))
    limit = max(1, min(samples, 50))
    if iri in onto.classes:
        q = f"SELECT DISTINCT ?x WHERE {{ ?x a <{iri}> }} LIMIT {limit}"
    else:
        q = f"SELECT ?s ?o WHERE {{ ?s <{iri}> ?o }} LIMIT {limit}"
    rows: list[list[str]] = []
    if active.is_active(iri):
        res = svc.endpoint.select(q)
        rows = [[ctx.compact(t.value) if t is not None and hasattr(t, "value") else "" for t in r]
                for r in res.rows]
    return {
        "iri": iri, "name": ctx.compact(iri), "kind": str(kind), "label": onto.label(iri),
        "mapped": active.is_mapped(iri), "active": active.is_active(iri),
        "neighbours": [{"iri": n, "name": ctx.compact(n), "mapped": active.is_mapped(n)}
                       for n in near],
        "samples": rows, "sample_query": q,
    }
