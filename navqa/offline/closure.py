"""The active ontology Ta (NaVQA §3.1): close the mapped terms under stated dependencies.

Rule (see ``docs/active-ontology.md``):

* **Seeds** E0: every class and property used in a mapping target
  (:meth:`~navqa.model.mapping.MappingSet.signature`).
* **Dep(e)** for a class e: its directly stated *named* superclasses
  (``e rdfs:subClassOf D``) and the named classes stated equivalent to it
  (``e owl:equivalentClass D`` states ``e ⊑ D`` as well). Named classes that only occur
  inside a superclass *expression* (``e ⊑ ∃p.D``, ``e ⊑ A ⊓ ∃p.D``) are not superclasses of
  e and do not count; neither do disjoint classes.
* **Dep(e)** for a property e: its directly stated super-properties and equivalent
  properties, the classes of its ``rdfs:domain`` axioms, and — for object properties — the
  classes of its ``rdfs:range`` axioms (``owl:unionOf`` members included). Data-property
  ranges are datatypes, not elements. ``owl:inverseOf`` partners are not super-properties
  and do not count.
* E_{k+1} = E_k ∪ ⋃_{e ∈ E_k} Dep(e), restricted to terms T declares, until nothing is
  added. Seeds T does not declare stay in E (audits report them) but have no Dep.

**Ta, restricted to E** (:func:`restrict_to_signature`): T's RDF graph is cut into axioms —
a triple with an IRI subject together with the blank-node structure hanging off its object,
or a blank-node structure nobody points to (``owl:AllDisjointClasses``, SWRL rules, axiom
annotations). An axiom is kept when every *element* it mentions is active. Elements are
T's declared classes, object and data properties, plus its named individuals (IRIs typed
``owl:NamedIndividual`` or by a declared class); an individual is active when one of its
asserted types is in E. Annotation triples about active elements are therefore kept;
triples that mention no element (the ontology header, annotation-property declarations)
are kept too, since their signature is trivially included in E.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from rdflib import BNode, Graph, URIRef
from rdflib.namespace import OWL, RDF, RDFS
from rdflib.term import Node

from navqa.model.active import ActiveOntology, ActiveStats, ClosureStep
from navqa.model.iri import IRI
from navqa.model.mapping import MappingSet
from navqa.model.ontology import Ontology
from navqa.offline.entailment import QlTBox
from navqa.offline.ontology_parser import LeanStore, is_blank, is_iri, read_ontology_graph

logger = logging.getLogger(__name__)

__all__ = [
    "KIND_KEYS",
    "TaCounts",
    "build_active_ontology",
    "close",
    "count_by_kind",
    "dependencies",
    "load_ontology_graph",
    "ql_tbox",
    "restrict_to_signature",
]

KIND_KEYS: tuple[str, ...] = (
    "class",
    "object_property",
    "data_property",
    "annotation_property",
    "other",
)
"""Keys of the per-kind counts in :class:`~navqa.model.active.ActiveStats` (``other``:
terms the ontology does not declare)."""


# -- the closure ----------------------------------------------------------------------------


def dependencies(ontology: Ontology, iri: IRI, *, tbox: QlTBox | None = None,
                 signature: frozenset[IRI] | None = None) -> frozenset[IRI]:
    """Dep(e): the terms ``iri`` directly depends on, per Ontop's OWL 2 QL inclusions.

    One step of :meth:`~navqa.offline.entailment.QlTBox.populated` between named elements
    (through unnamed existentials ∃R): stated superclasses and equivalents of a class, the
    classes an existential it is included in (``A ⊑ ∃p``) is included in; the super-,
    equivalent and inverse properties of a property, its domain classes and (object
    properties) range classes. Only terms the ontology declares are returned.

    Args:
        ontology: The full ontology T.
        iri: A class or property IRI.
        tbox: T's QL inclusions (:meth:`QlTBox.from_graph`); default: those the parsed
            ontology records (:meth:`QlTBox.from_ontology`).
        signature: ``ontology.signature``, when the caller has it (it is recomputed on
            every access; a closure asks once per element).
    """
    tb = tbox if tbox is not None else QlTBox.from_ontology(ontology)
    declared = ontology.signature if signature is None else signature
    return frozenset(x for x in tb.dependencies(iri) if x in declared and x != iri)


def close(
    ontology: Ontology, seeds: Iterable[IRI], *, tbox: QlTBox | None = None
) -> tuple[frozenset[IRI], tuple[ClosureStep, ...]]:
    """Close ``seeds`` under :func:`dependencies` until a fixpoint.

    Args:
        ontology: The full ontology T.
        seeds: E0.
        tbox: T's QL inclusions (see :func:`dependencies`).

    Returns:
        ``(E, steps)``: the fixpoint, and one :class:`ClosureStep` per iteration
        k = 1, 2, … holding what iteration k added. The last step adds nothing (it is the
        check that the fixpoint is reached), so ``len(steps) >= 1``.
    """
    tb = tbox if tbox is not None else QlTBox.from_ontology(ontology)
    current: set[IRI] = set(seeds)
    frontier: set[IRI] = set(current)
    declared = ontology.signature
    steps: list[ClosureStep] = []
    k = 0
    while True:
        k += 1
        added: set[IRI] = set()
        for e in frontier:
            added |= dependencies(ontology, e, tbox=tb, signature=declared)
        added -= current
        steps.append(ClosureStep(step=k, added=frozenset(added)))
        if not added:
            break
        current |= added
        frontier = added
    return frozenset(current), tuple(steps)


def count_by_kind(ontology: Ontology, iris: Iterable[IRI]) -> dict[str, int]:
    """How many of ``iris`` are classes, object/data/annotation properties, or undeclared."""
    counts = dict.fromkeys(KIND_KEYS, 0)
    for i in iris:
        kind = ontology.kind(i)
        counts[str(kind) if kind is not None else "other"] += 1
    return counts


def build_active_ontology(
    ontology: Ontology,
    mappings: MappingSet,
    *,
    graph: Graph | None = None,
) -> ActiveOntology:
    """Compute the active ontology Ta of a VKG.

    Args:
        ontology: The full ontology T.
        mappings: The mappings M; their target terms are the seeds E0.
        graph: T's RDF graph, for the triple and axiom counts of Ta. When ``None`` it is
            re-read from ``ontology.source`` (with its followed imports); when that is
            not possible either, the counts are those of an empty graph and a warning
            is logged.

    Returns:
        The active ontology, with its closure steps and :class:`ActiveStats`.
    """
    seeds = mappings.signature()
    if graph is None:
        graph = _graph_for(ontology)
    tbox = ql_tbox(ontology, graph)
    # T's own assertions about individuals are data to Ontop: they seed E as well
    facts = tbox.facts
    signature, steps = close(ontology, seeds | facts, tbox=tbox)
    via = _via(tbox, seeds | facts, signature - seeds)
    del tbox  # one node and set per class of a large T: free it before counting Ta
    declared_sig = ontology.signature
    counts = restrict_to_signature(graph, declared_sig, signature)
    stats = ActiveStats(
        seeds=count_by_kind(ontology, seeds),
        active=count_by_kind(ontology, signature),
        steps=len(steps),
        full_triples=counts.full_triples,
        active_triples=counts.active_triples,
        full_axioms=counts.full_axioms,
        active_axioms=counts.active_axioms,
    )
    declared = declared_sig | frozenset(ontology.annotation_properties)
    return ActiveOntology(
        ontology=ontology,
        mapped=seeds,
        signature=signature,
        steps=steps,
        stats=stats,
        undeclared_mapped=frozenset(s for s in seeds if s not in declared),
        via=via,
    )


def ql_tbox(ontology: Ontology, graph: Graph) -> QlTBox:
    """T's OWL 2 QL inclusions as Ontop reasons with them (:class:`QlTBox`).

    Args:
        ontology: T.
        graph: T's RDF graph (imports included when they were followed); when empty,
            the inclusions the parsed ontology records are used.
    """
    if not len(graph):
        return QlTBox.from_ontology(ontology)
    facts_from = None
    if ontology.imports and ontology.source is not None and Path(ontology.source).is_file():
        facts_from = load_ontology_graph(Path(ontology.source))  # Ontop: root-file facts only
    return QlTBox.from_graph(graph, ontology, facts_from=facts_from)


def _via(tbox: QlTBox, seeds: Iterable[IRI], targets: frozenset[IRI]
         ) -> dict[IRI, frozenset[IRI]]:
    """For each target, the seeds whose population reaches it."""
    out: dict[IRI, set[IRI]] = {t: set() for t in targets}
    for s in seeds:
        for e in tbox.populated([s], facts=False):
            if e in out and e != s:
                out[e].add(s)
    return {t: frozenset(v) for t, v in out.items()}


# -- Ta: T restricted to the signature ------------------------------------------------------

#: Predicates whose triples (with their blank-node structure) are logical axioms.
_LOGICAL_PREDICATES = frozenset(
    {
        RDFS.subClassOf,
        RDFS.subPropertyOf,
        RDFS.domain,
        RDFS.range,
        OWL.equivalentClass,
        OWL.equivalentProperty,
        OWL.disjointWith,
        OWL.inverseOf,
        OWL.propertyDisjointWith,
        OWL.propertyChainAxiom,
        OWL.hasKey,
        OWL.disjointUnionOf,
        OWL.sameAs,
        OWL.differentFrom,
    }
)
#: ``rdf:type`` objects that make a characteristic (logical) axiom, not a declaration.
_CHARACTERISTICS = frozenset(
    {
        OWL.FunctionalProperty,
        OWL.InverseFunctionalProperty,
        OWL.TransitiveProperty,
        OWL.SymmetricProperty,
        OWL.AsymmetricProperty,
        OWL.ReflexiveProperty,
        OWL.IrreflexiveProperty,
    }
)
#: ``rdf:type`` objects of blank-node roots that are logical axioms (n-ary disjointness,
#: negative assertions, SWRL rules).
_LOGICAL_ROOT_TYPES = frozenset(
    {
        OWL.AllDisjointClasses,
        OWL.AllDisjointProperties,
        OWL.AllDifferent,
        OWL.NegativePropertyAssertion,
        URIRef("http://www.w3.org/2003/11/swrl#Imp"),
    }
)
#: ``rdf:type`` objects that declare an entity (declaration axioms, not logical ones).
_DECLARATION_TYPES = frozenset(
    {
        OWL.Class,
        RDFS.Class,
        OWL.ObjectProperty,
        OWL.DatatypeProperty,
        OWL.AnnotationProperty,
        OWL.NamedIndividual,
        RDFS.Datatype,
        OWL.Ontology,
        RDF.Property,
    }
)


@dataclass(frozen=True, slots=True)
class TaCounts:
    """Sizes of T and of Ta (see :func:`restrict_to_signature`).

    Attributes:
        full_triples: Distinct triples of T's graph.
        active_triples: Triples of T kept in Ta.
        full_axioms: Logical axioms of T (sub-class/property, equivalence, disjointness,
            domain, range, inverse, characteristics, keys, chains, SWRL rules, class and
            property assertions about individuals).
        active_axioms: Logical axioms of Ta.
        dropped_elements: How often each non-active element caused an axiom to be dropped
            (for reports: which unmapped terms carry most of T).
    """

    full_triples: int
    active_triples: int
    full_axioms: int
    active_axioms: int
    dropped_elements: Mapping[IRI, int]


def restrict_to_signature(
    graph: Graph, elements: Iterable[IRI], signature: Iterable[IRI]
) -> TaCounts:
    """Count the triples and logical axioms of T that survive restriction to ``signature``.

    The graph is cut into *axioms*: each triple whose subject is an IRI, together with
    every triple reachable from its object through blank nodes; and each blank node that
    is no triple's object, together with everything reachable from it. An axiom is kept
    when every element in it is active. Elements are ``elements`` (T's declared classes,
    object and data properties) and T's named individuals (IRIs typed
    ``owl:NamedIndividual`` or typed by an element); an individual is active when one of
    its asserted types is in ``signature``. A blank-node triple shared by several axioms
    is kept when any of them is. This is the one counting rule; see
    ``docs/active-ontology.md`` for the figures it gives.

    Args:
        graph: T's RDF graph.
        elements: The IRIs that count as ontology elements (``Ontology.signature``).
        signature: The active signature E.

    Returns:
        The counts; ``full_*`` are computed with the same axiom split.
    """
    store = graph.store
    lean = store if isinstance(store, LeanStore) else None
    # the store's own term objects: set look-ups then hit by identity (rdflib's __eq__ is slow)
    node = lean.node if lean is not None else URIRef
    # {predicate: {subject: [objects]}}: a LeanStore's own index, else grouped here
    groups = lean.by_predicate() if lean is not None else _group_by_predicate(graph)
    elem, keep = _individuals(groups, frozenset(node(e) for e in elements),
                              frozenset(node(e) for e in signature), node)
    by_subject: dict[BNode, list[tuple[object, object, object]]] = {}
    referenced: set[BNode] = set()
    roots: list[tuple[tuple[object, object, object], ...]] = []
    to_blank: list[tuple[object, object, object]] = []  # IRI subject, blank-node object

    def structure(start: Iterable[BNode]) -> list[tuple[object, object, object]]:
        out: list[tuple[object, object, object]] = []
        seen: set[BNode] = set()
        todo = list(start)
        while todo:
            b = todo.pop()
            if b in seen:
                continue
            seen.add(b)
            for t in by_subject.get(b, ()):
                out.append(t)
                if is_blank(t[2]):
                    todo.append(t[2])  # type: ignore[arg-type]
        return out

    kept: set[tuple[object, object, object]] = set()  # triples of blank-node structures
    kept_roots = 0  # kept triples with an IRI subject: each is in one axiom only
    full_axioms = active_axioms = 0
    dropped_nodes: dict[object, int] = {}
    rdf_type = node(str(RDF.type))
    characteristics = frozenset(node(str(x)) for x in _CHARACTERISTICS)
    declarations = frozenset(node(str(x)) for x in _DECLARATION_TYPES)

    def count(axiom: tuple[tuple[object, object, object], ...], missing: Collection[object]
              ) -> None:
        nonlocal full_axioms, active_axioms, kept_roots
        logical = _is_logical(axiom, elem)
        full_axioms += logical
        if missing:
            for m in missing:
                dropped_nodes[m] = dropped_nodes.get(m, 0) + 1
            return
        active_axioms += logical
        if axiom and not is_blank(axiom[0][0]):
            kept_roots += 1
            kept.update(axiom[1:])
        else:
            kept.update(axiom)

    # One pass over the triples, a predicate at a time: what depends on the predicate (is
    # it logical, an inactive element) is decided once for all its triples. A triple with
    # an IRI subject and no blank node, the common case of a large ontology, is one axiom
    # and is counted here directly (as :func:`count` would).
    for p, by_s in groups.items():
        p_type = p == rdf_type
        # (a property assertion between individuals is logical too)
        p_logical = p in _LOGICAL_PREDICATES or (not p_type and p in elem)
        p_missing = p in elem and p not in keep
        for s, objs in by_s.items():
            if is_blank(s):
                triples = by_subject.setdefault(s, [])  # type: ignore[arg-type]
                for o in objs:
                    triples.append((s, p, o))
                    if is_blank(o):
                        referenced.add(o)  # type: ignore[arg-type]
                continue
            s_missing = s in elem and s not in keep
            for o in objs:
                if is_blank(o):
                    referenced.add(o)  # type: ignore[arg-type]
                    to_blank.append((s, p, o))
                    continue
                logical = p_logical or (p_type and (
                    o in characteristics or (o not in declarations and o in elem)))
                full_axioms += logical
                o_missing = is_iri(o) and o in elem and o not in keep
                if s_missing or p_missing or o_missing:
                    for m in {x for x, gone in ((s, s_missing), (p, p_missing),
                                                (o, o_missing)) if gone}:
                        dropped_nodes[m] = dropped_nodes.get(m, 0) + 1
                    continue
                active_axioms += logical
                kept_roots += 1
    for t in to_blank:
        roots.append((t, *structure([t[2]])))  # type: ignore[list-item]
    for b in by_subject:
        if b not in referenced:
            roots.append(tuple(structure([b])))
    # Blank nodes only reachable from each other (a cycle with no root): one axiom each.
    covered = {t for axiom in roots for t in axiom if is_blank(t[0])}
    for b, triples in by_subject.items():
        if triples[0] not in covered:
            component = structure([b])
            covered.update(component)
            roots.append(tuple(component))

    for axiom in roots:
        named = {x for t in axiom for x in t if is_iri(x) and x in elem}
        count(axiom, named - keep)
    dropped: Counter[IRI] = Counter()
    for term, times in dropped_nodes.items():
        dropped[str(term)] += times
    return TaCounts(
        full_triples=len(graph),
        active_triples=kept_roots + len(kept),
        full_axioms=full_axioms,
        active_axioms=active_axioms,
        dropped_elements=dict(dropped),
    )


def _individuals(
    groups: Mapping[Node, Mapping[Node, list[Node]]],
    elements: frozenset[URIRef],
    signature: frozenset[URIRef],
    node: Callable[[str], URIRef],
) -> tuple[frozenset[URIRef], frozenset[URIRef]]:
    """Add T's named individuals to the elements, and the active ones to the signature.

    An individual is an IRI typed ``owl:NamedIndividual`` or typed by a declared class;
    it is active when one of its asserted types is in the signature. ``groups`` holds T's
    triples as ``{predicate: {subject: [objects]}}``.
    """
    individuals: set[URIRef] = set()
    active: set[URIRef] = set()
    named_individual = node(str(OWL.NamedIndividual))
    for s, objs in groups.get(node(str(RDF.type)), {}).items():
        if not is_iri(s) or s in elements:
            continue
        for o in objs:
            if o == named_individual or o in elements:
                individuals.add(s)  # type: ignore[arg-type]
            if o in signature:
                active.add(s)  # type: ignore[arg-type]
    return elements | individuals, signature | (active & individuals)


def _group_by_predicate(graph: Graph) -> dict[Node, dict[Node, list[Node]]]:
    """T's triples as ``{predicate: {subject: [objects]}}`` (what a LeanStore keeps)."""
    out: dict[Node, dict[Node, list[Node]]] = {}
    for s, p, o in graph:
        out.setdefault(p, {}).setdefault(s, []).append(o)
    return out


