"""From per-question records (``results.jsonl``) to the run summary (``summary.json``).

Everything in the summary is recomputed from the records, so ``navqa eval report``
gives the same numbers as the run itself, and a resumed run the same numbers as an
uninterrupted one (timestamps and latencies aside).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

from navqa.evaluation.diagnostics import summarize_grounding
from navqa.evaluation.outcomes import OUTCOMES, Outcome
from navqa.evaluation.projection import summarize_projection
from navqa.evaluation.shape import FEATURES, HOP_BUCKETS

__all__ = ["SUMMARY_KEYS", "group_metrics", "percentile", "summarize"]

SUMMARY_KEYS: tuple[str, ...] = (
    "f1", "acc", "nr", "em", "empty_rate", "precision", "recall", "n", "outcomes",
    "by_hops", "by_feature", "grounding", "retention", "reduction", "projection", "latency",
    "llm",
    "strategy", "ablations", "vkg", "config", "navqa_version", "started_at", "finished_at",
)
"""Top-level keys every ``summary.json`` has (besides a few informative extras)."""


def _mean(values: Iterable[float]) -> float | None:
    vs = list(values)
    return sum(vs) / len(vs) if vs else None


def percentile(values: Sequence[float], q: float) -> float | None:
    """The nearest-rank ``q``-quantile (``q`` in ``(0, 1]``) of ``values``; ``None`` if empty."""
    if not values:
        return None
    xs = sorted(values)
    rank = max(1, math.ceil(q * len(xs)))
    return xs[rank - 1]


def group_metrics(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Means of the per-question metrics, and outcome counts, over ``records``.

    Metrics are ``None`` for an empty group.
    """
    n = len(records)
    outcomes = {o.value: 0 for o in OUTCOMES}
    for r in records:
        outcomes[r["outcome"]] = outcomes.get(r["outcome"], 0) + 1
    return {
        "n": n,
        "f1": _mean(float(r["f1"]) for r in records),
        "acc": _mean(float(r["acc"]) for r in records),
        "nr": _mean(float(r["nonempty"]) for r in records),
        "em": _mean(float(r["em"]) for r in records),
        "empty_rate": _mean(float(r["outcome"] == Outcome.SILENT_FAILURE) for r in records),
        "precision": _mean(float(r["precision"]) for r in records),
        "recall": _mean(float(r["recall"]) for r in records),
        "outcomes": outcomes,
    }


def _latency(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    stages: dict[str, list[float]] = {}
    for r in records:
        for stage, secs in (r.get("timings") or {}).items():
            stages.setdefault(stage, []).append(float(secs))
    out = {
        stage: {"median": percentile(v, 0.5), "p90": percentile(v, 0.9), "n": len(v)}
        for stage, v in sorted(stages.items())
    }
    total = [float(r["seconds"]) for r in records if r.get("seconds") is not None]
    out["total"] = {"median": percentile(total, 0.5), "p90": percentile(total, 0.9),
                    "n": len(total)}
    return out


def _llm(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    calls = sum(int(r.get("llm_calls", 0)) for r in records)
    prompt = sum(int(r.get("prompt_tokens", 0)) for r in records)
    completion = sum(int(r.get("completion_tokens", 0)) for r in records)
    n = len(records)
    return {
        "calls": calls,
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "tokens": prompt + completion,
        "calls_per_question": calls / n if n else None,
        "tokens_per_question": (prompt + completion) / n if n else None,
    }


def summarize(records: Sequence[dict[str, Any]], meta: dict[str, Any]) -> dict[str, Any]:
    """The summary of a run.

    Args:
        records: One dict per question (the lines of ``results.jsonl``), in question order.
        meta: Run metadata (``strategy``, ``ablations``, ``vkg``, ``config``,
            ``navqa_version``, ``started_at``, ``finished_at``, …) copied into the summary.
    """
    overall = group_metrics(records)
    by_hops = {b: group_metrics([r for r in records if r["hop_bucket"] == b])
               for b in HOP_BUCKETS}
    by_feature = {f: group_metrics([r for r in records if f in r["features"]])
                  for f in FEATURES}
    by_feature["plain"] = group_metrics([r for r in records if not r["features"]])
    g = summarize_grounding(records)
    summary: dict[str, Any] = {
        "f1": overall["f1"],
        "acc": overall["acc"],
        "nr": overall["nr"],
        "em": overall["em"],
        "empty_rate": overall["empty_rate"],
        "precision": overall["precision"],
        "recall": overall["recall"],
        "n": overall["n"],
        "outcomes": overall["outcomes"],
        "by_hops": by_hops,
        "by_feature": by_feature,
        "grounding": g["grounding"],
        "retention": g["retention"],
        "reduction": g["reduction"],
        "projection": summarize_projection(records),
        "latency": _latency(records),
        "llm": _llm(records),
        "gold_empty": [r["id"] for r in records if r.get("gold_size") == 0],
        "hops_disagreements": [
            {"id": r["id"], "file": r["hops_file"], "computed": r["hops_computed"]}
            for r in records if r.get("hops_disagree")
        ],
        "feature_disagreements": [
            {"id": r["id"], "file": r["features_file"], "computed": r["features"]}
            for r in records
            if r.get("features_file") is not None
            and set(r["features_file"]) & set(FEATURES) != set(r["features"])
        ],
    }
    for key, value in meta.items():
        summary.setdefault(key, value)
    return summary
