"""What ``ask`` and ``lint`` print for awkward text, and ``ask --json``'s exit code, through
real processes on the demo VKG (real PostgreSQL and Ontop from the session fixture; the
CLI is pointed at its endpoint with ``--endpoint``, so no second Ontop starts)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from navqa.testing.scripted_llm import ScriptedLLMServer

NAVQA = [sys.executable, "-m", "navqa.cli"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("OPENAI_", "NAVQA_LLM")) and k != "NAVQA_CONFIG"}
    return dict(env, COLUMNS="200", **extra)


@pytest.mark.ontop
@pytest.mark.postgres
@pytest.mark.llm
@pytest.mark.slow
def test_ask_json_exits_1_when_the_answer_is_an_error(vkg, tmp_path: Path) -> None:
    url = vkg("demo").running.url
    # every answer is prose where the pipeline wants JSON: LLMResponseError mid-stream
    with ScriptedLLMServer(default="I would rather not say.") as server:
        proc = subprocess.run(
            NAVQA + ["ask", "--vkg", "demo", "--endpoint", url, "--json", "--llm", "openai",
                     "How many electric locomotives are there?"],
            env=_env(NAVQA_LLM_BASE_URL=server.base_url, NAVQA_LLM_MODEL="scripted",
                     OPENAI_API_KEY="sk-test"),
            capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.stdout.strip(), proc.stderr[-3000:]
    out = json.loads(proc.stdout)  # the JSON is printed all the same
    assert out["error"], out
    assert proc.returncode == 1, proc.stderr[-3000:]


@pytest.mark.ontop
@pytest.mark.postgres
@pytest.mark.slow
def test_ask_explain_prints_markup_in_the_question_as_text(vkg, tmp_path: Path) -> None:
    url = vkg("demo").running.url
    question = 'Which company operates the line called "[/x] Coast [link=http://e.vil]"?'
    proc = subprocess.run(
        NAVQA + ["ask", "--vkg", "demo", "--endpoint", url, "--llm", "none", "--explain",
                 question],
        env=_env(), capture_output=True, text=True, timeout=900, cwd=tmp_path)
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr[-3000:]
    assert "MarkupError" not in proc.stderr
    assert proc.returncode in (0, 1), proc.stderr[-3000:]
    # the quoted value is shown as typed, brackets included (not parsed as rich markup)
    assert "[/x] Coast [link=http://e.vil]" in proc.stdout, proc.stdout[-3000:]


@pytest.mark.slow
def test_a_library_warning_is_one_line_without_traceback(tmp_path: Path) -> None:
    """rdflib logs every ill-typed literal *with* its traceback; by default navqa shows one
    line; ``-vv`` shows it all (which is how this test knows the warning really happens)."""
    query = ('PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> '
             'SELECT ?x WHERE { ?x ?p "2025-13-45"^^xsd:date }')

    def lint(*flags: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(NAVQA + [*flags, "lint", "--vkg", "demo", "--no-embedder", query],
                              env=_env(), capture_output=True, text=True, timeout=900,
                              cwd=tmp_path)

    loud = lint("-vv")
    assert "Failed to convert Literal" in loud.stderr and "Traceback" in loud.stderr, \
        loud.stderr[-3000:]
    quiet = lint()
    assert "Traceback" not in quiet.stdout + quiet.stderr, quiet.stderr[-3000:]
    warned = [ln for ln in quiet.stderr.splitlines() if "Failed to convert Literal" in ln]
    assert len(warned) == 1, quiet.stderr
    assert warned[0].startswith("warning:")
    assert quiet.returncode in (0, 1)
