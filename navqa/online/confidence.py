"""How far an answer can be trusted, which parts of the question it could not place, and
what else the pipeline considered — from its events and its final SPARQL alone.

:func:`assess` is the one implementation: :meth:`navqa.online.pipeline.Pipeline.stream`
calls it at the end of every strategy, ``navqa ask`` shows it and the service serves it.

A *value* of the question (a name, a number, a year) is placed when its stored form (or,
for a value not found in the data, its text) is a literal of the final query. A value no
probe found is reported either way: as ``not-in-data`` when the query keeps it (an empty
answer is then expected), as ``not-grounded`` when it does not. A comparison ("more than
300") is placed when the query also filters; a superlative ("the largest") when it orders
or aggregates with MAX/MIN. An asked column ("… and their depth") is placed unless the
offline synthesizer reports it found nothing for it (``QuerySynthesized.unplaced_columns``).
The answer-type phrase ("which *company*") is placed when a
term of the query, or a literal, shares a word with it. Everything not placed lowers the
confidence with a typed :class:`~navqa.model.events.Reason`; nothing is ever dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from navqa.errors import SparqlSyntaxError
from navqa.model.cost import CostVerdict
from navqa.model.events import (
    AggregateVacuous,
    Alternative,
    AlternativeKind,
    AnswerTypePredicted,
    Confidence,
    ConfidenceLevel,
    ConfidenceReason,
    Event,
    Linked,
    MentionsExtracted,
    PartKind,
    QueryChecked,
    QueryCostChecked,
    QueryRepaired,
    QuerySynthesized,
    Reason,
    ScoredTerm,
    SubgraphsReranked,
    UngroundedWhy,
    UnplacedPart,
    UnplacedWhy,
    ValueMention,
    ValuesGrounded,
)
from navqa.model.iri import IRI, humanize, local_name
from navqa.model.terms import IRITerm, LiteralTerm, QueryResult, SelectResult
from navqa.online.check import parse
from navqa.online.sparql_analysis import used_terms

__all__ = ["CLOSE_CLASS_MARGIN", "CLOSE_SUBGRAPH_MARGIN", "PENALTY", "Assessment", "assess"]

#: Two subgraphs whose rerank scores differ by less than this are a toss-up.
CLOSE_SUBGRAPH_MARGIN = 0.05
#: Two linked classes whose scores differ by less than this are a toss-up.
CLOSE_CLASS_MARGIN = 0.02
#: How many alternatives of each kind an answer carries.
MAX_ALTERNATIVES = 3

#: What each reason takes off the score, and the level it caps the answer at.
PENALTY: dict[ConfidenceReason, tuple[float, ConfidenceLevel]] = {
    ConfidenceReason.NO_RESULT: (1.0, ConfidenceLevel.NONE),
    ConfidenceReason.EMPTY_RESULT: (0.5, ConfidenceLevel.LOW),
    ConfidenceReason.EMPTY_AGGREGATE: (0.5, ConfidenceLevel.LOW),
    ConfidenceReason.RESTATED_ANSWER: (0.5, ConfidenceLevel.LOW),
    ConfidenceReason.VALUE_NOT_FOUND: (0.4, ConfidenceLevel.LOW),
    ConfidenceReason.VALUE_PROBE_FAILED: (0.4, ConfidenceLevel.LOW),
    ConfidenceReason.UNPLACED_VALUE: (0.35, ConfidenceLevel.LOW),
    ConfidenceReason.UNPLACED_CONSTRAINT: (0.3, ConfidenceLevel.LOW),
    ConfidenceReason.UNPLACED_COLUMN: (0.3, ConfidenceLevel.LOW),
    ConfidenceReason.UNPLACED_TERM: (0.2, ConfidenceLevel.MEDIUM),
    ConfidenceReason.QUERY_REPAIRED: (0.2, ConfidenceLevel.MEDIUM),
    ConfidenceReason.CLOSE_SUBGRAPHS: (0.15, ConfidenceLevel.MEDIUM),
    ConfidenceReason.COSTLY_QUERY: (0.15, ConfidenceLevel.MEDIUM),
    ConfidenceReason.CLOSE_CLASSES: (0.1, ConfidenceLevel.MEDIUM),
}

_RANK = {ConfidenceLevel.HIGH: 0, ConfidenceLevel.MEDIUM: 1, ConfidenceLevel.LOW: 2,
         ConfidenceLevel.NONE: 3}
_ORDERED = re.compile(r"\bORDER\s+BY\b|\b(?:MAX|MIN)\s*\(", re.IGNORECASE)
_FILTERED = re.compile(r"\b(?:FILTER|HAVING)\b", re.IGNORECASE)
_WORD = re.compile(r"[^\W_]+")


@dataclass(frozen=True)
class Assessment:
    """:func:`assess`'s verdict, carried on :class:`~navqa.model.events.Answer`."""

    confidence: Confidence
    unplaced: tuple[UnplacedPart, ...]
    alternatives: tuple[Alternative, ...]


