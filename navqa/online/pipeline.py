"""The online stage: question → SPARQL → answers, as a stream of typed events.

``Pipeline.stream(question)`` yields every step's event (mentions, linking, value
grounding, one judge decision per expanded node, subgraphs, reranking, synthesis,
checks, execution, repairs) and ends with :class:`~navqa.model.events.Answered`.
``Pipeline.ask`` returns that :class:`~navqa.model.events.Answer`. ``navqa ask
--explain``, the evaluation harness and the Python API all read the same stream.

Each LLM-judged step has its deterministic implementation, used when no LLM is
configured (the offline backend): mention extraction, judge, reranker, synthesizer.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from typing import Any

from navqa.backends.protocols import LLM, Embedder, Reranker, SparqlEndpoint
from navqa.config import NavqaConfig
from navqa.errors import (
    ConfigError,
    EndpointError,
    EndpointUnreachableError,
    LLMError,
    QueryCheckError,
)
from navqa.model.events import (
    Answer,
    Answered,
    AnswerKind,
    AnswerTypePredicted,
    ErrorKind,
    Event,
    Linked,
    MentionsExtracted,
    QueryChecked,
    QueryExecuted,
    QuerySynthesized,
    ScoredTerm,
    SubgraphExpanded,
    SubgraphsReranked,
    SubgraphVerbalized,
    ValueMention,
    ValueProbe,
    ValuesGrounded,
)
from navqa.model.iri import IRI
from navqa.model.llm import Message, Response
from navqa.model.rules import GrammarRule
from navqa.offline.artifacts import IndexBundle
from navqa.online.check import CheckResult, check_query
from navqa.online.code_lists import CodeLists
from navqa.online.confidence import assess
from navqa.online.context import SchemaContext, normal
from navqa.online.cost import CostGuard, avoid_costly, cost_event, offline_rewrite
from navqa.online.expansion import (
    Anchor,
    CandidateFilter,
    ContextRequest,
    Scorer,
    Subgraph,
    complete,
    expand,
)
from navqa.online.judge import Judge, LLMJudge, OfflineJudge
from navqa.online.linking import LEXICAL_WEIGHT, link
from navqa.online.plain_names import plain_names
from navqa.online.reading.answer_type import offline_answer_type, root_bonus
from navqa.online.reading.mentions import LLMMentionExtractor, extract_mentions
from navqa.online.saga.vacuous import detect as detect_vacuous
from navqa.online.state import AskState
from navqa.online.strategies import STRATEGIES, Stages, StrategyRegistry, registry
from navqa.online.synthesis.candidates import enumerate_candidates
from navqa.online.synthesis.llm import LLMSynthesizer
from navqa.online.synthesis.offline import OfflineSynthesizer
from navqa.online.synthesis.plan import Plan, render
from navqa.online.synthesis.scoring import Evidence, choose
from navqa.online.synthesis.spatial import GEO, parse_spatial
from navqa.online.values import (
    CategoricalVocabulary,
    ground_mentions,
    numbered_names,
    probe_failure,
)
from navqa.online.verbalize import compact_listing, edge_cost, token_count, verbalize

__all__ = ["STRATEGIES", "AskState", "CountingLLM", "Pipeline", "run_navqa"]

CANDIDATE_ROOTS = 5
"""How many roots of the rerank the offline query search looks at, at most."""
GEOMETRY_CHAINS = ((GEO + "hasDefaultGeometry", GEO + "asWKT"),
                   (GEO + "hasGeometry", GEO + "asWKT"))
"""What a spatial question needs shown on its classes: a feature's geometry and its WKT
(the OGC GeoSPARQL terms, see :mod:`navqa.online.synthesis.spatial`)."""


class CountingLLM:
    """Wraps an LLM and counts calls and tokens per thread (reset per question).

    The evaluation harness shares one pipeline between worker threads; thread-local
    counters keep each question's accounting its own.
    """

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.model = inner.model
        self._local = threading.local()

    def _counts(self) -> list[int]:
        if not hasattr(self._local, "counts"):
            self._local.counts = [0, 0, 0]
        counts: list[int] = self._local.counts
        return counts

    @property
    def calls(self) -> int:
        return self._counts()[0]

    @property
    def prompt_tokens(self) -> int:
        return self._counts()[1]

    @property
    def completion_tokens(self) -> int:
        return self._counts()[2]

    def reset(self) -> None:
        self._local.counts = [0, 0, 0]

    def call(self, messages: Sequence[Message], *, schema: type[Any] | None = None,
             temperature: float | None = None, max_tokens: int | None = None) -> Response:
        resp = self.inner.call(messages, schema=schema, temperature=temperature,
                               max_tokens=max_tokens)
        c = self._counts()
        c[0] += 1
        c[1] += resp.usage.prompt_tokens
        c[2] += resp.usage.completion_tokens
        return resp


class Pipeline:
    """NaVQA's online stage over one VKG.

    Args:
        ctx: The schema context (from an index bundle).
        endpoint: The SPARQL endpoint (Ontop).
        config: navqa configuration (``pipeline`` section: top-k, depth, switches).
        llm: The LLM, or ``None`` for the offline backend.
        reranker: Subgraph reranker (defaults from config: cross-encoder, LLM or bi-encoder).
        strategies: Where strategies are looked up by name (the process-wide registry of
            :mod:`navqa.online.strategies` by default).
        cost_guard: When given, every query is estimated before it runs and a
            :class:`~navqa.model.events.QueryCostChecked` event says whether the database
            expects it to explode (the query still runs; ``ask`` warns).

    The pipeline is shared by concurrent questions (``navqa eval`` workers, the service):
    everything a question accumulates lives in its own :class:`AskState`, never on
    ``self``; what is on ``self`` is built once and read-only afterwards.
    """

    def __init__(self, ctx: SchemaContext, endpoint: SparqlEndpoint, config: NavqaConfig, *,
                 llm: LLM | None = None, reranker: Reranker | None = None,
                 strategies: StrategyRegistry | None = None,
                 cost_guard: CostGuard | None = None) -> None:
        self.ctx = ctx
        self.endpoint = endpoint
        self.cost_guard = cost_guard
        self.config = config
        self.llm = CountingLLM(llm) if llm is not None else None
        if reranker is None:
            from navqa.backends.rerankers import make_reranker

            reranker = make_reranker(config, ctx.embedder, self.llm)
        self.reranker = reranker
        self.offline_synth = OfflineSynthesizer(
            ctx, disabled=config.pipeline.disabled_rules,
            entity_answer=config.pipeline.entity_answer)
        self.vocabulary = CategoricalVocabulary(ctx, endpoint,
                                                timeout=config.runtime.query_timeout_s)
        self.code_lists = CodeLists(ctx, endpoint, timeout=config.runtime.query_timeout_s)
        self.candidate_filter: CandidateFilter | None = self._make_filter()
        self.strategies = strategies if strategies is not None else registry
        self._full_ctx: SchemaContext | None = None
        self._full_ctx_lock = threading.Lock()

    # -- construction ------------------------------------------------------------------

    @classmethod
    def from_index(cls, bundle: IndexBundle, *, endpoint: SparqlEndpoint, config: NavqaConfig,
                   embedder: Embedder | None = None, llm: LLM | None = None,
                   reranker: Reranker | None = None) -> Pipeline:
        """A pipeline over a loaded index (see :func:`navqa.offline.artifacts.load_index`)."""
        if embedder is None:
            from navqa.backends.embedder_factory import make_embedder

            embedder = make_embedder(config.embedder)
        ctx = SchemaContext(bundle, embedder,
                            use_active_ontology=config.pipeline.use_active_ontology)
        return cls(ctx, endpoint, config, llm=llm, reranker=reranker)

    @classmethod
    def for_vkg(cls, config: NavqaConfig, running: Any, *, embedder: Embedder | None = None,
                progress: Callable[[str, int, int | None], None] | None = None) -> Pipeline:
        """Wire everything for a served VKG (:class:`~navqa.runtime.vkg.RunningVkg`).

        Builds the index when it is missing or stale; the LLM comes from the config
        (``None`` — the offline backend — when none is configured).
        """
        from navqa.backends.embedder_factory import make_embedder
        from navqa.backends.llm_factory import make_llm
        from navqa.backends.sparql_http import HttpSparqlEndpoint
        from navqa.offline.artifacts import ensure_index

        emb = embedder or make_embedder(config.embedder)
        llm = make_llm(config)
        bundle = ensure_index(config, running.dataset, embedder=emb, llm=llm, progress=progress)
        endpoint = HttpSparqlEndpoint(running.url, timeout=config.runtime.query_timeout_s)
        return cls.from_index(bundle, endpoint=endpoint, config=config, embedder=emb, llm=llm)

    def full_context(self) -> SchemaContext:
        """A context over the whole ontology T (baselines and "w/o AOC"), built once."""
        if not self.ctx.use_active:
            return self.ctx
        with self._full_ctx_lock:
            if self._full_ctx is None:
                self._full_ctx = SchemaContext(self.ctx.bundle, self.ctx.embedder,
                                               use_active_ontology=False)
            return self._full_ctx

    def _make_filter(self) -> CandidateFilter | None:
        if not self.config.pipeline.type_filter:
            return None
        from navqa.online.saga.typefilter import make_type_filter

        return make_type_filter(self.ctx, endpoint=self.endpoint,
                                cache_dir=self.config.runtime.cache_dir)

    # -- public API ----------------------------------------------------------------------

    def ask(self, question: str, *, strategy: str = "navqa") -> Answer:
        """Answer one question (the last event of :meth:`stream`)."""
        answer: Answer | None = None
        for ev in self.stream(question, strategy=strategy):
            if isinstance(ev, Answered):
                answer = ev.answer
        assert answer is not None
        return answer

    def stream(self, question: str, *, strategy: str = "navqa") -> Iterator[Event]:
        """Every event of answering ``question``, ending with :class:`Answered`.

        Raises:
            EndpointUnreachableError: a dead endpoint stops everything (never "no answer").
            ConfigError: unknown strategy, or a strategy that needs an LLM without one.
        """
        run = self.strategies.get(strategy)
        question = question.strip()
        if not question:
            raise ConfigError("the question is empty")
        if self.llm is not None:
            self.llm.reset()
        st = AskState(question)
        t0 = time.perf_counter()
        try:
            for ev in run(self, st):
                st.events.append(ev)
                yield ev
        except EndpointUnreachableError:
            raise
        except (LLMError, QueryCheckError) as e:
            st.error = str(e)
            st.error_kind = ErrorKind.of(e)
        timings: dict[str, float] = {}
        for ev in st.events:
            timings[ev.stage] = timings.get(ev.stage, 0.0) + ev.seconds
        timings["total"] = time.perf_counter() - t0
        verdict = assess(question, st.events, sparql=st.sparql, result=st.result,
                         error=st.error, label=self.ctx.label)
        answer = Answer(
            question=question, sparql=st.sparql, result=st.result, events=tuple(st.events),
            timings=timings, llm_calls=self.llm.calls if self.llm else 0,
            prompt_tokens=self.llm.prompt_tokens if self.llm else 0,
            completion_tokens=self.llm.completion_tokens if self.llm else 0,
            error=st.error, error_kind=st.error_kind, strategy=strategy,
            confidence=verdict.confidence, unplaced=verdict.unplaced,
            alternatives=verdict.alternatives)
        yield Answered(answer=answer)

    # -- NaVQA -------------------------------------------------------------------------

    def extract(self, st: AskState) -> Iterator[Event]:
        """Mentions and linking (shared by every strategy)."""
        pc = self.config.pipeline
        t = time.perf_counter()
        if self.llm is not None:
            st.mentions, st.answer_hint = LLMMentionExtractor(self.llm)(st.question)
            method = "llm"
        else:
            st.mentions = extract_mentions(st.question)
            method = "offline"
        yield MentionsExtracted(mentions=st.mentions, method=method,  # type: ignore[arg-type]
                                seconds=time.perf_counter() - t)
        t = time.perf_counter()
        st.linking = link(self.ctx, st.question, st.mentions, k=pc.top_k,
                          k_props=pc.property_top_k)
        yield Linked(classes=tuple(st.linking.classes), properties=tuple(st.linking.properties),
                     seconds=time.perf_counter() - t)
        if pc.answer_type_prior:
            yield from self.answer_type(st)

    def answer_type(self, st: AskState) -> Iterator[Event]:
        """SAGA's answer-type prior (boosts ranking only)."""
        assert st.mentions is not None and st.linking is not None
        t = time.perf_counter()
        hint = st.answer_hint
        at = offline_answer_type(
            self.ctx, st.question, st.mentions, hint=hint,
            roles=GrammarRule.ROLE_STAND_IN not in self.config.pipeline.disabled_rules)
        method = "llm" if hint is not None else "offline"
        st.answer_type = at
        if at.role is not None:
            st.rules.add(GrammarRule.ROLE_STAND_IN)
        if at.cls is not None and all(c.iri != at.cls for c in st.linking.classes):
            st.linking.classes.append(ScoredTerm(at.cls, at.score, self.ctx.label(at.cls)))
        yield AnswerTypePredicted(kind=at.kind, cls=at.cls, label=at.phrase,
                                  method=method,  # type: ignore[arg-type]
                                  seconds=time.perf_counter() - t)

    def ground(self, st: AskState) -> Iterator[Event]:
        """Value grounding (switchable; recorded either way)."""
        assert st.mentions is not None
        if not self.config.pipeline.value_grounding:
            yield ValuesGrounded(groundings=(), enabled=False)
            return
        t = time.perf_counter()
        # a probe that times out or fails is recorded and grounding goes on without it
        probe_timeout = self.config.runtime.value_probe_timeout_s
        grounding = ground_mentions(
            self.ctx, self.endpoint, list(st.mentions.values), timeout=probe_timeout,
            abbreviations=GrammarRule.ABBREVIATED_VALUE not in self.config.pipeline.disabled_rules)
        st.groundings, probes = grounding.found, grounding.probes
        if GrammarRule.NUMBERED_NAME not in self.config.pipeline.disabled_rules:
            try:
                named_numbers, more = numbered_names(self.ctx, self.endpoint, st.question,
                                                     list(st.mentions.values),
                                                     timeout=probe_timeout)
            except EndpointError as e:  # unreachable: re-raised by probe_failure
                grounding.failures.append(probe_failure(ValueProbe.EXACT, None, e))
                named_numbers, more = [], 1
            probes += more
            if named_numbers:
                numbers = {g.mention.text for g in named_numbers}
                st.mentions = replace(st.mentions, values=tuple(
                    ValueMention(v.text, "string") if v.kind == "number" and v.text in numbers
                    else v for v in st.mentions.values))
                st.groundings = [*st.groundings, *named_numbers]
                st.rules.add(GrammarRule.NUMBERED_NAME)
        if GrammarRule.PLAIN_NAME not in self.config.pipeline.disabled_rules:
            try:
                plain, more = plain_names(self.ctx, self.endpoint, st.question,
                                          list(st.mentions.values), timeout=probe_timeout)
            except EndpointError as e:  # unreachable: re-raised by probe_failure
                grounding.failures.append(probe_failure(ValueProbe.EXACT, None, e))
                plain, more = [], 1
            probes += more
            if plain:
                # a number inside a name ("embryonic stage 13") is part of it
                spans = [(n.start, n.end) for n in plain]
                q = st.question
                st.mentions = replace(st.mentions, values=(*(
                    v for v in st.mentions.values
                    if not (v.kind == "number" and any(v.text in q[a:b] for a, b in spans))),
                    *(n.grounding.mention for n in plain)))
                st.groundings = [*st.groundings, *(n.grounding for n in plain)]
                st.rules.add(GrammarRule.PLAIN_NAME)
        if any(g.abbreviated for g in st.groundings):
            st.rules.add(GrammarRule.ABBREVIATED_VALUE)
        st.ungrounded = grounding.missing
        failures = list(grounding.failures)
        if st.linking is not None:
            at = st.answer_type
            classes = list(dict.fromkeys([*([at.cls] if at is not None and at.cls else []),
                                          *(c.iri for c in st.linking.classes[:3])]))
            named = {g.mention.text.lower() for g in st.groundings}
            vocab = {self.ctx.label(x.iri) for x in st.linking.classes} | {
                self.ctx.label(x.iri) for x in st.linking.properties if x.score >= 0.45}
            try:
                extra, more = self.vocabulary.match(st.question, classes, vocab)
            except EndpointError as e:
                failures.append(probe_failure(ValueProbe.CATEGORICAL, None, e))
                extra, more = [], 1
            st.groundings += [g for g in extra if g.mention.text.lower() not in named]
            # a categorical value the question spells out inside a name grounds that name
            st.ungrounded = [u for u in st.ungrounded if not any(
                g.stored.lower() in u.mention.text.lower() for g in extra)]
            probes += more
        typed = st.answer_type
        if st.linking is not None and \
                GrammarRule.CODE_VALUE not in self.config.pipeline.disabled_rules:
            try:
                probes += self._code_values(st)
            except EndpointError as e:  # unreachable: re-raised by probe_failure
                failures.append(probe_failure(ValueProbe.CODE_LIST, None, e))
                probes += 1
        at = st.answer_type
        if st.linking is not None and at is not None and at.attribute and at.cls is None:
            # "What is the population of Dunmere?": the answer hangs off the named thing.
            for g in st.groundings:
                for c in g.classes:
                    if all(x.iri != c for x in st.linking.classes) and self.ctx.allowed(c):
                        st.linking.classes.append(ScoredTerm(c, 0.0, self.ctx.label(c)))
        yield ValuesGrounded(groundings=tuple(g.event(probes) for g in st.groundings),
                             ungrounded=tuple(u.event() for u in st.ungrounded),
                             failures=tuple(failures), seconds=time.perf_counter() - t)
        at = st.answer_type
        if at is not None and at is not typed:  # a code the answer's phrase says
            yield AnswerTypePredicted(kind=at.kind, cls=at.cls, label=at.phrase,
                                      method="offline")

    def _code_values(self, st: AskState) -> int:
        """Code-list labels the question spells out ("lighthouses"): groundings on their
        code list; when one is the answer's phrase, the class that has the code becomes
        the answer class (the rule ``code-value``). Returns the probes made."""
        assert st.mentions is not None and st.linking is not None
        q = st.question
        names = [*(v.text for v in st.mentions.values if v.kind == "string"),
                 *(g.mention.text for g in st.groundings)]
        taken = [(i, i + len(n)) for n in names if n and (i := q.find(n)) >= 0]
        matches, probes = self.code_lists.match(q, taken)
        if not matches:
            return probes
        st.groundings = [*st.groundings, *(m.grounding for m in matches)]
        st.rules.add(GrammarRule.CODE_VALUE)
        at = st.answer_type
        if at is None or at.kind not in (AnswerKind.ENTITY, AnswerKind.COUNT):
            return probes
        phrase = {w for w in normal(at.phrase).split() if len(w) > 3}
        # the answer's phrase says the code ("how many lighthouses"; "the tallest
        # transmission or telecommunication towers"), or there is none ("List the
        # lighthouses with …"): the first code spelled out
        named = [m for m in matches if m.owners and (not phrase or phrase & set(normal(
            f"{m.grounding.mention.text} {m.grounding.stored}").split()))]
        if named:
            owner = named[0].owners[0]
            st.answer_type = replace(at, cls=owner, named=True)
            if all(c.iri != owner for c in st.linking.classes):
                st.linking.classes.append(ScoredTerm(owner, at.score, self.ctx.label(owner)))
        return probes

    def _scorer(self, st: AskState) -> Scorer:
        assert st.linking is not None
        lk = st.linking
        anchors = {c for g in st.groundings for c in g.classes}
        sup = self.ctx.ontology.superclasses
        anchor_set = {a for c in anchors for a in sup(c)} | anchors
        dist = _distances(self.ctx, anchors)

        def score(node: IRI, prop: IRI, neighbour: IRI, depth: int) -> float:
            s = max(lk.property_scores.get(prop, 0.0),
                    0.9 * lk.class_scores.get(neighbour, 0.0))
            if neighbour in anchor_set:
                s += 0.3
            elif dist.get(neighbour, 99) < dist.get(node, 99):
                s += 0.2
            return s

        return score

    def _judge(self) -> Judge:
        pc = self.config.pipeline
        if self.llm is not None:
            return LLMJudge(self.llm, {i: self.ctx.compact(i) for i in self.ctx.properties})
        return OfflineJudge(threshold=pc.judge_threshold, top_n=pc.judge_top_n)

    def expand_all(self, st: AskState) -> Iterator[Event]:
        """Grow and verbalise one subgraph per candidate class."""
        assert st.linking is not None
        pc = self.config.pipeline
        t = time.perf_counter()
        roots = [c.iri for c in st.linking.classes]
        if pc.use_expansion:
            # The type-blind pool (SAGA's "available" beyond Ga): what a property search
            # for each mention would list; the type filter then removes conflicting ones.
            from navqa.online.saga.lookup import type_blind_pool

            subs, judged = expand(
                self.ctx, roots, st.question, judge=self._judge(), score=self._scorer(st),
                lexical=type_blind_pool(self.ctx, st.linking, k=pc.property_top_k),
                candidate_filter=self.candidate_filter,
                listing=lambda node, c: compact_listing(self.ctx, node, c),
                max_depth=pc.max_depth)
            yield from judged
        else:
            subs = {r: Subgraph(root=r, nodes={r}) for r in roots}
        if pc.use_expansion:
            # the context: what the question's values, names and words point at
            request = self._context_request(st)
            for root in roots:
                sub = subs[root]
                subs[root] = complete(self.ctx, sub, request, lambda g, e: edge_cost(
                    self.ctx, g, e), token_count(verbalize(self.ctx, sub)))
        judged_s = sum(e.seconds for e in judged) if pc.use_expansion else 0.0
        per_root = max(0.0, time.perf_counter() - t - judged_s) / max(1, len(roots))
        for root in roots:
            sub = subs[root]
            st.subgraphs[root] = sub
            yield SubgraphExpanded(root=root, edges=tuple(sub.all_edges), depth=sub.depth,
                                   seconds=per_root)
            text = verbalize(self.ctx, sub)
            st.verbalized[root] = text
            yield SubgraphVerbalized(root=root, text=text)

    def _context_request(self, st: AskState) -> ContextRequest:
        """What the chosen subgraph must show besides the expansion (:func:`complete`)."""
        assert st.linking is not None
        lk = st.linking
        anchors = [Anchor(g.prop, g.classes) for g in st.groundings]
        anchors += [Anchor(n.prop, n.classes) for u in st.ungrounded if u.kept
                    for n in u.nearest[:1]]
        relevance = {p: s + LEXICAL_WEIGHT * lk.lexical.get(p, 0.0)
                     for p, s in lk.property_scores.items()}
        return ContextRequest(anchors=tuple(anchors), classes=tuple(c.iri for c in lk.classes),
                              relevance=relevance, lexical=dict(lk.lexical),
                              linked=tuple(p.iri for p in lk.properties),
                              chains=GEOMETRY_CHAINS if parse_spatial(st.question) else ())

    def rerank(self, st: AskState) -> Iterator[Event]:
        """Choose the subgraph that best matches the question."""
        assert st.linking is not None
        t = time.perf_counter()
        roots = list(st.subgraphs)
        # the expanded subgraphs compete, not the context added to each of them
        texts = [f"{self.ctx.label(r)}\n{verbalize(self.ctx, st.subgraphs[r], context=False)}"
                 for r in roots]
        scores = self.reranker.score(st.question, texts)
        anchors = {c for g in st.groundings for c in g.classes}
        final: list[ScoredTerm] = []
        at = st.answer_type
        sup = self.ctx.ontology.superclasses
        for r, s in zip(roots, scores, strict=True):
            total = float(s)
            answer = root_bonus(at, r, sup(r))
            if answer:
                total += answer
            elif at is not None and at.attribute and at.cls is None and any(
                    r in g.classes for g in st.groundings):
                total += 0.4
            if self.llm is None:
                # Offline: the bi-encoder alone favours long verbalisations; add the root's
                # own linking score and whether the subgraph reaches the grounded values.
                sub = st.subgraphs[r]
                reach = [a for a in anchors if a in _lineage_closure(self.ctx, sub.nodes)]
                own = st.linking.class_scores.get(r, 0.0)
                if at is not None and at.role is not None and r == at.cls:
                    own = max(own, at.score)  # it stands in for the class the question names
                total = (0.4 * total + own
                         + (0.15 * len(reach) / len(anchors) if anchors else 0.0))
            final.append(ScoredTerm(r, round(total, 4), self.ctx.label(r)))
        final.sort(key=lambda x: -x.score)
        ranked = [x.iri for x in final]
        st.chosen = self._asking_root(st, ranked)
        yield SubgraphsReranked(scores=tuple(final), chosen=st.chosen,
                                passed_over=tuple(ranked[:ranked.index(st.chosen)]),
                                method=getattr(self.reranker, "name", "reranker"),
                                seconds=time.perf_counter() - t)

    def _asking_root(self, st: AskState, ranked: list[IRI]) -> IRI:
        """The root whose offline query the search of :mod:`navqa.online.synthesis.scoring`
        chooses among the first :data:`CANDIDATE_ROOTS` of the rerank: the best-ranked one
        unless its query only gives back a value of the question (``restated-value``) or
        leaves asked columns unplaced (``placed-columns``) and another root's query does
        better and answers. The LLM path writes its own query."""
        disabled = frozenset(self.config.pipeline.disabled_rules)
        if self.llm is not None or {GrammarRule.RESTATED_VALUE,
                                    GrammarRule.PLACED_COLUMNS} <= disabled:
            return ranked[0]
        assert st.mentions is not None and st.linking is not None
        mentions, linking = st.mentions, st.linking

        def synthesize(root: IRI) -> tuple[str, Plan]:
            return self.offline_synth(st.question, mentions, linking, st.groundings,
                                      st.subgraphs[root], ungrounded=st.ungrounded)

        choice = choose(enumerate_candidates(ranked, synthesize, limit=CANDIDATE_ROOTS),
                        self._evidence, disabled)
        st.rules |= choice.rules
        return choice.chosen.candidate.root

    def _evidence(self, plan: Plan) -> Evidence:
        """Whether the plan's query has an answer (one bounded ASK; unknown when the
        endpoint refuses or times out)."""
        try:
            res = self.endpoint.ask(render(self.ctx.prefixes, replace(plan, ask=True)),
                                    timeout=self.config.runtime.value_probe_timeout_s)
        except EndpointUnreachableError:
            raise
        except EndpointError:
            return Evidence.UNKNOWN
        return Evidence.ANSWERS if res.value else Evidence.EMPTY

    def synthesize(self, st: AskState, feedback: str | None = None) -> Iterator[Event]:
        """Write the query (LLM or offline) and check it."""
        assert st.mentions is not None and st.linking is not None and st.chosen is not None
        t = time.perf_counter()
        rules = set(st.rules)  # those that fired before synthesis (grounding, root)
        unplaced: tuple[str, ...] = ()  # asked columns not projected (offline: it knows)
        if self.llm is not None:
            synth = LLMSynthesizer(self.llm, entity_answer=self.config.pipeline.entity_answer)
            sparql = synth(st.question, st.verbalized[st.chosen], self.ctx.prefixes,
                           st.groundings, feedback)
            method = "llm"
        else:
            sparql, plan = self.offline_synth(st.question, st.mentions, st.linking,
                                              st.groundings, st.subgraphs[st.chosen],
                                              ungrounded=st.ungrounded)
            st.plan = plan
            rules |= plan.rules
            unplaced = tuple(plan.unplaced_columns)
            method = "offline"
        yield QuerySynthesized(sparql=sparql, method=method,  # type: ignore[arg-type]
                               rules=tuple(sorted(rules)), seconds=time.perf_counter() - t,
                               unplaced_columns=unplaced)
        st.sparql = sparql

    def check(self, st: AskState) -> Iterator[Event]:
        """Static checks; sets ``st.error`` when the query must not run."""
        assert st.sparql is not None
        t = time.perf_counter()
        res = check_query(self.ctx, st.sparql,
                          enforce_active=self.config.pipeline.use_active_ontology)
        st.check = res
        st.sparql = res.sparql
        yield QueryChecked(sparql=res.sparql, ok=res.ok, issues=tuple(res.issues),
                           unmapped_terms=tuple(res.unmapped + res.unknown),
                           repaired=res.repaired, seconds=time.perf_counter() - t)

    def execute(self, st: AskState, *, guard: bool = True) -> Iterator[Event]:
        """Run the checked query; endpoint failures other than 'unreachable' become errors."""
        assert st.sparql is not None
        if guard and self.cost_guard is not None:  # guard=False: the strategy did it
            yield cost_event(self.cost_guard, st.sparql)[1]
        t = time.perf_counter()
        try:
            st.result = self.endpoint.query(st.sparql,
                                            timeout=self.config.runtime.query_timeout_s)
            st.error = None
        except EndpointUnreachableError:
            raise
        except EndpointError as e:
            st.result = None
            st.error = str(e)
            st.error_kind = ErrorKind.of(e)
            st.execution_error = e
        rows = 0 if st.result is None else (len(st.result) if hasattr(st.result, "__len__")
                                            else 1)
        yield QueryExecuted(sparql=st.sparql, rows=rows,
                            empty=st.result is not None and st.result.is_empty,
                            seconds=time.perf_counter() - t)


