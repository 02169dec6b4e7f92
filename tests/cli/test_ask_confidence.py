"""``navqa ask`` says when it is unsure: a made-up value of the question is shown as not
placed (kept in the query, not found in the data), with the confidence and the
alternatives considered, in plain text, ``--explain`` and ``--json``. Real processes on
the demo VKG (real PostgreSQL and Ontop from the session fixture, via ``--endpoint``)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.ontop, pytest.mark.postgres, pytest.mark.slow]

NAVQA = [sys.executable, "-m", "navqa.cli"]
MADE_UP = "Which company operates the Zebra Moon Line?"


def _ask(url: str, cwd: Path, *flags: str, question: str = MADE_UP) -> str:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "NAVQA_LLM")) and k != "NAVQA_CONFIG"}
    env.update(COLUMNS="250", NAVQA_NO_SERVICE="1")  # answer here, not via a `navqa serve`
    proc = subprocess.run(NAVQA + ["ask", "--vkg", "demo", "--endpoint", url, "--llm", "none",
                                   *flags, question],
                          env=env, capture_output=True, text=True, timeout=900, cwd=cwd)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    return proc.stdout


def test_ask_shows_a_made_up_value_as_not_placed(vkg, tmp_path: Path) -> None:
    out = _ask(vkg("demo").running.url, tmp_path)
    assert "confidence: low" in out, out[-3000:]
    [line] = [ln for ln in out.splitlines() if ln.startswith("not placed:")]
    assert "'Zebra Moon Line' (value): in the query, but not found in the data" in line
    assert "Aster Coast Line" in line  # a real stored line, offered as the nearest
    assert "also considered (class):" in out and "also considered (subgraph):" in out


def test_ask_explain_ends_with_the_confidence(vkg, tmp_path: Path) -> None:
    out = _ask(vkg("demo").running.url, tmp_path, "--explain")
    assert "7. execution" in out and "8. confidence" in out, out[-3000:]
    assert out.index("8. confidence") < out.index("not placed: 'Zebra Moon Line'")


def test_ask_json_carries_confidence_unplaced_and_alternatives(vkg, tmp_path: Path) -> None:
    url = vkg("demo").running.url
    data = json.loads(_ask(url, tmp_path, "--json"))
    assert data["error"] is None and data["empty"] is True
    assert data["confidence"]["level"] == "low"
    assert "value-not-found" in data["confidence"]["reason_kinds"]
    [part] = data["unplaced"]
    assert (part["text"], part["kind"], part["why"]) == ("Zebra Moon Line", "value",
                                                         "not-in-data")
    start, end = part["span"]
    assert MADE_UP[start:end] == "Zebra Moon Line"
    kinds = {a["kind"] for a in data["alternatives"]}
    assert {"class", "subgraph"} <= kinds
    # the question answered from stored values is sure of itself, nothing unplaced
    sure = json.loads(_ask(url, tmp_path, "--json",
                           question="Which company currently operates the Aster Coast Line?"))
    assert sure["confidence"]["level"] == "high" and sure["unplaced"] == []


def test_ask_explain_says_which_root_it_passed_over(vkg, tmp_path: Path) -> None:
    # the best-scored root's query would only give back "1V13" (restated-value)
    out = _ask(vkg("demo").running.url, tmp_path, "--explain",
               question="What is the first station of service 1V13?")
    [line] = [ln for ln in out.splitlines() if "passed over" in ln]
    assert "rail:ScheduledService" in line and "restates a value of the question" in line
    assert out.index("5. rerank") < out.index(line) < out.index("6. SPARQL")
