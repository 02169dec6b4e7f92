"""Value grounding: find where a mentioned name lives in the data, and its stored form.

NaVQA is schema-only; navqa additionally probes the endpoint with *bounded* queries on
the name-like data properties (names, labels, codes) so that a FILTER or a constant
matches the stored spelling and case ("Troll" → "TROLL"), and so that the value's class
is known. The class comes from the mappings' IRI templates (a VKG gives it for free):
no ``?s a ?c`` query is needed.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field, replace

from navqa.backends.protocols import SparqlEndpoint
from navqa.errors import EndpointError, EndpointUnreachableError
from navqa.model.events import (
    StringMatch,
    UngroundedValue,
    UngroundedWhy,
    ValueGrounding,
    ValueMention,
    ValueProbe,
    ValueProbeFailure,
)
from navqa.model.iri import IRI, humanize
from navqa.model.terms import IRITerm, LiteralTerm, escape_string
from navqa.online.constant_values import match_constants
from navqa.online.context import SchemaContext, singular
from navqa.online.synthesis.plan import literal

MAX_PROPERTIES = 16
LIMIT = 25
NEAR_LIMIT = 200
"""Stored values the nearest-value probe of an unmatched mention looks at."""
NEAREST = 3


@dataclass(frozen=True)
class GroundedValue:
    """A value mention found in the data.

    Attributes:
        mention: The value as mentioned.
        prop: The data property holding it.
        stored: The stored lexical form.
        subject: An IRI that has it.
        classes: The most specific mapped classes of that IRI (by IRI template).
        exact: Whether the match was exact (case-insensitive) rather than a substring.
        abbreviated: Whether the stored form spells the mention with some words
            abbreviated (:func:`spells_abbreviated`), found by the nearest-value probe.
        lang: The stored literal's language tag (a code list's "Lighthouse"@en), if any.
        code: The value is the label of a code-list entry (:mod:`navqa.online.code_lists`):
            it lives on exactly its class, never on a superclass's sibling.
        iri: ``stored`` is an IRI a mapping states as the object of the object property
            ``prop`` (:mod:`navqa.online.constant_values`), not a literal.
    """

    mention: ValueMention
    prop: IRI
    stored: str
    subject: str
    classes: tuple[IRI, ...]
    exact: bool
    abbreviated: bool = False
    lang: str | None = None
    code: bool = False
    iri: bool = False

    def sparql(self) -> str:
        """The stored value as a SPARQL term: the IRI, or the literal with its tag."""
        if self.iri:
            return f"<{self.stored}>"
        return literal(self.stored, lang=self.lang)

    def event(self, probes: int) -> ValueGrounding:
        return ValueGrounding(mention=self.mention.text,
                              cls=self.classes[0] if self.classes else None,
                              prop=self.prop, stored=self.stored, probes=probes,
                              classes=self.classes)


@dataclass(frozen=True)
class UnmatchedValue:
    """A value mention no probe found, with the nearest stored values the probes saw.

    Attributes:
        mention: The value as mentioned.
        nearest: Stored values most similar to it (string similarity), best first; each
            tells where such values live (property, classes).
        kept: Whether the synthesizer keeps the constraint as written: a name of several
            words that shares a word with stored values ("Foo Bar Line" and the stored
            lines) is one; a single capitalised word may be none ("NPD", "Norwegian"),
            nor a phrase like no stored value. Either way the mention is reported.
        failed: Whether its exact or substring probe failed (it may be in the data).
    """

    mention: ValueMention
    nearest: tuple[GroundedValue, ...] = ()
    kept: bool = True
    failed: bool = False

    def event(self) -> UngroundedValue:
        return UngroundedValue(mention=self.mention.text,
                               nearest=tuple(n.stored for n in self.nearest),
                               prop=self.nearest[0].prop if self.nearest else None,
                               kept=self.kept,
                               why=UngroundedWhy.PROBE_FAILED if self.failed
                               else UngroundedWhy.NOT_FOUND)


@dataclass
class ValueGroundingResult:
    """What value grounding found: the groundings, the mentions it did not find, probes,
    and the probes that failed (grounding goes on without them)."""

    found: list[GroundedValue] = field(default_factory=list)
    missing: list[UnmatchedValue] = field(default_factory=list)
    probes: int = 0
    failures: list[ValueProbeFailure] = field(default_factory=list)


def probe_failure(probe: ValueProbe, mention: str | None, e: EndpointError) -> ValueProbeFailure:
    """The record of a failed probe; an unreachable endpoint is no probe failure (it fails
    every later step too), so :class:`EndpointUnreachableError` is re-raised."""
    if isinstance(e, EndpointUnreachableError):
        raise e
    return ValueProbeFailure(probe, mention, str(e).splitlines()[0] if str(e) else type(e).__name__)


def probe_query(props: list[IRI], cond: str, limit: int) -> str:
    """A bounded ``SELECT ?s ?p ?v`` over ``props`` whose value ``?v`` satisfies ``cond``.

    One ``UNION`` branch per property, each with its own ``FILTER``, rather than
    ``VALUES ?p { ... } ?s ?p ?v FILTER(...)``: both give the same rows and the same SQL
    (one ``UNION ALL`` branch per mapping), but Ontop takes seconds to minutes to
    reformulate the ``VALUES`` form, growing with properties × conditions (NPD: 44 s for
    21 equalities on 3 properties, 0.5 s as a union; 6.8 s against 0.4 s for one equality
    on 14 properties; the SQL then runs in 0.1-4 s). When more rows match than ``limit``,
    which ones come back is the endpoint's choice in either form.
    """
    branches = " UNION ".join(f"{{ ?s <{p}> ?v . FILTER({cond}) BIND(<{p}> AS ?p) }}"
                              for p in props)
    return f"SELECT ?s ?p ?v WHERE {{ {branches} }} LIMIT {limit}"


def _probe(ctx: SchemaContext, endpoint: SparqlEndpoint, props: list[IRI], text: str,
           exact: bool, timeout: float) -> list[tuple[str, IRI, str]]:
    lit = escape_string(text.lower())
    cond = (f'LCASE(STR(?v)) = "{lit}"' if exact else f'CONTAINS(LCASE(STR(?v)), "{lit}")')
    res = endpoint.select(probe_query(props, cond, LIMIT), timeout=timeout)
    out = []
    for s, p, v in res.rows:
        if isinstance(s, IRITerm) and isinstance(p, IRITerm) and isinstance(v, LiteralTerm):
            out.append((s.value, p.value, v.value))
    return out


def probe_exact(endpoint: SparqlEndpoint, props: list[IRI], texts: list[str], *,
                timeout: float, qualified: bool = False,
                limit: int = LIMIT) -> list[tuple[str, IRI, str]]:
    """One bounded probe: ``(subject, property, stored)`` rows whose value of one of
    ``props`` equals one of ``texts``, ignoring case (the same probe as a mention's, for
    several candidate spellings at once). With ``qualified``, a stored value that is one
    of the texts of several words followed by a parenthesised qualifier matches too
    ("embryonic stage 16" → "embryonic stage 16 (Drosophila)")."""
    if not props or not texts:
        return []
    lows = list(dict.fromkeys(t.lower() for t in texts))
    # equalities, not ``IN``: Ontop pushes these into SQL, an ``IN`` list is far slower
    conds = [f'LCASE(STR(?v)) = "{escape_string(t)}"' for t in lows]
    if qualified:
        conds += [f'STRSTARTS(LCASE(STR(?v)), "{escape_string(t)} (")' for t in lows if " " in t]
    res = endpoint.select(probe_query(props, " || ".join(conds), limit), timeout=timeout)
    return [(s.value, p.value, v.value) for s, p, v in res.rows
            if isinstance(s, IRITerm) and isinstance(p, IRITerm)
            and isinstance(v, LiteralTerm) and qualifier_of(v.value, lows) is not None]


def typed_classes(endpoint: SparqlEndpoint, subjects: list[str], classes: list[IRI], *,
                  timeout: float) -> dict[str, list[IRI]]:
    """Which of ``classes`` each of ``subjects`` has an ``rdf:type`` of, in one bounded
    probe: for an IRI that several classes' templates can produce (Bgee's ``obo:{id}`` is
    the template of anatomical entities, life stages and confidence levels alike), the
    templates cannot tell its class, the data can. A subject found in none is left out."""
    if not subjects or not classes:
        return {}
    branches = " UNION ".join(
        f"{{ <{s}> a <{c}> . BIND(<{s}> AS ?s) BIND(<{c}> AS ?c) }}"
        for s in dict.fromkeys(subjects) for c in dict.fromkeys(classes))
    res = endpoint.select(f"SELECT ?s ?c WHERE {{ {branches} }} LIMIT "
                          f"{len(subjects) * len(classes)}", timeout=timeout)
    out: dict[str, list[IRI]] = {}
    for s, c in res.rows:
        if isinstance(s, IRITerm) and isinstance(c, IRITerm):
            out.setdefault(s.value, []).append(c.value)
    return out


def qualifier_of(stored: str, texts: list[str]) -> str | None:
    """The text of ``texts`` (lower case) that ``stored`` spells, alone or followed by a
    parenthesised qualifier; ``None`` when it spells none of them."""
    low = stored.lower().strip()
    for t in texts:
        if low == t or (" " in t and low.startswith(f"{t} (") and low.endswith(")")):
            return t
    return None


def _nearest(ctx: SchemaContext, endpoint: SparqlEndpoint, props: list[IRI],
             m: ValueMention, timeout: float) -> list[GroundedValue]:
    """Stored values sharing a word with ``m`` (one bounded probe), most similar first."""
    words = sorted({w for w in re.findall(r"\w{4,}", m.text.lower())}, key=len, reverse=True)[:6]
    if not words:
        return []
    cond = " || ".join(f'CONTAINS(LCASE(STR(?v)), "{escape_string(w)}")' for w in words)
    res = endpoint.select(probe_query(props, cond, NEAR_LIMIT), timeout=timeout)
    low = m.text.lower()
    best: dict[str, tuple[float, GroundedValue]] = {}
    for s, p, v in res.rows:
        if not (isinstance(s, IRITerm) and isinstance(p, IRITerm) and isinstance(v, LiteralTerm)):
            continue
        score = difflib.SequenceMatcher(None, low, v.value.lower()).ratio()
        if v.value not in best or score > best[v.value][0]:
            classes = tuple(ctx.most_specific(ctx.classes_of_iri(s.value)))
            best[v.value] = (score, GroundedValue(m, p.value, v.value, s.value, classes, False))
    ranked = sorted(best.values(), key=lambda t: (-t[0], t[1].stored))
    return [g for _, g in ranked[:NEAREST]]


def abbreviates(short: str, full: str) -> bool:
    """Whether the word ``short`` abbreviates the word ``full`` (lower case): it is shorter,
    starts with the same letter and keeps the rest of its letters in order ("gp" of
    "group", "fm" of "formation", "ltd" of "limited", "st" of "saint", "corp" of
    "corporation"). A general spelling convention, not a list of abbreviations."""
    short = short.rstrip(".")
    if len(short) < 2 or len(short) >= len(full) or short[0] != full[0]:
        return False
    rest = iter(full[1:])
    return all(ch in rest for ch in short[1:])


def spells_abbreviated(stored: str, text: str) -> bool:
    """Whether ``stored`` is ``text`` with some of its words abbreviated, or the other way
    round ("ZECHSTEIN GP" for "Zechstein Group"): the same number of words, each pair equal
    or one abbreviating the other, at least one abbreviated and at least one of four
    letters or more equal (ignoring case)."""
    a, b = re.findall(r"\w+\.?", stored.lower()), re.findall(r"\w+\.?", text.lower())
    if len(a) != len(b) or len(a) < 2:
        return False
    same = short = 0
    for x, y in zip(a, b, strict=True):
        if x.rstrip(".") == y.rstrip("."):
            same += len(x.rstrip(".")) >= 4
        elif abbreviates(x, y) or abbreviates(y, x):
            short += 1
        else:
            return False
    return short > 0 and same > 0


def respells(stored: str, text: str) -> bool:
    """Whether ``stored`` holds the words of ``text`` (two or more) in a row, with other
    punctuation between them ("Gas KÅRSTØ, EMDEN" holds "Kårstø–Emden"; "ST. FERGUS"
    holds "St Fergus"), ignoring case. The substring probe cannot see these: the
    characters between the words differ."""
    a, b = re.findall(r"\w+", stored.lower()), re.findall(r"\w+", text.lower())
    if len(b) < 2:
        return False
    return any(a[i:i + len(b)] == b for i in range(len(a) - len(b) + 1))


def ground_values(ctx: SchemaContext, endpoint: SparqlEndpoint, mentions: list[ValueMention],
                  *, timeout: float = 30.0) -> tuple[list[GroundedValue], int]:
    """Ground every string value mention; returns the groundings and the number of probes.

    Exact (case-insensitive) matches win; otherwise substring matches, shortest stored
    value first. See :func:`ground_mentions` for the mentions found nowhere.
    """
    res = ground_mentions(ctx, endpoint, mentions, timeout=timeout, nearest=False)
    return res.found, res.probes


def ground_mentions(ctx: SchemaContext, endpoint: SparqlEndpoint, mentions: list[ValueMention],
                    *, timeout: float = 30.0, nearest: bool = True,
                    abbreviations: bool = True) -> ValueGroundingResult:
    """Ground every string value mention, and report the ones found nowhere.

    A mention that matches nothing is not dropped: it comes back in ``missing`` with the
    stored values nearest to it (one more bounded probe for values sharing a word with
    it, ranked by string similarity) when ``nearest`` is set. With ``abbreviations``, a
    nearest value that spells the mention with some words abbreviated
    (:func:`spells_abbreviated`: "ZECHSTEIN GP" for "Zechstein Group") grounds it instead
    (``GroundedValue.abbreviated``; the grammar rule ``abbreviated-value``). A nearest
    value that holds the mention's words in a row with other punctuation between them
    (:func:`respells`) grounds it too, as an inexact (substring) match.
    """
    props = [p for p in ctx.name_like_properties if ctx.allowed(p)][:MAX_PROPERTIES]
    result = ValueGroundingResult()
    if not props:
        return result
    out = result.found
    probes = 0
    for m in mentions:
        if m.kind != "string" or len(m.text) < 2:
            continue
        if m.match is not StringMatch.EXACT:
            continue  # a pattern ("starting with 'Cec'"): a FILTER, not one stored value
        # a constant IRI of the mappings that the value spells ("the Bahamas" for
        # dbpedia:The_Bahamas) is as exact as a stored literal, and no probe can find it
        constants = [GroundedValue(m, o.prop, o.iri, "", o.classes, True, iri=True)
                     for o in match_constants(ctx.constant_objects, m.text)
                     if ctx.allowed(o.prop)]
        found: list[GroundedValue] = []
        failed = False
        for exact in (True, False):
            probes += 1
            try:
                rows = _probe(ctx, endpoint, props, m.text, exact, timeout)
            except EndpointError as e:
                # not known whether the data holds it: reported, not placed, no guess
                result.failures.append(probe_failure(
                    ValueProbe.EXACT if exact else ValueProbe.SUBSTRING, m.text, e))
                failed = True
                found.extend(g for g in constants if exact)
                break
            if exact:
                rows = [r for r in rows if r[2].lower() == m.text.lower()]
            rows.sort(key=lambda r: (len(r[2]), props.index(r[1]) if r[1] in props else 99))
            for s, p, v in rows:
                classes = tuple(ctx.most_specific(ctx.classes_of_iri(s)))
                if not exact and found and v != found[0].stored:
                    continue
                if not exact and len(v) > 2 * len(m.text) + 3:
                    continue  # "Norwegian" must not become "Norwegian Oil Exploration"
                if any(g.subject == s and g.prop == p for g in found):
                    continue
                found.append(GroundedValue(m, p, v, s, classes, exact))
            if exact:
                found.extend(constants)
            if found:
                break
        out.extend(found)
        if failed and not found:
            result.missing.append(UnmatchedValue(m, (), kept=False, failed=True))
        elif not found:
            near: list[GroundedValue] = []
            if nearest:
                probes += 1
                try:
                    near = _nearest(ctx, endpoint, props, m, timeout)
                except EndpointError as e:
                    result.failures.append(probe_failure(ValueProbe.NEAREST, m.text, e))
            # the stored form abbreviates the mention's words ("Zechstein Group" is
            # stored as "ZECHSTEIN GP"): that is the value, not merely a near one
            spelled = [g for g in near if abbreviations and spells_abbreviated(g.stored, m.text)]
            if spelled:
                out.append(replace(spelled[0], abbreviated=True))
                continue
            # the same words with other punctuation between them: a substring match the
            # probe could not make, bounded in length as the substring matches are
            respelled = [g for g in near if respells(g.stored, m.text)
                         and len(g.stored) <= 2 * len(m.text) + 3]
            if respelled:
                out.append(respelled[0])
                continue
            result.missing.append(UnmatchedValue(
                m, tuple(near), kept=bool(near) and len(m.text.split()) >= 2))
    result.probes = probes
    return result


def numbered_names(ctx: SchemaContext, endpoint: SparqlEndpoint, question: str,
                   mentions: list[ValueMention], *, timeout: float = 30.0
                   ) -> tuple[list[GroundedValue], int]:
    """Number mentions that are names: "production licence 501", "stage 16".

    A bare integer compared by equality and written right after a noun is a numbered
    thing's name when the data stores it as the name of an entity whose class that noun
    names (the last word of the class's label or local name, or of a superclass's). One
    bounded exact probe for all such numbers; each grounding carries a string mention of
    the same text, to replace the number (the grammar rule ``numbered-name``). Without
    such an entity the number stays a quantity.
    """
    after: dict[str, str] = {}
    for m in mentions:
        if m.kind != "number" or m.comparator != "=" or not m.text.isdigit():
            continue
        # a comma or full stop ends the name ("in licence 501, which …") unless a digit
        # or letter follows it ("501.5", "501,000")
        hit = re.search(rf"\b([A-Za-zÀ-ÿ]+)\s+{re.escape(m.text)}(?![\w/-]|[.,]\w)",
                        question)
        if hit:
            after[m.text] = singular(hit.group(1).lower())
    props = [p for p in ctx.name_like_properties if ctx.allowed(p)][:MAX_PROPERTIES]
    if not after or not props:
        return [], 0
    rows = probe_exact(endpoint, props, list(after), timeout=timeout)
    out: list[GroundedValue] = []
    for s, p, v in sorted(rows, key=lambda r: props.index(r[1]) if r[1] in props else 99):
        noun = after.get(v.strip())
        if noun is None or any(g.mention.text == v.strip() for g in out):
            continue
        classes = tuple(ctx.most_specific(ctx.classes_of_iri(s)))
        kinds = {a for c in classes for a in ctx.ontology.superclasses(c) | {c}}
        heads = {singular(w) for c in kinds for name in (ctx.label(c), humanize(c))
                 for w in re.findall(r"[a-zà-ÿ]+", name.lower())[-1:]}
        if noun in heads:
            out.append(GroundedValue(ValueMention(v.strip(), "string"), p, v, s, classes, True))
    return out, 1


class CategoricalVocabulary:
    """Small value sets of string properties ("PRODUCING", "SHUT DOWN", "OIL/GAS"),
    fetched with one bounded ``SELECT DISTINCT`` per property and kept for the pipeline's
    lifetime. A property with more than ``max_values`` distinct values is not categorical.
    """

    def __init__(self, ctx: SchemaContext, endpoint: SparqlEndpoint, *, max_values: int = 40,
                 timeout: float = 30.0) -> None:
        self.ctx = ctx
        self.endpoint = endpoint
        self.max_values = max_values
        self.timeout = timeout
        self._values: dict[IRI, list[str]] = {}

    def values(self, prop: IRI) -> list[str]:
        """The distinct values of ``prop`` (empty when it has too many)."""
        if prop not in self._values:
            q = f"SELECT DISTINCT ?v WHERE {{ ?s <{prop}> ?v }} LIMIT {self.max_values + 1}"
            rows = self.endpoint.select(q, timeout=self.timeout).rows
            vals = [r[0].value for r in rows if isinstance(r[0], LiteralTerm)]
            self._values[prop] = vals if len(vals) <= self.max_values else []
        return self._values[prop]

    def candidates(self, classes: list[IRI], limit: int = 30) -> list[IRI]:
        """Non-name string properties of ``classes`` (and their superclasses)."""
        from navqa.online.context import STRINGS

        names = set(self.ctx.name_like_properties)
        out: list[IRI] = []
        for c in classes:
            for e in self.ctx.data_properties_of(c):
                p = e.prop
                if p in names or p in out or not self.ctx.allowed(p):
                    continue
                if self.ctx.datatype(p, c) in STRINGS or self.ctx.datatype(p, c) is None:
                    out.append(p)
        return out[:limit]

    def match(self, question: str, classes: list[IRI],
              vocabulary: set[str] | None = None) -> tuple[list[GroundedValue], int]:
        """Values of the classes' categorical properties that the question spells out.

        Only values of at least five letters or two words count ("producing", "shut
        down"), so that short codes such as "GAS" do not fire on every mention of gas; a
        value that is a word of the schema vocabulary the question already uses
        (``vocabulary``: labels of its linked classes and properties — "exploration" in
        "exploration wellbores", "production" in "oil production") does not count either.
        """
        import re

        q = question.lower()
        vocab_words = {w for label in (vocabulary or set()) for w in label.lower().split()}
        found: list[tuple[int, GroundedValue]] = []
        probes = 0
        for prop in self.candidates(classes):
            cached = prop in self._values
            vals = self.values(prop)
            probes += 0 if cached else 1
            for v in vals:
                low = v.lower().strip()
                if len(low) < 5 and " " not in low:
                    continue
                if " " not in low and low in vocab_words:
                    continue
                m = re.search(rf"(?<![\w/]){re.escape(low)}(?![\w/])", q)
                if not m:
                    continue
                owners = tuple(self.ctx.most_specific(
                    e.source for e in self.ctx.graph.edges_of(prop) if e.is_data))
                g = GroundedValue(ValueMention(question[m.start():m.end()], "string"), prop, v,
                                  "", owners, True)
                found.append((m.start(), g))
        found.sort(key=lambda x: (-len(x[1].stored), x[0]))
        taken: list[tuple[int, int]] = []
        out: list[GroundedValue] = []
        for start, g in found:
            end = start + len(g.stored)
            if any(not (end <= a or start >= b) for a, b in taken):
                continue
            taken.append((start, end))
            out.append(g)
        return out, probes
