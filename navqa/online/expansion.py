"""Iterative subgraph expansion over the class graph Ga (NaVQA §3.2, steps 1–2).

From each candidate class, a frontier of classes is expanded breadth-first, one level
at a time for all candidates together.
At each node the candidates are (a) the node's edges in Ga — outgoing and incoming,
inherited ones included — and (b) the most question-relevant properties of the whole
index that Ga does not attach to the node (what a type-blind system would see). An
optional :class:`CandidateFilter` (SAGA's TypeFilter) removes candidates whose domain
conflicts with the node before the judge sees them. The judge (one batched decision per
node) picks what to follow; depth is bounded by ``max_depth`` and every class is visited
at most once, so expansion terminates.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from navqa.model.events import Candidate, PropertiesJudged
from navqa.model.graph import Edge
from navqa.model.iri import IRI
from navqa.online.context import SchemaContext
from navqa.online.judge import Judge

UNKNOWN = "urn:navqa:unknown"
"""Neighbour of a lexical candidate whose range is unknown."""


class CandidateFilter(Protocol):
    """Drops candidates known to be incompatible with the node (SAGA's TypeFilter)."""

    def __call__(self, node: IRI, candidates: Sequence[Candidate]
                 ) -> tuple[list[Candidate], list[Candidate]]:
        """Returns ``(kept, removed)``."""
        ...


ListingFn = Callable[[IRI, Candidate], str]


@dataclass
class Subgraph:
    """The expanded subgraph G_sub of one candidate class.

    Attributes:
        root: The candidate class it grew from.
        edges: Selected object-property edges (each once).
        data: Selected data-property edges.
        depth: Deepest level reached.
        nodes: Classes reached.
    """

    root: IRI
    edges: list[Edge] = field(default_factory=list)
    data: list[Edge] = field(default_factory=list)
    depth: int = 0
    nodes: set[IRI] = field(default_factory=set)

    @property
    def all_edges(self) -> list[Edge]:
        return self.edges + self.data


class Scorer(Protocol):
    def __call__(self, node: IRI, prop: IRI, neighbour: IRI, depth: int) -> float: ...


@dataclass
class _Pending:
    root: IRI
    node: IRI
    depth: int
    candidates: list[Candidate]
    flags: list[bool]
    edges: dict[tuple[IRI, str, IRI], Edge]
    removed: list[Candidate]
    available: int
    seconds: float


def _candidates(ctx: SchemaContext, node: IRI, depth: int, score: Scorer,
                lexical: Sequence[tuple[IRI, float]], candidate_filter: CandidateFilter | None,
                listing: ListingFn | None) -> tuple[list[Candidate], list[bool],
                                                   dict[tuple[IRI, str, IRI], Edge],
                                                   list[Candidate], int]:
    cands: list[Candidate] = []
    is_data: dict[tuple[IRI, str, IRI], bool] = {}
    edge_of: dict[tuple[IRI, str, IRI], Edge] = {}
    for n in ctx.neighbours(node):
        c = Candidate(prop=n.edge.prop, direction=n.direction,  # type: ignore[arg-type]
                      neighbour=n.other, score=round(score(node, n.edge.prop, n.other, depth), 4))
        key = (c.prop, c.direction, c.neighbour)
        if key in is_data:
            continue
        is_data[key] = n.edge.is_data
        edge_of[key] = n.edge
        cands.append(c)
    typed_props = {c.prop for c in cands}
    for prop, _ in lexical:
        if prop in typed_props or not ctx.allowed(prop):
            continue
        data = ctx.is_data_property(prop)
        rng = ctx.datatype(prop) if data else _range_class(ctx, prop)
        c = Candidate(prop=prop, direction="out", neighbour=rng or UNKNOWN,
                      score=round(score(node, prop, rng or UNKNOWN, depth), 4))
        key = (c.prop, c.direction, c.neighbour)
        is_data[key] = data
        edge_of[key] = Edge(node, prop, rng or UNKNOWN, is_data=data, provenance=frozenset())
        cands.append(c)
    available = len(cands)
    removed: list[Candidate] = []
    if candidate_filter is not None:
        cands, removed = candidate_filter(node, cands)
    if listing is not None:
        cands = [Candidate(c.prop, c.direction, c.neighbour, c.score, listing(node, c))
                 for c in cands]
    flags = [is_data[(c.prop, c.direction, c.neighbour)] for c in cands]
    return cands, flags, edge_of, removed, available


def expand(
    ctx: SchemaContext,
    roots: Sequence[IRI],
    question: str,
    *,
    judge: Judge,
    score: Scorer,
    lexical: Sequence[tuple[IRI, float]] = (),
    candidate_filter: CandidateFilter | None = None,
    listing: ListingFn | None = None,
    max_depth: int = 3,
) -> tuple[dict[IRI, Subgraph], list[PropertiesJudged]]:
    """Grow the subgraph of every candidate class, level by level.

    All nodes of one depth level — across every root — are judged together
    (:meth:`Judge.judge_level`), so the LLM judge needs one call per level while every
    node still gets its own decision.

    Args:
        ctx: The schema.
        roots: The candidate classes (C_cand).
        question: The question (for the judge).
        judge: Decides per node.
        score: Relevance of a candidate (node, prop, neighbour, depth).
        lexical: Question-relevant properties from the property index, best first.
        candidate_filter: SAGA's TypeFilter, or ``None`` to show everything.
        listing: Renders a candidate (seen from a node) for the judge.
        max_depth: L_max.

    Returns:
        One subgraph per root, and one :class:`PropertiesJudged` event per expanded node.
    """
    subs = {r: Subgraph(root=r, nodes={r}) for r in roots}
    seen: dict[IRI, set[tuple[IRI, IRI, IRI]]] = {r: set() for r in roots}
    frontier: list[tuple[IRI, IRI]] = [(r, r) for r in roots]
    events: list[PropertiesJudged] = []
    depth = 0
    while frontier and depth < max_depth:
        pending: dict[str, _Pending] = {}
        for i, (root, node) in enumerate(frontier):
            t0 = time.perf_counter()
            cands, flags, edge_of, removed, available = _candidates(
                ctx, node, depth, score, lexical, candidate_filter, listing)
            pending[f"n{i + 1}"] = _Pending(root, node, depth, cands, flags, edge_of, removed,
                                            available, time.perf_counter() - t0)
        t0 = time.perf_counter()
        decisions = judge.judge_level(question, [
            (nid, ctx.label(p.node), p.candidates, p.flags) for nid, p in pending.items()])
        judge_s = (time.perf_counter() - t0) / max(1, len(pending))
        nxt: list[tuple[IRI, IRI]] = []
        for nid, p in pending.items():
            selected = set(decisions.get(nid, []))
            sub = subs[p.root]
            for c, is_data in zip(p.candidates, p.flags, strict=True):
                if c.prop not in selected:
                    continue
                e = p.edges[(c.prop, c.direction, c.neighbour)]
                # Inherited edges are re-anchored on the node itself.
                e = (Edge(p.node, e.prop, c.neighbour, e.is_data, e.provenance)
                     if c.direction == "out"
                     else Edge(c.neighbour, e.prop, p.node, e.is_data, e.provenance))
                if e.triple in seen[p.root]:
                    continue
                seen[p.root].add(e.triple)
                if is_data:
                    sub.data.append(e)
                    continue
                sub.edges.append(e)
                if c.neighbour != UNKNOWN and c.neighbour not in sub.nodes:
                    sub.nodes.add(c.neighbour)
                    sub.depth = max(sub.depth, p.depth + 1)
                    nxt.append((p.root, c.neighbour))
            events.append(PropertiesJudged(
                root=p.root, node=p.node, depth=p.depth, candidates=tuple(p.candidates),
                selected=tuple(sorted(selected)), filtered_out=tuple(c.prop for c in p.removed),
                available=p.available, method=judge.method,  # type: ignore[arg-type]
                seconds=p.seconds + judge_s))
        frontier = nxt
        depth += 1
    return subs, events


def _range_class(ctx: SchemaContext, prop: IRI) -> IRI | None:
    edges = [e for e in ctx.graph.edges_of(prop) if not e.is_data]
    if edges:
        return edges[0].target
    p = ctx.ontology.property(prop)
    if p is not None:
        for r in sorted(p.ranges):
            if r in ctx.ontology.classes:
                return r
    return None
