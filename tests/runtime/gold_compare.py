"""Helpers for the Bgee / ATKIS endpoint tests: compare SPARQL answers with SQL answers.

Values are normalised so that an Ontop term and a PostgreSQL cell compare equal when they
denote the same thing: IRIs and plain literals by their string, numbers (typed literals
and SQL numerics) as normalised :class:`~decimal.Decimal` values, floats rounded to 6
significant decimals (PostGIS and Ontop print doubles differently).
"""

from __future__ import annotations

import json
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

from navqa.model.terms import IRITerm, LiteralTerm, Term

_NUMERIC = ("#integer", "#int", "#long", "#decimal", "#double", "#float", "#short",
            "#nonNegativeInteger", "#positiveInteger")
_FLOATING = ("#double", "#float")


def _num(v: Decimal | float) -> Decimal:
    d = Decimal(str(v))
    if d == d.to_integral_value():
        return Decimal(int(d))
    return Decimal(f"{float(d):.6f}").normalize()


def norm(v: object) -> object:
    """One comparable value for a SPARQL term or an SQL cell."""
    if isinstance(v, IRITerm):
        return v.value
    if isinstance(v, LiteralTerm):
        dt = v.datatype or ""
        if dt.endswith(_NUMERIC):
            return _num(Decimal(v.value) if not dt.endswith(_FLOATING) else float(v.value))
        if dt.endswith("#boolean"):
            return v.value == "true"
        return v.value
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int | float | Decimal):
        return _num(v)
    return str(v)


def bag(rows: Any) -> Counter:
    """The rows as a multiset of normalised tuples."""
    return Counter(tuple(norm(x) for x in r) for r in rows)


def load_questions(path: Path) -> list[dict[str, Any]]:
    """The items of a question file (one JSON object per line)."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def first_column(rows: Any) -> list[object]:
    return [norm(r[0]) for r in rows]


def term_str(t: Term | None) -> str | None:
    return None if t is None else str(t)
