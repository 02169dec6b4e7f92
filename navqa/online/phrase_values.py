"""Values written in lower case: the question's content n-grams found as stored names.

Quoted and capitalised values are mentions (:mod:`navqa.online.mentions`) and are
grounded by :func:`navqa.online.values.ground_mentions`; a name written in lower case
("expressed in the brain", "during the fully formed stage", "the gene boss") is not a
mention at all. This stage takes the question's content n-grams — up to
:data:`MAX_WORDS` words, longest first, none that starts or ends with a function word,
none inside a value already grounded exactly, each also without its inner articles
("second segment of the antenna" → "second segment of antenna") — and probes them all at
once, exactly and ignoring case, on the name-like properties (one bounded probe with a
LIMIT: no vocabulary is fetched); a stored value that adds a parenthesised qualifier to a
name of several words matches too ("embryonic stage 16 (Drosophila)"). A hit counts only
when

* its subject is of a class the linking found relevant: a linked class, the answer
  class, their super- and subclasses, or a class one edge away from one of them (two
  edges for a name of several words, which is rarely ambiguous), and
* the n-gram is not a schema term: not the answer's own noun (nor the noun a
  wh-determiner asks for: "which tissue"), not the label of a mapped class ("gene" is
  read as the class Gene even where some label says "gene"), and, for a single word,
  not a word of the linked classes' and properties' labels ("expressed" in "is
  expressed in"); and a single word has at least :data:`MIN_WORD_LETTERS` letters.

Where several classes share the subject's IRI template (Bgee's stages and anatomical
entities), one more bounded ``?s a ?c`` probe keeps the classes the subject has. A hit
that contains a value grounded only by substring supersedes it ("Malpighian" →
"Malpighian tubule"); number mentions inside a hit belong to the name ("embryonic stage
16").
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from navqa.backends.protocols import SparqlEndpoint
from navqa.errors import EndpointError
from navqa.model.events import ValueMention, ValueProbe, ValueProbeFailure
from navqa.model.iri import IRI
from navqa.model.terms import IRITerm
from navqa.online.context import SchemaContext, normal, singular
from navqa.online.lexicon import Phenomenon, words
from navqa.online.values import GroundedValue, probe_exact, probe_failure, qualifier_of

MAX_WORDS = 5
"""Longest n-gram probed, in words."""
MAX_CANDIDATES = 80
"""Spellings in the one probe, longest n-gram first."""
PROBE_LIMIT = 60
MAX_PROPERTIES = 3
"""Name-like properties probed (generic names first): each adds a union to the SQL."""
MIN_WORD_LETTERS = 4
"""A single word shorter than this is too often a code ("oil" / "OIL") to be a name."""

_FUNCTION = words(Phenomenon.STOPWORD) | words(Phenomenon.FORM_WORD) | words(Phenomenon.WH_WORD)
_AUXILIARY = words(Phenomenon.AUXILIARY) | words(Phenomenon.WH_WORD)
# words the question's grammar reads (an ordering, a bound, an aggregate): "list the first
# ten alphabetically" names no stored value "First"
_GRAMMAR = frozenset().union(*(words(p) for p in (
    Phenomenon.ORDINAL_FIRST, Phenomenon.ORDINAL_LAST, Phenomenon.SUPERLATIVE_MAX,
    Phenomenon.SUPERLATIVE_MIN, Phenomenon.NUMBER_WORD, Phenomenon.ORDER_BY,
    Phenomenon.ORDER_ASC, Phenomenon.ORDER_DESC, Phenomenon.ORDER_ALPHABETICAL,
    Phenomenon.AGG_AVG, Phenomenon.AGG_SUM, Phenomenon.AGG_MAX, Phenomenon.AGG_MIN)))
_WH_DETERMINER = re.compile(r"\b(?:which|what|whose)\s+", re.I)
_ARTICLE = re.compile(r"\s+(?:the|a|an)\s+", re.I)
_TOKEN = re.compile(r"[A-Za-zÀ-ÿ0-9][A-Za-zÀ-ÿ0-9'-]*")


@dataclass(frozen=True)
class Span:
    """Words of the question: ``text`` is ``question[start:end]``."""

    text: str
    start: int
    end: int

    def overlaps(self, other: tuple[int, int]) -> bool:
        return not (self.end <= other[0] or self.start >= other[1])

    def contains(self, other: tuple[int, int]) -> bool:
        return self.start <= other[0] and other[1] <= self.end


@dataclass
class PhraseGrounding:
    """What the n-gram probe found.

    Attributes:
        found: The groundings, one or more per n-gram that hit.
        superseded: Mentions (as written) that lie inside a hit: a value grounded only by
            substring, or a number that is part of the name.
        probes: Endpoint probes sent (0 to 2).
        failures: Probes that timed out or failed: the n-gram probe (nothing found, the
            question goes on without lower-case names) or the class probe (the
            groundings keep every class their IRI template allows).
    """

    found: list[GroundedValue] = field(default_factory=list)
    superseded: set[str] = field(default_factory=set)
    probes: int = 0
    failures: list[ValueProbeFailure] = field(default_factory=list)


def content_ngrams(question: str, taken: Iterable[tuple[int, int]] = (),
                   max_words: int = MAX_WORDS) -> list[Span]:
    """Content n-grams of ``question``, longest first, then left to right.

    An n-gram neither starts nor ends with a function word or a word the question's
    grammar reads ("first", "ten", "alphabetically", "average"), has no auxiliary inside
    (a name holds "of the", not "are"), is not only digits, and does not cut through a
    ``taken`` span (it may contain one whole).

    Example:
        >>> [s.text for s in content_ngrams("Which genes are expressed in the brain?")]
        ['expressed in the brain', 'genes', 'expressed', 'brain']
    """
    toks = [(m.group(), m.start(), m.end()) for m in _TOKEN.finditer(question)]
    spans = list(taken)
    out: list[Span] = []
    for n in range(max_words, 0, -1):
        for i in range(len(toks) - n + 1):
            first, last = toks[i], toks[i + n - 1]
            if {first[0].lower(), last[0].lower()} & (_FUNCTION | _GRAMMAR):
                continue
            if all(t[0].isdigit() for t in toks[i:i + n]):
                continue
            if any(t[0].lower() in _AUXILIARY for t in toks[i + 1:i + n - 1]):
                continue
            span = Span(question[first[1]:last[2]], first[1], last[2])
            if any(span.overlaps(t) and not span.contains(t) for t in spans):
                continue
            out.append(span)
    return out


def relevant_classes(ctx: SchemaContext, classes: Iterable[IRI], hops: int = 1) -> set[IRI]:
    """``classes``, their super- and subclasses, and the classes ``hops`` edges away."""
    def family(c: IRI) -> set[IRI]:
        subs = {s for s in ctx.ontology.subclasses(c, reflexive=False) if s in ctx.classes}
        return {*ctx.lineage(c), *subs}

    base: set[IRI] = set()
    for c in classes:
        base |= family(c)
    out = set(base)
    frontier = base
    for _ in range(hops):
        step: set[IRI] = set()
        for c in frontier:
            for nb in ctx.neighbours(c, data=False):
                step |= family(nb.other)
        frontier = step - out
        out |= step
    return out


def _spans_of(question: str, texts: Iterable[str]) -> list[tuple[str, int, int]]:
    low = question.lower()
    out = []
    for t in texts:
        for m in re.finditer(re.escape(t.lower()), low):
            out.append((t, m.start(), m.end()))
    return out


def ground_phrases(ctx: SchemaContext, endpoint: SparqlEndpoint, question: str, *,
                   classes: list[IRI], answer_noun: str = "",
                   vocabulary: Iterable[str] = (), grounded: Iterable[GroundedValue] = (),
                   numbers: Iterable[str] = (), timeout: float = 30.0) -> PhraseGrounding:
    """Ground the question's lower-case names (see the module docstring).

    Args:
        classes: The classes the linking found relevant (answer class first).
        answer_noun: The words that named the answer class ("genes").
        vocabulary: Labels of the linked classes and properties.
        grounded: Values already grounded (their words are not probed again; those
            grounded only by substring may be superseded by a longer exact hit).
        numbers: Number mentions as written.
    """
    result = PhraseGrounding()
    if not classes:
        return result
    near, far = relevant_classes(ctx, classes), relevant_classes(ctx, classes, hops=2)
    # the name-like properties the relevant classes have: every property more is one more
    # union of mappings in the probe's SQL
    owned = {e.prop for c in far for e in ctx.data_properties_of(c)}
    props = [p for p in ctx.name_like_properties
             if ctx.allowed(p) and p in owned][:MAX_PROPERTIES]
    if not props:
        return result
    done = list(grounded)
    fixed = _spans_of(question, {g.mention.text for g in done if g.exact})
    loose = _spans_of(question, {g.mention.text for g in done if not g.exact})
    nums = _spans_of(question, numbers)
    asked = normal(answer_noun).split()
    class_nouns = {normal(ctx.label(c)) for c in ctx.classes} | {
        " ".join(asked[:i]) for i in range(1, len(asked) + 1)}
    # the noun a wh-determiner asks for ("which tissue", "what stage") names the answer
    after_wh = {m.end() for m in _WH_DETERMINER.finditer(question)}
    vocab_words = {singular(w) for label in vocabulary for w in re.findall(r"\w+", label.lower())}
    spellings: dict[str, Span] = {}  # a spelling probed → the words it spells, longest first
    for s in content_ngrams(question, [(a, b) for _, a, b in fixed + loose]):
        if any(s.overlaps((a, b)) for _, a, b in fixed):
            continue
        norm = normal(s.text)
        if norm in class_nouns or s.start in after_wh:
            continue
        if " " not in s.text and (len(s.text) < MIN_WORD_LETTERS or norm in vocab_words):
            continue
        # "the second segment of the antenna" is stored "second segment of antenna"
        for spelling in dict.fromkeys((s.text.lower(), _ARTICLE.sub(" ", s.text.lower()))):
            spellings.setdefault(spelling, s)
    lows = list(spellings)[:MAX_CANDIDATES]
    if not lows:
        return result
    result.probes = 1
    try:
        rows = probe_exact(endpoint, props, lows, timeout=timeout, qualified=True,
                           limit=PROBE_LIMIT)
    except EndpointError as e:
        result.failures.append(probe_failure(ValueProbe.PHRASE, None, e))
        return result
    hits: dict[Span, list[GroundedValue]] = {}
    for s_iri, p, v in rows:
        text = qualifier_of(v, lows)
        if text is None:
            continue
        span = spellings[text]
        # a name of several words may sit one edge further than a single word
        relevant = far if " " in span.text else near
        owners = tuple(ctx.most_specific(ctx.classes_of_iri(s_iri)))
        if not any(set(ctx.lineage(o)) & relevant for o in owners):
            continue
        hits.setdefault(span, []).append(GroundedValue(
            ValueMention(span.text, "string"), p, v, s_iri, owners, True))
    taken: list[Span] = []
    for span in sorted(hits, key=lambda x: (-len(x.text.split()), x.start)):  # longest first
        if any(span.overlaps((t.start, t.end)) for t in taken):
            continue
        taken.append(span)
        low = span.text.lower()
        # the spelling as written first, then the shortest; one per property and classes
        ranked = sorted(hits[span], key=lambda g: (g.stored.lower() != low, len(g.stored),
                                                   props.index(g.prop)))
        seen: set[tuple[IRI, tuple[IRI, ...]]] = set()
        for g in ranked:
            if (g.prop, g.classes) not in seen:
                seen.add((g.prop, g.classes))
                result.found.append(g)
        result.superseded |= {t for t, a, b in loose + nums if span.contains((a, b))}
    if any(len(g.classes) > 1 for g in result.found):
        result.probes += 1
        try:
            result.found = confirm_classes(endpoint, result.found, timeout=timeout)
        except EndpointError as e:
            result.failures.append(probe_failure(ValueProbe.CLASSES, None, e))
    return result


def confirm_classes(endpoint: SparqlEndpoint, found: list[GroundedValue], *,
                    timeout: float) -> list[GroundedValue]:
    """Narrow the classes of groundings whose IRI template several classes share.

    One bounded ``?s a ?c`` probe over the ambiguous subjects and their candidate
    classes; a grounding keeps the classes its subject really has (all of them when the
    probe confirms none).
    """
    ambiguous = [g for g in found if len(g.classes) > 1]
    subjects = " ".join(f"<{s}>" for s in dict.fromkeys(g.subject for g in ambiguous))
    classes = " ".join(f"<{c}>" for c in dict.fromkeys(c for g in ambiguous for c in g.classes))
    q = (f"SELECT ?s ?c WHERE {{ VALUES ?s {{ {subjects} }} VALUES ?c {{ {classes} }} "
         f"?s a ?c }} LIMIT {PROBE_LIMIT}")
    typed: dict[str, set[str]] = {}
    for s, c in endpoint.select(q, timeout=timeout).rows:
        if isinstance(s, IRITerm) and isinstance(c, IRITerm):
            typed.setdefault(s.value, set()).add(c.value)
    out = []
    for g in found:
        if len(g.classes) > 1 and typed.get(g.subject):
            g = replace(g, classes=tuple(c for c in g.classes if c in typed[g.subject])
                        or g.classes)
        out.append(g)
    return out
