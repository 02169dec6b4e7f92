"""Deterministic repairs of a query that came back empty (the offline agent's moves).

Each repair changes one thing, for a reason the type state, the schema index or a
bounded probe gives, and is tried in this order:

0. **a projected-only column** no answer has (``?x :depth ?d`` with ``?d`` only in the
   SELECT): it goes into ``OPTIONAL`` when a bounded ASK says the rest has rows
   (:mod:`navqa.online.saga.repair_optional`);
1. **a literal** — the stored spelling a case-insensitive probe found (``"Troll"`` →
   ``"TROLL"``), or the datatype the property holds (``true`` → ``"true"`` when
   ``npdv:isDiscoveryWellbore`` holds strings; a year compared with a date becomes
   ``YEAR(?d)``);
2. **a misplaced anchor** — a variable typed ``?x a C`` is pinned to a named entity that is
   not a C (the question's name was attached to the wrong node): the name moves to a new
   variable, joined to ``?x`` by the cheapest type-compatible path in Ga; then **another
   entity of the name** — one bounded probe finds the stored names that hold the literal
   as words and give the whole query rows ("STATOIL" → "Statoil Petroleum AS",
   :mod:`navqa.online.saga.repair_names`);
3. **a property that cannot fit** — δ(p)/ρ(p) conflicts with Θ, or the IRI templates of
   a join never unify: the edge is replaced by a type-compatible mapped alternative
   (another property, or a short path through Ga between the two variables' types);
4. **the pattern that empties the result**, found with bounded ``ASK`` probes (the
   triple patterns are added one at a time from the anchors outwards; then each earlier
   pattern is left out in turn to find the one the last contradicts): that edge, or the
   path from the answer to the named entity, is re-routed; a class is replaced by its
   nearest mapped super/subclass with instances; a data property by one of the same kind
   of value (that holds the constant, if it compares with one); and when a FILTER removes
   everything, the property it filters is swapped, then the paths re-routed. Dropping a
   FILTER is possible (``drop_filters``) but off: it would turn an empty answer into a
   wrong one.

Candidates are generated lazily; the caller executes them (within its budget) and keeps
the first that returns rows.
"""

from __future__ import annotations

import heapq
import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np

from navqa.backends.protocols import SparqlEndpoint
from navqa.errors import EndpointError, EndpointUnreachableError
from navqa.model.iri import IRI, OWL_THING, RDF_TYPE
from navqa.model.terms import SelectResult
from navqa.model.xsd import XSD_BOOLEAN, XSD_DATE, XSD_DECIMAL, XSD_INTEGER
from navqa.online.context import SchemaContext
from navqa.online.saga.diagnose import Finding, datatype_kind
from navqa.online.saga.repair_names import renamings
from navqa.online.saga.repair_optional import relax_columns
from navqa.online.saga.sparql_text import QueryText, Term, TriplePattern, literal_text
from navqa.online.saga.typestate import TypeState

log = logging.getLogger(__name__)

__all__ = ["Repair", "OfflineRepairer", "find_paths"]

MAX_HOPS = 3


@dataclass(frozen=True)
class Repair:
    """A repaired query and why."""

    sparql: str
    reason: str
    kind: str


@dataclass(frozen=True)
class Step:
    """One edge of a path through Ga, seen from the node it leaves."""

    prop: IRI
    direction: str  # "out": current node is the subject
    target: IRI


