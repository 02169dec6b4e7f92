"""An evaluation score is never corrupted by the infrastructure (real PostgreSQL and Ontop).

* PostgreSQL stopped mid-run: the questions are retried, then the run stops with a typed
  error; ``complete`` is false, the failed ids are not done, and after a restart
  ``resume`` completes with the scores of an undisturbed run;
* Ontop paused (SIGSTOP, then SIGCONT): the question is retried, not scored ``timeout``;
* a failing gold query marks its question ``gold-error`` (left out of the metrics,
  listed in the report) and the run goes on; ``strict`` stops it as before;
* reference answers score a question without executing its gold query;
* the split is recorded and printed.

The fault tests run on a dedicated private cluster and Ontop, so the session's survive.
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from navqa.backends.sparql_http import HttpSparqlEndpoint
from navqa.cli.main import app, exit_code
from navqa.config import NavqaConfig
from navqa.errors import (
    DatabaseUnavailableError,
    EndpointTimeoutError,
    EndpointUnreachableError,
    EndpointUnresponsiveError,
    EvaluationAbortedError,
    EvaluationError,
    InputError,
    QueryFailedError,
)
from navqa.evaluation.dataset import Question, QuestionSet, Split, default_question_files
from navqa.evaluation.outcomes import Fault, fault_of
from navqa.evaluation.report import REPORT_FILE
from navqa.evaluation.runner import RESULTS_FILE, SUMMARY_FILE, RetryPolicy, run_eval
from navqa.model.resultio import term_to_json
from navqa.runtime.datasets import LocalDataset
from navqa.runtime.ontop_setup import OntopInstall
from navqa.runtime.postgres import PrivateCluster
from navqa.runtime.vkg import RunningVkg, start_vkg

QUICK = RetryPolicy(attempts=3, backoff_s=0.2, probe_timeout_s=2.0)
METRICS = ("n", "f1", "acc", "nr", "em", "empty_rate", "outcomes", "by_hops", "by_feature")
RAIL = "PREFIX rail: <http://example.org/navqa/rail#>\n"
# Ontop 5.1.2 cannot evaluate FILTER NOT EXISTS: a real gold query that fails on the endpoint
FAILING = RAIL + "SELECT ?c WHERE { ?c a rail:Company FILTER NOT EXISTS { ?c rail:name ?n } }"


def lines(run: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run / RESULTS_FILE).read_text().splitlines() if x.strip()]


def metrics(summary: dict[str, Any]) -> dict[str, Any]:
    return {k: summary[k] for k in METRICS}


@pytest.fixture(scope="module")
def subset() -> QuestionSet:
    qs = QuestionSet(tuple(Question.model_validate(json.loads(x)) for x in
                           default_question_files("demo")[0].read_text().splitlines()[:8]
                           if x.strip()))
    assert len(qs) == 8
    return qs


# -- without services ---------------------------------------------------------------------------


def test_faults_are_typed() -> None:
    assert fault_of(DatabaseUnavailableError("x", endpoint="E")) is Fault.DATABASE_DOWN
    assert fault_of(EndpointUnresponsiveError("x", endpoint="E")) is Fault.ENDPOINT_UNRESPONSIVE
    assert fault_of(EndpointUnreachableError("x", endpoint="E")) is Fault.ENDPOINT_DOWN
    assert fault_of(EndpointTimeoutError("x", endpoint="E")) is None
    assert fault_of(QueryFailedError("x", endpoint="E", status=500)) is None
    assert RetryPolicy(attempts=5, backoff_s=1, max_backoff_s=3).delays() == [1, 2, 3, 3]
    with pytest.raises(EvaluationError, match="invalid retry policy"):
        RetryPolicy(attempts=0)


# -- a VKG of its own, to break ------------------------------------------------------------------


@dataclass
class BreakableVkg:
    """The demo VKG on a private cluster and Ontop of its own."""

    config: NavqaConfig
    cluster: PrivateCluster
    install: OntopInstall
    running: RunningVkg

    def up(self) -> None:
        """Make sure PostgreSQL and Ontop serve (after a test stopped or paused them)."""
        try:
            HttpSparqlEndpoint(self.running.url, timeout=30, connect_retries=0).query(
                RAIL + "SELECT ?c WHERE { ?c a rail:Company } LIMIT 1")
        except EndpointUnreachableError:
            self.restart()

    def restart(self) -> None:
        """Start PostgreSQL again (perhaps on another port) and a fresh Ontop on it."""
        pg = self.cluster.start()
        if self.running.ontop is not None:
            self.running.ontop.stop()
        self.running = start_vkg(self.config, self.running.dataset, pg, self.install, dev=True)


@pytest.fixture(scope="module")
def breakable(navqa_config: NavqaConfig, ontop_install: OntopInstall,
              shared_dataset: Callable[[str], LocalDataset]) -> Iterator[BreakableVkg]:
    if navqa_config.runtime.pg_dsn is not None:
        pytest.fail("the fault tests stop PostgreSQL: they need a private cluster, unset "
                    "NAVQA_PG_DSN")
    cluster = PrivateCluster(navqa_config, name=f"{navqa_config.runtime.pg_cluster}-faults")
    pg = cluster.start()
    running = start_vkg(navqa_config, shared_dataset("demo"), pg, ontop_install, dev=True)
    fx = BreakableVkg(navqa_config, cluster, ontop_install, running)
    try:
        yield fx
    finally:
        if fx.running.ontop is not None:
            pid = fx.running.ontop.pid
            if pid is not None:
                os.kill(pid, signal.SIGCONT)
            fx.running.ontop.stop()
        cluster.stop()


@pytest.mark.ontop
@pytest.mark.postgres
def test_database_stopped_midway(breakable: BreakableVkg, subset: QuestionSet,
                                 tmp_path: Path) -> None:
    breakable.up()
    args: dict[str, Any] = dict(questions=subset, strategy="gold", report=False,
                                gold_cache_dir=tmp_path / "gold", retry=QUICK)
    whole = run_eval(breakable.config, vkg=breakable.running, out_dir=tmp_path / "whole",
                     **args)
    assert whole["complete"] is True and whole["pending"] == []

    k = 3

    def stop_db(done: int, total: int, record: dict[str, Any] | None) -> None:
        if record is not None and done == k:
            breakable.cluster.stop()

    run = tmp_path / "run"
    with pytest.raises(EvaluationAbortedError) as info:
        run_eval(breakable.config, vkg=breakable.running, out_dir=run, progress=stop_db,
                 **args)
    err = info.value
    assert isinstance(err.__cause__, DatabaseUnavailableError)
    assert "database-down" in err.message and f"after {QUICK.attempts} attempts" in err.message
    ids = subset.ids()
    assert err.pending == tuple(ids[k:])
    recs = lines(run)
    assert [r["id"] for r in recs] == ids[:k]            # nothing scored for a dead database
    assert all(r["outcome"] == "non-empty" for r in recs)
    s = json.loads((run / SUMMARY_FILE).read_text())
    assert s["complete"] is False and s["pending"] == ids[k:] and s["n"] == k

    breakable.restart()
    resumed = run_eval(breakable.config, vkg=breakable.running, out_dir=run, resume=True,
                       **args)
    assert resumed["complete"] is True and resumed["pending"] == []
    assert metrics(resumed) == metrics(whole)
    assert [r["id"] for r in lines(run)] == ids


@pytest.mark.ontop
@pytest.mark.postgres
@pytest.mark.slow
def test_paused_endpoint_is_retried_not_a_timeout(breakable: BreakableVkg,
                                                  subset: QuestionSet, tmp_path: Path) -> None:
    """Ontop is paused past the client's read timeout (query timeout + 10 s): the probe
    gets no answer either, so the question is tried again instead of scored ``timeout``."""
    breakable.up()
    cfg = breakable.config.with_overrides(runtime={"query_timeout_s": 3})
    args: dict[str, Any] = dict(questions=subset, strategy="gold", report=False,
                                gold_cache_dir=tmp_path / "gold",
                                retry=RetryPolicy(attempts=4, backoff_s=0.5,
                                                  probe_timeout_s=1.0))
    whole = run_eval(cfg, vkg=breakable.running, out_dir=tmp_path / "whole", **args)
    pid = breakable.running.ontop.pid if breakable.running.ontop else None
    assert pid is not None
    timers: list[threading.Timer] = []

    def pause(done: int, total: int, record: dict[str, Any] | None) -> None:
        if record is not None and done == 2:
            os.kill(pid, signal.SIGSTOP)
            timers.append(threading.Timer(17.0, os.kill, (pid, signal.SIGCONT)))
            timers[0].start()

    run = tmp_path / "run"
    try:
        s = run_eval(cfg, vkg=breakable.running, out_dir=run, progress=pause, **args)
    finally:
        for t in timers:
            t.join()
        os.kill(pid, signal.SIGCONT)
    assert timers, "the endpoint was never paused"
    assert [r["outcome"] for r in lines(run)] == ["non-empty"] * len(subset)
    assert s["complete"] is True and metrics(s) == metrics(whole)


# -- gold errors, reference answers and splits, on the session's demo VKG ----------------------


@pytest.fixture(scope="module")
def demo(vkg: Callable[..., Any]) -> Any:
    return vkg("demo")


@pytest.mark.ontop
@pytest.mark.postgres
def test_a_failing_gold_query_is_a_gold_error(navqa_config: NavqaConfig, demo: Any,
                                              subset: QuestionSet, tmp_path: Path) -> None:
    first = subset.questions[0]
    rows = demo.endpoint.query(first.sparql).rows
    reference = [[term_to_json(t) for t in row] for row in rows]
    extra = [
        Question(id="bad-gold", question="Which companies have no name?", sparql=FAILING),
        Question(id="ref-right", question=first.question, sparql=first.sparql,
                 answer=reference),
        Question(id="ref-wrong", question=first.question, sparql=first.sparql,
                 answer=[["nothing like it"]]),
        # the gold query would fail, but a reference answer means it is never executed
        Question(id="ref-unrun", question="?", sparql=FAILING, answer=[["x"]]),
    ]
    qs = QuestionSet(subset.questions + tuple(extra))
    args: dict[str, Any] = dict(vkg=demo.running, questions=qs, strategy="gold",
                                gold_cache_dir=tmp_path / "gold")

    with pytest.raises(EvaluationError, match="1 gold query failed") as info:
        run_eval(navqa_config, out_dir=tmp_path / "strict", strict=True, **args)
    assert "bad-gold" in info.value.message
    assert lines(tmp_path / "strict") == []

    run = tmp_path / "run"
    s = run_eval(navqa_config, out_dir=run, **args)
    by_id = {r["id"]: r for r in lines(run)}
    assert by_id["bad-gold"]["outcome"] == "gold-error"
    assert "f1" not in by_id["bad-gold"]
    assert [g["id"] for g in s["gold_errors"]] == ["bad-gold"]
    assert s["n"] == len(qs) - 1 and sum(s["outcomes"].values()) == len(qs) - 1
    assert "gold-error" not in s["outcomes"]
    assert s["complete"] is False and s["pending"] == ["bad-gold"]
    assert (by_id["ref-right"]["f1"], by_id["ref-right"]["acc"]) == (1.0, True)
    assert by_id["ref-wrong"]["f1"] == 0.0 and by_id["ref-wrong"]["outcome"] == "non-empty"
    assert by_id["ref-unrun"]["outcome"] != "gold-error"
    assert by_id["ref-unrun"]["gold_size"] == 1
    assert all(by_id[q.id]["f1"] == 1.0 for q in subset)
    report = (run / REPORT_FILE).read_text()
    assert "`bad-gold`: left out of the metrics, its gold query failed" in report

    # resume tries the gold-error question again (still failing), and nothing else
    again = run_eval(navqa_config, out_dir=run, resume=True, **args)
    assert len(lines(run)) == len(qs) + 1
    assert metrics(again) == metrics(s)


@pytest.mark.ontop
@pytest.mark.postgres
def test_cli_records_and_prints_the_split(demo: Any, tmp_path: Path) -> None:
    custom = tmp_path / "mine.jsonl"
    first = default_question_files("demo")[0].read_text().splitlines()[0]
    custom.write_text(json.dumps({**json.loads(first), "source": "hand-made"}) + "\n")
    run = tmp_path / "custom"
    res = CliRunner().invoke(app, ["eval", "--vkg", "demo", "--dataset", str(custom),
                                   "--strategy", "gold", "--endpoint", demo.running.url,
                                   "--out", str(run)])
    assert res.exit_code == 0, res.output
    assert "unknown key ignored: source" in res.output
    assert "custom split" in res.output
    assert json.loads((run / SUMMARY_FILE).read_text())["split"] == Split.CUSTOM
    assert "split `custom`" in (run / REPORT_FILE).read_text()

    res = CliRunner().invoke(app, ["eval", "--vkg", "demo", "--split", "dev", "--dataset",
                                   str(custom), "--out", str(tmp_path / "x")])
    assert res.exit_code == 2 and "not both" in res.output
    res = CliRunner().invoke(app, ["eval", "--vkg", "demo", "--split", "train",
                                   "--out", str(tmp_path / "y")])
    assert res.exit_code == 2
    # the demo VKG has a validation split and no test split
    res = CliRunner().invoke(app, ["eval", "--vkg", "demo", "--split", "test",
                                   "--strategy", "gold", "--endpoint", demo.running.url,
                                   "--out", str(tmp_path / "z")])
    assert isinstance(res.exception, InputError), res.output   # the CLI exits 2 with it
    assert exit_code(res.exception) == 2 and "no test split" in res.exception.message
