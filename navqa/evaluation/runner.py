"""Run an evaluation: every question through a strategy, scored against its gold answer.

A run directory holds

``run.json``       what is being run (strategy, ablations, VKG, question-set fingerprint,
                   configuration without secrets, navqa version, start time)
``results.jsonl``  one line per question, appended and flushed as soon as it is scored
``summary.json``   the aggregate, recomputed from ``results.jsonl`` at the end

so an interrupted run loses nothing that was finished, and ``resume=True`` continues it
(questions *done* — with a record whose outcome is the system's own — are skipped;
``gold-error`` records are not done, so a resumed run tries their gold query again).
``summary.json`` says ``complete: true`` only when every question is done, and lists
the others under ``pending``.

Order of work: the endpoint is probed (a dead endpoint stops the run before anything
else), every gold query is answered (from the question's reference ``answer`` or the gold
cache when possible; a gold query that fails or times out marks its question
``gold-error``, left out of the metrics and listed in the report — with ``strict=True``
it stops the run with the list of all failing ids, before any LLM call), then the
questions are answered by the strategy, at most ``concurrency`` at a time.

The infrastructure is not the system: when the endpoint or its database fails (refused
or reset connections, an endpoint that answers neither the query nor a probe, a 5xx
quoting a JDBC connection failure: :class:`~navqa.evaluation.outcomes.Fault`), the
question (or gold query) is tried again after a backoff (:class:`RetryPolicy`). The
SPARQL client never re-runs a query by itself; the runner can, because answering a
question has no side effect. When the retries are used up the run stops with
:class:`~navqa.errors.EvaluationAbortedError`, after writing ``summary.json``
(``complete: false``); the failed questions are not recorded, and ``--resume`` runs them.

Strategies: ``navqa``, ``agent``, ``cot`` and ``sparqlgen`` go through
:class:`navqa.online.pipeline.Pipeline`; ``gold`` submits the gold query itself as the
prediction (a harness self-check: it scores 1 everywhere on a set whose gold answers
are non-empty).

How the predicted answer is obtained: when the pipeline returns a result for its query,
that result is scored. When it returns a query but no result (it failed or refused),
the runner runs the query itself, to classify the failure (syntax error, execution
error, timeout) and, if it does run, to score it: the evaluation is of the generated
query (NaVQA §2.2). Per-question failures of the pipeline that belong to the question
(malformed LLM output, a query check, an endpoint error) become outcomes; anything else
(an unreachable endpoint, a configuration or index problem, a bug) stops the run.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import datetime as dt
import functools
import hashlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar

from navqa.backends.sparql_http import HttpSparqlEndpoint
from navqa.config import NavqaConfig
from navqa.errors import (
    EndpointError,
    EndpointUnreachableError,
    EvaluationAbortedError,
    EvaluationError,
    LLMResponseError,
    NavqaError,
    OntologyParseError,
    QueryCheckError,
    UnmappedTermError,
)
from navqa.evaluation.dataset import Question, QuestionSet, Split, load_questions
from navqa.evaluation.diagnostics import grounding_of
from navqa.evaluation.gold import GoldAnswer, GoldCache
from navqa.evaluation.metrics import score
from navqa.evaluation.outcomes import (
    Outcome,
    classify_error,
    execute_prediction,
    fault_of,
    outcome_of_result,
)
from navqa.evaluation.projection import projection_of
from navqa.evaluation.rundir import (
    RESULTS_FILE,
    RUN_FILE,
    SUMMARY_FILE,
    is_done,
    read_results,
    summarize_run,
)
from navqa.evaluation.shape import QueryShape, analyse_query, hop_bucket
from navqa.model.events import Answer, QuerySynthesized
from navqa.model.rules import GrammarRule
from navqa.model.terms import AskResult, GraphResult, QueryResult
from navqa.model.vkg_source import VkgSource
from navqa.online.strategies import STRATEGIES as ONLINE_STRATEGIES
from navqa.runtime.datasets import LocalDataset
from navqa.runtime.serve import ServedSource, source_checksum
from navqa.runtime.vkg import RunningVkg

log = logging.getLogger(__name__)

__all__ = [
    "ABLATIONS",
    "RULE_ABLATION",
    "ablation_names",
    "RESULTS_FILE",
    "RUN_FILE",
    "STRATEGIES",
    "SUMMARY_FILE",
    "AnswersQuestions",
    "ProgressFn",
    "RetryPolicy",
    "effective_config",
    "read_results",
    "run_eval",
]

STRATEGIES: tuple[str, ...] = (*ONLINE_STRATEGIES, "gold")

ABLATIONS: dict[str, dict[str, bool]] = {
    "no-aoc": {"use_active_ontology": False},
    "no-ise": {"use_expansion": False},
    "no-type-filter": {"type_filter": False},
    "no-type-state": {"type_state": False},
    "no-answer-type": {"answer_type_prior": False},
    "no-values": {"value_grounding": False},
}
"""Ablation names and the :class:`~navqa.config.PipelineConfig` overrides they stand for."""

RULE_ABLATION = "no-rule-"
"""``no-rule-<rule>`` switches one :class:`~navqa.model.rules.GrammarRule` off."""


def ablation_names() -> list[str]:
    """Every ablation name: the components', then one per grammar rule."""
    return [*ABLATIONS, *(RULE_ABLATION + r.value for r in GrammarRule)]


