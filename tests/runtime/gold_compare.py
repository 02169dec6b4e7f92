"""Helpers for the Bgee / ATKIS endpoint tests: compare SPARQL answers with SQL answers.

Values are normalised so that an Ontop term and a PostgreSQL cell compare equal when they
denote the same thing: IRIs and plain literals by their string, numbers (typed literals
and SQL numerics) as normalised :class:`~decimal.Decimal` values, floats rounded to 6
significant decimals (PostGIS and Ontop print doubles differently).
"""

from __future__ import annotations

import json
import re
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


# ---------------------------------------------------------------- dev / test splits

#: The split a question file holds, by file name: ``questions.jsonl`` is **dev** (the set
#: the system's rules are written on); ``questions-validation.jsonl`` is **validation**
#: (rules are kept or dropped by it; it was the test split until 2026-12-07, hence its
#: ``<vkg>-tNNN`` ids); ``questions-test.jsonl`` is **test** (frozen, written by a helper that
#: saw only the ontology, the mappings and the data; ids ``<vkg>-hNNN``; report only).
#: ``questions-dev-blind.jsonl`` and ``questions-validation-blind.jsonl`` are the two halves
#: (by id parity, ids ``<vkg>-bNNN``) of questions written blind like the test split: rules
#: are written on the first (**dev-blind**) and kept or dropped by the second
#: (**validation-blind**).
SPLIT_FILES = {"dev": "questions.jsonl", "validation": "questions-validation.jsonl",
               "test": "questions-test.jsonl", "dev-blind": "questions-dev-blind.jsonl",
               "validation-blind": "questions-validation-blind.jsonl"}
#: The held-out splits (every split but dev), each checked by :func:`held_out_problems`.
HELD_OUT_SPLITS = ("validation", "test", "dev-blind", "validation-blind")
#: The letter after ``<vkg>-`` in the ids of each held-out split.
ID_LETTER = {"validation": "t", "test": "h", "dev-blind": "b", "validation-blind": "b"}
#: The id parity of each blind half: odd numbers are dev-blind, even validation-blind.
BLIND_PARITY = {"dev-blind": 1, "validation-blind": 0}
_ALL_KINDS = frozenset({"projections", "unbounded-order", "per-entity-count", "having",
                        "negation", "false-ask", "optional"})
#: The question kinds (:func:`question_kinds`) each held-out split must show: the
#: validation and test splits all those of the held-out issues; each blind half, written
#: to the same brief but half as long, the common ones.
HELD_OUT_KINDS = {"validation": _ALL_KINDS, "test": _ALL_KINDS,
                  "dev-blind": frozenset({"projections", "per-entity-count", "negation"}),
                  "validation-blind": frozenset({"projections", "per-entity-count",
                                                 "negation"})}


def split_path(vkg: str, split: str) -> Path:
    """``datasets/<vkg>/questions[-validation|-test].jsonl`` in the repository."""
    from navqa.runtime.paths import repo_root

    return repo_root() / "datasets" / vkg / SPLIT_FILES[split]


def question_text_key(text: str) -> str:
    """A question's text with case, punctuation and spacing removed (duplicate detection)."""
    return " ".join("".join(c if c.isalnum() else " " for c in text.casefold()).split())


def split_overlap(dev: list[dict[str, Any]], test: list[dict[str, Any]]) -> dict[str, Any]:
    """What the test split shares with dev: ids and question texts (both must be empty)."""
    dev_texts = {question_text_key(q["question"]): q["id"] for q in dev}
    return {
        "ids": sorted({q["id"] for q in dev} & {q["id"] for q in test}),
        "texts": sorted((q["id"], dev_texts[k]) for q in test
                        if (k := question_text_key(q["question"])) in dev_texts),
    }


_STRINGS = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
_IRIS = re.compile(r"<[^<>\s]*>")


