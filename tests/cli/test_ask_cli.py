"""`navqa ask` as a user runs it right after set-up: offline backend, demo VKG."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

pytestmark = [pytest.mark.ontop, pytest.mark.postgres, pytest.mark.slow]

NAVQA = [sys.executable, "-m", "navqa.cli"]


def test_ask_json_answers_with_the_offline_backend(navqa_config, vkg) -> None:
    (expected,) = vkg("demo").sql(
        "SELECT count(*) FROM rolling_stock WHERE kind = 'electric_loco'")[0]
    env = dict(os.environ, NAVQA_PG_CLUSTER="cli-ask-test")
    env.pop("NAVQA_LLM_MODEL", None)
    proc = subprocess.run(NAVQA + ["ask", "--vkg", "demo", "--json",
                                   "How many electric locomotives are there?"],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["error"] is None
    assert out["llm"]["calls"] == 0
    [row] = out["result"]["results"]["bindings"]
    assert int(row["count"]["value"]) == expected
    stages = [e["stage"] for e in out["events"]]
    assert stages[0] == "mentions" and "synthesis" in stages and "execution" in stages
    assert "ElectricLocomotive" in out["sparql"]


def test_ask_explain_shows_the_steps(navqa_config) -> None:
    env = dict(os.environ, NAVQA_PG_CLUSTER="cli-ask-test", COLUMNS="120")
    proc = subprocess.run(NAVQA + ["ask", "--vkg", "demo", "--explain",
                                   "Which region is the city of Montbrûlé in?"],
                          env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for heading in ("1. mentions", "2. linking", "3. values", "4. expansion", "5. rerank",
                    "6. SPARQL", "7. execution"):
        assert heading in proc.stdout
    assert "Val-Brûlé" in proc.stdout
