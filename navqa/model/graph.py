"""The class graph Ga: ⟨c1, p, c2⟩ edges over the active ontology, with provenance.

Built by :mod:`navqa.offline.class_graph`. An edge exists when T entails that p's domain
is c1 and its range is c2 (``declared`` when stated on p itself, ``entailed`` when
inherited through super-properties or the class hierarchy), or when the mappings'
IRI templates show that p connects IRIs of c1's template to IRIs of c2's template
(``mapping-template``). Data properties give edges ⟨c, p, datatype⟩.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

from navqa.model.iri import IRI


class EdgeSource(StrEnum):
    """Why an edge is in the class graph."""

    DECLARED = "declared"
    ENTAILED = "entailed"
    TEMPLATE = "mapping-template"


@dataclass(frozen=True, slots=True)
class Edge:
    """⟨source, prop, target⟩; ``target`` is a class IRI, or a datatype IRI when ``is_data``."""

    source: IRI
    prop: IRI
    target: IRI
    is_data: bool = False
    provenance: frozenset[EdgeSource] = frozenset()

    @property
    def triple(self) -> tuple[IRI, IRI, IRI]:
        return (self.source, self.prop, self.target)


@dataclass
class ClassGraph:
    """All edges of Ga, indexed by endpoint and by property."""

    edges: tuple[Edge, ...] = ()
    classes: frozenset[IRI] = field(default_factory=frozenset)

    def __iter__(self) -> Iterator[Edge]:
        return iter(self.edges)

    def __len__(self) -> int:
        return len(self.edges)

    @cached_property
    def _out(self) -> dict[IRI, list[Edge]]:
        d: dict[IRI, list[Edge]] = defaultdict(list)
        for e in self.edges:
            d[e.source].append(e)
        return dict(d)

    @cached_property
    def _in(self) -> dict[IRI, list[Edge]]:
        d: dict[IRI, list[Edge]] = defaultdict(list)
        for e in self.edges:
            if not e.is_data:
                d[e.target].append(e)
        return dict(d)

    @cached_property
    def _by_prop(self) -> dict[IRI, list[Edge]]:
        d: dict[IRI, list[Edge]] = defaultdict(list)
        for e in self.edges:
            d[e.prop].append(e)
        return dict(d)

    def out_edges(self, cls: IRI) -> list[Edge]:
        """Edges leaving ``cls`` (object and data properties)."""
        return self._out.get(cls, [])

    def in_edges(self, cls: IRI) -> list[Edge]:
        """Object-property edges arriving at ``cls``."""
        return self._in.get(cls, [])

    def edges_of(self, prop: IRI) -> list[Edge]:
        """Every edge labelled ``prop``."""
        return self._by_prop.get(prop, [])

    def properties(self) -> frozenset[IRI]:
        return frozenset(self._by_prop)

    def typed_by(self, sources: Iterable[EdgeSource]) -> frozenset[IRI]:
        """Object properties with at least one edge from any of ``sources``."""
        want = frozenset(sources)
        return frozenset(e.prop for e in self.edges if not e.is_data and e.provenance & want)