ProgressFn = Callable[[int, int, "dict[str, Any] | None"], None]
"""``progress(done, total, record)``: called once before the first question (with
``record=None``; ``done`` counts resumed questions) and after each scored question."""

_SAMPLE_ROWS = 10
_PER_QUESTION_ERRORS = (LLMResponseError, QueryCheckError, EndpointError)
_T = TypeVar("_T")


@dataclasses.dataclass(frozen=True)
class RetryPolicy:
    """How the runner rides out a failing endpoint or database.

    Attributes:
        attempts: Tries per question or gold query (the first included).
        backoff_s: Wait before the first retry; doubled for each further one.
        max_backoff_s: Upper bound of one wait.
        probe_timeout_s: How long a trivial probe may take after a read timeout before
            the endpoint counts as unresponsive (see :mod:`navqa.backends.sparql_http`).
    """

    attempts: int = 6
    backoff_s: float = 2.0
    max_backoff_s: float = 30.0
    probe_timeout_s: float = 10.0

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.backoff_s < 0 or self.probe_timeout_s <= 0:
            raise EvaluationError(f"invalid retry policy {self}")

    def delays(self) -> list[float]:
        """The waits between the attempts."""
        return [min(self.backoff_s * 2 ** i, self.max_backoff_s)
                for i in range(self.attempts - 1)]


def _retrying(fn: Callable[[], _T], policy: RetryPolicy, stop: threading.Event) -> _T:
    """``fn()``, tried again after each infrastructure failure, up to the policy's limit.

    Raises:
        EndpointUnreachableError: the last failure, once the attempts are used up (or
            at once when ``stop`` is set: another worker gave up).
    """
    delays = policy.delays()
    attempt = 0
    while True:
        try:
            return fn()
        except EndpointUnreachableError as e:
            if attempt >= len(delays) or stop.is_set():
                raise
            log.warning("%s (%s); attempt %d of %d in %.1fs", fault_of(e), e.message,
                        attempt + 2, policy.attempts, delays[attempt])
            if stop.wait(delays[attempt]):
                raise
            attempt += 1


