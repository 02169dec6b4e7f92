"""SAGA's persistent type state Θ: what is known about the type of each entity and variable.

Θ maps an entity (``<iri>``) or a SPARQL variable (``?x``) to the classes known for it,
each update with its source:

``lookup``     an entity's classes, from its IRI template and one bounded check
               (``SELECT ?c WHERE { VALUES ?c { … } <iri> a ?c }`` over the few classes
               whose templates can produce the IRI) — never a ``?s a ?c`` scan;
``value``      a variable pinned to a named entity (``?op rail:name "Kestrel Metro"``,
               where the name was found in the data) takes that entity's classes (of
               every entity of that name, when several share it);
``pattern``    ``?x a C`` in a (partial) query;
``domain`` / ``range``  ``?x p ?y`` types ?x (?y) when the most specific class any source
               gives for p's subjects (objects) is a single one (a declared range is
               true of every object: T entails it); a union types nothing;
``result``     IRIs a query returned, typed by template (trace-local evidence);
``answer-type`` the expected answer class (the answer-type prior; a hint, never a filter).

Θ persists for the whole interaction — across the agent's steps and, in an
:class:`~navqa.online.saga.agent.AgentSession`, across questions. Variables are
re-typed when a new query mentions them (the latest query's evidence wins); entities
keep what was learnt about them. Trace-local evidence about properties whose range
(domain) the schema index does not know is kept separately (:attr:`TypeState.observed`):
it guides later steps but never overwrites the index or filters anything.

With ``enabled=False`` (the "w/o persistent type state" ablation) nothing is remembered:
every query is analysed on its own explicit ``?x a C`` patterns only.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from rdflib import Literal, URIRef, Variable

from navqa.backends.protocols import SparqlEndpoint
from navqa.errors import EndpointError, EndpointUnreachableError
from navqa.model.events import TypeStateUpdated
from navqa.model.iri import IRI, OWL_THING, RDF_TYPE
from navqa.model.terms import IRITerm, QueryResult, SelectResult
from navqa.online.context import SchemaContext
from navqa.online.saga.typefilter import TypeFilter

log = logging.getLogger(__name__)

__all__ = ["TypeState", "Binding", "bgp_triples"]

RESULT_SAMPLE = 5


@dataclass(frozen=True)
class Binding:
    """Named entities found in the data: ``prop`` of each of ``iris`` is ``value``. A name
    may be shared (a field and the discovery it came from; an airfield's area and a
    building on it), so every entity of it is kept, in the order grounding found them."""

    prop: IRI
    value: str
    iris: tuple[str, ...]


def bgp_triples(algebra: object, *, positive_only: bool = True) -> list[tuple[object, object,
                                                                             object]]:
    """The triple patterns of every BGP of a translated query (rdflib terms).

    With ``positive_only``, patterns under MINUS (and the right side of a NOT EXISTS) are
    left out: they do not type anything.
    """
    out: list[tuple[object, object, object]] = []

    def visit(node: object, skip: bool) -> None:
        if isinstance(node, dict):
            name = getattr(node, "name", "")
            if name == "BGP" and not skip:
                out.extend(node.get("triples") or ())
            for k, v in node.items():
                visit(v, skip or (positive_only and name == "Minus" and k == "p2"))
        elif isinstance(node, list | tuple):
            for v in node:
                visit(v, skip)

    visit(getattr(algebra, "algebra", algebra), False)
    return out


@dataclass
class TypeState:
    """Θ (see the module docstring).

    Args:
        ctx: The schema context.
        tfilter: The type filter (its schema index and τ* closure).
        endpoint: For the bounded entity-type checks; ``None`` types by template only.
        enabled: ``False`` for the "w/o persistent type state" ablation.
    """

    ctx: SchemaContext
    tfilter: TypeFilter
    endpoint: SparqlEndpoint | None = None
    enabled: bool = True
    timeout: float | None = 30.0
    types: dict[str, set[IRI]] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    definite: set[str] = field(default_factory=set)
    bindings: dict[tuple[IRI, str], Binding] = field(default_factory=dict)
    observed: dict[tuple[IRI, str], Counter[IRI]] = field(default_factory=dict)
    answer_classes: frozenset[IRI] = frozenset()
    log: list[tuple[str, tuple[IRI, ...], str]] = field(default_factory=list)
    _entity_cache: dict[str, frozenset[IRI]] = field(default_factory=dict)

    # -- reading ---------------------------------------------------------------------------

    def of(self, key: str) -> frozenset[IRI]:
        """Θ[key] (``?x`` or ``<iri>``)."""
        return frozenset(self.types.get(key, ()))

    def is_definite(self, key: str) -> bool:
        """Whether Θ[key] holds an entity's confirmed classes (closed upwards only)."""
        return key in self.definite

    def compatible(self, key: str, prop: IRI, direction: str = "out") -> bool:
        return self.tfilter.compatible(self.of(key), prop, direction,
                                       definite=self.is_definite(key))

    def recent(self, n: int = 5) -> list[tuple[str, tuple[IRI, ...], str]]:
        """The ``n`` most recent updates (for the controller's "Current Type Context")."""
        return self.log[-n:]

    # -- writing ---------------------------------------------------------------------------

    def add(self, key: str, classes: Iterable[IRI], source: str, *, definite: bool = False,
            replace: bool = False) -> TypeStateUpdated | None:
        """Record ``classes`` for ``key``; an event when Θ changed."""
        new = {c for c in classes if c and c != OWL_THING}
        if not new:
            return None
        cur = self.types.get(key, set())
        if replace:
            changed = new != cur
            self.types[key] = set(new)
        else:
            changed = not new <= cur
            self.types[key] = cur | new
        if definite:
            self.definite.add(key)
        if not changed:
            return None
        self.sources[key] = source
        ev = TypeStateUpdated(entity=key, types=tuple(sorted(self.types[key])), source=source)
        self.log.append((key, ev.types, source))
        return ev

    def forget_variables(self) -> None:
        """Drop every variable (entities stay); used when persistence is off."""
        for k in [k for k in self.types if k.startswith("?")]:
            self.types.pop(k, None)
            self.definite.discard(k)

    def set_answer_type(self, cls: IRI | None) -> TypeStateUpdated | None:
        """Seed Θ with the expected answer class (a ranking hint only)."""
        if cls is None:
            return None
        self.answer_classes = frozenset({cls})
        return self.add("answer", [cls], "answer-type")

    # -- entities ----------------------------------------------------------------------------

    def entity_types(self, iri: str) -> tuple[frozenset[IRI], bool]:
        """An entity's classes and whether they are confirmed (see the module docstring)."""
        if iri in self._entity_cache:
            return self._entity_cache[iri], True
        ctx = self.ctx
        cands = ctx.classes_of_iri(iri)
        if not cands:
            return frozenset(), False
        if self.endpoint is None:
            return frozenset(ctx.most_specific(cands)), False
        wanted = set(cands)
        for c in cands:
            wanted |= {s for s in ctx.ontology.subclasses(c) if ctx.allowed(s)}
        values = " ".join(f"<{c}>" for c in sorted(wanted))
        q = f"SELECT DISTINCT ?c WHERE {{ VALUES ?c {{ {values} }} <{iri}> a ?c }}"
        try:
            res = self.endpoint.select(q, timeout=self.timeout)
        except EndpointUnreachableError:
            raise
        except EndpointError as e:
            log.warning("typing %s failed (%s); using its IRI template", iri, e)
            return frozenset(ctx.most_specific(cands)), False
        found = frozenset(str(r[0]) for r in res.rows if isinstance(r[0], IRITerm))
        if not found:
            return frozenset(ctx.most_specific(cands)), False
        self._entity_cache[iri] = found
        return found, True

    def observe_entity(self, iri: str, source: str = "lookup") -> list[TypeStateUpdated]:
        """Type an entity and remember it."""
        types, definite = self.entity_types(iri)
        ev = self.add(f"<{iri}>", types, source, definite=definite)
        return [ev] if ev is not None else []

    def bind(self, prop: IRI, value: str, iri: str) -> list[TypeStateUpdated]:
        """Remember that the entity ``iri`` has ``prop`` = ``value`` (and type it); other
        entities of the same name stay bound too."""
        if not iri:
            return []
        old = self.bindings.get((prop, value))
        iris = old.iris if old is not None else ()
        if iri not in iris:
            self.bindings[(prop, value)] = Binding(prop, value, (*iris, iri))
        return self.observe_entity(iri, "lookup")

    def named_types(self, b: Binding) -> tuple[frozenset[IRI], bool]:
        """The classes an entity of the name ``b`` may have: every entity's, and whether
        they are all confirmed (a variable pinned to the name is one of them)."""
        types: set[IRI] = set()
        definite = True
        for iri in b.iris:
            t, d = self.entity_types(iri)
            types |= t
            definite = definite and d
        return frozenset(types), definite and bool(types)

    # -- queries -----------------------------------------------------------------------------

    def observe_query(self, sparql: str) -> list[TypeStateUpdated]:
        """Type the query's variables from its patterns, bindings and δ/ρ (no execution)."""
        from navqa.online.check import parse

        try:
            algebra = parse(sparql)
        except Exception:  # a query that does not parse types nothing
            return []
        triples = bgp_triples(algebra)
        evs: list[TypeStateUpdated] = []
        if not self.enabled:
            self.forget_variables()
        mentioned = {f"?{t}" for tr in triples for t in tr if isinstance(t, Variable)}
        for k in mentioned:
            self.types.pop(k, None)
            self.definite.discard(k)
        explicit: dict[str, set[IRI]] = {}
        for s, p, o in triples:
            if str(p) == RDF_TYPE and isinstance(s, Variable) and isinstance(o, URIRef):
                explicit.setdefault(f"?{s}", set()).add(str(o))
        for key, cs in explicit.items():
            ev = self.add(key, cs, "pattern")
            if ev:
                evs.append(ev)
        if not self.enabled:
            return evs
        index = self.tfilter.index
        for s, p, o in triples:
            if not isinstance(p, URIRef) or str(p) == RDF_TYPE:
                continue
            prop = str(p)
            if isinstance(s, Variable) and isinstance(o, Literal):
                b = self.bindings.get((prop, str(o)))
                if b is not None:
                    types, definite = self.named_types(b)
                    ev = self.add(f"?{s}", types, "value", definite=definite)
                    if ev:
                        evs.append(ev)
            entry = index.get(prop)
            # the most specific classes: a declared range is true of every object (T
            # entails it), a union (two classes) types nothing
            for term, side in ((s, entry.domain.shown),
                               (o, entry.range.shown if not entry.is_data else frozenset())):
                if isinstance(term, URIRef):
                    evs += self.observe_entity(str(term))
                elif isinstance(term, Variable) and len(side) == 1 and \
                        f"?{term}" not in explicit and f"?{term}" not in self.definite:
                    key = f"?{term}"
                    if not self.types.get(key):
                        ev = self.add(key, side, "domain" if term is s else "range")
                        if ev:
                            evs.append(ev)
        return evs

    def observe_result(self, sparql: str, result: QueryResult | None) -> list[TypeStateUpdated]:
        """Trace-local evidence: type the IRIs a query returned, by template."""
        if not self.enabled or not isinstance(result, SelectResult) or result.is_empty:
            return []
        from navqa.online.check import parse

        evs: list[TypeStateUpdated] = []
        seen: dict[str, Counter[IRI]] = {}
        for i, var in enumerate(result.variables):
            counts: Counter[IRI] = Counter()
            for row in result.rows[:RESULT_SAMPLE]:
                t = row[i] if i < len(row) else None
                if isinstance(t, IRITerm):
                    counts.update(self.ctx.most_specific(self.ctx.classes_of_iri(t.value)))
            if counts:
                seen[f"?{var}"] = counts
                ev = self.add(f"?{var}", counts, "result")
                if ev:
                    evs.append(ev)
        if not seen:
            return evs
        try:
            triples = bgp_triples(parse(sparql))
        except Exception:
            return evs
        index = self.tfilter.index
        for s, p, o in triples:
            if not isinstance(p, URIRef) or str(p) == RDF_TYPE:
                continue
            prop = str(p)
            for term, side, known in ((o, "range", index.range(prop)),
                                      (s, "domain", index.domain(prop))):
                if isinstance(term, Variable) and f"?{term}" in seen and not known:
                    self.observed.setdefault((prop, side), Counter()).update(seen[f"?{term}"])
        return evs

    def observed_types(self, prop: IRI, side: str) -> list[IRI]:
        """Classes seen at one side of a property in this interaction (most frequent first)."""
        c = self.observed.get((prop, side))
        return [k for k, _ in c.most_common()] if c else []

    # -- rendering ---------------------------------------------------------------------------

    def render(self, compact: Mapping[str, str] | None = None, n: int = 5) -> str:
        """Θ's most recent entries as text (``?x: rail:Station``)."""
        def name(i: IRI) -> str:
            return self.ctx.compact(i)

        lines = [f"{key}: {', '.join(name(t) for t in types)} ({src})"
                 for key, types, src in self.recent(n)]
        return "\n".join(lines) or "(nothing known yet)"


def classes_text(ctx: SchemaContext, classes: Sequence[IRI] | frozenset[IRI]) -> str:
    return ", ".join(ctx.compact(c) for c in sorted(classes)) or "unknown"
