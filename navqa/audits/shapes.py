"""Which RDF terms each position of a VKG query can produce, from the mappings' term maps.

A mapping atom ``p(t1(x), t2(x))`` can only ever produce subjects shaped like ``t1`` and
objects shaped like ``t2``: an IRI template (``data:station/{}``), a constant IRI, an IRI
read from a column (any IRI), a literal of some datatype, or a blank node. Ontop adds what
the ontology entails (OWL 2 QL): a property also yields the pairs of its sub-properties
(and, swapped, of its inverses), and ``?x a C`` yields every subject of C's subclasses and
every subject (object) of a property whose domain (range) is C or one of its subclasses.

:class:`ShapeIndex` computes those sets once per VKG. A join on a variable is empty when
two of its uses have no pair of shapes that can produce the same term
(:meth:`Shape.compatible`; IRI templates use
:meth:`~navqa.model.template.IriTemplate.unifies`). The lint and the audit both read it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from navqa.model.iri import IRI, RDF, compact
from navqa.model.mapping import MappingSet, TermKind, TermMap, TermType
from navqa.model.ontology import Ontology
from navqa.model.template import IriTemplate

__all__ = ["Shape", "ShapeIndex", "ShapeKind", "shape_of", "shapes_compatible"]

RDF_LANGSTRING = RDF + "langString"


class ShapeKind(StrEnum):
    """What a term map produces."""

    TEMPLATE = "template"
    CONSTANT = "constant"
    ANY_IRI = "any-iri"
    LITERAL = "literal"
    BNODE = "bnode"


@dataclass(frozen=True, slots=True)
class Shape:
    """The kind of RDF term one term map produces.

    Attributes:
        kind: Template, constant IRI, column-valued IRI, literal or blank node.
        value: The template key (``http://x/station/{}``), the constant IRI, or the
            literal's datatype IRI (``""`` when the mapping does not state it).
        lang: The language tag of a language-tagged literal.
    """

    kind: ShapeKind
    value: str = ""
    lang: str | None = None

    @property
    def is_iri(self) -> bool:
        return self.kind in (ShapeKind.TEMPLATE, ShapeKind.CONSTANT, ShapeKind.ANY_IRI)

    @property
    def datatype(self) -> str | None:
        """A literal's datatype (``rdf:langString`` when tagged), ``None`` if not stated."""
        if self.kind is not ShapeKind.LITERAL:
            return None
        if self.lang:
            return RDF_LANGSTRING
        return self.value or None

    def compatible(self, other: Shape) -> bool:
        """Whether some RDF term can be produced by both shapes."""
        a, b = self, other
        if ShapeKind.BNODE in (a.kind, b.kind):
            return a.kind is b.kind
        if a.is_iri != b.is_iri:
            return False
        if not a.is_iri:
            da, db = a.datatype, b.datatype
            if da is None or db is None:
                return True
            if da == RDF_LANGSTRING and db == RDF_LANGSTRING:
                return (a.lang or "").lower() == (b.lang or "").lower()
            return da == db
        if ShapeKind.ANY_IRI in (a.kind, b.kind):
            return True
        if a.kind is ShapeKind.CONSTANT and b.kind is ShapeKind.CONSTANT:
            return a.value == b.value
        if a.kind is ShapeKind.CONSTANT:
            return IriTemplate(b.value).matches(a.value)
        if b.kind is ShapeKind.CONSTANT:
            return IriTemplate(a.value).matches(b.value)
        return IriTemplate(a.value).unifies(IriTemplate(b.value))

    def produces(self, iri: str) -> bool:
        """Whether this shape can produce the concrete IRI ``iri``."""
        if self.kind is ShapeKind.ANY_IRI:
            return True
        if self.kind is ShapeKind.CONSTANT:
            return self.value == iri
        if self.kind is ShapeKind.TEMPLATE:
            return IriTemplate(self.value).matches(iri)
        return False

    def text(self, prefixes: Mapping[str, str] | None = None) -> str:
        """A short human-readable form (``data:station/{}``, ``literal xsd:date``)."""
        pre = prefixes or {}
        if self.kind is ShapeKind.TEMPLATE:
            for p, ns in sorted(pre.items(), key=lambda kv: -len(kv[1])):
                if ns and self.value.startswith(ns):
                    return f"{p}:{self.value[len(ns):]}"
            return f"<{self.value}>"
        if self.kind is ShapeKind.CONSTANT:
            return compact(self.value, pre)
        if self.kind is ShapeKind.ANY_IRI:
            return "any IRI (column-valued)"
        if self.kind is ShapeKind.BNODE:
            return "blank node"
        if self.lang:
            return f"literal @{self.lang}"
        return f"literal {compact(self.value, pre)}" if self.value else "literal"


def shape_of(tm: TermMap) -> Shape:
    """The :class:`Shape` of a mapping term map."""
    if tm.term_type is TermType.BLANK:
        return Shape(ShapeKind.BNODE)
    if tm.term_type is TermType.IRI:
        if tm.kind is TermKind.TEMPLATE:
            key = IriTemplate(tm.value).key
            # ``<{url}>``: the whole IRI comes from a column, as with a column term map
            return Shape(ShapeKind.ANY_IRI) if key == "{}" else Shape(ShapeKind.TEMPLATE, key)
        if tm.kind is TermKind.CONSTANT:
            return Shape(ShapeKind.CONSTANT, tm.value)
        return Shape(ShapeKind.ANY_IRI)
    return Shape(ShapeKind.LITERAL, tm.datatype or "", tm.language)


def shapes_compatible(a: Iterable[Shape], b: Iterable[Shape]) -> bool:
    """Whether some shape of ``a`` is compatible with some shape of ``b``."""
    bs = list(b)
    return any(x.compatible(y) for x in a for y in bs)


Pair = tuple[Shape, Shape]


class ShapeIndex:
    """Producible shapes per property position and per class, with OWL 2 QL reasoning.

    Args:
        ontology: The full ontology T (hierarchies, domains, ranges, inverses).
        mappings: The mappings M.

    Attributes:
        direct_classes: Class → subject shapes of its own class atoms (no reasoning).
        direct_properties: Property → (subject, object) shapes of its own atoms.
    """

    def __init__(self, ontology: Ontology, mappings: MappingSet) -> None:
        self.ontology = ontology
        self.mappings = mappings
        self.direct_classes: dict[IRI, set[Shape]] = defaultdict(set)
        self.direct_properties: dict[IRI, set[Pair]] = defaultdict(set)
        for _, atom in mappings.atoms():
            if atom.is_class:
                self.direct_classes[atom.predicate].add(shape_of(atom.subject))
            elif atom.object is not None:
                self.direct_properties[atom.predicate].add(
                    (shape_of(atom.subject), shape_of(atom.object)))
        self._props = self._close_properties()
        self._classes = self._close_classes()

    # -- reasoning ----------------------------------------------------------------------

    def _super_properties(self, p: IRI) -> set[IRI]:
        """p, its super-properties and equivalent properties (both directions)."""
        onto = self.ontology
        equiv: dict[IRI, set[IRI]] = self._equivalent_properties
        seen = {p}
        todo = [p]
        while todo:
            q = todo.pop()
            prop = onto.property(q)
            nxt = set(equiv.get(q, ()))
            if prop is not None:
                nxt |= prop.parents | prop.equivalents
            for r in nxt - seen:
                seen.add(r)
                todo.append(r)
        return seen

    @property
    def _equivalent_properties(self) -> dict[IRI, set[IRI]]:
        cached = getattr(self, "_equiv_cache", None)
        if cached is None:
            cached = defaultdict(set)
            for prop in self.ontology.properties.values():
                for e in prop.equivalents:
                    cached[e].add(prop.iri)
            self._equiv_cache = cached
        return cached

    def _inverses(self, p: IRI) -> set[IRI]:
        out: set[IRI] = set()
        for prop in self.ontology.object_properties.values():
            if prop.iri == p:
                out |= prop.inverses
            elif p in prop.inverses:
                out.add(prop.iri)
        return out

    def _close_properties(self) -> dict[IRI, set[Pair]]:
        out: dict[IRI, set[Pair]] = defaultdict(set)
        for q, pairs in self.direct_properties.items():
            ups = self._super_properties(q)
            for p in ups:
                out[p] |= pairs
            swapped = {(o, s) for s, o in pairs if o.is_iri or o.kind is ShapeKind.BNODE}
            if not swapped:
                continue
            for p in ups:
                for r in self._inverses(p):
                    for r_up in self._super_properties(r):
                        out[r_up] |= swapped
        return dict(out)

    def _close_classes(self) -> dict[IRI, set[Shape]]:
        onto = self.ontology
        out: dict[IRI, set[Shape]] = defaultdict(set)

        def add(cls: IRI, shapes: Iterable[Shape]) -> None:
            group = set(onto.superclasses(cls)) if cls in onto.classes else {cls}
            for c in group:
                out[c] |= {s for s in shapes if s.is_iri or s.kind is ShapeKind.BNODE}

        for c, shapes in self.direct_classes.items():
            add(c, shapes)
        for p, pairs in self._props.items():
            prop = onto.property(p)
            if prop is None:
                continue
            subjects = {s for s, _ in pairs}
            objects = {o for _, o in pairs}
            # Several stated domains (ranges) are either an intersection or the members
            # of an owl:unionOf, which the parsed model does not tell apart; Ontop ignores
            # unions (outside OWL 2 QL), so only a single domain (range) types instances.
            if len(prop.domains) == 1:
                add(next(iter(prop.domains)), subjects)
            if p in onto.object_properties and len(prop.ranges) == 1:
                add(next(iter(prop.ranges)), objects)
        return dict(out)

    # -- queries ------------------------------------------------------------------------

    def property_pairs(self, p: IRI) -> set[Pair]:
        """(subject, object) shapes ``?s p ?o`` can produce, reasoning included."""
        return self._props.get(p, set())

    def subject_shapes(self, p: IRI) -> set[Shape]:
        return {s for s, _ in self.property_pairs(p)}

    def object_shapes(self, p: IRI) -> set[Shape]:
        return {o for _, o in self.property_pairs(p)}

    def class_shapes(self, c: IRI) -> set[Shape]:
        """Shapes of the instances ``?x a c`` can produce, reasoning included."""
        return self._classes.get(c, set())

    def mapped_class_templates(self) -> dict[str, set[IRI]]:
        """Subject template key → classes whose own class atoms use it."""
        out: dict[str, set[IRI]] = defaultdict(set)
        for c, shapes in self.direct_classes.items():
            for s in shapes:
                if s.kind is ShapeKind.TEMPLATE:
                    out[s.value].add(c)
        return dict(out)