def find_paths(ctx: SchemaContext, theta: TypeState, starts: Sequence[IRI],
               goal_types: frozenset[IRI], *, goal_definite: bool, relevance: dict[IRI, float],
               avoid: frozenset[tuple[IRI, str]] = frozenset(), k: int = 3,
               max_hops: int = MAX_HOPS, like: Sequence[IRI] = (),
               class_relevance: dict[IRI, float] | None = None) -> list[list[Step]]:
    """The ``k`` cheapest paths in Ga from a start class to a node compatible with the goal.

    An edge costs ``1 + max(0, 0.6 - relevance(prop))``: properties the question talks
    about are cheap; so are properties close in meaning to the ones being replaced
    (``like``), and edges into classes the question mentions. The last node must be
    compatible with the goal's types (τ*).
    """
    tf = theta.tfilter
    like_vecs = [v for v in (ctx.vector(p) for p in like) if v is not None]
    crel = class_relevance or {}

    def edge_cost(prop: IRI, other: IRI) -> float:
        c = 1.0 + max(0.0, 0.6 - relevance.get(prop, 0.0))
        v = ctx.vector(prop)
        if like_vecs and v is not None:
            c -= 0.4 * max(0.0, max(float(v @ w) for w in like_vecs) - 0.3)
        c -= 0.3 * max(0.0, crel.get(other, 0.0) - 0.45)
        return max(c, 0.3)

    goal = tf.closure(goal_types, definite=goal_definite)
    heap: list[tuple[float, int, IRI, list[Step]]] = []
    counter = 0
    for s in starts:
        heap.append((0.0, counter, s, []))
        counter += 1
    heapq.heapify(heap)
    out: list[list[Step]] = []
    seen_paths: set[tuple[tuple[IRI, str], ...]] = set()
    expanded: dict[IRI, int] = {}
    while heap and len(out) < k:
        cost, _, node, path = heapq.heappop(heap)
        if path and node in goal:
            key = tuple((st.prop, st.direction) for st in path)
            if key not in seen_paths and not (len(path) == 1 and
                                              (path[0].prop, path[0].direction) in avoid):
                seen_paths.add(key)
                out.append(path)
            continue
        if len(path) >= max_hops:
            continue
        expanded[node] = expanded.get(node, 0) + 1
        if expanded[node] > k + 1:
            continue
        visited = {node} | {st.target for st in path}
        for n in ctx.neighbours(node, data=False):
            other = n.other
            if other == OWL_THING or other in visited or not ctx.allowed(n.edge.prop):
                continue
            if (n.edge.prop, n.direction) in avoid and len(path) == 0:
                continue
            step = edge_cost(n.edge.prop, other)
            counter += 1
            heapq.heappush(heap, (cost + step, counter, other,
                                  [*path, Step(n.edge.prop, n.direction, other)]))
    return out