def assess(question: str, events: Sequence[Event], *, sparql: str | None,
           result: QueryResult | None, error: str | None,
           label: Callable[[IRI], str] | None = None) -> Assessment:
    """The confidence, unplaced parts and alternatives of one answer.

    Args:
        question: The question as asked.
        events: Every event of the answer, in order.
        sparql: The final (executed) query, ``None`` when none was produced.
        result: Its result, ``None`` when it did not run or failed.
        error: Why there is no result, when there is none.
        label: An ontology term's label (the local name, humanised, when not given).
    """
    name = label or (lambda iri: humanize(local_name(iri)))
    used = _used_iris(sparql)
    unplaced = _unplaced(question, events, sparql, used, name)
    reasons: list[Reason] = []
    if error is not None or result is None:
        reasons.append(Reason(ConfidenceReason.NO_RESULT, error or "no result"))
    elif result.is_empty:
        reasons.append(Reason(ConfidenceReason.EMPTY_RESULT, "the query ran and returned "
                                                              "nothing"))
    elif any(isinstance(e, AggregateVacuous) and e.sparql == sparql for e in events):
        reasons.append(Reason(ConfidenceReason.EMPTY_AGGREGATE,
                              "the aggregated pattern matched nothing: the value aggregates "
                              "no solution"))
    elif (restated := _restated(events, result)) is not None:
        reasons.append(Reason(ConfidenceReason.RESTATED_ANSWER,
                              f"the answer only restates {restated!r}, a value the question "
                              "states"))
    reasons += [_part_reason(p) for p in unplaced]
    # a failed probe whose mention is not already an unplaced part (the lower-case names,
    # a categorical value set, the nearest values of a mention)
    failed_parts = {p.text.lower() for p in unplaced if p.why is UnplacedWhy.PROBE_FAILED}
    for e in events:
        if isinstance(e, ValuesGrounded):
            reasons += [Reason(ConfidenceReason.VALUE_PROBE_FAILED,
                               f"the {f.probe.value} probe"
                               + (f" for {f.mention!r}" if f.mention else "")
                               + f" failed, grounding went on without it: {f.error}")
                        for f in e.failures if f.mention is None or (
                            f.mention.lower() not in failed_parts
                            and all(g.mention.lower() != f.mention.lower()
                                    for g in e.groundings))]
    if any(isinstance(e, QueryRepaired) or (isinstance(e, QueryChecked) and e.repaired)
           for e in events):
        reasons.append(Reason(ConfidenceReason.QUERY_REPAIRED, "the query was repaired"))
    # Only the query that ran counts: a costly first draft replaced by a cheaper
    # equivalent (CheaperQueryTried.kept_cheaper) does not lower the confidence.
    for e in events:
        if isinstance(e, QueryCostChecked) and e.verdict == CostVerdict.COSTLY.value \
                and (sparql is None or e.sparql == sparql):
            reasons.append(Reason(ConfidenceReason.COSTLY_QUERY, e.summary))
    ranked = _last(events, SubgraphsReranked)
    if isinstance(ranked, SubgraphsReranked):
        top = sorted(ranked.scores, key=lambda s: -s.score)
        if len(top) > 1 and top[0].score - top[1].score < CLOSE_SUBGRAPH_MARGIN:
            reasons.append(Reason(ConfidenceReason.CLOSE_SUBGRAPHS,
                                  f"two subgraphs scored within "
                                  f"{top[0].score - top[1].score:.3f}: "
                                  f"{top[0].label or top[0].iri} and "
                                  f"{top[1].label or top[1].iri}"))
    linked = _last(events, Linked)
    if isinstance(linked, Linked):
        top = sorted(linked.classes, key=lambda s: -s.score)
        if len(top) > 1 and top[0].score - top[1].score < CLOSE_CLASS_MARGIN:
            reasons.append(Reason(ConfidenceReason.CLOSE_CLASSES,
                                  f"the two best linked classes scored within "
                                  f"{top[0].score - top[1].score:.3f}: "
                                  f"{top[0].label or top[0].iri} and "
                                  f"{top[1].label or top[1].iri}"))
    reasons.sort(key=lambda r: -PENALTY[r.kind][0])
    level = max((PENALTY[r.kind][1] for r in reasons), key=_RANK.__getitem__,
                default=ConfidenceLevel.HIGH)
    score = 0.0 if level is ConfidenceLevel.NONE else max(
        0.0, 1.0 - sum(PENALTY[r.kind][0] for r in reasons))
    return Assessment(Confidence(level, round(score, 3), tuple(reasons)), tuple(unplaced),
                      _alternatives(events, used))