def _is_logical(axiom: tuple[tuple[object, object, object], ...], elements: frozenset) -> bool:
    """Whether an axiom (its root triple first) is a logical axiom rather than a
    declaration or an annotation."""
    if not axiom:
        return False
    s, p, o = axiom[0]
    if is_blank(s):
        # A blank-node root: a logical axiom when it is typed as one, or is a general
        # class inclusion (``[ ... ] rdfs:subClassOf C``).
        return any(
            (pp == RDF.type and oo in _LOGICAL_ROOT_TYPES)
            or (ss == s and pp in _LOGICAL_PREDICATES)
            for ss, pp, oo in axiom
        )
    if p in _LOGICAL_PREDICATES:
        return True
    if p == RDF.type:
        if o in _CHARACTERISTICS:
            return True
        # A class assertion about an individual (``ind rdf:type C``, C a declared class).
        return o not in _DECLARATION_TYPES and o in elements
    # An object or data property assertion between individuals.
    return p in elements


# -- reading T's graph ----------------------------------------------------------------------


def load_ontology_graph(
    path: Path, *, catalog: Path | None = None, follow_imports: bool = False
) -> Graph:
    """Read an ontology file (and, optionally, its imports) into one rdflib graph.

    A shortcut for ``read_ontology_graph(...).graph``: the same syntax sniffing and import
    resolution as the ontology parser (an OASIS catalog, or ``file:`` IRIs; never the
    network).

    Raises:
        OntologyParseError: a file is missing or is not RDF.
    """
    return read_ontology_graph(
        Path(path), catalog=catalog, follow_imports=follow_imports
    ).graph


def _graph_for(ontology: Ontology) -> Graph:
    """T's graph re-read from ``ontology.source`` (with the imports that were followed)."""
    if ontology.source is None or not Path(ontology.source).is_file():
        logger.warning("ontology has no source file: Ta triple counts are not computed")
        return Graph()
    graph = load_ontology_graph(Path(ontology.source))
    if ontology.imports:
        logger.warning(
            "%s: Ta counts cover the main file only; pass graph= to include its imports",
            ontology.source,
        )
    return graph
