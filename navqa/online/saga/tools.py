"""The agent's tools: ``search``, ``lookup``, ``examples``, ``execute`` (and ``stop``).

Each tool returns an *observation* (the text the controller reads) and the typed events
it caused. Every tool works on mapped terms only (the active ontology), every query it
sends is bounded, and every query the controller writes is linted before it runs.

``search(text)``     classes and properties of the indices closest to the text — the
                     properties with their ``[domain | range]`` — and value probes: where
                     the text occurs as a stored name, with the entity's classes;
``lookup(x)``        x is a class (``rail:Station``), a variable (``?s``, typed by Θ) or an
                     entity IRI: its typed, filtered neighbourhood in CompactFormat — the
                     Ga edges and the compatible part of the type-blind pool (see
                     :mod:`navqa.online.saga.lookup`); one ``PropertiesJudged`` event with
                     the ``available`` count;
``examples(p)``      a few triples of p (``LIMIT 5``), their IRIs typed by template;
``execute(q)``       lint (:func:`navqa.online.check.check_query`), run, update Θ from the
                     query and its results; an empty result comes with the likely cause
                     (:func:`navqa.online.saga.diagnose.diagnose`).
"""

from __future__ import annotations

import time
import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from navqa.errors import EndpointError, EndpointUnreachableError
from navqa.model.events import (
    Candidate,
    ErrorKind,
    Event,
    PropertiesJudged,
    QueryChecked,
    QueryExecuted,
    QuerySynthesized,
    ValueMention,
)
from navqa.model.iri import IRI, expand
from navqa.model.terms import AskResult, QueryResult, SelectResult
from navqa.online.check import check_query
from navqa.online.saga.diagnose import Finding, diagnose, render_findings
from navqa.online.saga.lookup import (
    compact_format,
    rank_by_answer_type,
    search_properties,
    type_blind_pool,
)
from navqa.online.saga.typefilter import TypeFilter, make_type_filter
from navqa.online.saga.typestate import TypeState

if TYPE_CHECKING:
    from navqa.online.state import AskState
    from navqa.online.strategies import Stages

__all__ = ["Tools", "Executed", "schema_filter"]

LISTING_LIMIT = 25
ROWS_SHOWN = 5

_filters: weakref.WeakKeyDictionary[object, TypeFilter] = weakref.WeakKeyDictionary()


def schema_filter(pipe: Stages) -> TypeFilter:
    """The pipeline's TypeFilter (its schema index), also when filtering is switched off."""
    f = pipe.candidate_filter
    if isinstance(f, TypeFilter):
        return f
    cached = _filters.get(pipe)
    if cached is None:
        cached = make_type_filter(pipe.ctx, endpoint=pipe.endpoint,
                                  cache_dir=pipe.config.runtime.cache_dir)
        _filters[pipe] = cached
    return cached


@dataclass
class Executed:
    """The outcome of one ``execute``."""

    sparql: str
    ok: bool
    result: QueryResult | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    findings: list[Finding] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        if self.result is None:
            return False
        if isinstance(self.result, AskResult):
            return not self.result.value
        return self.result.is_empty


