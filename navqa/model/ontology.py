"""The ontology T as typed data: classes, properties, labels and the axioms navqa uses.

Parsing lives in :mod:`navqa.offline.ontology_parser`; this module only holds the result
and answers hierarchy questions about it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path

from navqa.model.iri import IRI, OWL_THING, humanize


class EntityKind(StrEnum):
    """The four kinds of named ontology elements."""

    CLASS = "class"
    OBJECT_PROPERTY = "object_property"
    DATA_PROPERTY = "data_property"
    ANNOTATION_PROPERTY = "annotation_property"


@dataclass(frozen=True, slots=True)
class LangString:
    """A label or comment with its optional language tag."""

    text: str
    lang: str | None = None

    def __reduce__(self) -> tuple[type[LangString], tuple[str, str | None]]:
        # the constructor's arguments: a frozen slots dataclass pickles through Python-level
        # state functions by default, slow for the million labels of a large ontology
        return LangString, (self.text, self.lang)


def pick_text(values: Iterable[LangString], lang: str = "en") -> str | None:
    """The value in ``lang``, else an untagged one, else any, else ``None``."""
    vals = list(values)
    for wanted in (lang, None):
        for v in vals:
            if v.lang == wanted:
                return v.text
    return vals[0].text if vals else None


@dataclass(frozen=True, slots=True)
class OntClass:
    """A named class.

    Attributes:
        parents: Directly stated named superclasses (``C rdfs:subClassOf D``).
        restriction_parents: Named classes appearing inside superclass restrictions
            or intersections (``C rdfs:subClassOf [owl:someValuesFrom D]``).
        restriction_properties: Properties appearing in those restrictions.
        equivalents: Named classes stated equivalent.
        disjoints: Named classes stated disjoint.
        notes: Its other textual annotations (any annotation property but the label and
            comment ones: ``skos:altLabel``, ``skos:example``, an ontology's own
            ``definition``...), for descriptions and lexical evidence.
    """

    iri: IRI
    labels: tuple[LangString, ...] = ()
    comments: tuple[LangString, ...] = ()
    parents: frozenset[IRI] = frozenset()
    restriction_parents: frozenset[IRI] = frozenset()
    restriction_properties: frozenset[IRI] = frozenset()
    equivalents: frozenset[IRI] = frozenset()
    disjoints: frozenset[IRI] = frozenset()
    notes: tuple[LangString, ...] = ()

    kind = EntityKind.CLASS

    def __reduce__(self) -> tuple[type[OntClass], tuple[object, ...]]:
        # the constructor's arguments (see LangString.__reduce__)
        return OntClass, (self.iri, self.labels, self.comments, self.parents,
                          self.restriction_parents, self.restriction_properties,
                          self.equivalents, self.disjoints, self.notes)

    def label(self, lang: str = "en") -> str:
        """The best label in ``lang``, falling back to the humanised local name."""
        return pick_text(self.labels, lang) or humanize(self.iri)

    def comment(self, lang: str = "en") -> str | None:
        return pick_text(self.comments, lang)


@dataclass(frozen=True, slots=True)
class OntProperty:
    """A named object, data or annotation property.

    Attributes:
        parents: Directly stated super-properties.
        domains: Named classes in its domain axioms (members of ``owl:unionOf`` included).
        ranges: Named classes (object properties) or datatypes (data properties) in its
            range axioms, union members included.
        inverses: Properties stated ``owl:inverseOf`` it, in either direction.
        notes: Its other textual annotations (see :class:`OntClass`).
    """

    iri: IRI
    kind: EntityKind
    labels: tuple[LangString, ...] = ()
    comments: tuple[LangString, ...] = ()
    parents: frozenset[IRI] = frozenset()
    domains: frozenset[IRI] = frozenset()
    ranges: frozenset[IRI] = frozenset()
    inverses: frozenset[IRI] = frozenset()
    equivalents: frozenset[IRI] = frozenset()
    functional: bool = False
    notes: tuple[LangString, ...] = ()

    def __reduce__(self) -> tuple[type[OntProperty], tuple[object, ...]]:
        # the constructor's arguments (see LangString.__reduce__)
        return OntProperty, (self.iri, self.kind, self.labels, self.comments, self.parents,
                             self.domains, self.ranges, self.inverses, self.equivalents,
                             self.functional, self.notes)

    def label(self, lang: str = "en") -> str:
        return pick_text(self.labels, lang) or humanize(self.iri)

    def comment(self, lang: str = "en") -> str | None:
        return pick_text(self.comments, lang)


OntEntity = OntClass | OntProperty


@dataclass
class Ontology:
    """A parsed ontology.

    Attributes:
        iri: The ontology IRI, if declared.
        source: The file it was read from.
        classes / object_properties / data_properties / annotation_properties: The named
            elements by IRI. Imports resolved through a catalog are merged in.
        prefixes: Namespace prefixes declared in the source(s).
        triple_count: Number of RDF triples in the parsed graph(s).
        imports: IRIs of the ``owl:imports`` that were followed.
        skipped_imports: IRIs of declared ``owl:imports`` that were not loaded (imports
            not followed, or not resolvable offline).
    """

    classes: Mapping[IRI, OntClass]
    object_properties: Mapping[IRI, OntProperty]
    data_properties: Mapping[IRI, OntProperty]
    annotation_properties: Mapping[IRI, OntProperty] = field(default_factory=dict)
    prefixes: Mapping[str, str] = field(default_factory=dict)
    triple_count: int = 0
    iri: str | None = None
    source: Path | None = None
    imports: tuple[str, ...] = ()
    skipped_imports: tuple[str, ...] = ()

    # -- lookup -------------------------------------------------------------------------

    def entity(self, iri: IRI) -> OntEntity | None:
        """The class or property named ``iri``, or ``None``."""
        for table in (
            self.classes,
            self.object_properties,
            self.data_properties,
            self.annotation_properties,
        ):
            e = table.get(iri)
            if e is not None:
                return e
        return None

    def kind(self, iri: IRI) -> EntityKind | None:
        e = self.entity(iri)
        return None if e is None else e.kind

    @property
    def properties(self) -> dict[IRI, OntProperty]:
        """Object and data properties together."""
        return {**self.object_properties, **self.data_properties}

    @property
    def signature(self) -> frozenset[IRI]:
        """Every named class, object property and data property."""
        return frozenset(self.classes) | frozenset(self.object_properties) | frozenset(
            self.data_properties
        )

    # Defined after the ``@property`` members above: inside the class body this name
    # shadows the ``property`` builtin.
    def property(self, iri: IRI) -> OntProperty | None:
        """The object or data property named ``iri``, or ``None``."""
        return self.object_properties.get(iri) or self.data_properties.get(iri)

    def label(self, iri: IRI, lang: str = "en") -> str:
        e = self.entity(iri)
        return e.label(lang) if e is not None else humanize(iri)

    def __iter__(self) -> Iterator[OntEntity]:
        yield from self.classes.values()
        yield from self.object_properties.values()
        yield from self.data_properties.values()

    # -- hierarchy ------------------------------------------------------------------------

    @cached_property
    def _children(self) -> dict[IRI, set[IRI]]:
        kids: dict[IRI, set[IRI]] = {}
        for c in self.classes.values():
            for p in c.parents | c.equivalents:
                kids.setdefault(p, set()).add(c.iri)
            for e in c.equivalents:
                kids.setdefault(c.iri, set()).add(e)
        return kids

    def superclasses(self, iri: IRI, *, reflexive: bool = True) -> frozenset[IRI]:
        """All named superclasses of ``iri`` (transitive, through equivalences too)."""
        seen: set[IRI] = {iri}
        todo = [iri]
        while todo:
            c = self.classes.get(todo.pop())
            if c is None:
                continue
            for p in c.parents | c.equivalents:
                if p not in seen:
                    seen.add(p)
                    todo.append(p)
        if not reflexive:
            seen.discard(iri)
        return frozenset(seen)

    def subclasses(self, iri: IRI, *, reflexive: bool = True) -> frozenset[IRI]:
        """All named subclasses of ``iri`` (transitive)."""
        seen: set[IRI] = {iri}
        todo = [iri]
        while todo:
            for k in self._children.get(todo.pop(), ()):
                if k not in seen:
                    seen.add(k)
                    todo.append(k)
        if not reflexive:
            seen.discard(iri)
        return frozenset(seen)

    def is_subclass(self, sub: IRI, sup: IRI) -> bool:
        """Whether ``sub`` ⊑ ``sup`` follows from the named hierarchy (owl:Thing tops all)."""
        return sup == OWL_THING or sup in self.superclasses(sub)

    def superproperties(self, iri: IRI, *, reflexive: bool = True) -> frozenset[IRI]:
        """All named super-properties of ``iri`` (transitive)."""
        seen: set[IRI] = {iri}
        todo = [iri]
        while todo:
            p = self.property(todo.pop())
            if p is None:
                continue
            for q in p.parents | p.equivalents:
                if q not in seen:
                    seen.add(q)
                    todo.append(q)
        if not reflexive:
            seen.discard(iri)
        return frozenset(seen)

    def inherited_domains(self, iri: IRI) -> frozenset[IRI]:
        """Domains stated on ``iri`` or any of its super-properties (T entails them all)."""
        out: set[IRI] = set()
        for q in self.superproperties(iri):
            p = self.property(q)
            if p is not None:
                out |= p.domains
        return frozenset(out)

    def inherited_ranges(self, iri: IRI) -> frozenset[IRI]:
        """Ranges stated on ``iri`` or any of its super-properties."""
        out: set[IRI] = set()
        for q in self.superproperties(iri):
            p = self.property(q)
            if p is not None:
                out |= p.ranges
        return frozenset(out)
