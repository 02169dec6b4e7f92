"""Constants and helpers shared by the tests of the maintainers' tools."""

from __future__ import annotations

import json
import sys
from pathlib import Path

REPO = Path(__file__).parents[2]
NAVQA = [sys.executable, "-m", "navqa.cli"]
DEMO_NS = "http://example.org/navqa/rail#"
DATASETS = ("demo", "npd", "bgee", "atkis")


def gold_queries(name: str) -> list[tuple[str, str]]:
    """(id, gold SPARQL) of a question set."""
    path = REPO / "datasets" / name / "questions.jsonl"
    return [(q["id"], q["sparql"]) for q in map(json.loads,
                                                 path.read_text(encoding="utf-8").splitlines())]


def questions(name: str) -> list[dict]:
    path = REPO / "datasets" / name / "questions.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
