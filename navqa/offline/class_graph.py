"""Build the class graph Ga (NaVQA §3.2) over the active ontology, with edge provenance.

Three sources of edges, each recorded in :attr:`~navqa.model.graph.Edge.provenance`
(an edge found by several sources keeps all of them):

``declared``
    An active object property p with ``rdfs:domain`` c1 and ``rdfs:range`` c2 stated on p
    itself gives ⟨c1, p, c2⟩ (union members count as stated classes).
``entailed``
    The domain and range Ta entails through the property hierarchy: those stated on a
    super-property of p, and the range (domain) stated on a property declared
    ``owl:inverseOf`` p (or of one of its super-properties) as p's domain (range). An
    edge whose two ends are not both stated on p itself is ``entailed``.
    Subclasses of the domain are **not** expanded into edges (⟨c1', p, c2⟩ for every
    c1' ⊑ c1 would multiply the graph by the depth of the hierarchy; the online stage
    walks :meth:`~navqa.model.ontology.Ontology.superclasses` instead), and neither are
    superclasses (owl:Thing is entailed for every property and tells nothing).
    When only one end is known from the ontology there is no ontology edge; the
    mappings may still type the property.
``mapping-template``
    The IRI templates of the mappings: if the subject template key of an atom of p
    equals the subject template key of some class C's atoms, p leaves C; if its object
    template key equals the subject template key of a class D, p arrives at D. Each
    such pair gives ⟨C, p, D⟩.

Data properties give edges ⟨c, p, datatype⟩: c from the same three sources, the datatype
from p's stated range, else from the datatypes of its mapping literals (``rdf:langString``
for language-tagged ones), else ``rdfs:Literal``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from navqa.model.active import ActiveOntology
from navqa.model.graph import ClassGraph, Edge, EdgeSource
from navqa.model.iri import IRI, OWL_THING, RDF, RDFS
from navqa.model.mapping import MappingSet, TermMap, TermType
from navqa.model.ontology import Ontology
from navqa.model.template import IriTemplate

__all__ = [
    "TypingStats",
    "active_object_properties",
    "build_class_graph",
    "class_templates",
    "row_superclasses",
    "template_classes",
    "typing_stats",
]

RDFS_LITERAL = RDFS + "Literal"
RDF_LANGSTRING = RDF + "langString"

_Key = tuple[IRI, IRI, IRI, bool]


def class_templates(mappings: MappingSet, classes: Iterable[IRI]) -> dict[str, set[IRI]]:
    """Subject template key → the classes whose mapping atoms use it.

    Args:
        mappings: The mappings.
        classes: Which classes to consider (the active ones).
    """
    wanted = frozenset(classes)
    out: dict[str, set[IRI]] = defaultdict(set)
    for _, atom in mappings.atoms():
        if atom.is_class and atom.predicate in wanted:
            tpl = atom.subject.template
            if tpl is not None:
                out[tpl.key].add(atom.predicate)
    return dict(out)


def template_classes(onto: Ontology, by_key: dict[str, set[IRI]]) -> dict[str, set[IRI]]:
    """The class an IRI template stands for: the most specific common superclass.

    Many classes often share one template (NPD maps 21 kinds of wellbore, all with
    ``…/wellbore/{}``): a property whose subject has that template leaves their least
    common subsumer (``Wellbore``), not each of them. When the classes sharing a key have
    no common named superclass, the most general of them (those with no superclass
    sharing the key) are kept. Among equivalent classes, the directly mapped ones win.

    Args:
        onto: The ontology, for the class hierarchy.
        by_key: :func:`class_templates`.

    Returns:
        Template key → the classes edges with that key attach to.
    """
    out: dict[str, set[IRI]] = {}
    for key, direct in by_key.items():
        common: set[IRI] | None = None
        for c in direct:
            ups = set(onto.superclasses(c))
            common = ups if common is None else common & ups
        common = {c for c in common or () if c in onto.classes or c in direct}
        if common:
            lowest = {c for c in common if not any(_below(onto, d, c) for d in common)}
            out[key] = (lowest & direct) or lowest
        else:
            out[key] = {c for c in direct if not any(_below(onto, c, d) for d in direct)}
    return out


def row_superclasses(onto: Ontology, mappings: MappingSet) -> dict[IRI, frozenset[IRI]]:
    """Classes some instances of a class belong to by the mappings' rows, not by T.

    A class D mapped from every row of a table (``SELECT id FROM facility_moveable``) and
    a class C mapped from rows of the same table with the same subject template
    (``… FROM facility_moveable WHERE kind = 'VESSEL'``) share those instances: each such
    C is a D in the data even when the ontology puts C elsewhere (NPD's ``VesselFacility``
    is a ``Facility``, not a ``MoveableFacility``). C → those D, leaving out D that T
    already makes a superclass of C. C may be mapped from several tables, so a D holds for
    *some* instances of C (as a subclass's edges do in the class graph's walk). Reads
    the assertions' ``tables`` and ``whole_table`` (:func:`~navqa.offline.mapping_sql.
    annotate_sql`, at index time): no SQL is parsed here, at question time.
    """
    whole: dict[tuple[str, str, tuple[str, ...]], set[IRI]] = defaultdict(set)
    part: dict[tuple[str, str, tuple[str, ...]], set[IRI]] = defaultdict(set)
    for assertion, atom in mappings.atoms():
        tpl = atom.subject.template
        if not atom.is_class or tpl is None or len(assertion.tables) != 1:
            continue
        key = (assertion.tables[0], tpl.key, tpl.columns)
        part[key].add(atom.predicate)
        if assertion.whole_table:
            whole[key].add(atom.predicate)
    out: dict[IRI, set[IRI]] = defaultdict(set)
    for key, supers in whole.items():
        for c in part.get(key, ()):
            ups = onto.superclasses(c)
            out[c].update(d for d in supers if d != c and d not in ups)
    return {c: frozenset(ds) for c, ds in out.items() if ds}


def _below(onto: Ontology, sub: IRI, sup: IRI) -> bool:
    """Whether ``sub`` is strictly below ``sup`` (a subclass, and not an equivalent)."""
    return sub != sup and onto.is_subclass(sub, sup) and not onto.is_subclass(sup, sub)


def build_class_graph(active: ActiveOntology, mappings: MappingSet) -> ClassGraph:
    """The class graph Ga of the active ontology.

    Args:
        active: The active ontology (its signature bounds every node and label).
        mappings: The mappings, for template typing and literal datatypes.

    Returns:
        The graph; its ``classes`` are the active classes plus mapped classes the
        ontology does not declare.
    """
    onto = active.ontology
    mapped_classes = mappings.classes() & active.signature
    classes = active.classes | mapped_classes
    edges: dict[_Key, set[EdgeSource]] = defaultdict(set)

    def add(src: IRI, prop: IRI, dst: IRI, is_data: bool, why: EdgeSource) -> None:
        edges[(src, prop, dst, is_data)].add(why)

    datatypes = _datatypes(onto, mappings)

    # (a) + (b): what the ontology states or entails.
    for p in sorted(active.object_properties):
        stated_d, all_d = _domains(onto, p)
        stated_r, all_r = _ranges(onto, p)
        dom, rng = all_d & classes, all_r & classes
        if not dom and not rng:
            continue
        for c1 in dom or {OWL_THING}:
            for c2 in rng or {OWL_THING}:
                stated = (c1 == OWL_THING or c1 in stated_d) and (
                    c2 == OWL_THING or c2 in stated_r
                )
                add(c1, p, c2, False, EdgeSource.DECLARED if stated else EdgeSource.ENTAILED)
    for p in sorted(active.data_properties):
        stated_d, all_d = _domains(onto, p)
        for c in all_d & classes:
            why = EdgeSource.DECLARED if c in stated_d else EdgeSource.ENTAILED
            for dt in datatypes.get(p, {RDFS_LITERAL}):
                add(c, p, dt, True, why)

    # (c): what the mappings' IRI templates show.
    attach = _Attacher(onto, mappings, classes)
    for _, atom in mappings.atoms():
        p = atom.predicate
        if atom.is_class or p not in active.signature or atom.object is None:
            continue
        sources = attach(atom.subject.template)
        obj = atom.object
        if obj.term_type is TermType.IRI:
            if p in onto.data_properties:
                continue
            targets = attach(obj.template)
            if not sources and not targets:
                continue
            for c1 in sources or {OWL_THING}:
                for c2 in targets or {OWL_THING}:
                    add(c1, p, c2, False, EdgeSource.TEMPLATE)
        elif obj.term_type is TermType.LITERAL and p not in onto.object_properties:
            for c1 in sources:
                for dt in datatypes.get(p, {RDFS_LITERAL}):
                    add(c1, p, dt, True, EdgeSource.TEMPLATE)

    out = tuple(
        Edge(source=s, prop=p, target=t, is_data=d, provenance=frozenset(why))
        for (s, p, t, d), why in sorted(edges.items())
    )
    if any(OWL_THING in (e.source, e.target) for e in out if not e.is_data):
        classes = classes | {OWL_THING}
    return ClassGraph(edges=out, classes=frozenset(classes))


class _Attacher:
    """Which classes a property's subject (or object) IRI template attaches to.

    The classes sharing the template key, through :func:`template_classes`. When only
    some of them use the very same placeholder columns as the property's template
    (Bgee writes stages and anatomical entities both as ``obo:{}``, from the columns
    ``stageIdSPARQL`` and ``anatEntityIdSPARQL``), those are preferred.
    """

    def __init__(self, onto: Ontology, mappings: MappingSet, classes: frozenset[IRI]) -> None:
        self.onto = onto
        self.direct = class_templates(mappings, classes)
        self.by_key = template_classes(onto, self.direct)
        self.by_columns: dict[tuple[str, tuple[str, ...]], set[IRI]] = defaultdict(set)
        for _, atom in mappings.atoms():
            tpl = atom.subject.template
            if atom.is_class and atom.predicate in classes and tpl is not None:
                self.by_columns[(tpl.key, tpl.columns)].add(atom.predicate)
        self._memo: dict[tuple[str, tuple[str, ...]], set[IRI]] = {}

    def __call__(self, tpl: IriTemplate | None) -> set[IRI]:
        if tpl is None:
            return set()
        key, cols = tpl.key, tpl.columns
        memo = self._memo.get((key, cols))
        if memo is not None:
            return memo
        same = self.by_columns.get((key, cols), set())
        if same and same != self.direct.get(key):
            out = template_classes(self.onto, {key: same})[key]
        else:
            out = self.by_key.get(key, set())
        self._memo[(key, cols)] = out
        return out


def _domains(onto: Ontology, p: IRI) -> tuple[frozenset[IRI], frozenset[IRI]]:
    """(stated on p, all entailed) domain classes of p."""
    prop = onto.property(p)
    stated = prop.domains if prop is not None else frozenset()
    out = set(onto.inherited_domains(p))
    for q in onto.superproperties(p):
        qp = onto.property(q)
        for inv in qp.inverses if qp is not None else ():
            out |= onto.inherited_ranges(inv)
    return stated, frozenset(out)


def _ranges(onto: Ontology, p: IRI) -> tuple[frozenset[IRI], frozenset[IRI]]:
    """(stated on p, all entailed) range classes of an object property p."""
    prop = onto.property(p)
    stated = prop.ranges if prop is not None else frozenset()
    out = set(onto.inherited_ranges(p))
    for q in onto.superproperties(p):
        qp = onto.property(q)
        for inv in qp.inverses if qp is not None else ():
            out |= onto.inherited_domains(inv)
    return stated, frozenset(out)


def _datatypes(onto: Ontology, mappings: MappingSet) -> dict[IRI, set[IRI]]:
    """Per data property: its stated (or inherited) ranges, else its mapping datatypes."""
    from_maps: dict[IRI, set[IRI]] = defaultdict(set)
    for _, atom in mappings.atoms():
        if not atom.is_class and atom.object is not None:
            dt = _literal_datatype(atom.object)
            if dt is not None:
                from_maps[atom.predicate].add(dt)
    out: dict[IRI, set[IRI]] = {}
    for p in set(onto.data_properties) | set(from_maps):
        ranges = set(onto.inherited_ranges(p)) if p in onto.data_properties else set()
        out[p] = ranges or from_maps.get(p) or {RDFS_LITERAL}
    return out


def _literal_datatype(tm: TermMap) -> IRI | None:
    if tm.term_type is not TermType.LITERAL:
        return None
    if tm.language:
        return RDF_LANGSTRING
    return tm.datatype or RDFS_LITERAL


# -- statistics -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TypingStats:
    """How the active object properties get their edges, and how many edges each source gives.

    A source *types* a property when it gives the property at least one edge leaving a
    named class (not ``owl:Thing``): that is what lets the online stage reach it.

    Attributes:
        object_properties: Active object properties (declared in T, or undeclared but
            mapped with IRI objects).
        declared / entailed / template: Object properties typed by that source (they
            overlap).
        ontology: Typed by the ontology (declared or entailed).
        template_only: Typed by templates but not by the ontology.
        untyped: Typed by no source.
        untyped_mapped: Of the untyped ones, those used in a mapping target.
        both_ends: Object properties with an edge whose two ends are named classes.
        edges: Edges by source (an edge with several sources counts for each), plus
            ``total``, ``object``, ``data`` and ``to_thing`` (object edges with an
            ``owl:Thing`` end).
    """

    object_properties: int
    declared: int
    entailed: int
    template: int
    ontology: int
    template_only: int
    untyped: int
    untyped_mapped: int
    both_ends: int
    edges: dict[str, int]

    def as_dict(self) -> dict[str, object]:
        """A JSON-ready view."""
        return {
            "object_properties": self.object_properties,
            "declared": self.declared,
            "entailed": self.entailed,
            "template": self.template,
            "ontology": self.ontology,
            "template_only": self.template_only,
            "untyped": self.untyped,
            "untyped_mapped": self.untyped_mapped,
            "both_ends": self.both_ends,
            "edges": dict(self.edges),
        }


def active_object_properties(active: ActiveOntology, mappings: MappingSet) -> frozenset[IRI]:
    """Active object properties: declared ones in E, plus undeclared mapped ones with IRI
    objects."""
    props = set(active.object_properties)
    for _, atom in mappings.atoms():
        if (
            not atom.is_class
            and atom.predicate in active.signature
            and atom.object is not None
            and atom.object.term_type is TermType.IRI
            and active.ontology.kind(atom.predicate) is None
        ):
            props.add(atom.predicate)
    return frozenset(props)


def typing_stats(graph: ClassGraph, active: ActiveOntology, mappings: MappingSet) -> TypingStats:
    """Count which sources type the active object properties (see :class:`TypingStats`)."""
    props = active_object_properties(active, mappings)
    by_source: dict[EdgeSource, set[IRI]] = {s: set() for s in EdgeSource}
    both: set[IRI] = set()
    for e in graph:
        if e.is_data or e.prop not in props:
            continue
        if e.source != OWL_THING:
            for src in e.provenance:
                by_source[src].add(e.prop)
            if e.target != OWL_THING:
                both.add(e.prop)
    ontology = by_source[EdgeSource.DECLARED] | by_source[EdgeSource.ENTAILED]
    typed = ontology | by_source[EdgeSource.TEMPLATE]
    untyped = props - typed
    edges = {str(s): sum(1 for e in graph if s in e.provenance) for s in EdgeSource}
    edges["total"] = len(graph)
    edges["object"] = sum(1 for e in graph if not e.is_data)
    edges["data"] = sum(1 for e in graph if e.is_data)
    edges["to_thing"] = sum(
        1 for e in graph if not e.is_data and OWL_THING in (e.source, e.target)
    )
    return TypingStats(
        object_properties=len(props),
        declared=len(by_source[EdgeSource.DECLARED]),
        entailed=len(by_source[EdgeSource.ENTAILED]),
        template=len(by_source[EdgeSource.TEMPLATE]),
        ontology=len(ontology),
        template_only=len(by_source[EdgeSource.TEMPLATE] - ontology),
        untyped=len(untyped),
        untyped_mapped=len(untyped & mappings.properties()),
        both_ends=len(both),
        edges=edges,
    )
