"""Summaries, Markdown reports, figures and run comparisons, from hand-made run directories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from matplotlib.image import imread
from typer.testing import CliRunner

from navqa.cli.main import app
from navqa.errors import EvaluationError
from navqa.evaluation.plots import OUTCOME_COLOURS
from navqa.evaluation.report import FIGURES, compare_runs, load_run, render_report
from navqa.evaluation.runner import RESULTS_FILE, RUN_FILE, SUMMARY_FILE, finish_run
from navqa.evaluation.summary import SUMMARY_KEYS, percentile


def record(qid: str, outcome: str, f1: float, *, acc: bool | None = None, hops: int = 1,
           features: tuple[str, ...] = (), seconds: float = 1.0, llm_calls: int = 0,
           tokens: tuple[int, int] = (0, 0), grounding: dict[str, Any] | None = None,
           gold_size: int = 1) -> dict[str, Any]:
    from navqa.evaluation.shape import hop_bucket

    nonempty = outcome == "non-empty"
    return {
        "id": qid, "question": f"question {qid}?", "strategy": "navqa",
        "sparql": "SELECT * WHERE { ?s ?p ?o }", "outcome": outcome,
        "error": None if outcome in ("non-empty", "silent-failure") else f"{outcome} | boom",
        "precision": f1, "recall": f1, "f1": f1, "acc": f1 == 1.0 if acc is None else acc,
        "em": f1 == 1.0, "nonempty": nonempty, "ordered": False, "gold_size": gold_size,
        "pred_size": 1 if nonempty else 0, "overlap": 1 if f1 else 0,
        "hops": hops, "hop_bucket": hop_bucket(hops), "hops_file": hops,
        "hops_computed": hops, "hops_disagree": False, "features": sorted(features),
        "features_file": sorted(features), "trap": [],
        "timings": {"linking": seconds / 4, "synthesis": seconds / 2}, "seconds": seconds,
        "llm_calls": llm_calls, "prompt_tokens": tokens[0], "completion_tokens": tokens[1],
        "grounding": grounding, "answer_sample": ["<http://x/a>"], "gold_sample": ["<http://x/a>"],
        "finished_at": "2026-01-01T00:00:00+00:00",
    }


def make_run(path: Path, records: list[dict[str, Any]], **meta: Any) -> Path:
    path.mkdir(parents=True)
    run = {"strategy": "navqa", "ablations": [], "vkg": "demo", "questions": ["q.jsonl"],
           "n_questions": len(records), "question_ids": [r["id"] for r in records],
           "llm_provider": "none", "llm_model": None, "llm_cache": True,
           "config": {"llm": {"provider": "none"}}, "navqa_version": "0.1.0",
           "started_at": "2026-01-01T00:00:00+00:00"}
    run.update(meta)
    (path / RUN_FILE).write_text(json.dumps(run))
    # file order differs from question order (as with --concurrency)
    (path / RESULTS_FILE).write_text("".join(json.dumps(r) + "\n" for r in reversed(records)))
    return path


G1 = {"linked_class_recall": 1.0, "linked_property_recall": 0.5, "subgraph_class_recall": 1.0,
      "subgraph_property_recall": 0.5, "listing_property_recall": 0.5, "subgraph_edges": 4,
      "subgraph_classes": 3, "lookups": 2, "shown": 6, "available": 20, "examined": 3,
      "filtered_out": 1, "filtered_gold": ["http://x/A http://x/p"]}
G2 = {"linked_class_recall": 0.0, "linked_property_recall": None, "subgraph_class_recall": 0.5,
      "subgraph_property_recall": None, "listing_property_recall": None, "subgraph_edges": 2,
      "subgraph_classes": 2, "lookups": 1, "shown": 4, "available": 5, "examined": 1,
      "filtered_out": 0, "filtered_gold": []}

RECORDS = [
    record("q1", "non-empty", 1.0, hops=1, seconds=1.0, llm_calls=3, tokens=(100, 20),
           grounding=G1),
    record("q2", "non-empty", 0.5, hops=1, features=("filter",), seconds=2.0, llm_calls=2,
           tokens=(50, 10), grounding=G2),
    record("q3", "silent-failure", 0.0, hops=2, features=("filter", "order", "limit"),
           seconds=3.0),
    record("q4", "syntax-error", 0.0, hops=3, features=("aggregation",), seconds=4.0),
    record("q5", "timeout", 0.0, hops=5, seconds=10.0, gold_size=0),
]


def test_summary_aggregates(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", RECORDS)
    s = finish_run(run, report=False)
    assert set(SUMMARY_KEYS) <= set(s)
    assert s["n"] == 5
    assert s["f1"] == pytest.approx(1.5 / 5)
    assert s["acc"] == pytest.approx(1 / 5)
    assert s["nr"] == pytest.approx(2 / 5)
    assert s["em"] == pytest.approx(1 / 5)
    assert s["empty_rate"] == pytest.approx(1 / 5)
    assert s["outcomes"] == {"non-empty": 2, "silent-failure": 1, "syntax-error": 1,
                             "execution-error": 0, "timeout": 1, "no-query": 0}
    assert s["by_hops"]["1"]["n"] == 2 and s["by_hops"]["1"]["f1"] == pytest.approx(0.75)
    assert s["by_hops"]["2"]["outcomes"]["silent-failure"] == 1
    assert s["by_hops"]["3+"]["n"] == 2 and s["by_hops"]["3+"]["nr"] == 0.0
    assert s["by_feature"]["filter"]["n"] == 2
    assert s["by_feature"]["filter"]["f1"] == pytest.approx(0.25)
    assert s["by_feature"]["plain"]["n"] == 2
    assert s["by_feature"]["union"]["n"] == 0 and s["by_feature"]["union"]["f1"] is None
    # grounding: means over questions that have the figure; ratios summed over lookups
    assert s["grounding"]["linked_class_recall"] == pytest.approx(0.5)
    assert s["grounding"]["linked_property_recall"] == pytest.approx(0.5)
    assert s["grounding"]["linked_property_recall_n"] == 1
    assert s["reduction"] == pytest.approx(10 / 25)
    assert s["retention"] == pytest.approx(1 - 1 / 4)
    # latency: nearest-rank median and p90
    assert s["latency"]["total"] == {"median": 3.0, "p90": 10.0, "n": 5}
    assert s["latency"]["synthesis"]["median"] == pytest.approx(1.5)
    assert s["llm"]["calls"] == 5 and s["llm"]["tokens"] == 180
    assert s["gold_empty"] == ["q5"]
    assert s["complete"] is True
    assert json.loads((run / SUMMARY_FILE).read_text())["f1"] == s["f1"]


def test_percentile() -> None:
    assert percentile([], 0.5) is None
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile([float(i) for i in range(1, 11)], 0.9) == 9.0


def _has_colour(img: np.ndarray, hex_colour: str, tol: float = 0.02) -> bool:
    rgb = np.array([int(hex_colour[i:i + 2], 16) / 255 for i in (1, 3, 5)])
    return bool((np.abs(img[..., :3] - rgb) < tol).all(axis=-1).any())


def test_report_and_figures(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", RECORDS)
    path = render_report(run)
    text = path.read_text()
    for heading in ("# Evaluation: `navqa` on `demo`", "## Metrics (%)", "## Outcomes",
                    "## By hops", "## By feature", "## Grounding", "## Latency (s)", "## LLM",
                    "## Question-file checks", "## Questions"):
        assert heading in text
    assert f"![Outcomes by hops]({FIGURES[0]})" in text
    assert f"![F1 by feature]({FIGURES[1]})" in text
    assert "| 30.0 | 20.0 | 40.0 | 20.0 | 20.0 |" in text        # F1 Acc NR EM empty
    assert "gold answers that are empty: q5" in text
    assert "syntax-error \\| boom" in text                         # pipes escaped
    assert text.index("| q1 |") < text.index("| q5 |")            # question order
    for name in FIGURES:
        png = run / name
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        img = imread(png)
        assert img.shape[0] > 200 and img.shape[1] > 300
        assert img[..., :3].std() > 0.05                           # not a blank canvas
    bars = imread(run / FIGURES[0])
    for outcome in ("non-empty", "silent-failure", "syntax-error", "timeout"):
        assert _has_colour(bars, OUTCOME_COLOURS[outcome]), outcome
    assert not _has_colour(bars, OUTCOME_COLOURS["no-query"])      # no such outcome here
    assert _has_colour(imread(run / FIGURES[1]), "#2c7fb8")        # the F1 bars


def test_report_of_an_interrupted_run(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", RECORDS[:2], n_questions=5)
    summary, records = load_run(run)
    assert summary["n"] == 2 and summary["complete"] is False
    assert [r["id"] for r in records] == ["q1", "q2"]
    assert "2 of 5 answered, incomplete run" in render_report(run).read_text()


def test_compare_runs(tmp_path: Path) -> None:
    a = make_run(tmp_path / "a", RECORDS)
    changed = [dict(r) for r in RECORDS]
    changed[2] = record("q3", "non-empty", 1.0, hops=2, features=("filter", "order", "limit"))
    b = make_run(tmp_path / "b", changed[:4] + [record("q6", "no-query", 0.0)],
                 ablations=["no-aoc"])
    text = compare_runs(a, b)
    assert "# a (navqa) vs b (navqa no-aoc)" in text
    assert "| F1 | 30.0 | 50.0 | +20.0 |" in text
    assert "| silent-failure | 1 | 0 | -1 |" in text
    assert "## Per-question differences (3)" in text
    assert "| q3 | silent-failure | non-empty | 0.00 | 1.00 |" in text
    assert "| q5 | timeout | (missing) |" in text
    assert "| q6 | (missing) | no-query |" in text
    assert "| q1 |" not in text.split("Per-question")[1]


def test_compare_refuses_different_vkgs(tmp_path: Path) -> None:
    a = make_run(tmp_path / "a", RECORDS)
    b = make_run(tmp_path / "b", RECORDS, vkg="npd")
    with pytest.raises(EvaluationError, match="different VKGs"):
        compare_runs(a, b)


def test_not_a_run_directory(tmp_path: Path) -> None:
    with pytest.raises(EvaluationError, match="not a run directory"):
        render_report(tmp_path)


def test_cli_report_and_compare(tmp_path: Path) -> None:
    a = make_run(tmp_path / "a", RECORDS)
    b = make_run(tmp_path / "b", RECORDS)
    runner = CliRunner()
    res = runner.invoke(app, ["eval", "report", str(a)])
    assert res.exit_code == 0, res.output
    assert (a / "report.md").is_file() and (a / FIGURES[0]).is_file()
    assert "report:" in res.output and "F1" in res.output
    out = tmp_path / "cmp.md"
    res = runner.invoke(app, ["eval", "compare", str(a), str(b), "--out", str(out)])
    assert res.exit_code == 0, res.output
    assert "The runs agree on every question." in out.read_text()