class OfflineRepairer:
    """Generates repairs for one empty query (see the module docstring).

    Args:
        ctx: The schema context.
        theta: Θ, having observed the query.
        endpoint: For the bounded probes.
        relevance: Question relevance per property (S(p, W)), for ranking paths.
        class_relevance: The same per class.
        timeout: Per probe.
        drop_filters: Allow dropping a FILTER as the very last resort. Off by default:
            it turns an empty answer into a wrong one, the failure this module exists to
            avoid.
        value_answer: The question asks for a value of the answer class's entities (its
            kind is a quantity, date or text), not for the entities: a name on a node of
            that class then says which entity, and the entity's own class is tried first.
    """

    def __init__(self, ctx: SchemaContext, theta: TypeState, endpoint: SparqlEndpoint, *,
                 relevance: dict[IRI, float] | None = None,
                 class_relevance: dict[IRI, float] | None = None, timeout: float | None = 30.0,
                 drop_filters: bool = False, value_answer: bool = False) -> None:
        self.ctx = ctx
        self.value_answer = value_answer
        self.theta = theta
        self.endpoint = endpoint
        self.relevance = relevance or {}
        self.class_relevance = class_relevance or {}
        self.drop_filters = drop_filters
        self.timeout = timeout
        self.probes = 0

    # -- entry point -------------------------------------------------------------------------

    def candidates(self, sparql: str, findings: Sequence[Finding]) -> Iterator[Repair]:
        """Repairs, best first (lazily: later ones may cost probes)."""
        try:
            qt = QueryText.parse(sparql)
        except ValueError:
            return
        seen: set[str] = {sparql}

        def fresh(rs: Iterator[Repair]) -> Iterator[Repair]:
            for r in rs:
                norm = re.sub(r"\s+", " ", r.sparql).strip()
                if norm not in seen:
                    seen.add(norm)
                    yield r

        # first: a projected-only column no answer has goes into OPTIONAL (repair_optional)
        relaxed = relax_columns(qt, self.ctx.is_data_property, self.ctx.name_like_properties,
                                self._ask_text)
        if relaxed is not None:
            yield from fresh(iter([Repair(relaxed.sparql, relaxed.reason, "optional-column")]))
        for f in findings:
            if f.kind == "literal-value" and f.stored and f.triple is not None:
                tp = qt.triples[f.triple]
                lit = qt.literal(tp.o)
                new = literal_text(f.stored, lit[1] if lit else None)
                yield from fresh(iter([Repair(qt.replace_term(tp.o, new),
                                              f"use the stored form {new} ({f.message})",
                                              "literal-value")]))
        for f in findings:
            if f.kind == "literal-datatype":
                yield from fresh(self._datatype_fix(qt, f))
        yield from fresh(self._anchor_conflicts(qt))
        yield from fresh(Repair(r.sparql, r.reason, "renamed-anchor")
                         for r in renamings(qt, self._name_properties, self._select_text))
        for f in findings:
            if f.kind in ("domain-conflict", "range-conflict", "template-join") and \
                    f.triple is not None:
                tp = qt.triples[f.triple]
                yield from fresh(self._reroute_edge(qt, tp, f.message))
        yield from fresh(self._probe_repairs(qt))

    # -- literals ------------------------------------------------------------------------------

    def _datatype_fix(self, qt: QueryText, f: Finding) -> Iterator[Repair]:
        want = f.stored or ""
        if f.triple is not None:
            tp = qt.triples[f.triple]
            lit = qt.literal(tp.o)
            if lit is None:
                return
            value = lit[0]
            kind = want.split("/")[0]
            dt = (XSD_DATE if kind == "date" else XSD_BOOLEAN if kind == "boolean" else
                  (XSD_DECIMAL if "." in value else XSD_INTEGER) if kind == "number" else None)
            if want.startswith("string"):
                new = literal_text(value, None)
            elif want.startswith("boolean") and value.lower() in ("true", "false", "1", "0",
                                                                   "yes", "no"):
                new = "true" if value.lower() in ("true", "1", "yes") else "false"
            elif want.startswith("number") and re.fullmatch(r"[+-]?\d+(\.\d+)?", value):
                new = value
            elif dt is not None:
                new = literal_text(value, dt)
            else:
                return
            yield Repair(qt.replace_term(tp.o, new), f"write the literal as {want} "
                                                     f"({f.message})", "literal-datatype")
        elif f.filter is not None and f.var:
            flt = qt.filters[f.filter]
            if "date" in want:
                body = re.sub(rf"(?<![\w(]){re.escape(f.var)}(?!\w)", f"YEAR({f.var})", flt.text)
                yield Repair(qt.splice([(flt.start, flt.end, body)]),
                             f"compare the year of {f.var} ({f.message})", "literal-datatype")
            elif "string" in want:
                body = re.sub(rf"(?<![\w(]){re.escape(f.var)}(?!\w)", f"STR({f.var})", flt.text)
                yield Repair(qt.splice([(flt.start, flt.end, body)]),
                             f"compare {f.var} as a string ({f.message})", "literal-datatype")

    # -- anchors -------------------------------------------------------------------------------

    def _explicit(self, qt: QueryText) -> dict[str, set[IRI]]:
        out: dict[str, set[IRI]] = {}
        for tp in qt.triples:
            if tp.p.kind == "a" or qt.iri(tp.p) == RDF_TYPE:
                cls = qt.iri(tp.o)
                if tp.s.is_var and cls is not None:
                    out.setdefault(tp.s.text, set()).add(cls)
        return out

    def _anchor_conflicts(self, qt: QueryText) -> Iterator[Repair]:
        """``?x a C ; name "N"`` where the entity named N is not a C."""
        explicit = self._explicit(qt)
        tf = self.theta.tfilter
        for tp in qt.triples:
            prop = qt.iri(tp.p)
            lit = qt.literal(tp.o)
            if prop is None or lit is None or not tp.s.is_var or tp.s.text not in explicit:
                continue
            b = self.theta.bindings.get((prop, lit[0]))
            if b is None:
                continue
            # every entity of the name must conflict: one that is a C makes the name fit
            typed = [self.theta.entity_types(iri) for iri in b.iris]
            if not typed or not all(t and d for t, d in typed):
                continue
            if any(explicit[tp.s.text] & tf.closure(t, definite=True) for t, _ in typed):
                continue
            etypes = frozenset().union(*(t for t, _ in typed))
            # The variable's class is the question's answer type, and its entities are
            # the answer: keep it and move the name to a new node. Otherwise (or when the
            # answer is a value of the entity) the class is what was wrong: take the
            # entity's first.
            intended = bool(explicit[tp.s.text] & self.theta.answer_classes) and \
                not self.value_answer
            swaps = list(self._class_to_entity(qt, tp, etypes, lit[0]))
            if not intended:
                yield from swaps
            var = _new_var(qt, "named")
            base = qt.remove_triple(tp)
            if base is None:
                continue
            paths = find_paths(self.ctx, self.theta, sorted(explicit[tp.s.text]),
                               etypes, goal_definite=True, relevance=self.relevance, k=2,
                               class_relevance=self.class_relevance)
            for path in paths:
                q2 = QueryText.parse(base)
                group = _group_of(q2, tp.group)
                triples = _path_triples(q2, tp.s.text, var, path)
                text = f"{triples} {var} {tp.p.text} {tp.o.text} ."
                yield Repair(q2.insert_in_group(group, text),
                             f"{lit[0]!r} names a {_names(self.ctx, etypes)}, not a "
                             f"{_names(self.ctx, explicit[tp.s.text])}: join it through "
                             f"{_path_text(self.ctx, path)}", "reanchor")

            if intended:
                yield from swaps

    def _class_to_entity(self, qt: QueryText, named: TriplePattern, etypes: frozenset[IRI],
                         name: str) -> Iterator[Repair]:
        """``?x a C`` → ``?x a E`` for a named entity's (most specific) class E: first the
        classes that can carry what else the query asks of ?x, at most two."""
        var = named.s.text
        rest = [(qt.iri(t.p), "out" if t.s.text == var else "in") for t in qt.triples
                if t is not named and var in (t.s.text, t.o.text)
                and not (t.p.kind == "a" or qt.iri(t.p) == RDF_TYPE)]

        def misfits(e: IRI) -> int:
            return sum(not self.theta.tfilter.compatible([e], p, d, definite=True)
                       for p, d in rest if p is not None)

        for tp in qt.triples:
            if tp.s.text != var or not (tp.p.kind == "a" or qt.iri(tp.p) == RDF_TYPE):
                continue
            old = qt.iri(tp.o)
            for e in sorted(self.ctx.most_specific(etypes), key=lambda e: (misfits(e), e))[:2]:
                if not self.ctx.allowed(e):
                    continue
                yield Repair(qt.replace_term(tp.o, qt.term_text(e)),
                             f"{name!r} names a {self.ctx.compact(e)}: type {var} so, not as "
                             f"a {self.ctx.compact(old or '')}", "swap-class")
            return

    # -- edges ---------------------------------------------------------------------------------

    def _types(self, qt: QueryText, term: Term) -> tuple[frozenset[IRI], bool]:
        if term.is_var:
            return self.theta.of(term.text), self.theta.is_definite(term.text)
        iri = qt.iri(term)
        if iri is None:
            return frozenset(), False
        return self.theta.entity_types(iri)

    def _reroute_edge(self, qt: QueryText, tp: TriplePattern, why: str) -> Iterator[Repair]:
        """Replace one object-property edge by a type-compatible alternative (1–3 hops)."""
        prop = qt.iri(tp.p)
        if prop is None or tp.p.kind == "path" or prop == RDF_TYPE:
            return
        if self.ctx.is_data_property(prop):
            yield from self._swap_data_property(qt, tp, prop, why)
            return
        s_types, _ = self._types(qt, tp.s)
        o_types, o_def = self._types(qt, tp.o)
        if not s_types or not o_types:
            return
        base = qt.remove_triple(tp)
        if base is None:
            return
        paths = find_paths(self.ctx, self.theta, sorted(self.ctx.most_specific(s_types)),
                           o_types, goal_definite=o_def, relevance=self.relevance,
                           avoid=frozenset({(prop, "out")}), k=3, like=[prop],
                           class_relevance=self.class_relevance)
        for path in paths:
            q2 = QueryText.parse(base)
            group = _group_of(q2, tp.group)
            text = _path_triples(q2, tp.s.text, tp.o.text, path)
            yield Repair(q2.insert_in_group(group, text),
                         f"replace {self.ctx.compact(prop)} by {_path_text(self.ctx, path)} "
                         f"({why})", "swap-property" if len(path) == 1 else "reroute")

    def _swap_data_property(self, qt: QueryText, tp: TriplePattern, prop: IRI, why: str
                            ) -> Iterator[Repair]:
        """Another data property of the subject's type, of the same kind of value.

        With a constant (``?f npdv:status "Approved"``) only properties that hold that very
        value qualify (one bounded ``ASK`` each).
        """
        s_types, definite = self._types(qt, tp.s)
        if not s_types:
            return
        v = self.ctx.vector(prop)
        dt_kind = datatype_kind(self.ctx.datatype(prop))
        lit = qt.literal(tp.o)
        scored = []
        for q in self.ctx.properties:
            if q == prop or not self.ctx.allowed(q) or not self.ctx.is_data_property(q):
                continue
            if not self.theta.tfilter.index.domain(q):
                continue
            if not self.theta.tfilter.compatible(s_types, q, "out", definite=definite):
                continue
            if datatype_kind(self.ctx.datatype(q)) != dt_kind:
                continue
            w = self.ctx.vector(q)
            sim = float(v @ w) if v is not None and w is not None else 0.0
            scored.append((sim + 0.5 * self.relevance.get(q, 0.0), q))
        shown = 0
        for _, q in sorted(scored, reverse=True)[:6]:
            if shown == 2:
                break
            if lit is not None:
                probe = QueryText.parse(qt.text)
                t2 = next(t for t in probe.triples if t.index == tp.index)
                holds = self._ask(probe, [TriplePattern(t2.s, _term(qt.term_text(q)), t2.o,
                                                        t2.group, t2.index)])
                if not holds:
                    continue
            shown += 1
            yield Repair(qt.replace_term(tp.p, qt.term_text(q)),
                         f"use {self.ctx.compact(q)} instead of {self.ctx.compact(prop)} "
                         f"({why})", "swap-property")

    def _reroute_chain(self, qt: QueryText, target: str, anchor: str, why: str
                       ) -> Iterator[Repair]:
        """Replace the whole object-property chain between the answer and an anchor."""
        chain = _chain(qt, target, anchor, self.ctx)
        if not chain or len(chain) < 2:
            return
        inner = {v for tp in chain for v in (tp.s.text, tp.o.text) if tp.s.is_var} - {
            target, anchor}
        chain_ids = {tp.index for tp in chain}
        for tp in qt.triples:
            if tp.index in chain_ids:
                continue
            if (tp.s.text in inner or tp.o.text in inner) and not (
                    tp.p.kind == "a" or qt.iri(tp.p) == RDF_TYPE):
                return  # an inner node is used elsewhere: re-routing would change more
        if any(v in f.text for v in inner for f in qt.filters):
            return
        t_types = self.theta.of(target)
        a_types = self.theta.of(anchor)
        if not t_types or not a_types:
            return
        text = qt.text
        for tp in sorted((t for t in qt.triples if t.index in chain_ids or (
                t.s.text in inner and (t.p.kind == "a" or qt.iri(t.p) == RDF_TYPE))),
                key=lambda t: -t.s.start):
            q2 = QueryText.parse(text)
            match = next((x for x in q2.triples if (x.s.text, x.p.text, x.o.text) ==
                          (tp.s.text, tp.p.text, tp.o.text)), None)
            if match is None:
                return
            cut = q2.remove_triple(match)
            if cut is None:
                return
            text = cut
        onto = self.ctx.ontology
        current = [qt.iri(tp.p) or "" for tp in chain]

        def same_route(path: list[Step]) -> bool:
            # the same properties, or their sub-/super-properties, in the same order
            return len(path) == len(current) and all(
                st.prop in onto.superproperties(p) or p in onto.superproperties(st.prop)
                for st, p in zip(path, current, strict=True))

        paths = find_paths(self.ctx, self.theta, sorted(self.ctx.most_specific(t_types)),
                           a_types, goal_definite=self.theta.is_definite(anchor),
                           relevance=self.relevance, k=5,
                           class_relevance=self.class_relevance)
        for path in paths:
            if same_route(path):
                continue
            q2 = QueryText.parse(text)
            group = _group_of(q2, chain[0].group)
            yield Repair(q2.insert_in_group(group, _path_triples(q2, target, anchor, path)),
                         f"join the answer to the named entity through "
                         f"{_path_text(self.ctx, path)} instead ({why})", "reroute")

    def _swap_class(self, qt: QueryText, tp: TriplePattern, why: str) -> Iterator[Repair]:
        """The nearest mapped super- or subclasses that have instances (parents first)."""
        cls = qt.iri(tp.o)
        if cls is None:
            return
        onto = self.ctx.ontology
        index = self.theta.tfilter.index
        ent = onto.classes.get(cls)
        parents = sorted(ent.parents) if ent is not None else []
        children = sorted(c.iri for c in onto.classes.values() if cls in c.parents)
        for c in [*parents, *children]:
            if c == OWL_THING or not self.ctx.allowed(c) or not index.instance_templates(c)[0]:
                continue
            yield Repair(qt.replace_term(tp.o, qt.term_text(c)),
                         f"use the mapped class {self.ctx.compact(c)} instead of "
                         f"{self.ctx.compact(cls)} ({why})", "swap-class")

    # -- probes --------------------------------------------------------------------------------

    def _ask(self, qt: QueryText, triples: Sequence[TriplePattern], filters: Sequence[str] = ()
             ) -> bool | None:
        head = "".join(f"PREFIX {p}: <{ns}>\n" for p, ns in qt.prefixes.items())
        body = " ".join(f"{t.s.text} {t.p.text} {t.o.text} ." for t in triples)
        body += " ".join(f" {f}" for f in filters)
        return self._ask_text(f"{head}ASK {{ {body} }}")

    def _ask_text(self, query: str) -> bool | None:
        """One bounded ASK of a whole query text (``None`` when it fails)."""
        self.probes += 1
        try:
            return self.endpoint.ask(query, timeout=self.timeout).value
        except EndpointUnreachableError:
            raise
        except EndpointError as e:
            log.info("probe failed: %s", e)
            return None

    def _select_text(self, query: str) -> SelectResult | None:
        """One bounded SELECT probe (``None`` when it fails)."""
        self.probes += 1
        try:
            return self.endpoint.select(query, timeout=self.timeout)
        except EndpointUnreachableError:
            raise
        except EndpointError as e:
            log.info("probe failed: %s", e)
            return None

    def _name_properties(self, var: str) -> list[IRI]:
        """The mapped name-like properties a variable of the query may have (Θ)."""
        types, definite = self.theta.of(var), self.theta.is_definite(var)
        return [p for p in self.ctx.name_like_properties if self.ctx.allowed(p) and (
            not types or self.theta.tfilter.compatible(types, p, "out", definite=definite))]

    def _probe_repairs(self, qt: QueryText) -> Iterator[Repair]:
        """Find the patterns that empty the result, then repair around them."""
        triples = [tp for tp in qt.triples if tp.p.kind != "path"]
        if not triples or len(qt.triples) > 14:
            return
        order = _anchor_order(qt, triples)
        target = _target(qt)
        anchors = [tp.s.text for tp in triples if tp.s.is_var and tp.o.kind in
                   ("literal", "iri", "pname", "number", "boolean") and
                   not (tp.p.kind == "a" or qt.iri(tp.p) == RDF_TYPE)]
        failing: int | None = None
        for k in range(1, len(order) + 1):
            ok = self._ask(qt, order[:k])
            if ok is None:
                return
            if not ok:
                failing = k
                break
        why = "adding it to the rest of the query leaves no answer"
        if failing is not None:
            # the pattern whose addition empties the result, then every other pattern of
            # that prefix whose removal brings rows back (the two contradict each other)
            last = order[failing - 1]
            culprits = [last]
            for tp in order[:failing - 1]:
                rest = [t for t in order[:failing] if t is not tp]
                if rest and self._ask(qt, rest):
                    culprits.append(tp)
            for culprit in culprits:
                yield from self._repair_pattern(qt, culprit, target, anchors, why)
            return
        # every triple pattern matches together: a FILTER removes everything
        for f in qt.filters:
            ok = self._ask(qt, order, [f.text])
            if ok is None or ok:
                continue
            why = f"nothing passes {f.text.strip()}"
            for var in sorted(set(re.findall(r"[?$][A-Za-z0-9_]+", f.text))):
                feeding = [tp for tp in qt.triples if tp.o.text == var and
                           self.ctx.is_data_property(qt.iri(tp.p) or "")]
                for tp in feeding:
                    yield from self._swap_data_property(qt, tp, qt.iri(tp.p) or "", why)
            for tp in qt.triples:
                if tp.s.is_var and tp.o.is_var and tp.p.kind not in ("a", "path") and \
                        qt.iri(tp.p) != RDF_TYPE and not self.ctx.is_data_property(
                            qt.iri(tp.p) or ""):
                    yield from self._reroute_edge(qt, tp, why)
            for a in anchors:
                if target is not None and a != target:
                    yield from self._reroute_chain(qt, target, a, why)
            if self.drop_filters:
                yield Repair(qt.remove_filter(f), f"drop the filter: {why}", "drop-filter")
            return

    def _repair_pattern(self, qt: QueryText, culprit: TriplePattern, target: str | None,
                        anchors: list[str], why: str) -> Iterator[Repair]:
        if culprit.p.kind == "a" or qt.iri(culprit.p) == RDF_TYPE:
            yield from self._swap_class(qt, culprit, why)
            return
        prop = qt.iri(culprit.p)
        if prop is None:
            return
        if self.ctx.is_data_property(prop):
            yield from self._swap_data_property(qt, culprit, prop, why)
            return
        chains = []
        for a in anchors:
            if target is not None and a != target:
                ch = _chain(qt, target, a, self.ctx)
                if culprit in ch and len(ch) > 1:
                    chains.append(a)
        for a in chains:
            # the culprit is inside the path from the answer to a named entity: that
            # whole path is suspect, not just its one edge
            yield from self._reroute_chain(qt, target or "", a, why)
        yield from self._reroute_edge(qt, culprit, why)
        for a in anchors:
            if target is not None and a != target and a not in chains:
                yield from self._reroute_chain(qt, target, a, why)