class AnswersQuestions(Protocol):
    """What the runner needs from a pipeline."""

    def ask(self, question: str, *, strategy: str = ...) -> Answer: ...


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("navqa")
    except PackageNotFoundError:
        return "0+unknown"


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def effective_config(config: NavqaConfig, *, ablations: Sequence[str] = (),
                     llm: str | None = None, cache: bool | None = None) -> NavqaConfig:
    """``config`` with the ablations, the LLM provider and the LLM cache switch applied.

    Raises:
        EvaluationError: an unknown ablation name.
    """
    pipeline: dict[str, Any] = {}
    rules = set(config.pipeline.disabled_rules)
    for name in ablations:
        if name.startswith(RULE_ABLATION) and name[len(RULE_ABLATION):] in set(GrammarRule):
            rules.add(GrammarRule(name[len(RULE_ABLATION):]))
            continue
        if name not in ABLATIONS:
            raise EvaluationError(f"unknown ablation {name!r}; known: "
                                  f"{', '.join(ablation_names())}")
        pipeline.update(ABLATIONS[name])
    if rules:
        pipeline["disabled_rules"] = sorted(rules)
    llm_over: dict[str, Any] = {}
    if llm is not None:
        if llm not in ("none", "openai"):
            raise EvaluationError(f"unknown LLM provider {llm!r}; use none or openai")
        llm_over["provider"] = llm
    if cache is not None:
        llm_over["cache"] = cache
    return config.with_overrides(pipeline=pipeline, llm=llm_over)


# -- the run directory -----------------------------------------------------------------------





