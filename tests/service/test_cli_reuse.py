"""``navqa ask`` sends its question to a running ``navqa serve`` of the same VKG and
prints the same output as when it answers by itself."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from serve_harness import DEMO_ANSWER, DEMO_QUESTION, Served

pytestmark = [pytest.mark.postgres, pytest.mark.ontop, pytest.mark.slow]


def navqa(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "navqa.cli", *args], capture_output=True,
                          text=True, timeout=900,
                          env={**os.environ, "COLUMNS": "200", "NAVQA_LLM": "none", **env})


def test_ask_uses_the_running_service_and_prints_the_same(served: Served) -> None:
    remote = navqa("ask", "--vkg", "demo", DEMO_QUESTION)
    assert remote.returncode == 0, remote.stderr
    assert f"answered by the navqa service at {served.url}" in remote.stderr
    assert DEMO_ANSWER in remote.stdout
    local = navqa("ask", "--vkg", "demo", DEMO_QUESTION, NAVQA_NO_SERVICE="1")
    assert local.returncode == 0, local.stderr
    assert "answered by the navqa service" not in local.stderr
    assert remote.stdout == local.stdout


def test_ask_json_through_the_service(served: Served) -> None:
    r = navqa("ask", "--vkg", "demo", DEMO_QUESTION, "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert set(d) == {"question", "strategy", "sparql", "result", "empty", "error", "timings",
                      "llm", "confidence", "unplaced", "alternatives", "events"}
    assert d["confidence"]["level"] in {"high", "medium", "low", "none"}
    direct = served.post("/api/ask", json={"question": DEMO_QUESTION}).json()
    assert d["sparql"] == direct["sparql"] and d["result"] == direct["result"]
    assert [e["type"] for e in d["events"]] == [e["type"] for e in direct["events"]]


def test_explain_answers_locally(served: Served) -> None:
    """--explain needs the typed events in this process: no service round trip."""
    r = navqa("ask", "--vkg", "demo", DEMO_QUESTION, "--explain")
    assert r.returncode == 0, r.stderr
    assert "answered by the navqa service" not in r.stderr and "7. execution" in r.stdout