def run_navqa(pipe: Stages, st: AskState) -> Iterator[Event]:
    """NaVQA's strategy: extract, ground, expand, rerank, synthesize, check, execute, repair."""
    yield from pipe.extract(st)
    yield from pipe.ground(st)
    yield from pipe.expand_all(st)
    yield from pipe.rerank(st)
    yield from pipe.synthesize(st)
    yield from pipe.check(st)
    assert st.check is not None
    if not st.check.ok and pipe.llm is not None:
        yield from pipe.synthesize(st, feedback=_feedback(pipe.ctx, st.check))
        yield from pipe.check(st)
    if not st.check.ok:
        st.error = _refusal(pipe.ctx, st.check)
        st.error_kind = ErrorKind.UNMAPPED_TERM if (st.check.unmapped or st.check.unknown) \
            else ErrorKind.SPARQL_SYNTAX
        return
    assert st.sparql is not None
    if pipe.cost_guard is not None:  # a costly query: offline, try a cheaper path in Ga first
        rewrite = offline_rewrite(pipe.ctx, st,
                                  enforce_active=pipe.config.pipeline.use_active_ontology,
                                  entity_answer=pipe.config.pipeline.entity_answer) \
            if pipe.llm is None else None
        kept = yield from avoid_costly(pipe.cost_guard, st.sparql, st.check.predicates, rewrite)
        if kept is not None:
            st.sparql, st.plan = kept
    yield from pipe.execute(st, guard=pipe.cost_guard is None)
    vacuous: list[Event] = []
    if st.result is not None and not st.result.is_empty:  # an aggregate over nothing is empty
        vacuous = list(detect_vacuous(pipe, st))
        yield from vacuous
    if st.result is not None and (st.result.is_empty or vacuous) and \
            pipe.config.pipeline.repair_attempts > 0:
        yield from registry.repair()(pipe, st)


