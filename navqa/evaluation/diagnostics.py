"""Grounding diagnostics: did the pipeline *see* the ontology terms the gold query uses?

The gold terms come from the gold query's triple patterns (:mod:`navqa.evaluation.shape`):
its classes ``G_C`` (objects of ``rdf:type``) and properties ``G_P``. Against the events
of one answer (exact IRI matches; a sub- or superclass does not count):

``linked_class_recall`` / ``linked_property_recall``
    ``|G_C ∩ linked classes| / |G_C|`` and the same for properties, over the top-k of
    every :class:`~navqa.model.events.Linked` event.
``subgraph_class_recall`` / ``subgraph_property_recall``
    The same against the chosen subgraph: the edges of the
    :class:`~navqa.model.events.SubgraphExpanded` events whose root is
    :attr:`SubgraphsReranked.chosen` (the last rerank event); without a rerank event,
    the union of every expanded subgraph. Its classes are the edges' sources and
    (object-property) targets, its properties their labels.
``listing_property_recall``
    ``G_P`` against the properties shown to the judge after type filtering (the
    :attr:`PropertiesJudged.candidates` of every lookup).
``subgraph_edges`` / ``subgraph_classes``
    Size of the chosen subgraph.

A recall is ``None`` when its gold set is empty or the events it needs are missing
(e.g. the ``gold`` strategy, or a baseline without linking).

SAGA's two filter statistics, summed over the lookups (:class:`PropertiesJudged`):

**Filter reduction ratio** ``= Σ len(candidates) / Σ available``: the share of the
properties available at a node that the type filter still shows. Lower means a
stronger reduction.

**Gold-property retention**: for each pair ``(C, p)`` where the gold query uses ``p``
on a node it types as ``C`` (as subject or as object), the pair is *examined* when some
lookup ran at node ``C``, and *filtered out* when ``p`` is in that lookup's
``filtered_out``. Retention ``= 1 − filtered-out pairs / examined pairs``, i.e. the
share of gold properties that survive the filter for their node's type. Properties the
gold query uses on untyped nodes are not counted.

In ``summary.json`` both are fractions in ``[0, 1]`` (top-level ``reduction`` and
``retention``), ``null`` when no lookup (or no examined pair) occurred.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from navqa.evaluation.shape import QueryShape
from navqa.model.events import (
    Event,
    Linked,
    PropertiesJudged,
    SubgraphExpanded,
    SubgraphsReranked,
)

__all__ = ["Grounding", "grounding_of", "summarize_grounding"]

_RECALLS = ("linked_class_recall", "linked_property_recall", "subgraph_class_recall",
            "subgraph_property_recall", "listing_property_recall")


@dataclass(frozen=True)
class Grounding:
    """Grounding diagnostics of one answer (see the module docstring)."""

    linked_class_recall: float | None = None
    linked_property_recall: float | None = None
    subgraph_class_recall: float | None = None
    subgraph_property_recall: float | None = None
    listing_property_recall: float | None = None
    subgraph_edges: int | None = None
    subgraph_classes: int | None = None
    lookups: int = 0
    shown: int = 0
    available: int = 0
    examined: int = 0
    filtered_out: int = 0
    filtered_gold: tuple[str, ...] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["filtered_gold"] = list(self.filtered_gold)
        return d


def _recall(gold: frozenset[str], seen: set[str] | None) -> float | None:
    if not gold or seen is None:
        return None
    return len(gold & seen) / len(gold)


def grounding_of(shape: QueryShape, events: Sequence[Event]) -> Grounding:
    """The diagnostics of one answer's events against its gold query's shape."""
    linked = [e for e in events if isinstance(e, Linked)]
    expanded = [e for e in events if isinstance(e, SubgraphExpanded)]
    reranked = [e for e in events if isinstance(e, SubgraphsReranked)]
    judged = [e for e in events if isinstance(e, PropertiesJudged)]

    linked_classes = {t.iri for e in linked for t in e.classes} if linked else None
    linked_props = {t.iri for e in linked for t in e.properties} if linked else None

    sub_classes: set[str] | None = None
    sub_props: set[str] | None = None
    n_edges: int | None = None
    if expanded:
        chosen = reranked[-1].chosen if reranked else None
        parts = [e for e in expanded if chosen is None or e.root == chosen]
        edges = {edge for e in parts for edge in e.edges}
        roots = {e.root for e in parts}
        sub_classes = set(roots)
        for edge in edges:
            sub_classes.add(edge.source)
            if not edge.is_data:
                sub_classes.add(edge.target)
        sub_props = {edge.prop for edge in edges}
        n_edges = len(edges)

    listed = {c.prop for e in judged for c in e.candidates} if judged else None

    examined = 0
    filtered: list[str] = []
    if judged:
        nodes = {e.node for e in judged}
        removed: dict[str, set[str]] = {}
        for e in judged:
            removed.setdefault(e.node, set()).update(e.filtered_out)
        for cls, prop in sorted({(c, p) for c, p, _d in shape.typed_properties}):
            if cls in nodes:
                examined += 1
                if prop in removed.get(cls, set()):
                    filtered.append(f"{cls} {prop}")

    return Grounding(
        linked_class_recall=_recall(shape.classes, linked_classes),
        linked_property_recall=_recall(shape.properties, linked_props),
        subgraph_class_recall=_recall(shape.classes, sub_classes),
        subgraph_property_recall=_recall(shape.properties, sub_props),
        listing_property_recall=_recall(shape.properties, listed),
        subgraph_edges=n_edges,
        subgraph_classes=len(sub_classes) if sub_classes is not None else None,
        lookups=len(judged),
        shown=sum(len(e.candidates) for e in judged),
        available=sum(e.available for e in judged),
        examined=examined,
        filtered_out=len(filtered),
        filtered_gold=tuple(filtered),
    )


def _mean(values: Iterable[float]) -> float | None:
    vs = list(values)
    return sum(vs) / len(vs) if vs else None


def summarize_grounding(records: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Run-level grounding figures from per-question ``grounding`` dicts.

    Returns:
        ``{"grounding": {...means and counts...}, "retention": x|None,
        "reduction": y|None}``.
    """
    gs = [r.get("grounding") or {} for r in records]
    out: dict[str, Any] = {}
    for name in _RECALLS:
        vals = [g[name] for g in gs if g.get(name) is not None]
        out[name] = _mean(vals)
        out[f"{name}_n"] = len(vals)
    sizes = sorted(g["subgraph_edges"] for g in gs if g.get("subgraph_edges") is not None)
    out["subgraph_edges_mean"] = _mean(sizes)
    out["subgraph_edges_median"] = sizes[len(sizes) // 2] if sizes else None
    out["subgraph_classes_mean"] = _mean(
        g["subgraph_classes"] for g in gs if g.get("subgraph_classes") is not None)
    lookups = sum(g.get("lookups", 0) for g in gs)
    shown = sum(g.get("shown", 0) for g in gs)
    available = sum(g.get("available", 0) for g in gs)
    examined = sum(g.get("examined", 0) for g in gs)
    removed = sum(g.get("filtered_out", 0) for g in gs)
    out["lookups"] = lookups
    out["shown"] = shown
    out["available"] = available
    out["gold_pairs_examined"] = examined
    out["gold_pairs_filtered_out"] = removed
    reduction = shown / available if lookups and available else None
    retention = 1.0 - removed / examined if lookups and examined else None
    return {"grounding": out, "retention": retention, "reduction": reduction}