# -- helpers -----------------------------------------------------------------------------------


def _term(text: str) -> Term:
    return Term(text, 0, 0, "iri" if text.startswith("<") else "pname")


def _names(ctx: SchemaContext, classes: frozenset[IRI] | set[IRI]) -> str:
    return "/".join(ctx.compact(c) for c in sorted(ctx.most_specific(classes)))


def _path_text(ctx: SchemaContext, path: Sequence[Step]) -> str:
    return " / ".join((ctx.compact(s.prop) if s.direction == "out" else
                       f"^{ctx.compact(s.prop)}") for s in path)


def _new_var(qt: QueryText, base: str) -> str:
    used = {v.lstrip("?$") for v in re.findall(r"[?$][A-Za-z0-9_]+", qt.text)}
    i = 1
    while f"{base}{i}" in used:
        i += 1
    return f"?{base}{i}"


def _path_triples(qt: QueryText, start: str, end: str, path: Sequence[Step]) -> str:
    """The triple patterns of a path from ``start`` to ``end`` with fresh middle variables."""
    out = []
    cur = start
    used = {v.lstrip("?$") for v in re.findall(r"[?$][A-Za-z0-9_]+", qt.text)}
    for i, st in enumerate(path):
        if i == len(path) - 1:
            nxt = end
        else:
            j = 1
            while f"via{j}" in used:
                j += 1
            used.add(f"via{j}")
            nxt = f"?via{j}"
        p = qt.term_text(st.prop)
        out.append(f"{cur} {p} {nxt} ." if st.direction == "out" else f"{nxt} {p} {cur} .")
        cur = nxt
    return " ".join(out)


