#!/usr/bin/env python3
"""Check a held-out question file: every gold SPARQL against the Ontop endpoint, every SQL
against PostgreSQL, and the two answers against each other.

Usage:
    python scripts/check_questions.py FILE.jsonl --endpoint URL --dsn postgresql://... \
        [--only ID ...]

One line per question: ok, or what is wrong. Exit 0 when every line is ok.
Standalone on purpose: it uses requests and psycopg only, so a question writer who must not
see navqa can run it (datasets/HELDOUT-BRIEF.md). The CI tests re-run the same checks.

What is compared: the rows of both answers as multisets (column order ignored within a row
is NOT ignored: the SQL must return its columns in the SPARQL projection's order). Values:
IRIs and strings by their text, numbers by value (floats to 6 decimals), booleans as
booleans, dates as ISO text. An ASK gold is compared with a one-cell SQL boolean.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from decimal import Decimal
from typing import Any

import psycopg
import requests

NUMERIC = ("#integer", "#int", "#long", "#decimal", "#double", "#float", "#short",
           "#nonNegativeInteger", "#positiveInteger")
MAX_ROWS = 100


def num(v: Any) -> Decimal:
    d = Decimal(str(v))
    if d == d.to_integral_value():
        return Decimal(int(d))
    return Decimal(f"{float(d):.6f}").normalize()


def norm_sparql(cell: dict[str, Any] | None) -> object:
    if cell is None:
        return None
    if cell["type"] == "uri":
        return cell["value"]
    dt = cell.get("datatype", "")
    if dt.endswith(NUMERIC):
        return num(cell["value"])
    if dt.endswith("#boolean"):
        return cell["value"] in ("true", "1")
    return cell["value"]


def norm_sql(v: object) -> object:
    if isinstance(v, bool) or v is None:
        return v
    if isinstance(v, int | float | Decimal):
        return num(v)
    if hasattr(v, "isoformat"):
        return v.isoformat()
    return str(v)


def run_sparql(endpoint: str, query: str) -> tuple[str, Any]:
    r = requests.post(endpoint, data={"query": query},
                      headers={"Accept": "application/sparql-results+json"}, timeout=300)
    if r.status_code != 200:
        raise RuntimeError(f"endpoint HTTP {r.status_code}: {r.text[:300]}")
    js = r.json()
    if "boolean" in js:
        return "ask", js["boolean"]
    vars_ = js["head"]["vars"]
    rows = [tuple(norm_sparql(b.get(v)) for v in vars_) for b in js["results"]["bindings"]]
    return "select", (vars_, rows)


def run_sql(dsn: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SET statement_timeout = '300s'")
        conn.execute("SET default_transaction_read_only = on")
        return [tuple(norm_sql(x) for x in row) for row in conn.execute(sql).fetchall()]


def check(q: dict[str, Any], endpoint: str, dsn: str) -> list[str]:
    problems: list[str] = []
    for key in ("id", "question", "sparql", "sql", "vkg"):
        if not q.get(key):
            problems.append(f"missing {key}")
    if problems:
        return problems
    kind, ans = run_sparql(endpoint, q["sparql"])
    sql_rows = run_sql(dsn, q["sql"])
    if kind == "ask":
        want = q.get("answer", True)
        if ans is not want:
            problems.append(f"ASK answered {ans}, the line records {want}")
        if len(sql_rows) != 1 or len(sql_rows[0]) != 1 or sql_rows[0][0] is not ans:
            problems.append(f"SQL gives {sql_rows[:3]}, the ASK gives {ans}")
        return problems
    if "answer" in q:
        problems.append("'answer' is only for ASK questions")
    vars_, rows = ans
    if not rows:
        problems.append("the SPARQL answer is empty")
    if len(rows) > MAX_ROWS:
        problems.append(f"{len(rows)} rows (at most {MAX_ROWS})")
    if len(rows) == 1 and len(rows[0]) == 1 and isinstance(rows[0][0], Decimal) \
            and rows[0][0] == 0:
        problems.append("a single aggregate of 0")
    if Counter(rows) != Counter(sql_rows):
        only_sparql = list((Counter(rows) - Counter(sql_rows)).elements())[:3]
        only_sql = list((Counter(sql_rows) - Counter(rows)).elements())[:3]
        problems.append(f"SPARQL {len(rows)} rows != SQL {len(sql_rows)} rows; "
                        f"only in SPARQL {only_sparql}; only in SQL {only_sql}")
    return problems


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("file")
    ap.add_argument("--endpoint", required=True)
    ap.add_argument("--dsn", required=True)
    ap.add_argument("--only", nargs="*", default=None, help="check only these ids")
    a = ap.parse_args()
    bad = 0
    ids: set[str] = set()
    with open(a.file, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                q = json.loads(line)
            except json.JSONDecodeError as e:
                print(f"line {n}: not JSON: {e}")
                bad += 1
                continue
            if a.only and q.get("id") not in a.only:
                continue
            if q.get("id") in ids:
                print(f"line {n}: duplicate id {q.get('id')}")
                bad += 1
            ids.add(q.get("id"))
            try:
                problems = check(q, a.endpoint, a.dsn)
            except Exception as e:  # noqa: BLE001 - report and go on
                problems = [f"{type(e).__name__}: {str(e)[:300]}"]
            print(f"{q.get('id')}: " + ("ok" if not problems else "; ".join(problems)))
            bad += bool(problems)
    print(f"{bad} line(s) with problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