def _feedback(ctx: SchemaContext, res: CheckResult) -> str:
    """What the LLM is told about a rejected query.

    Unmapped terms are never named back to the model (no prompt ever carries a term
    outside the active ontology); only the mapped alternatives are.
    """
    parts = [i for i in res.issues if "has no mapping" not in i and "not declared" not in i]
    if res.unmapped or res.unknown:
        alts = sorted({ctx.compact(a) for t in res.unmapped + res.unknown
                       for a in res.alternatives.get(t, [])})
        parts.append("it used a class or property that has no data in this VKG, so it would "
                     "return nothing; use only the terms of the schema excerpt"
                     + (f" (closest usable terms: {', '.join(alts)})" if alts else ""))
    return "; ".join(parts)


def _refusal(ctx: SchemaContext, res: CheckResult) -> str:
    parts = []
    for term in res.unmapped + res.unknown:
        alts = ", ".join(ctx.compact(a) for a in res.alternatives.get(term, []))
        parts.append(f"{ctx.compact(term)} (mapped alternatives: {alts or 'none'})")
    if parts:
        return "refused: the query uses terms with no mapping, so it would silently return " \
               "nothing: " + "; ".join(parts)
    return "refused: " + "; ".join(res.issues)


def _distances(ctx: SchemaContext, sources: set[IRI]) -> dict[IRI, int]:
    """Undirected hop distance in Ga from any source class."""
    dist: dict[IRI, int] = {}
    todo: deque[IRI] = deque()
    for s in sources:
        for c in ctx.ontology.superclasses(s) | {s}:
            dist[c] = 0
            todo.append(c)
    while todo:
        node = todo.popleft()
        for n in ctx.neighbours(node, data=False):
            o = n.other
            if o not in dist:
                dist[o] = dist[node] + 1
                todo.append(o)
    return dist


def _lineage_closure(ctx: SchemaContext, nodes: set[IRI]) -> set[IRI]:
    out: set[IRI] = set()
    for n in nodes:
        out |= ctx.ontology.superclasses(n) | ctx.ontology.subclasses(n)
    return out


registry.register("navqa", run_navqa)