def question_kinds(item: dict[str, Any]) -> set[str]:
    """The kinds of question the held-out split must cover, read from the gold query.

    ``projections`` (a SELECT projecting two or more variables), ``unbounded-order``
    (``ORDER BY`` without ``LIMIT``), ``per-entity-count`` (``GROUP BY``), ``having``,
    ``negation`` (``MINUS`` or ``!BOUND``), ``false-ask`` (recorded ``"answer": false``),
    ``dates`` (``xsd:date``/``xsd:dateTime`` literals or ``YEAR(``), ``optional``. Strings
    and IRIs are blanked first; ``tests/evaluation/test_npd_questions.py`` uses it too.
    """
    from rdflib.plugins.sparql import prepareQuery

    code = _STRINGS.sub('""', _IRIS.sub("<>", item["sparql"])).upper()
    algebra = prepareQuery(item["sparql"]).algebra
    kinds: set[str] = set()
    if algebra.name == "SelectQuery" and len(algebra.get("PV") or ()) >= 2:
        kinds.add("projections")
    if re.search(r"\bORDER\s+BY\b", code) and not re.search(r"\bLIMIT\b", code):
        kinds.add("unbounded-order")
    if re.search(r"\bGROUP\s+BY\b", code):
        kinds.add("per-entity-count")
    if re.search(r"\bHAVING\b", code):
        kinds.add("having")
    if re.search(r"\bMINUS\b|!\s*BOUND\s*\(", code):
        kinds.add("negation")
    if item.get("answer") is False:
        kinds.add("false-ask")
    if re.search(r"\bXSD:DATE|\bYEAR\s*\(", code):
        kinds.add("dates")
    if re.search(r"\bOPTIONAL\b", code):
        kinds.add("optional")
    return kinds


HELD_OUT_KEYS = {"id", "question", "sparql", "hops", "features", "vkg", "sql", "trap", "note",
                 "answer"}


def held_out_problems(
    dev: list[dict[str, Any]],
    test: list[dict[str, Any]],
    *,
    vkg: str,
    min_lines: int,
    kinds: set[str],
    object_properties: frozenset[str],
    split: str = "validation",
) -> list[str]:
    """Everything wrong with a VKG's held-out split (one of :data:`HELD_OUT_SPLITS`), as
    readable lines (empty: fine).

    The split is disjoint from ``dev`` (the other splits' questions: ids, question texts),
    has at least ``min_lines`` lines with ids ``<vkg>-tNNN`` (validation), ``<vkg>-hNNN``
    (test) or ``<vkg>-bNNN`` (the blind halves, odd or even), an SQL cross-check on every
    line, ``hops`` and ``features`` equal to the evaluation harness's reading of the gold
    query, ASK questions with at least one recorded false answer, and at least one question
    of each of ``kinds``.
    """
    from rdflib.plugins.sparql import prepareQuery

    from navqa.evaluation.shape import analyse_query

    problems = [f"only {len(test)} lines"] if len(test) < min_lines else []
    overlap = split_overlap(dev, test)
    problems += [f"shared with dev: {k} {v}" for k, v in overlap.items() if v]
    ids = [q["id"] for q in test]
    problems += [f"duplicate id {i}" for i in sorted({i for i in ids if ids.count(i) > 1})]
    texts = [question_text_key(q["question"]) for q in test]
    if len(set(texts)) != len(texts):
        problems.append("a test question is repeated")
    for q in test:
        qid = q["id"]
        if not re.fullmatch(rf"{vkg}-{ID_LETTER[split]}\d{{3}}", qid) or q["vkg"] != vkg:
            problems.append(f"{qid}: id or vkg")
        elif split in BLIND_PARITY and int(qid[-3:]) % 2 != BLIND_PARITY[split]:
            problems.append(f"{qid}: in the wrong blind half (odd ids are dev-blind)")
        if not set(q) <= HELD_OUT_KEYS or "sql" not in q:
            problems.append(f"{qid}: keys {sorted(set(q))}")
        shape = analyse_query(q["sparql"], object_properties=object_properties)
        if (q["hops"], set(q["features"])) != (shape.hops, set(shape.features)):
            problems.append(f"{qid}: hops/features {q['hops']} {q['features']} != "
                            f"{shape.hops} {sorted(shape.features)}")
        is_ask = prepareQuery(q["sparql"]).algebra.name == "AskQuery"
        if "answer" in q and not is_ask:
            problems.append(f"{qid}: 'answer' on a SELECT")
    found = {k for q in test for k in question_kinds(q)}
    problems += [f"no question of kind {k}" for k in sorted(kinds - found)]
    return problems
