"""The run directory of ``navqa eval``: its files, its records, its summary.

``results.jsonl`` holds one record per question (appended as they finish), ``run.json``
the run's metadata and ``summary.json`` what :func:`summarize_run` computes from both.
The runner writes them; the report and ``navqa eval report`` read them.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from navqa.errors import EvaluationError
from navqa.evaluation.dataset import Question
from navqa.evaluation.outcomes import Outcome
from navqa.evaluation.summary import summarize

log = logging.getLogger(__name__)

__all__ = ["RESULTS_FILE", "RUN_FILE", "SUMMARY_FILE", "is_done", "read_results",
           "summarize_run"]

RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"
RUN_FILE = "run.json"


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def is_done(record: Mapping[str, Any]) -> bool:
    """The record holds an outcome of the system (``gold-error`` is not one)."""
    return record.get("outcome") != Outcome.GOLD_ERROR


def read_results(out_dir: Path | str, *, repair: bool = False) -> list[dict[str, Any]]:
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


def summarize_run(out_dir: Path | str, *, questions: Sequence[Question] | None = None,
                  session_llm: Any = None) -> dict[str, Any]:
    """Recompute ``summary.json`` from ``results.jsonl`` (and return it).

    Args:
        out_dir: The run directory.
        questions: The question order (default: the order of ``results.jsonl``).
        session_llm: The pipeline's own LLM statistics for this session, if any.

    Raises:
        EvaluationError: not a run directory.
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
    done = {r["id"] for r in records if is_done(r)}
    meta["pending"] = ([i for i in ids if i not in done] if ids is not None
                       else [r["id"] for r in records if r["id"] not in done])
    meta["complete"] = not meta["pending"] and len(done) >= meta.get("n_questions", len(done))
    meta["gold_errors"] = [{"id": r["id"], "error": r.get("error")} for r in records
                           if not is_done(r)]
    summary = summarize([r for r in records if is_done(r)], meta)
    if session_llm is not None:
        summary["llm"]["session"] = session_llm
    (out / SUMMARY_FILE).write_text(json.dumps(summary, indent=1, ensure_ascii=False))
    return summary