def _fingerprint(questions: Sequence[Question]) -> str:
    h = hashlib.sha256()
    for q in questions:
        h.update(json.dumps([q.id, q.question, q.sparql], ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()


_RESUME_KEYS = ("strategy", "ablations", "vkg", "split", "questions_fingerprint",
                "llm_provider", "llm_model")


def _prepare_dir(out_dir: Path, meta: dict[str, Any], resume: bool) -> dict[str, Any]:
    out_dir.mkdir(parents=True, exist_ok=True)
    run_path = out_dir / RUN_FILE
    results = out_dir / RESULTS_FILE
    has_results = results.is_file() and results.stat().st_size > 0
    if not resume:
        if has_results:
            raise EvaluationError(
                f"{out_dir} already holds results of a run",
                hint="pass --resume to continue it, or choose another --out")
        run_path.write_text(json.dumps(meta, indent=1, ensure_ascii=False))
        results.touch()
        return meta
    if not run_path.is_file():
        if has_results:
            raise EvaluationError(f"{out_dir} has {RESULTS_FILE} but no {RUN_FILE}")
        run_path.write_text(json.dumps(meta, indent=1, ensure_ascii=False))
        results.touch()
        return meta
    try:
        old = json.loads(run_path.read_text())
    except ValueError as e:
        raise EvaluationError(f"{run_path} is not valid JSON") from e
    diffs = [f"{k}: {old.get(k)!r} → {meta.get(k)!r}" for k in _RESUME_KEYS
             if k in old and old.get(k) != meta.get(k)]
    if diffs:
        raise EvaluationError(
            f"cannot resume {out_dir}: the run differs from the one recorded "
            f"({'; '.join(diffs)})", hint="use another --out for a different run")
    old.setdefault("resumed_at", []).append(meta["started_at"])
    run_path.write_text(json.dumps(old, indent=1, ensure_ascii=False))
    results.touch()
    return old


# -- one question ----------------------------------------------------------------------------


def _sample(result: QueryResult | None) -> list[str] | None:
    if result is None:
        return None
    if isinstance(result, AskResult):
        return ["true" if result.value else "false"]
    rows = result.triples if isinstance(result, GraphResult) else result.rows
    return [" ".join("UNDEF" if t is None else t.n3() for t in row)
            for row in rows[:_SAMPLE_ROWS]]


@dataclasses.dataclass
class _Job:
    question: Question
    shape: QueryShape
    hops: int
    hops_file: int | None
    gold: GoldAnswer


class _Evaluator:
    def __init__(self, strategy: str, endpoint: HttpSparqlEndpoint,
                 pipeline: AnswersQuestions | None, timeout: float) -> None:
        self.strategy = strategy
        self.endpoint = endpoint
        self.pipeline = pipeline
        self.timeout = timeout

    def answer(self, q: Question) -> tuple[Answer, Outcome, QueryResult | None, str | None]:
        if self.strategy == "gold":
            ex = execute_prediction(self.endpoint, q.sparql, timeout=self.timeout)
            ans = Answer(question=q.question, sparql=q.sparql, result=ex.result,
                         timings={"execution": ex.seconds}, error=ex.error, strategy="gold")
            return ans, ex.outcome, ex.result, ex.error
        assert self.pipeline is not None
        try:
            ans = self.pipeline.ask(q.question, strategy=self.strategy)
        except EndpointUnreachableError:
            raise
        except _PER_QUESTION_ERRORS as e:
            sparql = getattr(e, "query", None)
            ans = Answer(question=q.question, sparql=sparql, result=None, error=str(e),
                         strategy=self.strategy)
            if isinstance(e, UnmappedTermError) and sparql:
                # the pipeline refused to run its own query: the query is still scored
                ex = execute_prediction(self.endpoint, sparql, timeout=self.timeout)
                return ans, ex.outcome, ex.result, ex.error or ans.error
            if isinstance(e, EndpointError | QueryCheckError):
                return ans, classify_error(e), None, str(e)
            return ans, Outcome.NO_QUERY, None, str(e)
        if ans.sparql and ans.result is not None:
            return ans, outcome_of_result(ans.result), ans.result, None
        ex = execute_prediction(self.endpoint, ans.sparql, timeout=self.timeout)
        error = ans.error or ex.error
        return ans, ex.outcome, ex.result, error

    def record(self, job: _Job) -> dict[str, Any]:
        q = job.question
        t0 = time.monotonic()
        ans, outcome, result, error = self.answer(q)
        seconds = time.monotonic() - t0
        ordered = q.ordered if q.ordered is not None else job.shape.ordered
        s = score(job.gold.result, result, ordered=ordered)
        g = grounding_of(job.shape, ans.events)
        synthesized = [e for e in ans.events if isinstance(e, QuerySynthesized)]
        features_file = list(q.features) if "features" in q.model_fields_set else None
        return {
            "id": q.id,
            "question": q.question,
            "strategy": self.strategy,
            "sparql": ans.sparql,
            "outcome": outcome.value,
            "error": error,
            "precision": s.precision,
            "recall": s.recall,
            "f1": s.f1,
            "acc": s.acc,
            "em": s.em,
            "nonempty": s.nonempty,
            "ordered": s.ordered,
            "gold_size": s.gold_size,
            "pred_size": s.pred_size if result is not None else None,
            "overlap": s.overlap,
            "hops": job.hops,
            "hop_bucket": hop_bucket(job.hops),
            "hops_file": job.hops_file,
            "hops_computed": job.shape.hops,
            "hops_disagree": job.hops_file is not None
            and hop_bucket(job.hops_file) != hop_bucket(job.shape.hops),
            "features": sorted(job.shape.features),
            "features_file": features_file,
            "trap": list(q.trap),
            # the grammar rules that shaped any query written for it, the replaced ones too
            # (a rule off may let an earlier query stand): ablations answer again only
            # the questions where a rule fired
            "rules": sorted({r.value for s in synthesized for r in s.rules}),
            "timings": {("pipeline" if k == "total" else k): float(v)
                        for k, v in ans.timings.items()},
            "seconds": seconds,
            "llm_calls": ans.llm_calls,
            "prompt_tokens": ans.prompt_tokens,
            "completion_tokens": ans.completion_tokens,
            "grounding": g.to_json(),
            "projection": projection_of(job.gold.result, result, acc=s.acc).to_json(),
            "answer_sample": _sample(result),
            "gold_sample": _sample(job.gold.result),
            "finished_at": _now(),
        }


# -- the run ---------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class _Target:
    """What a run evaluates: a bundled dataset (``dataset``) or any VKG (``source``)."""

    name: str
    url: str
    ontology: Path
    dataset: LocalDataset | None
    source: VkgSource | None

    @classmethod
    def of(cls, vkg: RunningVkg | None, served: ServedSource | None) -> _Target:
        if vkg is not None:
            return cls(vkg.name, vkg.url, vkg.dataset.path("ontology"), vkg.dataset, None)
        assert served is not None
        src = served.source
        return cls(src.name, served.url, src.ontology, None, src)

    def gold_cache(self, cfg: NavqaConfig, root: Path | None, out_dir: Path) -> GoldCache:
        """A dataset's shared gold cache; a user VKG's lives in the run directory."""
        if self.dataset is not None:
            return GoldCache.for_dataset(root or (cfg.runtime.cache_dir / "gold"), self.dataset)
        assert self.source is not None
        checksum = source_checksum(self.source)  # files and settings, never the password
        return GoldCache(root or out_dir, "gold", f"user:{checksum}", checksum)

    def pipeline(self, cfg: NavqaConfig) -> AnswersQuestions:
        """The pipeline over the index of ``source``, answering on ``url``."""
        from navqa.backends.embedder_factory import make_embedder
        from navqa.backends.llm_factory import make_llm
        from navqa.offline.artifacts import ensure_index
        from navqa.online.pipeline import Pipeline

        assert self.source is not None
        emb = make_embedder(cfg.embedder)
        llm = make_llm(cfg)
        bundle = ensure_index(cfg, self.source, embedder=emb, llm=llm)
        endpoint = HttpSparqlEndpoint(self.url, timeout=cfg.runtime.query_timeout_s)
        return Pipeline.from_index(bundle, endpoint=endpoint, config=cfg, embedder=emb, llm=llm)


def _ontology_terms(ontology: Path) -> tuple[frozenset[str], frozenset[str]]:
    from navqa.offline.ontology_parser import parse_ontology

    try:
        onto = parse_ontology(ontology)
    except (OntologyParseError, NavqaError) as e:
        log.warning("hops without ontology knowledge (%s)", e)
        return frozenset(), frozenset()
    return frozenset(onto.object_properties), frozenset(onto.data_properties)


def _gold_answers(cache: GoldCache, endpoint: HttpSparqlEndpoint,
                  questions: Sequence[Question], timeout: float, *, strict: bool,
                  policy: RetryPolicy, stop: threading.Event
                  ) -> tuple[dict[str, GoldAnswer], dict[str, str]]:
    """The gold answers, and the error of each gold query that failed (by id).

    Raises:
        EndpointUnreachableError: the infrastructure kept failing (after the retries).
        EvaluationError: ``strict`` and some gold query failed; or the endpoint is broken.
    """
    answers: dict[str, GoldAnswer] = {}
    failures: dict[str, str] = {}
    for q in questions:
        reference = q.reference()
        if reference is not None:
            answers[q.id] = GoldAnswer(reference, cached=False, seconds=0.0)
            continue
        try:
            answers[q.id] = _retrying(
                functools.partial(cache.answer, endpoint, q.sparql, timeout=timeout),
                policy, stop)
        except EndpointUnreachableError:
            raise
        except (EndpointError, QueryCheckError) as e:
            classify_error(e)  # a broken endpoint stops everything
            failures[q.id] = str(e)
        except ValueError as e:
            failures[q.id] = f"unusable answer: {e}"
    if failures and strict:
        raise EvaluationError(
            f"{len(failures)} gold quer{'y' if len(failures) == 1 else 'ies'} failed on "
            f"{endpoint.url}:\n" + "\n".join(f"  {k}: {v}" for k, v in failures.items()),
            hint="fix the question file; nothing was evaluated")
    return answers, failures


def _gold_error_record(q: Question, shape: QueryShape, hops: int, strategy: str,
                       error: str) -> dict[str, Any]:
    return {
        "id": q.id,
        "question": q.question,
        "strategy": strategy,
        "sparql": None,
        "outcome": Outcome.GOLD_ERROR.value,
        "error": f"gold query failed: {error}",
        "hops": hops,
        "hop_bucket": hop_bucket(hops),
        "features": sorted(shape.features),
        "trap": list(q.trap),
        "finished_at": _now(),
    }


def _abort_message(error: EndpointUnreachableError, policy: RetryPolicy, n_done: int,
                   total: int) -> str:
    fault = fault_of(error)
    cause = (error.server_message or "").strip().split(" <- ")[-1][:200]
    return (f"the evaluation stopped: {fault} at {error.endpoint} ({error.message}"
            f"{': ' + cause if cause else ''}), still failing after {policy.attempts} "
            f"attempt{'s' if policy.attempts != 1 else ''} over {sum(policy.delays()):.0f}s; "
            f"{n_done} of {total} questions done")


def _write(f: Any, record: Mapping[str, Any]) -> None:
    f.write(json.dumps(record, ensure_ascii=False) + "\n")
    f.flush()
    os.fsync(f.fileno())


def run_eval(
    config: NavqaConfig,
    *,
    questions: QuestionSet | Sequence[Question] | Path | str,
    out_dir: Path | str,
    vkg: RunningVkg | None = None,
    endpoint_url: str | None = None,
    dataset: LocalDataset | None = None,
    served: ServedSource | None = None,
    strategy: str = "navqa",
    ablations: Sequence[str] = (),
    llm: str | None = None,
    cache: bool | None = None,
    concurrency: int = 1,
    resume: bool = False,
    progress: ProgressFn | None = None,
    gold_cache_dir: Path | None = None,
    pipeline: AnswersQuestions | None = None,
    report: bool = True,
    strict: bool = False,
    retry: RetryPolicy | None = None,
    split: Split | str | None = None,
) -> dict[str, Any]:
    """Evaluate a strategy on a question set and write the run directory.

    Args:
        config: The configuration (ablations, ``llm`` and ``cache`` are applied on top).
        questions: A question set, a list of questions, or a JSONL file.
        out_dir: The run directory.
        vkg: The served VKG (from :func:`~navqa.runtime.vkg.serve_vkg`); or else
        endpoint_url: an endpoint URL, together with
        dataset: the dataset it serves (for the gold cache key and the ontology).
        served: Or any VKG served from its descriptor
            (:func:`~navqa.runtime.serve.serve_source`): a user's own VKG or a running
            endpoint. Its gold answers are cached in ``out_dir/gold`` only (the user's
            data may change between runs, so no other run reuses them).
        strategy: ``navqa``, ``agent``, ``cot``, ``sparqlgen`` or ``gold``.
        ablations: Names from :data:`ABLATIONS`.
        llm: ``none`` or ``openai`` to override ``llm.provider``.
        cache: Override ``llm.cache`` (the LLM call cache; on by default).
        concurrency: Questions answered at once (a bounded thread pool when above 1;
            the pipeline must then be thread-safe).
        resume: Continue the run in ``out_dir``, skipping the ids it already holds.
        progress: See :data:`ProgressFn`. An exception it raises (e.g. KeyboardInterrupt)
            stops the run; everything scored so far stays in ``results.jsonl``.
        gold_cache_dir: Where gold answers are cached (default ``<cache_dir>/gold``).
        pipeline: Answer questions with this object instead of building
            ``Pipeline.for_vkg(config, vkg)`` (for embedding and tests).
        report: Render ``report.md`` and the plots at the end.
        strict: A failing gold query stops the run before any question is answered
            (default: that question is marked ``gold-error`` and the run goes on).
        retry: How to ride out a failing endpoint or database (default
            :class:`RetryPolicy()`).
        split: The split recorded in ``run.json`` and the summary (default: the question
            set's own, ``custom`` for files and lists).

    Returns:
        The summary (also written to ``summary.json``).

    Raises:
        EndpointUnreachableError: the endpoint is down at the start (nothing is written
            but ``run.json``).
        EvaluationAbortedError: the endpoint or its database kept failing mid-run;
            ``summary.json`` is written (``complete: false``), the questions not done
            are not recorded, and ``resume=True`` runs them.
        EvaluationError: bad arguments, a question for another VKG, failing gold queries
            with ``strict``, a run directory that holds a different run.
    """
    if strategy not in STRATEGIES:
        raise EvaluationError(f"unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    if concurrency < 1:
        raise EvaluationError("concurrency must be at least 1")
    cfg = effective_config(config, ablations=ablations, llm=llm, cache=cache)
    if served is not None and served.bundled is not None:
        vkg = served.bundled
    if vkg is None and served is None:
        if endpoint_url is None or dataset is None:
            raise EvaluationError("give either a running VKG, or an endpoint URL and its dataset")
        vkg = RunningVkg(name=dataset.name, url=endpoint_url, dataset=dataset, ontop=None,
                         pg=None, load=None)
    target = _Target.of(vkg, served)
    if isinstance(questions, str | Path):
        qset = load_questions(questions)
    elif isinstance(questions, QuestionSet):
        qset = questions
    else:
        qset = QuestionSet(tuple(questions))
    qs = list(qset.questions)
    if not qs:
        raise EvaluationError("the question set is empty")
    foreign = [q.id for q in qs if q.vkg is not None and q.vkg != target.name]
    if foreign:
        raise EvaluationError(f"questions for another VKG than {target.name!r}: "
                              f"{', '.join(foreign[:10])}{' …' if len(foreign) > 10 else ''}")

    policy = retry or RetryPolicy()
    out = Path(out_dir)
    meta = {
        "strategy": strategy,
        "ablations": sorted(ablations),
        "vkg": target.name,
        "split": Split(split or qset.split).value,
        "entity_answer": cfg.pipeline.entity_answer.value,
        "endpoint": target.url,
        "questions": [str(p) for p in qset.sources],
        "questions_fingerprint": _fingerprint(qs),
        "n_questions": len(qs),
        "question_ids": [q.id for q in qs],
        "llm_provider": cfg.llm.provider if cfg.llm.enabled else "none",
        "llm_model": cfg.llm.model if cfg.llm.enabled else None,
        "llm_cache": cfg.llm.cache,
        "concurrency": concurrency,
        "config": cfg.dump(),
        "navqa_version": _version(),
        "started_at": _now(),
    }
    meta = _prepare_dir(out, meta, resume)
    done = {r["id"] for r in read_results(out, repair=True) if is_done(r)}
    known = {q.id for q in qs}
    pending = [q for q in qs if q.id not in done]
    total = len(qs)

    endpoint = HttpSparqlEndpoint(target.url, timeout=cfg.runtime.query_timeout_s,
                                  probe_timeout=policy.probe_timeout_s)
    timeout = cfg.runtime.query_timeout_s
    if pending:
        endpoint.ask("ASK {}")  # a dead endpoint fails here, before anything else

    stop = threading.Event()
    count = len(done & known)
    obj_props, data_props = _ontology_terms(target.ontology) if pending else \
        (frozenset(), frozenset())
    try:
        gold, gold_failures = _gold_answers(target.gold_cache(cfg, gold_cache_dir, out), endpoint,
                                            pending, timeout, strict=strict, policy=policy,
                                            stop=stop)
    except EndpointUnreachableError as e:
        finish_run(out, questions=qs, report=report)
        raise EvaluationAbortedError(
            _abort_message(e, policy, count, total),
            pending=tuple(q.id for q in pending),
            hint="fix the endpoint or database, then run again with --resume") from e
    jobs = []
    gold_errors = []
    for q in pending:
        shape = analyse_query(q.sparql, object_properties=obj_props,
                              data_properties=data_props)
        hops = q.hops if q.hops is not None else shape.hops
        if q.id in gold_failures:
            gold_errors.append(_gold_error_record(q, shape, hops, strategy,
                                                  gold_failures[q.id]))
        else:
            jobs.append(_Job(q, shape, hops, q.hops, gold[q.id]))

    if strategy != "gold" and pipeline is None and pending:
        from navqa.online.pipeline import Pipeline

        pipeline = Pipeline.for_vkg(cfg, vkg) if vkg is not None else target.pipeline(cfg)
        if vkg is not None and isinstance(pipeline, Pipeline) and pipeline.cost_guard is None:
            # the cost guard: each generated query gets a QueryCostChecked event
            from navqa.backends.cost_probe import probe_for
            from navqa.online.cost import CostGuard

            pipeline.cost_guard = CostGuard(
                probe_for(vkg.url, bundled_pg=vkg.pg, database=vkg.database,
                          timeout_s=cfg.runtime.query_timeout_s, config=cfg),
                mappings=pipeline.ctx.bundle.mappings)
    evaluator = _Evaluator(strategy, endpoint, pipeline, timeout)

    def one(job: _Job) -> dict[str, Any]:
        return _retrying(lambda: evaluator.record(job), policy, stop)

    if progress is not None:
        progress(count, total, None)
    try:
        with (out / RESULTS_FILE).open("a", encoding="utf-8") as f:
            for rec in gold_errors:
                _write(f, rec)
            if concurrency == 1:
                for job in jobs:
                    rec = one(job)
                    _write(f, rec)
                    count += 1
                    if progress is not None:
                        progress(count, total, rec)
            else:
                pool = cf.ThreadPoolExecutor(max_workers=concurrency,
                                             thread_name_prefix="navqa-eval")
                try:
                    queue = list(reversed(jobs))
                    running: set[cf.Future[dict[str, Any]]] = set()
                    while queue or running:
                        while queue and len(running) < concurrency:
                            running.add(pool.submit(one, queue.pop()))
                        finished, running = cf.wait(running, return_when=cf.FIRST_COMPLETED)
                        for fut in finished:
                            rec = fut.result()
                            _write(f, rec)
                            count += 1
                            if progress is not None:
                                progress(count, total, rec)
                finally:
                    stop.set()
                    pool.shutdown(wait=False, cancel_futures=True)
    except EndpointUnreachableError as e:
        stop.set()
        summary = finish_run(out, questions=qs, report=report)
        raise EvaluationAbortedError(
            _abort_message(e, policy, count, total), pending=tuple(summary["pending"]),
            hint="fix the endpoint or database, then run again with --resume") from e

    stats = getattr(pipeline, "llm_stats", None)
    session_llm = None
    if callable(stats):
        raw = stats()
        is_instance = dataclasses.is_dataclass(raw) and not isinstance(raw, type)
        session_llm = dataclasses.asdict(raw) if is_instance else raw
    return finish_run(out, questions=qs, session_llm=session_llm, report=report)


def finish_run(out_dir: Path, *, questions: Sequence[Question] | None = None,
               session_llm: Any = None, report: bool = True) -> dict[str, Any]:
    """Recompute ``summary.json`` from ``results.jsonl`` (and render the report).

    Args:
        out_dir: The run directory.
        questions: The question order (default: the order of ``results.jsonl``).
        session_llm: The pipeline's own LLM statistics for this session, if any.
        report: Also write ``report.md`` and the plots.
    """
    summary = summarize_run(out_dir, questions=questions, session_llm=session_llm)
    if report:
        from navqa.evaluation.report import render_report  # plots: matplotlib, lazily

        render_report(out_dir)
    return summary
