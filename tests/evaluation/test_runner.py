"""The evaluation runner, end to end on the demo VKG (real Ontop over real PostgreSQL).

* the ``gold`` strategy scores F1 = Acc = NR = 1 (the harness checks itself);
* an interrupted run, resumed, gives the summary of an uninterrupted one;
* a dead endpoint stops the run, at the start or midway (after the retries), and nothing
  is scored for it;
* ``navqa eval --vkg … --strategy gold --out …`` (the issue's exact form) works;
* the NaVQA pipeline runs offline (``--llm none``) through the same harness.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import requests
from typer.testing import CliRunner

from navqa.backends.sparql_http import HttpSparqlEndpoint
from navqa.cli.main import app
from navqa.config import NavqaConfig
from navqa.errors import (
    EndpointTimeoutError,
    EndpointUnreachableError,
    EvaluationAbortedError,
    EvaluationError,
    QueryFailedError,
    QueryRejectedError,
    SparqlSyntaxError,
    UpdateRefusedError,
)
from navqa.evaluation.dataset import QuestionSet, default_question_files, load_questions
from navqa.evaluation.outcomes import classify_error, execute_prediction
from navqa.evaluation.report import FIGURES, REPORT_FILE
from navqa.evaluation.runner import (
    RESULTS_FILE,
    RUN_FILE,
    SUMMARY_FILE,
    RetryPolicy,
    effective_config,
    read_results,
    run_eval,
)
from navqa.evaluation.summary import SUMMARY_KEYS
from navqa.model.rules import GrammarRule
from navqa.runtime.datasets import LocalDataset


@pytest.fixture(scope="module")
def demo_questions() -> QuestionSet:
    return load_questions(*default_question_files("demo"))


@pytest.fixture(scope="module")
def demo(vkg: Callable[..., Any]) -> Any:
    return vkg("demo")


def closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/sparql"


def lines(run: Path) -> list[dict[str, Any]]:
    text = (run / RESULTS_FILE).read_text()
    return [json.loads(x) for x in text.splitlines() if x.strip()]


def comparable(summary: dict[str, Any]) -> dict[str, Any]:
    """A summary without what legitimately differs between two runs of the same thing."""
    drop = {"latency", "started_at", "finished_at", "resumed_at", "concurrency", "endpoint"}
    out = {k: v for k, v in summary.items() if k not in drop}
    out["llm"] = {k: v for k, v in summary["llm"].items() if k != "session"}
    return out


# -- without services ----------------------------------------------------------------------------


def test_effective_config(navqa_config: NavqaConfig) -> None:
    cfg = effective_config(navqa_config, ablations=["no-aoc", "no-type-filter"], llm="none",
                           cache=False)
    assert cfg.pipeline.use_active_ontology is False
    assert cfg.pipeline.type_filter is False
    assert cfg.pipeline.use_expansion is True
    assert (cfg.llm.provider, cfg.llm.cache) == ("none", False)
    for name, field in (("no-ise", "use_expansion"), ("no-type-state", "type_state"),
                        ("no-answer-type", "answer_type_prior"),
                        ("no-values", "value_grounding")):
        assert getattr(effective_config(navqa_config, ablations=[name]).pipeline, field) is False
    with pytest.raises(EvaluationError, match="unknown ablation"):
        effective_config(navqa_config, ablations=["no-brain"])
    with pytest.raises(EvaluationError, match="unknown LLM provider"):
        effective_config(navqa_config, llm="claude")


def test_bad_arguments(navqa_config: NavqaConfig, shared_dataset: Callable[[str], LocalDataset],
                       demo_questions: QuestionSet, tmp_path: Path) -> None:
    ds = shared_dataset("demo")
    common = dict(questions=demo_questions, out_dir=tmp_path / "run")
    with pytest.raises(EvaluationError, match="unknown strategy"):
        run_eval(navqa_config, endpoint_url=closed_port_url(), dataset=ds, strategy="magic",
                 **common)
    with pytest.raises(EvaluationError, match="either a running VKG"):
        run_eval(navqa_config, strategy="gold", **common)
    with pytest.raises(EvaluationError, match="concurrency"):
        run_eval(navqa_config, endpoint_url=closed_port_url(), dataset=ds, strategy="gold",
                 concurrency=0, **common)
    npd_question = demo_questions.questions[0].model_copy(update={"vkg": "npd"})
    with pytest.raises(EvaluationError, match="another VKG"):
        run_eval(navqa_config, endpoint_url=closed_port_url(), dataset=ds, strategy="gold",
                 questions=[npd_question], out_dir=tmp_path / "run2")


def test_dead_endpoint_at_start(navqa_config: NavqaConfig,
                                shared_dataset: Callable[[str], LocalDataset],
                                demo_questions: QuestionSet, tmp_path: Path) -> None:
    run = tmp_path / "run"
    with pytest.raises(EndpointUnreachableError):
        run_eval(navqa_config, endpoint_url=closed_port_url(), dataset=shared_dataset("demo"),
                 questions=demo_questions, strategy="gold", out_dir=run,
                 gold_cache_dir=tmp_path / "gold")
    assert lines(run) == []
    assert not (run / SUMMARY_FILE).exists()
    assert not (tmp_path / "gold").exists()


def test_a_used_run_directory_needs_resume(navqa_config: NavqaConfig,
                                           shared_dataset: Callable[[str], LocalDataset],
                                           demo_questions: QuestionSet, tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    (run / RUN_FILE).write_text(json.dumps({"strategy": "navqa", "ablations": [], "vkg": "demo"}))
    (run / RESULTS_FILE).write_text('{"id": "demo-001"}\n')
    args = dict(endpoint_url=closed_port_url(), dataset=shared_dataset("demo"),
                questions=demo_questions, strategy="gold", out_dir=run)
    with pytest.raises(EvaluationError, match="--resume"):
        run_eval(navqa_config, **args)  # type: ignore[arg-type]
    with pytest.raises(EvaluationError, match="strategy: 'navqa' → 'gold'"):
        run_eval(navqa_config, resume=True, **args)  # type: ignore[arg-type]


def test_a_truncated_last_line_is_dropped_on_resume(tmp_path: Path) -> None:
    (tmp_path / RESULTS_FILE).write_text(
        '{"id": "a", "f1": 1}\n{"id": "b", "f1": 0}\n{"id": "c", "f')
    with pytest.raises(EvaluationError, match=":3: not a JSON line"):
        read_results(tmp_path)
    assert [r["id"] for r in read_results(tmp_path, repair=True)] == ["a", "b"]
    assert (tmp_path / RESULTS_FILE).read_text().endswith('"f1": 0}\n')
    (tmp_path / RESULTS_FILE).write_text('{"id": "a"}\nnot json\n{"id": "c"}\n')
    with pytest.raises(EvaluationError, match=":2: not a JSON line"):
        read_results(tmp_path, repair=True)


@pytest.mark.parametrize(("error", "outcome"), [
    (EndpointTimeoutError("no answer within 1s", endpoint="E"), "timeout"),
    (QueryFailedError("failed", endpoint="E", status=500, server_message=(
        "QueryEvaluationException: OntopTupleQuery timed out. More than 1 seconds passed")),
     "timeout"),
    (QueryFailedError("failed", endpoint="E", status=500, server_message="NullPointer"),
     "execution-error"),
    (QueryRejectedError("rejected", endpoint="E", status=400, server_message="Malformed"),
     "syntax-error"),
    (SparqlSyntaxError("not a query"), "syntax-error"),
    (UpdateRefusedError("no updates"), "syntax-error"),
])
def test_error_outcomes(error: Exception, outcome: str) -> None:
    assert classify_error(error) == outcome


def test_errors_that_are_not_outcomes() -> None:
    dead = EndpointUnreachableError("cannot connect", endpoint="E")
    with pytest.raises(EndpointUnreachableError):
        classify_error(dead)
    broken = QueryFailedError("failed", endpoint="E", status=500, server_message=(
        "OntopQueryEvaluationException: org.postgresql.util.PSQLException: ERROR: current "
        "transaction is aborted, commands ignored until end of transaction block"))
    with pytest.raises(EvaluationError, match="aborted transaction"):
        classify_error(broken)


def test_predictions_refused_before_sending() -> None:
    ep = HttpSparqlEndpoint(closed_port_url(), connect_retries=0)
    assert execute_prediction(ep, None).outcome == "no-query"
    assert execute_prediction(ep, "  ").outcome == "no-query"
    update = execute_prediction(ep, "DELETE WHERE { ?s ?p ?o }")
    assert (update.outcome, update.result) == ("syntax-error", None)
    assert execute_prediction(ep, "hello?").outcome == "syntax-error"
    with pytest.raises(EndpointUnreachableError):
        execute_prediction(ep, "ASK {}")


# -- on the demo VKG -----------------------------------------------------------------------------


@pytest.mark.ontop
@pytest.mark.postgres
def test_gold_strategy_scores_one(navqa_config: NavqaConfig, demo: Any,
                                  demo_questions: QuestionSet, tmp_path: Path) -> None:
    run = tmp_path / "run"
    cache = tmp_path / "gold"
    seen: list[int] = []
    s = run_eval(navqa_config, vkg=demo.running, questions=demo_questions, strategy="gold",
                 out_dir=run, gold_cache_dir=cache,
                 progress=lambda done, total, rec: seen.append(done))
    n = len(demo_questions)
    assert s["gold_empty"] == []       # the demo set has non-empty gold answers only ...
    assert (s["f1"], s["acc"], s["nr"], s["em"], s["empty_rate"]) == (1.0, 1.0, 1.0, 1.0, 0.0)
    assert s["n"] == n and s["outcomes"]["non-empty"] == n
    assert set(SUMMARY_KEYS) <= set(s)
    assert s["strategy"] == "gold" and s["vkg"] == "demo" and s["ablations"] == []
    assert s["retention"] is None and s["reduction"] is None
    assert s["latency"]["execution"]["n"] == n
    assert s["config"]["llm"]["api_key"] is None
    assert sum(s["by_hops"][b]["n"] for b in ("1", "2", "3+")) == n
    assert seen == list(range(n + 1))
    recs = lines(run)
    assert [r["id"] for r in recs] == demo_questions.ids()
    assert all(r["outcome"] == "non-empty" and r["f1"] == 1.0 for r in recs)
    assert any(r["ordered"] for r in recs)            # ORDER BY … LIMIT questions exist
    for name in (SUMMARY_FILE, REPORT_FILE, RUN_FILE, *FIGURES):
        assert (run / name).is_file(), name
    entries = list((cache / "demo").glob("*.json"))
    assert len(entries) == len({q.sparql for q in demo_questions})
    entry = json.loads(entries[0].read_text())
    assert entry["database_checksum"] == demo.dataset.database_checksum()


@pytest.mark.ontop
@pytest.mark.postgres
def test_resume_gives_the_uninterrupted_summary(navqa_config: NavqaConfig, demo: Any,
                                                demo_questions: QuestionSet,
                                                tmp_path: Path) -> None:
    cache = tmp_path / "gold"
    args = dict(vkg=demo.running, questions=demo_questions, strategy="gold",
                gold_cache_dir=cache, report=False)
    whole = run_eval(navqa_config, out_dir=tmp_path / "whole", **args)  # type: ignore[arg-type]

    k = 10

    def interrupt(done: int, total: int, record: dict[str, Any] | None) -> None:
        if record is not None and done >= k:
            raise KeyboardInterrupt

    run = tmp_path / "parts"
    with pytest.raises(KeyboardInterrupt):
        run_eval(navqa_config, out_dir=run, progress=interrupt, **args)  # type: ignore[arg-type]
    assert [r["id"] for r in lines(run)] == demo_questions.ids()[:k]
    assert not (run / SUMMARY_FILE).exists()

    resumed_from: list[int] = []
    resumed = run_eval(navqa_config, out_dir=run, resume=True, concurrency=2,
                       progress=lambda d, t, r: resumed_from.append(d),
                       **args)  # type: ignore[arg-type]
    assert resumed_from[0] == k
    assert len(lines(run)) == len(demo_questions)
    assert comparable(resumed) == comparable(whole)
    assert json.loads((run / RUN_FILE).read_text())["resumed_at"]

    again = run_eval(navqa_config, out_dir=run, resume=True, **args)  # type: ignore[arg-type]
    assert comparable(again) == comparable(whole)  # nothing left to do


class _Proxy:
    """A forwarding HTTP proxy in front of the real endpoint, which can be killed."""

    def __init__(self, target: str) -> None:
        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers["Content-Length"]))
                r = requests.post(target, data=body, timeout=120, headers={
                    "Content-Type": self.headers["Content-Type"],
                    "Accept": self.headers["Accept"]})
                self.send_response(r.status_code)
                self.send_header("Content-Type", r.headers.get("Content-Type", "text/plain"))
                self.send_header("Content-Length", str(len(r.content)))
                self.end_headers()
                self.wfile.write(r.content)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/sparql"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def kill(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def proxy(demo: Any) -> Iterator[_Proxy]:
    p = _Proxy(demo.running.url)
    try:
        yield p
    finally:
        if p.thread.is_alive():
            p.kill()


@pytest.mark.ontop
@pytest.mark.postgres
def test_endpoint_dying_midway_stops_the_run(navqa_config: NavqaConfig, demo: Any,
                                             proxy: _Proxy, demo_questions: QuestionSet,
                                             tmp_path: Path) -> None:
    k = 3

    def kill_after_k(done: int, total: int, record: dict[str, Any] | None) -> None:
        if record is not None and done == k:
            proxy.kill()

    run = tmp_path / "run"
    with pytest.raises(EvaluationAbortedError) as info:
        run_eval(navqa_config, endpoint_url=proxy.url, dataset=demo.dataset,
                 questions=demo_questions, strategy="gold", out_dir=run,
                 gold_cache_dir=tmp_path / "gold", progress=kill_after_k,
                 retry=RetryPolicy(attempts=2, backoff_s=0.1))
    assert type(info.value.__cause__) is EndpointUnreachableError
    assert "endpoint-down" in info.value.message
    recs = lines(run)
    assert [r["id"] for r in recs] == demo_questions.ids()[:k]
    assert all(r["outcome"] == "non-empty" for r in recs)
    s = json.loads((run / SUMMARY_FILE).read_text())
    assert s["complete"] is False and s["pending"] == demo_questions.ids()[k:]


@pytest.mark.ontop
@pytest.mark.postgres
def test_cli_issue_form(demo: Any, demo_questions: QuestionSet, tmp_path: Path) -> None:
    subset = tmp_path / "questions.jsonl"
    subset.write_text("".join(q.model_dump_json(exclude_unset=True) + "\n"
                              for q in demo_questions.questions[:6]))
    run = tmp_path / "run"
    res = CliRunner().invoke(app, ["eval", "--vkg", "demo", "--dataset", str(subset),
                                   "--strategy", "gold", "--endpoint", demo.running.url,
                                   "--out", str(run)])
    assert res.exit_code == 0, res.output
    s = json.loads((run / SUMMARY_FILE).read_text())
    assert (s["n"], s["f1"], s["acc"], s["nr"]) == (6, 1.0, 1.0, 1.0)
    assert "report:" in res.output
    res = CliRunner().invoke(app, ["eval", "run", "--vkg", "demo", "--dataset", str(subset),
                                   "--strategy", "gold", "--endpoint", demo.running.url,
                                   "--out", str(run), "--resume"])
    assert res.exit_code == 0, res.output
    res = CliRunner().invoke(app, ["eval", "--vkg", "demo", "--strategy", "gold",
                                   "--ablate", "no-brain", "--out", str(tmp_path / "x")])
    assert res.exit_code == 2


@pytest.mark.ontop
@pytest.mark.postgres
def test_navqa_pipeline_offline(navqa_config: NavqaConfig, demo: Any,
                                demo_questions: QuestionSet, tmp_path: Path) -> None:
    """The NaVQA strategy without an LLM, through the harness: every question is scored,
    and the pipeline's events feed the grounding diagnostics."""
    run = tmp_path / "run"
    s = run_eval(navqa_config, vkg=demo.running, questions=demo_questions, strategy="navqa",
                 llm="none", out_dir=run, gold_cache_dir=tmp_path / "gold")
    n = len(demo_questions)
    assert s["n"] == n and sum(s["outcomes"].values()) == n
    assert s["llm_provider"] == "none" and s["llm"]["calls"] == 0
    assert 0.0 <= s["f1"] <= 1.0 and 0.0 <= s["acc"] <= s["nr"] <= 1.0
    assert s["nr"] > 0.5            # the active ontology keeps most answers non-empty
    assert s["f1"] > 0.0
    g = s["grounding"]
    assert g["linked_class_recall_n"] > 0 and g["subgraph_class_recall_n"] > 0
    assert g["lookups"] > 0 and s["reduction"] is not None and 0 < s["reduction"] <= 1
    assert s["retention"] is None or 0 <= s["retention"] <= 1
    assert "linking" in s["latency"]
    assert len(lines(run)) == n
    # each record names the grammar rules that shaped its query (for rule ablations)
    records = read_results(run)
    assert all(set(r["rules"]) <= {g.value for g in GrammarRule} for r in records)
    assert any(r["rules"] for r in records)