def _group_of(qt: QueryText, old_group: int) -> int:
    """The group of a re-parsed text closest to an old group offset (edits shift offsets)."""
    if old_group in qt.groups:
        return old_group
    return min(qt.groups, key=lambda g: abs(g - old_group))


def _target(qt: QueryText) -> str | None:
    """The answer's node: the first variable typed with ``a``, else the first subject."""
    for tp in qt.triples:
        if (tp.p.kind == "a" or qt.iri(tp.p) == RDF_TYPE) and tp.s.is_var:
            return tp.s.text
    for tp in qt.triples:
        if tp.s.is_var:
            return tp.s.text
    return None


def _anchor_order(qt: QueryText, triples: list[TriplePattern]) -> list[TriplePattern]:
    """Triples ordered from those with constants outwards through shared variables."""
    def has_const(tp: TriplePattern) -> bool:
        return tp.o.kind in ("literal", "number", "boolean") or (
            tp.o.kind in ("iri", "pname") and not (tp.p.kind == "a" or qt.iri(tp.p) == RDF_TYPE))

    order: list[TriplePattern] = [tp for tp in triples if has_const(tp)]
    bound = {t.text for tp in order for t in (tp.s, tp.o) if t.is_var}
    rest = [tp for tp in triples if tp not in order]
    while rest:
        nxt = next((tp for tp in rest if tp.s.text in bound or tp.o.text in bound), rest[0])
        order.append(nxt)
        rest.remove(nxt)
        bound |= {t.text for t in (nxt.s, nxt.o) if t.is_var}
    return order