# -- unplaced parts ----------------------------------------------------------------------------

def _unplaced(question: str, events: Sequence[Event], sparql: str | None, used: set[IRI],
              name: Callable[[IRI], str]) -> list[UnplacedPart]:
    mentioned = _last(events, MentionsExtracted)
    values: tuple[ValueMention, ...] = (
        mentioned.mentions.values if isinstance(mentioned, MentionsExtracted) else ())
    stored: dict[str, list[str]] = {}
    missing: dict[str, tuple[str, ...]] = {}
    failed: set[str] = set()
    for e in events:
        if isinstance(e, ValuesGrounded):
            for g in e.groundings:
                if g.stored is not None:
                    stored.setdefault(g.mention.lower(), []).append(g.stored)
            for u in e.ungrounded:
                missing[u.mention.lower()] = u.nearest
                if u.why is UngroundedWhy.PROBE_FAILED:
                    failed.add(u.mention.lower())
    text = sparql or ""
    out: list[UnplacedPart] = []
    seen: set[str] = set()
    for v in values:
        key = v.text.lower()
        if key in seen:
            continue
        seen.add(key)
        in_query = any(_has_value(text, s, v.kind) for s in [*stored.get(key, []), v.text])
        span = _span(question, v.text)
        if key in failed:
            out.append(UnplacedPart(v.text, PartKind.VALUE, UnplacedWhy.PROBE_FAILED, span))
        elif key in missing:
            why = UnplacedWhy.NOT_IN_DATA if in_query else UnplacedWhy.NOT_GROUNDED
            out.append(UnplacedPart(v.text, PartKind.VALUE, why, span, missing[key]))
        elif not in_query:
            out.append(UnplacedPart(v.text, PartKind.VALUE, UnplacedWhy.NOT_IN_QUERY, span))
        elif v.comparator != "=" and not _FILTERED.search(text):
            out.append(UnplacedPart(f"{v.comparator} {v.text}", PartKind.CONSTRAINT,
                                    UnplacedWhy.NOT_IN_QUERY, span))
    if isinstance(mentioned, MentionsExtracted) and sparql is not None:
        cues = mentioned.mentions.cues
        if cues.superlative and not _ORDERED.search(text):
            word = cues.superlative_word or cues.superlative
            out.append(UnplacedPart(word, PartKind.CONSTRAINT, UnplacedWhy.NOT_IN_QUERY,
                                    _span(question, word)))
        typed = _last(events, AnswerTypePredicted)
        if isinstance(typed, AnswerTypePredicted) and typed.label.strip() and not _phrase_placed(
                typed.label, text, used, name):
            out.append(UnplacedPart(typed.label, PartKind.CLASS, UnplacedWhy.NOT_IN_QUERY,
                                    _span(question, typed.label)))
    synthesized = _last(events, QuerySynthesized)
    if isinstance(synthesized, QuerySynthesized) and sparql is not None:
        # a part of a coordinated request the query does not project
        out += [UnplacedPart(c, PartKind.COLUMN, UnplacedWhy.NOT_IN_QUERY, _span(question, c))
                for c in synthesized.unplaced_columns]
    return out


def _part_reason(p: UnplacedPart) -> Reason:
    near = (f" (nearest stored values: {', '.join(repr(n) for n in p.nearest)})"
            if p.nearest else "")
    if p.why is UnplacedWhy.NOT_IN_DATA:
        return Reason(ConfidenceReason.VALUE_NOT_FOUND,
                      f"{p.text!r} is in the query but was not found in the data{near}")
    if p.why is UnplacedWhy.PROBE_FAILED:
        return Reason(ConfidenceReason.VALUE_PROBE_FAILED,
                      f"the probe for {p.text!r} failed, so it was not looked up in the "
                      f"data and the query does not use it")
    if p.why is UnplacedWhy.NOT_GROUNDED:
        return Reason(ConfidenceReason.VALUE_NOT_FOUND,
                      f"{p.text!r} was not found in the data and the query does not use "
                      f"it{near}")
    if p.kind is PartKind.VALUE:
        return Reason(ConfidenceReason.UNPLACED_VALUE, f"the query does not use {p.text!r}")
    if p.kind is PartKind.COLUMN:
        return Reason(ConfidenceReason.UNPLACED_COLUMN,
                      f"the question asks for {p.text!r} too, and the answer has no column "
                      f"for it")
    if p.kind is PartKind.CONSTRAINT:
        return Reason(ConfidenceReason.UNPLACED_CONSTRAINT,
                      f"the query does not apply {p.text!r}")
    return Reason(ConfidenceReason.UNPLACED_TERM,
                  f"no term of the query stands for {p.text!r}")


