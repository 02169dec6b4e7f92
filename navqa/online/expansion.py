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
from navqa.model.iri import IRI, OWL_THING
from navqa.online.context import Neighbour, SchemaContext
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
        context: Edges :func:`complete` added for the context (grounded values' paths,
            names, properties the question names); the offline synthesizer and reranker
            read only ``edges`` and ``data``.
        context_nodes: Classes only ``context`` reaches.
    """

    root: IRI
    edges: list[Edge] = field(default_factory=list)
    data: list[Edge] = field(default_factory=list)
    depth: int = 0
    nodes: set[IRI] = field(default_factory=set)
    context: list[Edge] = field(default_factory=list)
    context_nodes: set[IRI] = field(default_factory=set)

    @property
    def all_edges(self) -> list[Edge]:
        return self.edges + self.data + self.context

    @property
    def classes(self) -> set[IRI]:
        """Every class of the subgraph, context included."""
        return self.nodes | self.context_nodes


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


# -- completing the context ------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Anchor:
    """Where a value of the question is stored: its data property and the classes holding it."""

    prop: IRI
    classes: tuple[IRI, ...]


@dataclass(frozen=True, slots=True)
class ContextRequest:
    """What the context of one question must show, besides the expanded subgraph.

    Attributes:
        anchors: Grounded values (and the nearest stored values of ungrounded ones).
        classes: Linked classes to connect to the subgraph, best first.
        relevance: Question relevance of each property (linking score, lexical included).
        lexical: Lexical evidence of each property (:func:`navqa.online.linking.lexical_score`).
        linked: The best linked properties (the linking's top, best first): each one the
            schema attaches to a class of the subgraph enters the context even when the
            judge did not follow it.
        budget: Tokens the verbalized subgraph may reach (``cost`` measures them).
        lexical_min: Lexical evidence a property needs to be added on its own.
        per_class: Data properties added per class by relevance.
        linked_k: How many of ``linked`` (the first ones) step 2 adds.
        chains: Property chains the question needs on its root and on the classes of its
            grounded values (a spatial question: the geometry and its WKT literal); the
            first one a class has is shown there.
    """

    anchors: tuple[Anchor, ...] = ()
    classes: tuple[IRI, ...] = ()
    relevance: dict[IRI, float] = field(default_factory=dict)
    lexical: dict[IRI, float] = field(default_factory=dict)
    linked: tuple[IRI, ...] = ()
    linked_k: int = 6
    chains: tuple[tuple[IRI, ...], ...] = ()
    budget: int = 1800
    lexical_min: float = 0.3
    per_class: int = 2


def complete(ctx: SchemaContext, sub: Subgraph, request: ContextRequest,
             cost: Callable[[Subgraph, Edge], int], size: int) -> Subgraph:
    """The subgraph with the context the question needs added (``sub`` is not changed).

    In order, while the verbalization (``size`` tokens so far, ``cost`` per edge) stays
    within ``request.budget`` — the grounded values always enter:

    1. each anchor: the shortest object-property path from the subgraph to a class
       holding the value, and the value's property on that class; then the first of
       ``request.chains`` that the root, and each class of a value, has;
    2. the linked classes (``request.classes``), with the path that reaches them;
    3. the best linked properties (``request.linked``) on the class the schema gives them
       (the sources of their most specific edges) when the subgraph holds it (the root
       first) or is one edge from it (with that edge); an object property brings its
       other end;
    4. the name property of every class of the subgraph, and the object properties
       between its classes;
    5. properties with lexical evidence on a class of the subgraph, data and object ones
       (an object property brings its other end), strongest evidence first, each once:
       on the root, or else on the first other class that has it;
    6. properties with strong lexical evidence elsewhere, with the path that reaches
       their class;
    7. the most relevant other data properties of each class (``per_class``).
    """
    out = Subgraph(root=sub.root, edges=list(sub.edges), data=list(sub.data), depth=sub.depth,
                   nodes=set(sub.nodes), context=list(sub.context),
                   context_nodes=set(sub.context_nodes))
    have = {e.triple for e in out.all_edges}
    have_props = {(e.source, e.prop) for e in out.all_edges}
    used = [size]

    def add(edges: Sequence[Edge], *, force: bool = False) -> bool:
        new = [e for e in edges if e.triple not in have]
        extra = sum(cost(out, e) for e in new)
        if not force and used[0] + extra > request.budget:
            return False
        for e in new:
            have.add(e.triple)
            have_props.add((e.source, e.prop))
            out.context.append(e)
            for c in (e.source, *(() if e.is_data else (e.target,))):
                if c != UNKNOWN and c not in out.classes:
                    out.context_nodes.add(c)
        used[0] += extra
        return True

    def data_edge(cls: IRI, prop: IRI) -> Edge:
        for n in ctx.neighbours(cls, data=True):
            if n.edge.prop == prop:
                return Edge(cls, prop, n.edge.target, True, n.edge.provenance)
        return Edge(cls, prop, ctx.datatype(prop, cls) or UNKNOWN, True)

    # 1. grounded values
    for a in request.anchors:
        targets = [c for c in a.classes if ctx.allowed(c)]
        if not targets or not ctx.allowed(a.prop):
            continue
        path = shortest_path(ctx, out.classes, set(targets))
        if path is None:
            continue
        end = path[-1].target if path and path[-1].target in targets else (
            path[-1].source if path else next(c for c in targets if c in out.classes))
        add([*path, data_edge(end, a.prop)], force=True)
    hosts = [out.root, *dict.fromkeys(c for a in request.anchors for c in a.classes
                                      if c in out.classes and c != out.root)]
    for cls in hosts:
        for chain in request.chains:
            edges = property_chain(ctx, cls, chain)
            if edges:
                add(edges)
                break
    # 2. the linked classes, with their path
    for cls in request.classes:
        if cls in out.classes or not ctx.allowed(cls):
            continue
        path = shortest_path(ctx, out.classes, {cls})
        if path:
            add(path)
    # 3. the best linked properties where the schema attaches them to the subgraph
    for p in request.linked[: request.linked_k]:
        if not ctx.allowed(p) or any(prop == p for _, prop in have_props):
            continue
        # on the class the schema gives it (its most specific edges), when the subgraph
        # holds that class or is one edge from it
        ends = {e.source for e in ctx.specific_edges if e.prop == p}
        path = shortest_path(ctx, out.classes, ends, max_len=1) if ends else None
        if path is None:
            continue
        end = ((out.root if out.root in ends else min(out.classes & ends)) if not path
               else path[-1].target if path[-1].target in ends else path[-1].source)
        edge = next((_anchored(end, n) for n in ctx.neighbours(end)
                     if n.edge.prop == p and n.other != OWL_THING), None)
        if edge is not None:
            add([*path, edge])
    # 4. names
    for cls in sorted(out.classes):
        name = ctx.name_property(cls)
        if name is not None and (cls, name) not in have_props:
            add([data_edge(cls, name)])
    # the object properties between classes already in the subgraph
    inside = set(out.classes)
    for cls in sorted(inside):
        for n in ctx.neighbours(cls, data=False):
            if n.direction == "out" and n.other in inside and ctx.allowed(n.edge.prop):
                add([_anchored(cls, n)])
    # 5. lexical evidence on the subgraph's classes
    lex = request.lexical
    strong = sorted((p for p, s in lex.items() if s >= request.lexical_min and ctx.allowed(p)),
                    key=lambda p: (-lex[p], p))
    # strongest evidence first, each once: on the root when it has the property, else on
    # the first other class that has it, so that the budget goes to the properties the
    # question names best rather than to copies of one on sibling classes
    order = [out.root, *sorted(out.classes - {out.root})]
    for p in strong:
        for cls in order:
            edges = [_anchored(cls, n) for n in ctx.neighbours(cls)
                     if n.edge.prop == p and n.other != OWL_THING]
            if edges:
                add(edges)
                break
    # 6. strong evidence elsewhere
    for p in strong:
        if any(prop == p for _, prop in have_props):
            continue
        ends = {e.source for e in ctx.specific_edges if e.prop == p}
        path = shortest_path(ctx, out.classes, ends) if ends else None
        if path is None:
            continue
        end = path[-1].target if path and path[-1].target in ends else (
            path[-1].source if path else next(c for c in ends if c in out.classes))
        edge = next((_anchored(end, n) for n in ctx.neighbours(end) if n.edge.prop == p), None)
        if edge is not None:
            add([*path, edge])
    # 7. the most relevant data properties of each class
    rel = request.relevance
    for cls in sorted(out.classes):
        cands = sorted((n for n in ctx.neighbours(cls, data=True)
                        if (cls, n.edge.prop) not in have_props and ctx.allowed(n.edge.prop)),
                       key=lambda n: (-rel.get(n.edge.prop, 0.0), n.edge.prop))
        for n in cands[: request.per_class]:
            add([_anchored(cls, n)])
    return out


def _anchored(node: IRI, n: Neighbour) -> Edge:
    e = n.edge
    if n.direction == "out":
        return Edge(node, e.prop, e.target, e.is_data, e.provenance)
    return Edge(e.source, e.prop, node, e.is_data, e.provenance)


def property_chain(ctx: SchemaContext, cls: IRI, chain: Sequence[IRI]) -> list[Edge] | None:
    """The edges of ``chain`` followed from ``cls`` (each step on the class the previous one
    reaches, or on a sub- or superclass of it), or ``None`` when the schema breaks it."""
    onto = ctx.ontology
    node, out = cls, []
    for i, prop in enumerate(chain):
        if not ctx.allowed(prop):
            return None
        n = next((n for n in ctx.neighbours(node) if n.direction == "out"
                  and n.edge.prop == prop), None)
        lineage = {node, *onto.superclasses(node), *onto.subclasses(node)}
        edge = _anchored(node, n) if n is not None else next(
            (e for e in ctx.specific_edges if e.prop == prop and e.source in lineage), None)
        if edge is None:
            return None
        out.append(edge)
        if i < len(chain) - 1:
            if edge.is_data:
                return None
            node = edge.target
    return out


def shortest_path(ctx: SchemaContext, start: set[IRI], goals: set[IRI],
                  max_len: int = 3) -> list[Edge] | None:
    """Fewest object-property edges from a class of ``start`` to one of ``goals``.

    ``[]`` when they meet already; ``None`` when no path of at most ``max_len`` edges
    exists. Edges are re-anchored on the classes they are reached from.
    """
    if start & goals:
        return []
    prev: dict[IRI, tuple[IRI, Edge] | None] = {s: None for s in sorted(start)}
    frontier = sorted(start)
    for _ in range(max_len):
        nxt: list[IRI] = []
        for node in frontier:
            for n in ctx.neighbours(node, data=False):
                other = n.other
                if other in prev or other == OWL_THING or not ctx.allowed(n.edge.prop):
                    continue
                prev[other] = (node, _anchored(node, n) if n.direction == "out"
                               else Edge(other, n.edge.prop, node, False, n.edge.provenance))
                if other in goals:
                    path: list[Edge] = []
                    cur: IRI = other
                    while (step := prev[cur]) is not None:
                        path.append(step[1])
                        cur = step[0]
                    return path[::-1]
                nxt.append(other)
        frontier = nxt
    return None