def _chain(qt: QueryText, start: str, end: str, ctx: SchemaContext) -> list[TriplePattern]:
    """The object-property triples on the shortest variable path from ``start`` to ``end``."""
    edges: dict[str, list[tuple[str, TriplePattern]]] = {}
    for tp in qt.triples:
        prop = qt.iri(tp.p)
        if not (tp.s.is_var and tp.o.is_var) or prop is None or prop == RDF_TYPE or \
                tp.p.kind == "path" or ctx.is_data_property(prop):
            continue
        edges.setdefault(tp.s.text, []).append((tp.o.text, tp))
        edges.setdefault(tp.o.text, []).append((tp.s.text, tp))
    prev: dict[str, tuple[str, TriplePattern] | None] = {start: None}
    todo = [start]
    while todo:
        v = todo.pop(0)
        if v == end:
            break
        for w, tp in edges.get(v, []):
            if w not in prev:
                prev[w] = (v, tp)
                todo.append(w)
    if end not in prev:
        return []
    out: list[TriplePattern] = []
    cur = end
    while prev[cur] is not None:
        v, tp = prev[cur]  # type: ignore[misc]
        out.append(tp)
        cur = v
    return out[::-1]


def relevance_of(ctx: SchemaContext, vectors: np.ndarray | None) -> dict[IRI, float]:
    """S(p, W) for every property (max cosine with the question's mention vectors)."""
    if vectors is None or len(vectors) == 0:
        return {}
    return ctx.property_scores(vectors)
