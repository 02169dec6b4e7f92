"""Render SPARQL results as a table, JSON or CSV; an answer's confidence as text."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Sequence

from rich.table import Table
from rich.text import Text

from navqa.model.events import (
    Alternative,
    Confidence,
    ConfidenceLevel,
    ConfidenceReason,
    UnplacedPart,
    UnplacedWhy,
)
from navqa.model.iri import compact
from navqa.model.resultio import result_to_json
from navqa.model.terms import (
    AskResult,
    GraphResult,
    IRITerm,
    LiteralTerm,
    QueryResult,
    SelectResult,
    Term,
)


def result_json(result: QueryResult) -> dict[str, object]:
    """A result as SPARQL 1.1 JSON (SELECT/ASK) or ``{"ntriples": ...}``."""
    if isinstance(result, GraphResult):
        return {"ntriples": result.ntriples}
    return result_to_json(result)


def to_json(result: QueryResult) -> str:
    return json.dumps(result_json(result), indent=1, ensure_ascii=False)


def to_csv(result: QueryResult) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    if isinstance(result, AskResult):
        w.writerow(["boolean"])
        w.writerow(["true" if result.value else "false"])
    elif isinstance(result, GraphResult):
        w.writerow(["subject", "predicate", "object"])
        for s, p, o in result.triples:
            w.writerow([str(s), str(p), str(o)])
    else:
        w.writerow(result.variables)
        for row in result.rows:
            w.writerow(["" if t is None else str(t) for t in row])
    return buf.getvalue()


def cell(t: Term | None, prefixes: dict[str, str]) -> str:
    if t is None:
        return ""
    if isinstance(t, IRITerm):
        return compact(t.value, prefixes) if prefixes else t.value
    if isinstance(t, LiteralTerm):
        return t.value
    return str(t)


def to_table(result: QueryResult, prefixes: dict[str, str] | None = None,
             max_rows: int = 200) -> Table | Text:
    """A rich table for SELECT, a sentence for ASK, N-Triples for graphs.

    Values from the data are :class:`~rich.text.Text`, never markup: a literal such as
    ``[link=…]`` or ``[/x]`` prints as it is.
    """
    prefixes = prefixes or {}
    if isinstance(result, AskResult):
        return Text("yes" if result.value else "no")
    if isinstance(result, GraphResult):
        return Text(result.ntriples)
    assert isinstance(result, SelectResult)
    t = Table(caption=f"{len(result.rows)} row(s)")
    for v in result.variables:
        t.add_column(Text(v))
    for row in result.rows[:max_rows]:
        t.add_row(*(Text(cell(x, prefixes)) for x in row))
    if len(result.rows) > max_rows:
        t.caption = f"{len(result.rows)} row(s), first {max_rows} shown"
    return t


_LEVEL_STYLE = {ConfidenceLevel.HIGH: "green", ConfidenceLevel.MEDIUM: "yellow",
                ConfidenceLevel.LOW: "red", ConfidenceLevel.NONE: "red"}
_PART_REASONS = {ConfidenceReason.VALUE_NOT_FOUND, ConfidenceReason.UNPLACED_VALUE,
                 ConfidenceReason.UNPLACED_CONSTRAINT, ConfidenceReason.UNPLACED_COLUMN,
                 ConfidenceReason.UNPLACED_TERM}
_WHY = {UnplacedWhy.NOT_GROUNDED: "not found in the data, not used by the query",
        UnplacedWhy.NOT_IN_QUERY: "not used by the query",
        UnplacedWhy.NOT_IN_DATA: "in the query, but not found in the data"}


def confidence_lines(confidence: Confidence | None, unplaced: Sequence[UnplacedPart],
                     alternatives: Sequence[Alternative],
                     name: Callable[[str], str] = str) -> list[Text]:
    """What ``navqa ask`` prints under the answer: the confidence and its reasons, every
    part of the question not placed, and the alternatives considered (``name`` compacts
    IRIs). Plain :class:`~rich.text.Text`: question text is never read as markup."""
    lines: list[Text] = []
    if confidence is not None:
        line = Text("confidence: ")
        line.append(confidence.level.value, style=_LEVEL_STYLE[confidence.level])
        line.append(f" ({confidence.score:.2f})")
        lines.append(line)
        # the error is printed as "no answer: …", the unplaced parts each on a line below
        shown = {ConfidenceReason.NO_RESULT} | (_PART_REASONS if unplaced else set())
        lines += [Text(f"  - {r.text}") for r in confidence.reasons if r.kind not in shown]
    for p in unplaced:
        near = (" (nearest stored values: " + ", ".join(repr(v) for v in p.nearest) + ")"
                if p.nearest else "")
        line = Text("not placed: ", style="yellow")
        line.append(f"{p.text!r} ({p.kind.value}): {_WHY[p.why]}{near}")
        lines.append(line)
    kinds: dict[str, list[Alternative]] = {}
    for a in alternatives:
        kinds.setdefault(a.kind.value, []).append(a)
    for kind, alts in kinds.items():
        listed = ", ".join(f"{name(a.iri)} {a.score:.2f} (-{a.margin:.2f})" for a in alts)
        lines.append(Text(f"also considered ({kind}): {listed}", style="dim"))
    return lines
