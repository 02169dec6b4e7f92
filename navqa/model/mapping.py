"""Mappings M as one normalised list of assertions, whatever their source syntax.

Both native Ontop ``.obda`` and R2RML parse into :class:`MappingSet`
(see :mod:`navqa.offline.obda_parser` and :mod:`navqa.offline.r2rml_parser`), so every
later step (closure, class graph, audits, lint) sees one representation.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

from navqa.model.iri import IRI
from navqa.model.template import IriTemplate, unquote_column


class TermKind(StrEnum):
    """How a term map computes its value."""

    TEMPLATE = "template"
    COLUMN = "column"
    CONSTANT = "constant"


class TermType(StrEnum):
    """What a term map produces."""

    IRI = "iri"
    LITERAL = "literal"
    BLANK = "blank"


@dataclass(frozen=True, slots=True)
class TermMap:
    """One position (subject or object) of a target atom.

    Attributes:
        kind: Template, column or constant.
        value: The expanded template text, the column name (unquoted), or the constant
            (an IRI, or a literal's lexical form).
        term_type: IRI, literal or blank node.
        datatype: Datatype IRI of a literal, when stated.
        language: Language tag of a literal, when stated.
    """

    kind: TermKind
    value: str
    term_type: TermType
    datatype: IRI | None = None
    language: str | None = None

    @property
    def template(self) -> IriTemplate | None:
        """The IRI template, for template-valued IRI term maps."""
        if self.term_type is TermType.IRI and self.kind is TermKind.TEMPLATE:
            return IriTemplate(self.value)
        return None

    @property
    def columns(self) -> tuple[str, ...]:
        """The source columns this term map reads."""
        if self.kind is TermKind.TEMPLATE:
            return IriTemplate(self.value).columns
        if self.kind is TermKind.COLUMN:
            return (unquote_column(self.value),)
        return ()

    def shape(self) -> str:
        """A comparable description: the template key for IRIs, else the datatype/lang/kind.

        Two term maps with the same shape produce the same kind of RDF term. This is what
        the .obda ↔ R2RML conformance check compares.
        """
        if self.term_type is TermType.IRI:
            if self.kind is TermKind.TEMPLATE:
                return "iri:" + IriTemplate(self.value).key
            if self.kind is TermKind.CONSTANT:
                return "iri=" + self.value
            return "iri:{}"
        if self.term_type is TermType.BLANK:
            return "bnode"
        if self.language:
            return "lang:" + self.language
        if self.kind is TermKind.CONSTANT:
            return f"const:{self.value}^^{self.datatype or ''}"
        return "lit:" + (self.datatype or "")


@dataclass(frozen=True, slots=True)
class MappingAtom:
    """One target atom: ``C(subject)`` when ``is_class``, else ``p(subject, object)``."""

    predicate: IRI
    subject: TermMap
    object: TermMap | None = None
    is_class: bool = False

    def key(self) -> tuple[str, str, str]:
        """(predicate, subject shape, object shape) — the unit of conformance checks."""
        obj = "" if self.object is None else self.object.shape()
        return (self.predicate, self.subject.shape(), obj)


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """Where an assertion was written (1-based line)."""

    path: str
    line: int


@dataclass(frozen=True, slots=True)
class MappingAssertion:
    """A mapping ``source SQL → target atoms``.

    Attributes:
        id: The mapping id (``mappingId`` in .obda, the TriplesMap IRI in R2RML).
        source: The SQL query (an R2RML table name becomes ``SELECT * FROM "table"``).
        atoms: The target atoms.
        location: Where it was read.
        tables: Tables the SQL reads (filled by :mod:`navqa.offline.mapping_sql`).
        columns: ``table.column`` references the SQL reads, where resolvable.
        whole_table: The SQL reads every row of its one table (a plain scan: no
            ``WHERE``, join, grouping, ``DISTINCT`` or limit; filled by
            :mod:`navqa.offline.mapping_sql`).
    """

    id: str
    source: str
    atoms: tuple[MappingAtom, ...]
    location: SourceLocation | None = None
    tables: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()
    whole_table: bool = False


@dataclass
class MappingSet:
    """All assertions of one mapping document."""

    assertions: tuple[MappingAssertion, ...]
    prefixes: Mapping[str, str] = field(default_factory=dict)
    path: Path | None = None
    format: str = "obda"

    def __iter__(self) -> Iterator[MappingAssertion]:
        return iter(self.assertions)

    def __len__(self) -> int:
        return len(self.assertions)

    def atoms(self) -> Iterator[tuple[MappingAssertion, MappingAtom]]:
        """Every (assertion, atom) pair."""
        for a in self.assertions:
            for atom in a.atoms:
                yield a, atom

    def classes(self) -> frozenset[IRI]:
        """Classes populated by some atom."""
        return frozenset(at.predicate for _, at in self.atoms() if at.is_class)

    def properties(self) -> frozenset[IRI]:
        """Properties populated by some atom."""
        return frozenset(at.predicate for _, at in self.atoms() if not at.is_class)

    def signature(self) -> frozenset[IRI]:
        """E0: every class and property used in a target."""
        return self.classes() | self.properties()

    def atoms_for(self, predicate: IRI) -> list[tuple[MappingAssertion, MappingAtom]]:
        """The atoms populating ``predicate``."""
        return [(a, at) for a, at in self.atoms() if at.predicate == predicate]

    def atom_keys(self) -> frozenset[tuple[str, str, str]]:
        """The set of atom keys (for .obda ↔ R2RML conformance)."""
        return frozenset(at.key() for _, at in self.atoms())
