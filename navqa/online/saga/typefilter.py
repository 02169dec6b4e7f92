"""SAGA's TypeFilter: remove properties whose *known* domain conflicts with a node's type.

SAGA keeps property p at entity x iff δ(p) = ∅ or δ(p) ∩ τ*(x) ≠ ∅. Here

* δ(p) is the schema index's effective domain (:mod:`navqa.online.saga.schema_index`):
  the most specific classes that the ontology and the mapping templates give for p's
  subjects, or sampled evidence when neither knows; ∅ when nothing is known;
* for a property traversed backwards (x is the *object*), ρ(p) takes the place of δ(p);
* τ*(x) is x's known types closed upwards (an instance of ``ElectricLocomotive`` is a
  ``Locomotive`` and a ``RollingStock``) and — for a class node or a class-typed
  variable — downwards as well: ``?x a rail:Company`` may be bound to an
  ``OperatorCompany``, so a property whose domain is ``OperatorCompany`` is compatible.
  An *entity* whose types were confirmed by a lookup is closed upwards only.

Unknown stays unknown: a property with δ(p) = ∅, and any property at a node with no known
type, is kept. Without disjointness axioms, sibling classes count as incompatible, as in
SAGA (δ(p) = {OperatorCompany} does not fit a ``Manufacturer``).

The filter plugs into NaVQA's expansion (:class:`navqa.online.expansion.CandidateFilter`):
the pipeline builds it with :func:`make_type_filter`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from pathlib import Path

from navqa.backends.protocols import SparqlEndpoint
from navqa.model.events import Candidate
from navqa.model.iri import IRI, OWL_THING
from navqa.online.context import SchemaContext
from navqa.online.saga.schema_index import SchemaIndex, endpoint_sampler

__all__ = ["TypeFilter", "make_type_filter"]


class TypeFilter:
    """The type check of SAGA's lookup, over a :class:`SchemaIndex`.

    Args:
        ctx: The schema context.
        index: The schema index, or ``None`` to build it on first use (ontology and
            templates, plus sampled evidence when ``endpoint`` is given).
        endpoint: Where to sample properties that neither the ontology nor the mappings
            type (bounded queries, cached under ``cache_dir``).
        cache_dir: navqa's cache directory (``runtime.cache_dir``).
    """

    def __init__(self, ctx: SchemaContext, index: SchemaIndex | None = None, *,
                 endpoint: SparqlEndpoint | None = None, cache_dir: Path | None = None,
                 timeout: float | None = 30.0) -> None:
        self.ctx = ctx
        self._index = index
        self._endpoint = endpoint
        self._cache_dir = cache_dir
        self._timeout = timeout
        self._lock = threading.Lock()

    @property
    def index(self) -> SchemaIndex:
        """The schema index (built on first use; thread-safe)."""
        if self._index is None:
            with self._lock:
                if self._index is None:
                    sampler = (endpoint_sampler(self.ctx, self._endpoint, timeout=self._timeout)
                               if self._endpoint is not None else None)
                    self._index = SchemaIndex.build(self.ctx, sampler=sampler,
                                                    cache_dir=self._cache_dir)
        return self._index

    # -- τ* --------------------------------------------------------------------------------

    def closure(self, types: Iterable[IRI], *, definite: bool = False) -> frozenset[IRI]:
        """τ*(x): the types with their superclasses, and their subclasses unless ``definite``."""
        onto = self.ctx.ontology
        out: set[IRI] = set()
        for t in types:
            out |= onto.superclasses(t)
            if not definite:
                out |= onto.subclasses(t)
        out.discard(OWL_THING)
        return frozenset(out)

    # -- the check -------------------------------------------------------------------------

    def expected(self, prop: IRI, direction: str = "out") -> frozenset[IRI]:
        """δ(p) for ``out`` (x is the subject), ρ(p) for ``in`` (x is the object)."""
        return self.index.domain(prop) if direction == "out" else self.index.range(prop)

    def compatible(self, types: Iterable[IRI], prop: IRI, direction: str = "out", *,
                   definite: bool = False) -> bool:
        """Keep ``prop`` at a node of these types? (True when either side is unknown.)"""
        known = self.expected(prop, direction)
        ts = list(types)
        if not known or not ts:
            return True
        return bool(known & self.closure(ts, definite=definite))

    def split(self, types: Iterable[IRI], candidates: Sequence[Candidate], *,
              definite: bool = False) -> tuple[list[Candidate], list[Candidate]]:
        """``(kept, removed)`` for a node of the given types."""
        ts = list(types)
        kept: list[Candidate] = []
        removed: list[Candidate] = []
        for c in candidates:
            ok = self.compatible(ts, c.prop, c.direction, definite=definite)
            (kept if ok else removed).append(c)
        return kept, removed

    def __call__(self, node: IRI, candidates: Sequence[Candidate]
                 ) -> tuple[list[Candidate], list[Candidate]]:
        """The expansion hook: ``node`` is a class (a variable typed by it)."""
        return self.split([node], candidates)


def make_type_filter(ctx: SchemaContext, *, endpoint: SparqlEndpoint | None = None,
                     cache_dir: Path | None = None) -> TypeFilter:
    """The pipeline's factory hook (see :meth:`navqa.online.pipeline.Pipeline._make_filter`)."""
    return TypeFilter(ctx, endpoint=endpoint, cache_dir=cache_dir)
