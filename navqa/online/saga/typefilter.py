"""SAGA's TypeFilter: drop properties whose known domain conflicts with the node's type.

Keep ``p`` iff δ(p) = ∅ (unknown) or δ(p) ∩ τ*(x) ≠ ∅, where τ*(x) is the node's class
with its superclasses. Here δ(p) is what the VKG knows about p's subjects: the sources of
its edges in Ga — declared and entailed domains, and the classes whose IRI template the
mappings use as p's subject template. Unknown stays unknown: a property with no known
domain is never removed.
"""

from __future__ import annotations

from collections.abc import Sequence

from navqa.model.events import Candidate
from navqa.model.iri import IRI
from navqa.online.context import SchemaContext


def known_domains(ctx: SchemaContext) -> dict[IRI, frozenset[IRI]]:
    """δ(p) for every property with at least one typed edge in Ga (sources of its edges)."""
    out: dict[IRI, set[IRI]] = {}
    for e in ctx.graph.edges:
        out.setdefault(e.prop, set()).add(e.source)
    for iri, prop in ctx.ontology.properties.items():
        if prop.domains:
            out.setdefault(iri, set()).update(prop.domains)
    return {p: frozenset(d) for p, d in out.items()}


def known_ranges(ctx: SchemaContext) -> dict[IRI, frozenset[IRI]]:
    """ρ(p): targets of its edges in Ga, plus declared ranges."""
    out: dict[IRI, set[IRI]] = {}
    for e in ctx.graph.edges:
        out.setdefault(e.prop, set()).add(e.target)
    for iri, prop in ctx.ontology.properties.items():
        if prop.ranges:
            out.setdefault(iri, set()).update(prop.ranges)
    return {p: frozenset(d) for p, d in out.items()}


class TypeFilter:
    """Removes incoming/outgoing candidates whose domain (or range, when traversed
    backwards) is known and conflicts with the node's class."""

    def __init__(self, ctx: SchemaContext) -> None:
        self.ctx = ctx
        self.domains = known_domains(ctx)
        self.ranges = known_ranges(ctx)

    def types_of(self, node: IRI) -> frozenset[IRI]:
        """τ*(node): the class, its superclasses and its subclasses (an instance may be of a
        subclass, and the VKG's templates type properties on the most specific class)."""
        onto = self.ctx.ontology
        return onto.superclasses(node) | onto.subclasses(node)

    def compatible(self, node: IRI, prop: IRI, direction: str) -> bool:
        known = (self.domains if direction == "out" else self.ranges).get(prop)
        if not known:
            return True
        return bool(known & self.types_of(node))

    def __call__(self, node: IRI, candidates: Sequence[Candidate]
                 ) -> tuple[list[Candidate], list[Candidate]]:
        kept, removed = [], []
        for c in candidates:
            (kept if self.compatible(node, c.prop, c.direction) else removed).append(c)
        return kept, removed


def make_type_filter(ctx: SchemaContext) -> TypeFilter:
    """The pipeline's factory hook."""
    return TypeFilter(ctx)
