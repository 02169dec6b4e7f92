"""Value grounding: find where a mentioned name lives in the data, and its stored form.

NaVQA is schema-only; navqa additionally probes the endpoint with *bounded* queries on
the name-like data properties (names, labels, codes) so that a FILTER or a constant
matches the stored spelling and case ("Troll" → "TROLL"), and so that the value's class
is known. The class comes from the mappings' IRI templates (a VKG gives it for free):
no ``?s a ?c`` query is needed.
"""

from __future__ import annotations

from dataclasses import dataclass

from navqa.backends.protocols import SparqlEndpoint
from navqa.model.events import ValueGrounding, ValueMention
from navqa.model.iri import IRI
from navqa.model.terms import IRITerm, LiteralTerm, escape_string
from navqa.online.context import SchemaContext

MAX_PROPERTIES = 16
LIMIT = 25


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
    """

    mention: ValueMention
    prop: IRI
    stored: str
    subject: str
    classes: tuple[IRI, ...]
    exact: bool

    def event(self, probes: int) -> ValueGrounding:
        return ValueGrounding(mention=self.mention.text,
                              cls=self.classes[0] if self.classes else None,
                              prop=self.prop, stored=self.stored, probes=probes,
                              classes=self.classes)


def _probe(ctx: SchemaContext, endpoint: SparqlEndpoint, props: list[IRI], text: str,
           exact: bool, timeout: float) -> list[tuple[str, IRI, str]]:
    values = " ".join(f"<{p}>" for p in props)
    lit = escape_string(text.lower())
    cond = (f'LCASE(STR(?v)) = "{lit}"' if exact else f'CONTAINS(LCASE(STR(?v)), "{lit}")')
    q = (f"SELECT ?s ?p ?v WHERE {{ VALUES ?p {{ {values} }} ?s ?p ?v . FILTER({cond}) }} "
         f"LIMIT {LIMIT}")
    res = endpoint.select(q, timeout=timeout)
    out = []
    for s, p, v in res.rows:
        if isinstance(s, IRITerm) and isinstance(p, IRITerm) and isinstance(v, LiteralTerm):
            out.append((s.value, p.value, v.value))
    return out


def ground_values(ctx: SchemaContext, endpoint: SparqlEndpoint, mentions: list[ValueMention],
                  *, timeout: float = 30.0) -> tuple[list[GroundedValue], int]:
    """Ground every string value mention; returns the groundings and the number of probes.

    Exact (case-insensitive) matches win; otherwise substring matches, shortest stored
    value first. A mention that matches nothing is simply not grounded.
    """
    props = [p for p in ctx.name_like_properties if ctx.allowed(p)][:MAX_PROPERTIES]
    if not props:
        return [], 0
    out: list[GroundedValue] = []
    probes = 0
    for m in mentions:
        if m.kind != "string" or len(m.text) < 2:
            continue
        found: list[GroundedValue] = []
        for exact in (True, False):
            probes += 1
            rows = _probe(ctx, endpoint, props, m.text, exact, timeout)
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
            if found:
                break
        out.extend(found)
    return out, probes


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
