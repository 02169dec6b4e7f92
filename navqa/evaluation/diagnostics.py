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
``gold_class_ranks`` / ``gold_property_ranks``
    For each gold class (property), sorted by IRI, its best 1-based rank in the
    ``Linked`` events, ``None`` when it is not linked; ``classes_shown`` /
    ``properties_shown`` is how many were linked (K). A question's gold classes are all
    *within the top-k* when every rank is ``≤ k``: the run's **recall@k** curve
    (:func:`recall_at_k`) is the share of questions (with gold classes) for which that
    holds, for k = 1 … K.
``context_tokens``
    The token count of the chosen subgraph's verbalization (its
    :class:`~navqa.model.events.SubgraphVerbalized` text; without a rerank event, all of
    them): :func:`count_tokens`, i.e. the matches of ``\\w+|[^\\w\\s]`` (runs of word
    characters, and every other non-space character alone). ``rail:operatedBy`` is 3
    tokens; a BPE tokenizer usually gives more for camel-case names.

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

import math
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
    SubgraphVerbalized,
)
from navqa.online.verbalize import token_count

__all__ = ["Grounding", "count_tokens", "grounding_of", "recall_at_k", "summarize_grounding"]

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
    gold_class_ranks: tuple[int | None, ...] | None = None
    gold_property_ranks: tuple[int | None, ...] | None = None
    classes_shown: int | None = None
    properties_shown: int | None = None
    context_tokens: int | None = None

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        for key in ("filtered_gold", "gold_class_ranks", "gold_property_ranks"):
            if d[key] is not None:
                d[key] = list(d[key])
        return d


def count_tokens(text: str) -> int:
    """Tokens of ``text``: runs of word characters, and each other non-space character.

    The same count the context completion budgets with (:func:`navqa.online.verbalize.
    token_count`), so the diagnostic and the budget cannot drift apart."""
    return token_count(text)


def _ranks(gold: frozenset[str], lists: Sequence[Sequence[str]]
           ) -> tuple[int | None, ...] | None:
    if not lists:
        return None
    best: dict[str, int] = {}
    for iris in lists:
        for i, iri in enumerate(iris, start=1):
            best[iri] = min(best.get(iri, i), i)
    return tuple(best.get(g) for g in sorted(gold))


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

    verbalized = [e for e in events if isinstance(e, SubgraphVerbalized)]
    tokens: int | None = None
    if verbalized:
        chosen_root = reranked[-1].chosen if reranked else None
        texts = [e.text for e in verbalized if chosen_root is None or e.root == chosen_root]
        tokens = sum(count_tokens(t) for t in texts) if texts else None

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
        gold_class_ranks=_ranks(shape.classes, [[t.iri for t in e.classes] for e in linked]),
        gold_property_ranks=_ranks(shape.properties,
                                   [[t.iri for t in e.properties] for e in linked]),
        classes_shown=max(len(e.classes) for e in linked) if linked else None,
        properties_shown=max(len(e.properties) for e in linked) if linked else None,
        context_tokens=tokens,
    )


def _mean(values: Iterable[float]) -> float | None:
    vs = list(values)
    return sum(vs) / len(vs) if vs else None


def _nearest_rank(values: Sequence[int], q: float) -> int | None:
    if not values:
        return None
    xs = sorted(values)
    return xs[max(1, math.ceil(q * len(xs))) - 1]


def recall_at_k(ranks: Sequence[Sequence[int | None]], k_max: int) -> list[float | None]:
    """The recall@k curve, k = 1 … ``k_max``: the share of questions whose gold terms
    all have a rank ``≤ k`` (``ranks``: one entry per question with gold terms).

    ``None`` everywhere when ``ranks`` is empty.
    """
    n = len(ranks)
    return [sum(1 for rs in ranks if all(r is not None and r <= k for r in rs)) / n
            if n else None for k in range(1, k_max + 1)]


def _curve(gs: Sequence[dict[str, Any]], ranks_key: str, shown_key: str) -> dict[str, Any]:
    ranks = [g[ranks_key] for g in gs if g.get(ranks_key)]
    k_max = max((g[shown_key] for g in gs if g.get(shown_key)), default=0)
    curve = recall_at_k(ranks, k_max)
    return {"k": list(range(1, k_max + 1)), "recall": curve, "n": len(ranks)}


def _all_covered(gs: Sequence[dict[str, Any]], keys: Sequence[str]) -> dict[str, Any]:
    """Share of questions where every recall in ``keys`` that is not null is 1."""
    judged = [g for g in gs if any(g.get(k) is not None for k in keys)]
    full = [g for g in judged if all(g.get(k) is None or g[k] >= 1.0 for k in keys)]
    return {"rate": len(full) / len(judged) if judged else None, "n": len(judged)}


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
    out["recall_at_k"] = {"classes": _curve(gs, "gold_class_ranks", "classes_shown"),
                          "properties": _curve(gs, "gold_property_ranks", "properties_shown")}
    out["subgraph_all_classes"] = _all_covered(gs, ("subgraph_class_recall",))
    out["subgraph_all_properties"] = _all_covered(gs, ("subgraph_property_recall",))
    out["subgraph_all"] = _all_covered(gs, ("subgraph_class_recall",
                                            "subgraph_property_recall"))
    tokens = [int(g["context_tokens"]) for g in gs if g.get("context_tokens") is not None]
    out["context_tokens"] = {"median": _nearest_rank(tokens, 0.5),
                             "p90": _nearest_rank(tokens, 0.9), "n": len(tokens),
                             "tokenizer": r"regex \w+|[^\w\s]"}
    reduction = shown / available if lookups and available else None
    retention = 1.0 - removed / examined if lookups and examined else None
    return {"grounding": out, "retention": retention, "reduction": reduction}