def _restated(events: Sequence[Event], result: QueryResult) -> str | None:
    """The value of the question that every literal cell of ``result`` only gives back
    ("Which rig drilled wellbore 2/4-2?" answered by "2/4-2", with or without the
    wellbore's IRI beside it), ``None`` when some literal says anything else or there is
    none. Only a string value counts (a count or a year may well equal a number of the
    question), compared ignoring case, as written or in its stored form."""
    if not isinstance(result, SelectResult) or result.is_empty:
        return None
    mentioned = _last(events, MentionsExtracted)
    stated = {v.text.lower(): v.text for v in (
        mentioned.mentions.values if isinstance(mentioned, MentionsExtracted) else ())
        if v.kind == "string"}
    for e in events:
        if isinstance(e, ValuesGrounded):
            stated |= {g.stored.lower(): g.mention for g in e.groundings
                       if g.stored is not None and g.mention.lower() in stated}
    # an entity (an IRI) is an answer of its own; a column of entities beside a column of
    # their labels (an entity answer, navqa.model.answers) is what the labels say
    columns = [[row[j] for row in result.rows if row[j] is not None]
               for j in range(len(result.variables))]
    labels = [c for col in columns if all(isinstance(x, LiteralTerm) for x in col)
              for c in col]
    entities = [col for col in columns if col and not all(isinstance(x, LiteralTerm)
                                                          for x in col)]
    if not labels or any(not all(isinstance(x, IRITerm) for x in col) for col in entities):
        return None
    cells = {c.value.lower() for c in labels if isinstance(c, LiteralTerm)}
    if not cells <= stated.keys():
        return None
    return stated[min(cells)]


def _has_value(sparql: str, value: str, kind: str) -> bool:
    """Whether ``value`` is in the query: as a number for numbers and years (not inside
    another number), else as a case-insensitive substring (a literal, or its regex)."""
    value = value.strip()
    if not value:
        return False
    if kind in ("number", "year"):
        digits = value.replace(",", "")
        return re.search(rf"(?<![\d.]){re.escape(digits)}(?:\.0+)?(?!\d)", sparql) is not None
    return value.lower() in sparql.lower()


def _span(question: str, text: str) -> tuple[int, int] | None:
    i = question.lower().find(text.lower())
    return None if i < 0 else (i, i + len(text))


def _stem(word: str) -> str:
    """A crude stem: lower case, a plural ending off, the first five letters."""
    w = word.lower()
    if w.endswith("ies") and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("s") and not w.endswith("ss") and len(w) > 3:
        w = w[:-1]
    return w[:5]


def _stems(text: str) -> set[str]:
    """The stems of the words of at least three letters (camelCase split too)."""
    words = _WORD.findall(re.sub(r"(?<=[a-z])(?=[A-Z])", " ", text))
    return {_stem(w) for w in words if len(w) >= 3}


def _phrase_placed(phrase: str, sparql: str, used: set[IRI],
                   name: Callable[[IRI], str]) -> bool:
    want = _stems(phrase)
    if not want:
        return True
    have: set[str] = set()
    for iri in used:
        have |= _stems(name(iri)) | _stems(humanize(local_name(iri)))
    literals = " ".join(re.findall(r'"((?:[^"\\]|\\.)*)"', sparql))
    return bool(want & (have | _stems(literals)))


def _used_iris(sparql: str | None) -> set[IRI]:
    """Classes and properties of the query (none when there is none, or it does not parse)."""
    if not sparql:
        return set()
    try:
        preds, classes = used_terms(parse(sparql))
    except SparqlSyntaxError:
        return set()
    return preds | classes


# -- alternatives ------------------------------------------------------------------------------

def _alternatives(events: Sequence[Event], used: set[IRI]) -> tuple[Alternative, ...]:
    out: list[Alternative] = []
    linked = _last(events, Linked)
    if isinstance(linked, Linked):
        out += _others(AlternativeKind.CLASS, linked.classes, used)
        out += _others(AlternativeKind.PROPERTY, linked.properties, used)
    ranked = _last(events, SubgraphsReranked)
    if isinstance(ranked, SubgraphsReranked):
        out += _others(AlternativeKind.SUBGRAPH, ranked.scores, {ranked.chosen})
    return tuple(out)


def _others(kind: AlternativeKind, terms: Sequence[ScoredTerm],
            taken: set[IRI]) -> list[Alternative]:
    """The best terms of one step that the answer did not take, with their margins."""
    if not terms:
        return []
    best = max(t.score for t in terms)
    rest = sorted((t for t in terms if t.iri not in taken), key=lambda t: -t.score)
    return [Alternative(kind, t.iri, t.score, round(best - t.score, 4), t.label)
            for t in rest[:MAX_ALTERNATIVES]]


def _last(events: Sequence[Event], kind: type[Event]) -> Event | None:
    for e in reversed(events):
        if isinstance(e, kind):
            return e
    return None
