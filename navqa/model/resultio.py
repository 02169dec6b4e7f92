"""Query results to and from JSON (the gold cache, ``results.jsonl``, ``--json`` output).

SELECT and ASK results use the SPARQL 1.1 Query Results JSON format (``head`` /
``results.bindings`` / ``boolean``), so a cached gold answer can be read by any tool;
CONSTRUCT/DESCRIBE results are stored as their N-Triples text plus the parsed triples.
"""

from __future__ import annotations

from typing import Any

from navqa.errors import InputError
from navqa.model.terms import (
    AskResult,
    BNodeTerm,
    GraphResult,
    IRITerm,
    LiteralTerm,
    QueryResult,
    SelectResult,
    Term,
)

__all__ = ["result_from_json", "result_to_json", "term_from_json", "term_to_json"]


def term_to_json(term: Term | None) -> dict[str, str] | None:
    """One term in SPARQL JSON results form (``None`` for unbound)."""
    if term is None:
        return None
    if isinstance(term, IRITerm):
        return {"type": "uri", "value": term.value}
    if isinstance(term, BNodeTerm):
        return {"type": "bnode", "value": term.id}
    out = {"type": "literal", "value": term.value}
    if term.datatype:
        out["datatype"] = term.datatype
    if term.lang:
        out["xml:lang"] = term.lang
    return out


def term_from_json(data: dict[str, Any]) -> Term:
    """The inverse of :func:`term_to_json`.

    Raises:
        InputError: on an unknown term type.
    """
    kind = data.get("type")
    if kind == "uri":
        return IRITerm(str(data["value"]))
    if kind == "bnode":
        return BNodeTerm(str(data["value"]))
    if kind in ("literal", "typed-literal"):
        return LiteralTerm(str(data["value"]), datatype=data.get("datatype"),
                           lang=data.get("xml:lang"))
    raise InputError(f"unknown term type {kind!r} in a stored result")


def result_to_json(result: QueryResult) -> dict[str, Any]:
    """A result as a JSON-safe dict (SPARQL JSON for SELECT/ASK)."""
    if isinstance(result, AskResult):
        return {"head": {}, "boolean": result.value}
    if isinstance(result, GraphResult):
        return {
            "ntriples": result.ntriples,
            "triples": [[term_to_json(t) for t in triple] for triple in result.triples],
        }
    return {
        "head": {"vars": list(result.variables)},
        "results": {"bindings": [
            {v: term_to_json(t) for v, t in zip(result.variables, row, strict=True)
             if t is not None}
            for row in result.rows
        ]},
    }


def result_from_json(data: dict[str, Any]) -> QueryResult:
    """The inverse of :func:`result_to_json`.

    Raises:
        InputError: when ``data`` is not a stored result.
    """
    try:
        if "boolean" in data:
            return AskResult(bool(data["boolean"]))
        if "ntriples" in data:
            triples = tuple(
                (term_from_json(s), term_from_json(p), term_from_json(o))
                for s, p, o in data.get("triples", [])
            )
            return GraphResult(ntriples=data["ntriples"], triples=triples)
        variables = tuple(data["head"]["vars"])
        rows = tuple(
            tuple(term_from_json(b[v]) if v in b else None for v in variables)
            for b in data["results"]["bindings"]
        )
        return SelectResult(variables=variables, rows=rows)
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"malformed stored result: {e}") from e
