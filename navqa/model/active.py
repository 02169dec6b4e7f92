"""The active ontology Ta (NaVQA §3.1): the part of T the mappings populate.

Built by :mod:`navqa.offline.closure`. ``mapped`` holds the seeds E0 (terms used in a
mapping target); ``signature`` holds E, what Ontop's OWL 2 QL reasoning populates from them
(:class:`navqa.offline.entailment.QlTBox`). This is navqa's one notion of "populated":
audit, lint, suggest and the pipeline's check all ask :meth:`ActiveOntology.is_active`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from navqa.model.iri import IRI
from navqa.model.ontology import EntityKind, Ontology


@dataclass(frozen=True, slots=True)
class ClosureStep:
    """One iteration of the closure: the elements it added."""

    step: int
    added: frozenset[IRI]


@dataclass(frozen=True, slots=True)
class ActiveStats:
    """Figures reported by ``navqa index --stats``.

    Attributes:
        seeds: |E0| by kind (``class``, ``object_property``, ``data_property``, ``other``).
        active: |E| by kind.
        steps: Iterations until the fixpoint (the last one adds nothing).
        full_triples / active_triples: Triples of T and of Ta (see docs/active-ontology.md
            for what "restricted to the signature" counts).
        full_axioms / active_axioms: Logical axioms of T and Ta.
    """

    seeds: dict[str, int]
    active: dict[str, int]
    steps: int
    full_triples: int
    active_triples: int
    full_axioms: int
    active_axioms: int


@dataclass
class ActiveOntology:
    """T, the mapped seeds, and the closed active signature.

    Attributes:
        ontology: The full ontology T.
        mapped: E0 — classes and properties used in mapping targets (including terms the
            ontology does not declare, which are kept so audits can report them).
        signature: E — what Ontop's OWL 2 QL reasoning populates from E0 (and from T's own
            assertions about individuals), restricted to terms T declares, plus E0.
        steps: The closure iterations.
        stats: The counts for reports.
        undeclared_mapped: Mapped terms T does not declare.
        via: For each element of E outside E0, the seeds (mapped terms, or terms of T's
            own assertions) it is populated from.
    """

    ontology: Ontology
    mapped: frozenset[IRI]
    signature: frozenset[IRI]
    steps: tuple[ClosureStep, ...] = ()
    stats: ActiveStats | None = None
    undeclared_mapped: frozenset[IRI] = field(default_factory=frozenset)
    via: Mapping[IRI, frozenset[IRI]] = field(default_factory=dict)

    def is_active(self, iri: IRI) -> bool:
        """Whether ``iri`` is in the active signature E."""
        return iri in self.signature

    def is_mapped(self, iri: IRI) -> bool:
        """Whether ``iri`` is used directly in a mapping target."""
        return iri in self.mapped

    def of_kind(self, kind: EntityKind) -> frozenset[IRI]:
        """Active elements of one kind (per the full ontology's declarations)."""
        table = {
            EntityKind.CLASS: self.ontology.classes,
            EntityKind.OBJECT_PROPERTY: self.ontology.object_properties,
            EntityKind.DATA_PROPERTY: self.ontology.data_properties,
            EntityKind.ANNOTATION_PROPERTY: self.ontology.annotation_properties,
        }[kind]
        return frozenset(i for i in self.signature if i in table)

    @property
    def classes(self) -> frozenset[IRI]:
        return self.of_kind(EntityKind.CLASS)

    @property
    def object_properties(self) -> frozenset[IRI]:
        return self.of_kind(EntityKind.OBJECT_PROPERTY)

    @property
    def data_properties(self) -> frozenset[IRI]:
        return self.of_kind(EntityKind.DATA_PROPERTY)

    @property
    def unmapped(self) -> frozenset[IRI]:
        """Declared classes and properties of T that are not active (silent-failure risks)."""
        return self.ontology.signature - self.signature
