"""Names written in lower case: "in the midgut", "during the pupal stage", "(eya)".

The mention extractor finds names by their capital letters and quotes. Many VKGs also
name things with ordinary lower-case words (Bgee's anatomy and life stages: "midgut",
"seminal fluid secreting gland", "first instar larval stage (Drosophila)"; gene symbols
such as "eya"), which a question writes as it writes any noun. Which of its lower-case
phrases are names only the data can tell: one bounded exact probe on the name-like
properties, for all candidate phrases at once, keeps those stored *with the same case*
(so "run" does not become the gene "Run"), alone or followed by a parenthesised
qualifier. This is the grammar rule ``plain-name``.

A phrase is a candidate when it is one to five words of one clause, starts and ends with
a content word, and overlaps no value mention already found. A phrase that names the
schema (the label or local name of a class or property, singular: "tissue", "developmental
stage") or that a quantifier or wh-word introduces ("for each tissue", "which tissue")
speaks of a class, not of one thing, and is no candidate. A number inside a phrase
("embryonic stage 13") belongs to the name when the phrase grounds; the number mention
then becomes part of a string mention.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from navqa.backends.protocols import SparqlEndpoint
from navqa.model.events import ValueMention
from navqa.model.iri import humanize
from navqa.online.context import SchemaContext, normal
from navqa.online.reading.lexicon import Phenomenon, words
from navqa.online.values import (
    MAX_PROPERTIES,
    GroundedValue,
    probe_exact,
    qualifier_of,
    typed_classes,
)

MAX_WORDS = 5
MAX_CANDIDATES = 60
PROBE_LIMIT = 100
MIN_LETTERS = 3
"""A one-word name needs at least this many letters ("eya"; not "w" or "en")."""

_STOP = words(Phenomenon.STOPWORD) | words(Phenomenon.FORM_WORD)
# words that make the noun after them a class: "for each tissue", "which tissue",
# "how many different stages"
_CLASS_INTRODUCERS = (words(Phenomenon.PER_GROUP) | words(Phenomenon.DISTINCT_WORD)
                      | {w for w in words(Phenomenon.WH_WORD) if " " not in w}
                      | {"any", "all", "many", "some", "no", "other", "every"})
# a word: letters, digits, and inner hyphens or apostrophes ("Amy-p", "embryo's")
_WORD = re.compile(r"[\w][\w'’-]*[\w]|[\w]")
# what ends a clause: no phrase runs across it
_CLAUSE_END = re.compile(r"[,;:.?!()\[\]\"“”]")


@dataclass(frozen=True)
class PlainName:
    """A lower-case phrase the data stores as a name, and where the question writes it."""

    grounding: GroundedValue
    start: int
    end: int


def _schema_phrases(ctx: SchemaContext) -> frozenset[str]:
    """Labels and local names of the classes and properties, normalised."""
    out: set[str] = set()
    for iri in (*ctx.classes, *ctx.properties):
        out.add(normal(ctx.label(iri)))
        out.add(normal(humanize(iri)))
    return frozenset(out)


def candidate_phrases(question: str, taken: list[tuple[int, int]],
                      schema: frozenset[str]) -> list[tuple[str, int, int]]:
    """The question's phrases that could be lower-case names: ``(text, start, end)``,
    longest first (see the module docstring for which)."""
    clauses = []
    last = 0
    for m in _CLAUSE_END.finditer(question):
        clauses.append((last, m.start()))
        last = m.end()
    clauses.append((last, len(question)))
    out: list[tuple[str, int, int]] = []
    for a, b in clauses:
        toks = [(m.group(0), a + m.start(), a + m.end()) for m in _WORD.finditer(question[a:b])]
        for i in range(len(toks)):
            before = toks[i - 1][0].lower() if i else ""
            if before in _CLASS_INTRODUCERS:
                continue
            for j in range(i, min(i + MAX_WORDS, len(toks))):
                first, last_tok = toks[i], toks[j]
                text = question[first[1]:last_tok[2]]
                if not first[0][0].islower():
                    break  # a capitalised word starts a name the extractor reads
                if first[0].lower() in _STOP or last_tok[0].lower() in _STOP:
                    continue
                if any(not (last_tok[2] <= s or first[1] >= e) for s, e in taken):
                    continue
                if j == i and (sum(c.isalpha() for c in text) < MIN_LETTERS):
                    continue
                if normal(text) in schema:
                    continue
                if j + 1 < len(toks) and toks[j + 1][0].isdigit():
                    continue  # "stage 13": the number belongs to the phrase
                out.append((text, first[1], last_tok[2]))
    out.sort(key=lambda t: (-(t[2] - t[1]), t[1]))
    return out[:MAX_CANDIDATES]


def plain_names(ctx: SchemaContext, endpoint: SparqlEndpoint, question: str,
                mentions: list[ValueMention], *, timeout: float = 30.0
                ) -> tuple[list[PlainName], int]:
    """Lower-case phrases of ``question`` that the data stores, with the same case, as the
    value of a name-like property: longest first, none overlapping another, a phrase
    written twice found once (where first written). Also returns the number of probes: 0
    to 2, one more for the classes of a subject whose IRI several classes' templates
    produce (:func:`~navqa.online.values.typed_classes`)."""
    props = [p for p in ctx.name_like_properties if ctx.allowed(p)][:MAX_PROPERTIES]
    if not props:
        return [], 0
    # spans of the value mentions already found; numbers may sit inside a name
    taken: list[tuple[int, int]] = []
    for mention in mentions:
        if mention.kind == "number":
            continue
        i = question.find(mention.text)
        if i >= 0:
            taken.append((i, i + len(mention.text)))
    cands = candidate_phrases(question, taken, _schema_phrases(ctx))
    if not cands:
        return [], 0
    rows = probe_exact(endpoint, props, [t for t, _, _ in cands], timeout=timeout,
                       qualified=True, limit=PROBE_LIMIT)
    by_text: dict[str, list[tuple[str, str, str]]] = {}
    for s, p, v in rows:
        text = next((t for t, _, _ in cands if qualifier_of(v, [t.lower()]) is not None
                     and v.strip().startswith(t)), None)  # the same case as written
        if text is not None:
            by_text.setdefault(text, []).append((s, p, v))
    chosen: list[tuple[str, int, int, tuple[str, str, str]]] = []
    for text, a, b in cands:  # longest first
        if text not in by_text or any(x[0] == text or not (b <= x[1] or a >= x[2])
                                      for x in chosen):
            continue
        # the value stored exactly as written before one with a qualifier; then the
        # property order of the name-like properties
        hits = sorted(by_text[text], key=lambda r: (r[2].strip() != text, props.index(r[1])
                                                     if r[1] in props else 99))
        chosen.append((text, a, b, hits[0]))
    templated = {s: ctx.most_specific(ctx.classes_of_iri(s)) for _, _, _, (s, _, _) in chosen}
    ambiguous = [s for s, cs in templated.items() if len(cs) > 1]
    probes = 1
    if ambiguous:  # the templates cannot tell the class: the data can
        probes += 1
        typed = typed_classes(endpoint, ambiguous,
                              sorted({c for s in ambiguous for c in templated[s]}),
                              timeout=timeout)
        templated.update({s: ctx.most_specific(cs) for s, cs in typed.items()})
    out = [PlainName(GroundedValue(ValueMention(text, "string"), p, v, s,
                                   tuple(templated[s]), True), a, b)
           for text, a, b, (s, p, v) in chosen]
    return out, probes