class Tools:
    """The tools, bound to one question (and the session's Θ).

    Args:
        pipe: The pipeline (schema context, endpoint, configuration).
        st: The question's state (its linking gives the type-blind pool).
        theta: Θ.
        method: ``llm`` or ``offline`` (recorded on the events).
    """

    def __init__(self, pipe: Stages, st: AskState, theta: TypeState, method: str) -> None:
        self.pipe = pipe
        self.ctx = pipe.ctx
        self.st = st
        self.theta = theta
        self.method = method
        self.tfilter = theta.tfilter
        self.timeout = pipe.config.runtime.query_timeout_s
        self.filtering = pipe.config.pipeline.type_filter
        self.prior = pipe.config.pipeline.answer_type_prior

    # -- helpers -------------------------------------------------------------------------------

    def _resolve(self, text: str) -> IRI | None:
        t = text.strip().strip(",.;")
        if t.startswith("<") and t.endswith(">"):
            return t[1:-1]
        if ":" in t and not t.startswith("?"):
            try:
                return expand(t, self.ctx.prefixes)
            except Exception:
                return None
        return None

    def _relevance(self) -> dict[IRI, float]:
        lk = self.st.linking
        return dict(lk.property_scores) if lk is not None else {}

    # -- search --------------------------------------------------------------------------------

    def search(self, text: str) -> tuple[str, list[Event]]:
        """Classes, properties and stored values matching ``text``."""
        ctx = self.ctx
        text = text.strip().strip('"')
        if not text:
            return "search needs a text", []
        vec = ctx.embed([text])
        cls_scores = ctx.class_scores(vec)
        classes = sorted(((s, c) for c, s in cls_scores.items() if ctx.allowed(c)),
                         reverse=True)[:5]
        k = self.pipe.config.pipeline.property_top_k
        props = search_properties(ctx, vec, k)[0]
        cands = [Candidate(p, "out", "", round(s, 4)) for p, s in props]
        if self.prior and self.theta.answer_classes:
            index = self.tfilter.index
            cands = rank_by_answer_type(cands, {c.prop: index.range(c.prop) for c in cands},
                                        self.tfilter.closure(self.theta.answer_classes))
        events: list[Event] = []
        lines: list[str] = []
        if self.pipe.config.pipeline.value_grounding and len(text) >= 2:
            from navqa.online.values import ground_values

            found, _ = ground_values(ctx, self.pipe.endpoint, [ValueMention(text)],
                                     timeout=self.timeout)
            if found:
                lines.append("Values in the data:")
            for g in found[:5]:
                if self.theta.enabled:
                    events += self.theta.bind(g.prop, g.stored, g.subject)
                types, _ = self.theta.entity_types(g.subject) if g.subject else (
                    frozenset(g.classes), False)
                lines.append(f'- "{g.stored}" is the {ctx.compact(g.prop)} of <{g.subject}> '
                             f"(a {', '.join(ctx.compact(t) for t in sorted(types)) or '?'})")
        lines.append("Classes:")
        for _, c in classes:
            ent = ctx.ontology.entity(c)
            comment = (ent.comment() if ent is not None else None) or ""
            lines.append(f"- {ctx.label(c)} ({ctx.compact(c)}): {comment[:100]}")
        lines.append("Properties:")
        index = self.tfilter.index
        for cand in cands:
            e = index.get(cand.prop)
            lines.append("- " + compact_format(ctx, cand.prop, "out", domain=e.domain.shown,
                                               range_=e.range.shown,
                                               datatypes=e.range.datatypes,
                                               observed=self.theta.observed_types(cand.prop,
                                                                                  "range")))
        return "\n".join(lines), events

    # -- lookup --------------------------------------------------------------------------------

    def lookup(self, arg: str) -> tuple[str, list[Event]]:
        """The typed, filtered, annotated neighbourhood of a class, variable or entity."""
        ctx = self.ctx
        t0 = time.perf_counter()
        arg = arg.strip()
        events: list[Event] = []
        definite = False
        if arg.startswith("?") or arg.startswith("$"):
            key = "?" + arg[1:]
            types = sorted(self.theta.of(key)) if self.theta.enabled else []
            definite = self.theta.is_definite(key)
            label = key
            if not types:
                return (f"no type is known for {key}: execute a query that types it "
                        f"(?x a C) or look up a class"), events
        else:
            iri = self._resolve(arg)
            if iri is None:
                return f"cannot read {arg!r}: give a class (prefix:Name), ?var or <iri>", events
            label = ctx.compact(iri)
            if iri in ctx.ontology.classes or iri in ctx.classes:
                if not ctx.allowed(iri):
                    return (f"{label} has no data in this VKG; search for a mapped class "
                            "instead"), events
                types = [iri]
            else:
                events += self.theta.observe_entity(iri)
                ts, definite = self.theta.entity_types(iri)
                types = sorted(ts)
                if not types:
                    return f"no class is known for {label}", events
        node = types[0]
        cands = self._neighbourhood(types)
        available = len(cands)
        if self.filtering:
            kept, removed = self.tfilter.split(types, cands, definite=definite)
        else:
            kept, removed = cands, []
        index = self.tfilter.index
        if self.prior and self.theta.answer_classes:
            kept = rank_by_answer_type(kept, {c.prop: index.range(c.prop) for c in kept},
                                       self.tfilter.closure(self.theta.answer_classes))
        else:
            kept = sorted(kept, key=lambda c: -c.score)
        shown = kept[:LISTING_LIMIT]
        lines = [f"{label}: types {', '.join(ctx.compact(t) for t in types)}"]
        listed = []
        for c in shown:
            e = index.get(c.prop)
            text = compact_format(ctx, c.prop, c.direction, domain=e.domain.shown,
                                  range_=e.range.shown, datatypes=e.range.datatypes,
                                  observed=self.theta.observed_types(c.prop, "range"))
            listed.append(Candidate(c.prop, c.direction, c.neighbour, c.score, text))
            lines.append(f"- {text}")
        if len(kept) > len(shown):
            lines.append(f"({len(kept) - len(shown)} less relevant properties not shown)")
        if removed:
            lines.append(f"({len(removed)} properties hidden: their domain conflicts with "
                         f"{', '.join(ctx.compact(t) for t in types)})")
        events.append(PropertiesJudged(
            root=node, node=node, depth=0, candidates=tuple(listed), selected=(),
            filtered_out=tuple(c.prop for c in removed), available=available,
            method=self.method,  # type: ignore[arg-type]
            seconds=time.perf_counter() - t0))
        return "\n".join(lines), events

    def _neighbourhood(self, types: list[IRI]) -> list[Candidate]:
        """Ga edges of the types, then the type-blind pool (what a type-blind lookup lists)."""
        ctx = self.ctx
        rel = self._relevance()
        seen: set[tuple[IRI, str]] = set()
        out: list[Candidate] = []
        for t in types:
            for n in ctx.neighbours(t):
                key = (n.edge.prop, n.direction)
                if key in seen or not ctx.allowed(n.edge.prop):
                    continue
                seen.add(key)
                out.append(Candidate(n.edge.prop, n.direction,  # type: ignore[arg-type]
                                     n.other, round(rel.get(n.edge.prop, 0.0), 4)))
        if self.st.linking is not None:
            pool = type_blind_pool(ctx, self.st.linking,
                                   k=self.pipe.config.pipeline.property_top_k)
            for p, s in pool:
                if (p, "out") in seen:
                    continue
                seen.add((p, "out"))
                out.append(Candidate(p, "out", "", s))
        return out

    # -- examples ------------------------------------------------------------------------------

    def examples(self, arg: str) -> tuple[str, list[Event]]:
        """A few triples of a property, with their IRIs typed by template."""
        ctx = self.ctx
        prop = self._resolve(arg)
        if prop is None:
            return f"cannot read {arg!r}: give a property as prefix:name or <iri>", []
        if not ctx.allowed(prop):
            return f"{ctx.compact(prop)} has no data in this VKG", []
        q = f"SELECT ?s ?o WHERE {{ ?s <{prop}> ?o }} LIMIT {ROWS_SHOWN}"
        try:
            res = self.pipe.endpoint.select(q, timeout=self.timeout)
        except EndpointUnreachableError:
            raise
        except EndpointError as e:
            return f"examples of {ctx.compact(prop)} failed: {e}", []
        if res.is_empty:
            return f"{ctx.compact(prop)} has no triples", []
        lines = [f"examples of {ctx.compact(prop)}:"]
        for s, o in res.rows:
            lines.append(f"- {_term(ctx, s)} {ctx.compact(prop)} {_term(ctx, o)}")
        evs = self.theta.observe_result(f"SELECT ?s ?o WHERE {{ ?s <{prop}> ?o }}", res)
        return "\n".join(lines), list(evs)

    # -- execute -------------------------------------------------------------------------------

    def execute(self, sparql: str, *, synthesized: bool = True, diagnose_empty: bool = True
                ) -> tuple[Executed, str, list[Event]]:
        """Lint, run, observe; an empty result comes back with its likely cause."""
        ctx = self.ctx
        events: list[Event] = []
        if synthesized:
            events.append(QuerySynthesized(sparql=sparql, method=self.method))  # type: ignore[arg-type]
        t0 = time.perf_counter()
        res = check_query(ctx, sparql, enforce_active=self.pipe.config.pipeline.use_active_ontology)
        events.append(QueryChecked(sparql=res.sparql, ok=res.ok, issues=tuple(res.issues),
                                   unmapped_terms=tuple(res.unmapped + res.unknown),
                                   repaired=res.repaired, seconds=time.perf_counter() - t0))
        sparql = res.sparql
        if not res.ok:
            kind = ErrorKind.UNMAPPED_TERM if res.unmapped or res.unknown \
                else ErrorKind.QUERY_CHECK
            if res.unmapped or res.unknown:
                alts = sorted({ctx.compact(a) for t in res.unmapped + res.unknown
                               for a in res.alternatives.get(t, [])})
                obs = ("[REFUSED] the query uses a class or property that has no data in this "
                       "VKG, so it would return nothing" +
                       (f"; closest usable terms: {', '.join(alts)}" if alts else ""))
            else:
                issues = [i for i in res.issues if "has no mapping" not in i]
                obs = "[REFUSED] " + "; ".join(issues)
            return Executed(sparql, False, error=obs, error_kind=kind), obs, events
        events += self.theta.observe_query(sparql)
        t1 = time.perf_counter()
        try:
            result = self.pipe.endpoint.query(sparql, timeout=self.timeout)
        except EndpointUnreachableError:
            raise
        except EndpointError as e:
            events.append(QueryExecuted(sparql=sparql, rows=0, empty=False,
                                        seconds=time.perf_counter() - t1))
            obs = f"[ERROR] the endpoint failed: {str(e)[:300]}"
            return Executed(sparql, False, error=obs, error_kind=ErrorKind.of(e)), obs, events
        rows = len(result) if hasattr(result, "__len__") else 1
        events.append(QueryExecuted(sparql=sparql, rows=rows, empty=result.is_empty,
                                    seconds=time.perf_counter() - t1))
        ex = Executed(sparql, True, result=result)
        if isinstance(result, AskResult):
            obs = f"ASK → {'true' if result.value else 'false'}"
        elif result.is_empty:
            if diagnose_empty:
                ex.findings = self.findings(sparql)
            obs = render_findings(ex.findings)
        else:
            events += self.theta.observe_result(sparql, result)
            obs = _render_rows(ctx, result)
        return ex, obs, events

    def findings(self, sparql: str, *, probe: bool = True) -> list[Finding]:
        """The likely causes of an empty result (static checks + literal probes)."""
        found = diagnose(self.ctx, self.theta, sparql, endpoint=self.pipe.endpoint,
                         timeout=self.timeout, probe_literals=probe)
        if not self.filtering:
            # w/o type-constrained grounding: no δ/ρ conflict is reported
            found = [f for f in found if not f.kind.endswith("conflict")]
        return found


def _term(ctx: object, t: object) -> str:
    from navqa.model.terms import IRITerm, LiteralTerm

    if isinstance(t, IRITerm):
        return f"<{t.value}>"
    if isinstance(t, LiteralTerm):
        return t.n3()
    return str(t)


def _render_rows(ctx: object, result: QueryResult) -> str:
    if not isinstance(result, SelectResult):
        return f"{len(result) if hasattr(result, '__len__') else 1} result(s)"
    n = len(result.rows)
    head = f"{n} row(s) ({', '.join('?' + v for v in result.variables)})"
    rows = ["- " + " | ".join(_term(ctx, t) if t is not None else "—" for t in row)
            for row in result.rows[:ROWS_SHOWN]]
    more = [f"… {n - ROWS_SHOWN} more"] if n > ROWS_SHOWN else []
    return "\n".join([head, *rows, *more])
