"""Which elements Ontop's OWL 2 QL reasoning populates from the mappings.

This is navqa's one notion of "populated" (the active signature E,
:func:`navqa.offline.closure.build_active_ontology`): an element is populated when the
T-mappings Ontop 5.1.2 builds by saturating the mappings with the TBox give it at least
one mapping. The rules are those of Ontop's classified TBox, checked element by element
against a live Ontop (``tests/oracle/``):

* **Basic concepts** are named classes A and unqualified existentials ∃R, where a role R
  is a property P or its inverse P⁻ (``owl:inverseOf``, or ``[owl:inverseOf P]`` as
  ``owl:onProperty``).
* **Concept inclusions** B1 ⊑ B2 come from ``rdfs:subClassOf``, ``owl:equivalentClass``
  (both directions), ``rdfs:domain`` (∃P ⊑ A) and object-property ``rdfs:range``
  (∃P⁻ ⊑ A). A left-hand side is a named class or ``[owl:someValuesFrom owl:Thing]``
  (``rdfs:Literal`` for data properties; an unqualified existential). A right-hand side
  is a named class, a conjunction (each member), or any ``owl:someValuesFrom``
  restriction, qualified or not (A ⊑ ∃R.C entails A ⊑ ∃R). Everything else is outside
  OWL 2 QL and Ontop ignores it: a union domain or range, ∃R.C with C ≠ ⊤ on the left,
  a conjunction on the left, ``owl:allValuesFrom``, complements.
* **Role inclusions** come from ``rdfs:subPropertyOf`` and ``owl:equivalentProperty``
  (R1 ⊑ R2 gives R1⁻ ⊑ R2⁻ and ∃R1 ⊑ ∃R2), ``owl:inverseOf`` (P ≡ Q⁻) and
  ``owl:SymmetricProperty`` (P ≡ P⁻).
* **Facts**: the class and property assertions about individuals in T's root file
  (``:acme a :Company``) are data to Ontop: their classes and properties are populated
  too. Assertions in imported ontologies are not served.
* **Populated**: a mapped class or property is; a property is when a sub-role of it is
  (so the inverse of a mapped property is); ∃R is when R is; a class is when a basic
  concept below it is. An existential on the *right* (A ⊑ ∃R) does not populate R or its
  filler (Ontop's ``ontop.existentialReasoning`` is off): it only carries A up to what
  ∃R is included in (A ⊑ ∃R, ∃R ⊑ D entail A ⊑ D).

:class:`QlTBox` holds these inclusions as a graph over basic concepts and roles;
:meth:`QlTBox.populated` is reachability from the mapped terms, and
:meth:`QlTBox.dependencies` is one step of it between named elements (the closure's
Dep(e)). "Populated" is a *schema* verdict: a mapped element whose mapping SQL returns
no rows is still populated ("data-empty", reported by ``navqa audit --live``).
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from enum import Enum

from rdflib import BNode, Graph, URIRef
from rdflib.collection import Collection
from rdflib.namespace import OWL, RDF, RDFS

from navqa.model.iri import IRI
from navqa.model.ontology import EntityKind, Ontology
from navqa.offline.ontology_parser import LeanStore, is_blank, is_iri

__all__ = ["Node", "NodeKind", "QlTBox"]


class NodeKind(Enum):
    """What a node of the QL TBox graph stands for."""

    CLASS = "class"
    """A named class A."""
    ROLE = "role"
    """A property P (``inverse=False``) or its inverse P⁻."""
    EXISTS = "exists"
    """The unqualified existential ∃R of a role R."""

    # Members are singletons: hash by identity in C (Enum's own ``__hash__`` is Python code,
    # and a large TBox hashes a node, and so its kind, millions of times).
    __hash__ = object.__hash__


@dataclass(frozen=True, slots=True)
class Node:
    """A basic concept or role of the QL TBox graph."""

    kind: NodeKind
    iri: IRI
    inverse: bool = False

    def flipped(self) -> Node:
        """The same node for the inverse role (classes are their own flip)."""
        if self.kind is NodeKind.CLASS:
            return self
        return Node(self.kind, self.iri, not self.inverse)

    @property
    def named(self) -> bool:
        """Classes and roles name an element; ∃R does not."""
        return self.kind is not NodeKind.EXISTS


_THING = {OWL.Thing, RDFS.Literal}


def _seed_nodes(iri: IRI, *, is_class: bool) -> tuple[Node, ...]:
    if is_class:
        return (Node(NodeKind.CLASS, iri),)
    return tuple(Node(k, iri, inv) for k in (NodeKind.ROLE, NodeKind.EXISTS)
                 for inv in (False, True))


@dataclass
class QlTBox:
    """The OWL 2 QL inclusions Ontop reasons with, as a directed graph (see the module).

    Attributes:
        classes: The named classes of T.
        facts: The classes and properties T's own assertions about individuals use
            (``:acme a :Company``, ``:a :p :b``): Ontop serves those facts as data, so
            these are populated whatever the mappings say.
        edges: ``node -> the nodes it is included in`` (sub ⊑ super).
    """

    classes: frozenset[IRI]
    facts: frozenset[IRI] = frozenset()
    edges: dict[Node, set[Node]] = field(default_factory=lambda: defaultdict(set))

    # -- building ---------------------------------------------------------------------------

    def _add(self, sub: Node, sup: Node) -> None:
        # ``sub != sup``, reading the IRIs first (a dataclass ``__eq__`` is Python code)
        if sub.iri != sup.iri or sub.kind is not sup.kind or sub.inverse != sup.inverse:
            self.edges[sub].add(sup)
            if sub.kind is not NodeKind.CLASS and sup.kind is not NodeKind.CLASS:
                # role inclusions hold for the inverses too; so do existentials of them
                self.edges[sub.flipped()].add(sup.flipped())

    def _role(self, sub: IRI, sup: IRI, *, sup_inverse: bool = False) -> None:
        self._add(Node(NodeKind.ROLE, sub), Node(NodeKind.ROLE, sup, sup_inverse))
        self._add(Node(NodeKind.EXISTS, sub), Node(NodeKind.EXISTS, sup, sup_inverse))

    @classmethod
    def from_graph(cls, graph: Graph, ontology: Ontology, *, facts_from: Graph | None = None
                   ) -> QlTBox:
        """Read the inclusions from T's RDF graph (the axioms Ontop reads).

        Args:
            graph: T's graph, imports included.
            ontology: T, parsed from ``graph``.
            facts_from: Where T's assertions about individuals are read (default:
                ``graph``). Ontop serves those of the root ontology file only, not of
                its imports (schema.org's enumeration members under ATKIS are not served),
                so pass the root file's own graph when imports were followed.
        """
        tbox = cls(classes=frozenset(ontology.classes),
                   facts=_facts(graph if facts_from is None else facts_from, ontology))
        reader = _Reader(graph, ontology)
        edges = tbox.edges
        for s, o in _pairs(graph, RDFS.subClassOf):
            if type(s) is URIRef and type(o) is URIRef:
                # named ⊑ named, most of a large taxonomy: what lhs, rhs and _add give
                sub, sup = reader.class_node(s), reader.class_node(o)
                if sub is not None and sup is not None and sub is not sup:
                    edges[sub].add(sup)
                continue
            for lhs in reader.lhs(s):
                for rhs in reader.rhs(o):
                    tbox._add(lhs, rhs)
        for s, o in graph.subject_objects(OWL.equivalentClass):
            for a, b in ((s, o), (o, s)):
                for lhs in reader.lhs(a):
                    for rhs in reader.rhs(b):
                        tbox._add(lhs, rhs)
        for p, o in graph.subject_objects(RDFS.domain):
            for role in reader.role(p):
                for rhs in reader.rhs(o):
                    tbox._add(Node(NodeKind.EXISTS, role.iri, role.inverse), rhs)
        for p, o in graph.subject_objects(RDFS.range):
            if not isinstance(p, URIRef) or str(p) in ontology.data_properties:
                continue  # a data property's range is a datatype
            for role in reader.role(p):
                for rhs in reader.rhs(o):
                    tbox._add(Node(NodeKind.EXISTS, role.iri, not role.inverse), rhs)
        for pred in (RDFS.subPropertyOf, OWL.equivalentProperty):
            for s, o in graph.subject_objects(pred):
                pairs = [(s, o), (o, s)] if pred == OWL.equivalentProperty else [(s, o)]
                for a, b in pairs:
                    for ra in reader.role(a):
                        for rb in reader.role(b):
                            tbox._role_nodes(ra, rb)
        for s, o in graph.subject_objects(OWL.inverseOf):
            if isinstance(s, URIRef) and isinstance(o, URIRef):
                tbox._role(str(s), str(o), sup_inverse=True)
                tbox._role(str(o), str(s), sup_inverse=True)
        for s in graph.subjects(RDF.type, OWL.SymmetricProperty):
            if isinstance(s, URIRef):
                tbox._role(str(s), str(s), sup_inverse=True)
        return tbox

    def _role_nodes(self, sub: Node, sup: Node) -> None:
        """``sub ⊑ sup`` for two role nodes (either may be an inverse)."""
        self._add(sub, sup)
        self._add(Node(NodeKind.EXISTS, sub.iri, sub.inverse),
                  Node(NodeKind.EXISTS, sup.iri, sup.inverse))

    @classmethod
    def from_ontology(cls, ontology: Ontology) -> QlTBox:
        """The inclusions the parsed :class:`Ontology` records (when T's graph is not at
        hand): stated superclasses and equivalents, super- and equivalent properties,
        inverses, domains and object-property ranges. Restrictions and general class
        inclusions are not in the model, and union members of a domain or range are not
        told apart from single classes there, so :meth:`from_graph` is the exact one."""
        tbox = cls(classes=frozenset(ontology.classes))
        for c in ontology.classes.values():
            for d in c.parents | c.equivalents:
                tbox._add(Node(NodeKind.CLASS, c.iri), Node(NodeKind.CLASS, d))
            for d in c.equivalents:
                tbox._add(Node(NodeKind.CLASS, d), Node(NodeKind.CLASS, c.iri))
        for p in ontology.properties.values():
            for q in p.parents | p.equivalents:
                tbox._role(p.iri, q)
            for q in p.equivalents:
                tbox._role(q, p.iri)
            for q in p.inverses:
                tbox._role(p.iri, q, sup_inverse=True)
                tbox._role(q, p.iri, sup_inverse=True)
            for d in p.domains:
                tbox._add(Node(NodeKind.EXISTS, p.iri), Node(NodeKind.CLASS, d))
            if p.kind is EntityKind.OBJECT_PROPERTY:
                for r in p.ranges:
                    tbox._add(Node(NodeKind.EXISTS, p.iri, True), Node(NodeKind.CLASS, r))
        return tbox

    # -- reasoning ---------------------------------------------------------------------------

    def _start(self, iri: IRI) -> tuple[Node, ...]:
        return _seed_nodes(iri, is_class=iri in self.classes)

    def _reach(self, start: Iterable[Node], *, stop: frozenset[Node] | None = None
               ) -> set[Node]:
        """Nodes reachable from ``start``; with ``stop``, named nodes and the nodes in
        ``stop`` are reached but not expanded."""
        seen: set[Node] = set(start)
        todo = deque(seen)
        while todo:
            n = todo.popleft()
            succ = set(self.edges.get(n, ()))
            if n.kind is NodeKind.ROLE:
                succ.add(Node(NodeKind.EXISTS, n.iri, n.inverse))  # R populated → ∃R
            for m in succ:
                if m in seen:
                    continue
                seen.add(m)
                if stop is None or not (m.named or m in stop):
                    todo.append(m)
        return seen

    def populated(self, seeds: Iterable[IRI], *, facts: bool = True) -> frozenset[IRI]:
        """The classes and properties Ontop populates when ``seeds`` are mapped.

        Args:
            seeds: The mapped terms (classes and properties used in mapping targets).
            facts: Seed :attr:`facts` as well (what Ontop does); ``False`` gives what
                ``seeds`` alone populate.

        Returns:
            Every named class and property that gets a T-mapping, the seeds and
            :attr:`facts` included.
        """
        start = [n for s in {*seeds, *(self.facts if facts else ())} for n in self._start(s)]
        return frozenset(n.iri for n in self._reach(start) if n.named)

    def dependencies(self, iri: IRI) -> frozenset[IRI]:
        """Dep(e): the named elements one step above ``iri`` (through unnamed ∃R nodes).

        The stated superclasses and equivalents of a class, and the classes an
        existential above it is included in (``A ⊑ ∃q``, ``∃q ⊑ D``: D); the super-,
        equivalent and inverse properties of a property, and the classes its
        existentials are included in (domains, object-property ranges). Closing the
        seeds under :meth:`dependencies` gives :meth:`populated`.
        """
        start = self._start(iri)
        # ∃Q of a role Q one step up is Q's own business: Q's step expands it
        roles = {m for n in start if n.kind is NodeKind.ROLE
                 for m in self.edges.get(n, ()) if m.kind is NodeKind.ROLE}
        stop = frozenset(Node(NodeKind.EXISTS, r.iri, r.inverse) for r in roles)
        reached = self._reach(start, stop=stop)
        return frozenset(n.iri for n in reached if n.named and n not in start) - {iri}


def _facts(graph: Graph, ontology: Ontology) -> frozenset[IRI]:
    """The declared classes and properties used by T's assertions about individuals."""
    classes = frozenset(ontology.classes)
    props = frozenset(ontology.object_properties) | frozenset(ontology.data_properties)
    elements = classes | props
    out: set[IRI] = set()
    is_class: dict[object, bool] = {}  # per type object (a few distinct ones)
    for s, o in _pairs(graph, RDF.type):
        of_class = is_class.get(o)
        if of_class is None:
            # str(): an rdflib term never equals a plain str
            of_class = is_class[o] = str(o) in classes
        if of_class and is_iri(s) and str(s) not in elements:
            out.add(str(o))
    for p in props:
        for s in graph.subjects(URIRef(p), None):
            if isinstance(s, URIRef) and str(s) not in elements:
                out.add(p)
                break
    return frozenset(out)


def _pairs(graph: Graph, p: URIRef) -> Iterator[tuple[object, object]]:
    """``graph.subject_objects(p)``, straight from a LeanStore's index when it is one."""
    store = graph.store
    if not isinstance(store, LeanStore):
        yield from graph.subject_objects(p)
        return
    for s, objs in store.by_predicate().get(p, {}).items():
        for o in objs:
            yield s, o


class _Reader:
    """Turns class and property expressions of T's graph into basic nodes."""

    def __init__(self, graph: Graph, ontology: Ontology) -> None:
        self.g = graph
        self.classes = frozenset(ontology.classes)
        self.data = frozenset(ontology.data_properties)
        self._class_nodes: dict[str, Node] = {}  # one node per class (fewer objects)

    def class_node(self, expr: URIRef) -> Node | None:
        """The node of a named class of T (one object per class), else ``None``."""
        iri = str(expr)
        n = self._class_nodes.get(iri)
        if n is None:
            if iri not in self.classes:
                return None
            n = self._class_nodes[iri] = Node(NodeKind.CLASS, iri)
        return n

    def _class(self, expr: URIRef) -> list[Node]:
        n = self.class_node(expr)
        return [] if n is None else [n]

    def _list(self, node: BNode, p: URIRef) -> Iterator[object]:
        for head in self.g.objects(node, p):
            if isinstance(head, BNode | URIRef):
                yield from Collection(self.g, head)

    def role(self, expr: object) -> list[Node]:
        """A property IRI or ``[owl:inverseOf P]``."""
        if isinstance(expr, URIRef):
            return [Node(NodeKind.ROLE, str(expr))]
        if isinstance(expr, BNode):
            return [Node(NodeKind.ROLE, str(p), True) for p in self.g.objects(expr, OWL.inverseOf)
                    if isinstance(p, URIRef)]
        return []

    def _exists(self, node: BNode, *, qualified_ok: bool) -> list[Node]:
        fillers = list(self.g.objects(node, OWL.someValuesFrom))
        if not fillers:
            return []
        if not qualified_ok and any(f not in _THING for f in fillers):
            return []
        return [Node(NodeKind.EXISTS, r.iri, r.inverse)
                for prop in self.g.objects(node, OWL.onProperty) for r in self.role(prop)]

    def lhs(self, expr: object) -> list[Node]:
        """Basic concepts allowed on the left of an inclusion (QL: A or ∃R)."""
        if is_iri(expr):
            return self._class(expr)  # type: ignore[arg-type]
        if is_blank(expr):
            return self._exists(expr, qualified_ok=False)  # type: ignore[arg-type]
        return []

    def rhs(self, expr: object) -> list[Node]:
        """What an expression on the right of an inclusion puts its left side under."""
        if is_iri(expr):
            return self._class(expr)  # type: ignore[arg-type]
        if not is_blank(expr):
            return []
        out = self._exists(expr, qualified_ok=True)  # type: ignore[arg-type]
        for member in self._list(expr, OWL.intersectionOf):  # type: ignore[arg-type]
            out += self.rhs(member)
        return out
