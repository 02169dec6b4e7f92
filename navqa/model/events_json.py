"""The one JSON form of the pipeline's events and answers.

``navqa ask --json``, ``navqa serve`` (``/api/ask``, its Server-Sent Events) and the MCP
tools all serialise with :func:`event_json` and :func:`answer_json`, so a consumer sees the
same fields wherever it reads them.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from typing import Any

from navqa.model.events import (
    Alternative,
    AlternativeKind,
    Answer,
    Confidence,
    ConfidenceLevel,
    ConfidenceReason,
    Event,
    PartKind,
    Reason,
    UnplacedPart,
    UnplacedWhy,
)
from navqa.model.resultio import result_to_json
from navqa.model.terms import GraphResult, QueryResult


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    return value


def result_json(result: QueryResult) -> dict[str, object]:
    """A result as SPARQL 1.1 JSON (SELECT/ASK) or ``{"ntriples": ...}``."""
    if isinstance(result, GraphResult):
        return {"ntriples": result.ntriples}
    return result_to_json(result)


def event_json(ev: Event) -> dict[str, Any]:
    """One event as JSON (its type and fields)."""
    data = _jsonable(ev)
    data["type"] = type(ev).__name__
    data["stage"] = ev.stage
    return data


def answer_json(a: Answer) -> dict[str, Any]:
    """The answer with its SPARQL, result (SPARQL JSON), timings, LLM use, confidence,
    the parts of the question it could not place, the alternatives it considered, and
    its events."""
    return {
        "question": a.question,
        "strategy": a.strategy,
        "sparql": a.sparql,
        "result": result_json(a.result) if a.result is not None else None,
        "empty": a.empty,
        "error": a.error,
        "timings": a.timings,
        "llm": {"calls": a.llm_calls, "prompt_tokens": a.prompt_tokens,
                "completion_tokens": a.completion_tokens},
        "confidence": confidence_json(a.confidence),
        "unplaced": [_jsonable(p) for p in a.unplaced],
        "alternatives": [_jsonable(x) for x in a.alternatives],
        "events": [event_json(e) for e in a.events],
    }


def confidence_json(c: Confidence | None) -> dict[str, Any] | None:
    """``{"level", "score", "reasons": [sentence, ...], "reason_kinds": [kind, ...]}``.

    ``reasons`` stay plain sentences (what the web page prints); ``reason_kinds`` gives
    each one's :class:`~navqa.model.events.ConfidenceReason`, in the same order.
    """
    if c is None:
        return None
    return {"level": c.level.value, "score": c.score,
            "reasons": [r.text for r in c.reasons],
            "reason_kinds": [r.kind.value for r in c.reasons]}


def assessment_from_json(data: dict[str, Any]) -> tuple[
        Confidence | None, tuple[UnplacedPart, ...], tuple[Alternative, ...]]:
    """The confidence, unplaced parts and alternatives back from :func:`answer_json`'s
    object (what a ``navqa serve`` answer carries)."""
    c = data.get("confidence")
    conf = None if c is None else Confidence(
        ConfidenceLevel(c["level"]), float(c["score"]),
        tuple(Reason(ConfidenceReason(k), t)
              for k, t in zip(c["reason_kinds"], c["reasons"], strict=True)))
    unplaced = tuple(UnplacedPart(p["text"], PartKind(p["kind"]), UnplacedWhy(p["why"]),
                                  tuple(p["span"]) if p.get("span") else None,
                                  tuple(p.get("nearest", ())))
                     for p in data.get("unplaced", ()))
    alternatives = tuple(Alternative(AlternativeKind(a["kind"]), a["iri"], float(a["score"]),
                                     float(a["margin"]), a.get("label", ""))
                         for a in data.get("alternatives", ()))
    return conf, unplaced, alternatives
