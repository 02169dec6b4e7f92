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
                              prop=self.prop, stored=self.stored, probes=probes)


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
                if any(g.subject == s and g.prop == p for g in found):
                    continue
                found.append(GroundedValue(m, p, v, s, classes, exact))
            if found:
                break
        out.extend(found)
    return out, probes
