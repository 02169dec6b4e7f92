"""Run an evaluation: every question through a strategy, scored against its gold answer.

A run directory holds

``run.json``       what is being run (strategy, ablations, VKG, question-set fingerprint,
                   configuration without secrets, navqa version, start time)
``results.jsonl``  one line per question, appended and flushed as soon as it is scored
``summary.json``   the aggregate, recomputed from ``results.jsonl`` at the end

so an interrupted run loses nothing that was finished, and ``resume=True`` continues it
(questions whose id is already in ``results.jsonl`` are skipped).

Order of work: the endpoint is probed (a dead endpoint stops the run before anything
else), every gold query is answered (from the gold cache when possible; a failing gold
query stops the run with the list of all failing ids, before any LLM call), then the
questions are answered by the strategy, at most ``concurrency`` at a time.

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
import hashlib
import json
import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol

from navqa.backends.sparql_http import HttpSparqlEndpoint
from navqa.config import NavqaConfig
from navqa.errors import (
    EndpointError,
    EndpointUnreachableError,
    EvaluationError,
    LLMResponseError,
    NavqaError,
    OntologyParseError,
    QueryCheckError,
    UnmappedTermError,
)
from navqa.evaluation.dataset import Question, QuestionSet, load_questions
from navqa.evaluation.diagnostics import grounding_of
from navqa.evaluation.gold import GoldAnswer, GoldCache
from navqa.evaluation.metrics import score
from navqa.evaluation.outcomes import (
    Outcome,
    classify_error,
    execute_prediction,
    outcome_of_result,
)
from navqa.evaluation.shape import QueryShape, analyse_query, hop_bucket
from navqa.evaluation.summary import summarize
from navqa.model.events import Answer
from navqa.model.terms import AskResult, GraphResult, QueryResult
from navqa.runtime.datasets import LocalDataset
from navqa.runtime.vkg import RunningVkg

log = logging.getLogger(__name__)

__all__ = [
    "ABLATIONS",
    "RESULTS_FILE",
    "RUN_FILE",
    "STRATEGIES",
    "SUMMARY_FILE",
    "AnswersQuestions",
    "ProgressFn",
    "effective_config",
    "read_results",
    "run_eval",
]

STRATEGIES: tuple[str, ...] = ("navqa", "agent", "cot", "sparqlgen", "gold")

ABLATIONS: dict[str, dict[str, bool]] = {
    "no-aoc": {"use_active_ontology": False},
    "no-ise": {"use_expansion": False},
    "no-type-filter": {"type_filter": False},
    "no-type-state": {"type_state": False},
    "no-answer-type": {"answer_type_prior": False},
    "no-values": {"value_grounding": False},
}
"""Ablation names and the :class:`~navqa.config.PipelineConfig` overrides they stand for."""

RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"
RUN_FILE = "run.json"

ProgressFn = Callable[[int, int, "dict[str, Any] | None"], None]
"""``progress(done, total, record)``: called once before the first question (with
``record=None``; ``done`` counts resumed questions) and after each scored question."""

_SAMPLE_ROWS = 10
_PER_QUESTION_ERRORS = (LLMResponseError, QueryCheckError, EndpointError)


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
    for name in ablations:
        if name not in ABLATIONS:
            raise EvaluationError(f"unknown ablation {name!r}; known: {', '.join(ABLATIONS)}")
        pipeline.update(ABLATIONS[name])
    llm_over: dict[str, Any] = {}
    if llm is not None:
        if llm not in ("none", "openai"):
            raise EvaluationError(f"unknown LLM provider {llm!r}; use none or openai")
        llm_over["provider"] = llm
    if cache is not None:
        llm_over["cache"] = cache
    return config.with_overrides(pipeline=pipeline, llm=llm_over)


# -- the run directory -----------------------------------------------------------------------


def read_results(out_dir: Path, *, repair: bool = False) -> list[dict[str, Any]]:
    """The records of ``results.jsonl`` (the last one wins for a repeated id).

    Args:
        out_dir: The run directory.
        repair: Cut off a truncated last line (a run killed mid-write) instead of failing.

    Raises:
        EvaluationError: a line in the middle of the file is not JSON.
    """
    path = Path(out_dir) / RESULTS_FILE
    if not path.is_file():
        return []
    raw = path.read_bytes()
    records: dict[str, dict[str, Any]] = {}
    offset = 0
    lines = raw.split(b"\n")
    for i, line in enumerate(lines):
        end = offset + len(line) + 1
        if line.strip():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as e:
                last = i == len(lines) - 1 or not any(x.strip() for x in lines[i + 1:])
                if last and repair:
                    log.warning("%s: dropping a truncated last line", path)
                    with path.open("r+b") as f:
                        f.truncate(offset)
                    break
                raise EvaluationError(f"{path}:{i + 1}: not a JSON line: {e.msg}") from e
            records[rec["id"]] = rec
        offset = end
    return list(records.values())


def _fingerprint(questions: Sequence[Question]) -> str:
    h = hashlib.sha256()
    for q in questions:
        h.update(json.dumps([q.id, q.question, q.sparql], ensure_ascii=False).encode())
        h.update(b"\n")
    return h.hexdigest()


_RESUME_KEYS = ("strategy", "ablations", "vkg", "questions_fingerprint", "llm_provider",
                "llm_model")


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
             if old.get(k) != meta.get(k)]
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
        s = score(job.gold.result, result, ordered=job.shape.ordered)
        g = grounding_of(job.shape, ans.events)
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
            "timings": {("pipeline" if k == "total" else k): float(v)
                        for k, v in ans.timings.items()},
            "seconds": seconds,
            "llm_calls": ans.llm_calls,
            "prompt_tokens": ans.prompt_tokens,
            "completion_tokens": ans.completion_tokens,
            "grounding": g.to_json(),
            "answer_sample": _sample(result),
            "gold_sample": _sample(job.gold.result),
            "finished_at": _now(),
        }


# -- the run ---------------------------------------------------------------------------------


def _ontology_terms(dataset: LocalDataset) -> tuple[frozenset[str], frozenset[str]]:
    from navqa.offline.ontology_parser import parse_ontology

    try:
        onto = parse_ontology(dataset.path("ontology"))
    except (OntologyParseError, NavqaError) as e:
        log.warning("hops without ontology knowledge (%s)", e)
        return frozenset(), frozenset()
    return frozenset(onto.object_properties), frozenset(onto.data_properties)


def _gold_answers(cache: GoldCache, endpoint: HttpSparqlEndpoint,
                  questions: Sequence[Question], timeout: float) -> dict[str, GoldAnswer]:
    answers: dict[str, GoldAnswer] = {}
    failures: list[str] = []
    for q in questions:
        try:
            answers[q.id] = cache.answer(endpoint, q.sparql, timeout=timeout)
        except EndpointUnreachableError:
            raise
        except (EndpointError, QueryCheckError) as e:
            classify_error(e)  # a dead or broken endpoint stops everything
            failures.append(f"  {q.id}: {e}")
        except ValueError as e:
            failures.append(f"  {q.id}: unusable answer: {e}")
    if failures:
        raise EvaluationError(
            f"{len(failures)} gold quer{'y' if len(failures) == 1 else 'ies'} failed on "
            f"{endpoint.url}:\n" + "\n".join(failures),
            hint="fix the question file; nothing was evaluated")
    return answers


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
) -> dict[str, Any]:
    """Evaluate a strategy on a question set and write the run directory.

    Args:
        config: The configuration (ablations, ``llm`` and ``cache`` are applied on top).
        questions: A question set, a list of questions, or a JSONL file.
        out_dir: The run directory.
        vkg: The served VKG (from :func:`~navqa.runtime.vkg.serve_vkg`); or else
        endpoint_url: an endpoint URL, together with
        dataset: the dataset it serves (for the gold cache key and the ontology).
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

    Returns:
        The summary (also written to ``summary.json``).

    Raises:
        EndpointUnreachableError: the endpoint is down (at the start or mid-run); the
            question being answered is not recorded.
        EvaluationError: bad arguments, a question for another VKG, failing gold queries,
            a run directory that holds a different run.
    """
    if strategy not in STRATEGIES:
        raise EvaluationError(f"unknown strategy {strategy!r}; known: {', '.join(STRATEGIES)}")
    if concurrency < 1:
        raise EvaluationError("concurrency must be at least 1")
    cfg = effective_config(config, ablations=ablations, llm=llm, cache=cache)
    if vkg is None:
        if endpoint_url is None or dataset is None:
            raise EvaluationError("give either a running VKG, or an endpoint URL and its dataset")
        vkg = RunningVkg(name=dataset.name, url=endpoint_url, dataset=dataset, ontop=None,
                         pg=None, load=None)
    ds = vkg.dataset
    if isinstance(questions, str | Path):
        qset = load_questions(questions)
    elif isinstance(questions, QuestionSet):
        qset = questions
    else:
        qset = QuestionSet(tuple(questions))
    qs = list(qset.questions)
    if not qs:
        raise EvaluationError("the question set is empty")
    foreign = [q.id for q in qs if q.vkg is not None and q.vkg != vkg.name]
    if foreign:
        raise EvaluationError(f"questions for another VKG than {vkg.name!r}: "
                              f"{', '.join(foreign[:10])}{' …' if len(foreign) > 10 else ''}")

    out = Path(out_dir)
    meta = {
        "strategy": strategy,
        "ablations": sorted(ablations),
        "vkg": vkg.name,
        "endpoint": vkg.url,
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
    done = {r["id"] for r in read_results(out, repair=True)}
    known = {q.id for q in qs}
    pending = [q for q in qs if q.id not in done]
    total = len(qs)

    endpoint = HttpSparqlEndpoint(vkg.url, timeout=cfg.runtime.query_timeout_s)
    timeout = cfg.runtime.query_timeout_s
    if pending:
        endpoint.ask("ASK {}")  # a dead endpoint fails here, before anything else

    obj_props, data_props = _ontology_terms(ds) if pending else (frozenset(), frozenset())
    gold_root = gold_cache_dir or (cfg.runtime.cache_dir / "gold")
    gold = _gold_answers(GoldCache.for_dataset(gold_root, ds), endpoint, pending, timeout)
    jobs = []
    for q in pending:
        shape = analyse_query(q.sparql, object_properties=obj_props,
                              data_properties=data_props)
        hops = q.hops if q.hops is not None else shape.hops
        jobs.append(_Job(q, shape, hops, q.hops, gold[q.id]))

    if strategy != "gold" and pipeline is None and pending:
        from navqa.online.pipeline import Pipeline

        pipeline = Pipeline.for_vkg(cfg, vkg)
    evaluator = _Evaluator(strategy, endpoint, pipeline, timeout)

    count = len(done & known)
    if progress is not None:
        progress(count, total, None)
    with (out / RESULTS_FILE).open("a", encoding="utf-8") as f:
        if concurrency == 1:
            for job in jobs:
                rec = evaluator.record(job)
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
                        running.add(pool.submit(evaluator.record, queue.pop()))
                    finished, running = cf.wait(running, return_when=cf.FIRST_COMPLETED)
                    for fut in finished:
                        rec = fut.result()
                        _write(f, rec)
                        count += 1
                        if progress is not None:
                            progress(count, total, rec)
            finally:
                pool.shutdown(wait=False, cancel_futures=True)

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
    out = Path(out_dir)
    try:
        meta = json.loads((out / RUN_FILE).read_text())
    except FileNotFoundError as e:
        raise EvaluationError(f"{out} is not a run directory (no {RUN_FILE})") from e
    records = read_results(out)
    ids = [q.id for q in questions] if questions is not None else meta.get("question_ids")
    if ids is not None:
        order = {qid: i for i, qid in enumerate(ids)}
        records = sorted((r for r in records if r["id"] in order), key=lambda r: order[r["id"]])
    meta = {k: v for k, v in meta.items() if k != "question_ids"}
    meta["finished_at"] = _now()
    meta["complete"] = len(records) == meta.get("n_questions", len(records))
    summary = summarize(records, meta)
    if session_llm is not None:
        summary["llm"]["session"] = session_llm
    (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=1, ensure_ascii=False))
    if report:
        from navqa.evaluation.report import render_report

        render_report(out)
    return summary
