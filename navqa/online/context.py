"""What the online stage knows about one VKG: the schema it may use, and vectors for it.

:class:`SchemaContext` wraps an :class:`~navqa.offline.artifacts.IndexBundle` and answers
the questions every online step asks: which elements may appear in a query (the active
ontology — or all of T for the "w/o AOC" ablation), which edges leave a class
(inherited ones included), a property's datatype, a class's name-like property, which
class an IRI belongs to (by the mappings' IRI templates), and element vectors.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from navqa.backends.protocols import Embedder
from navqa.model.active import ActiveOntology
from navqa.model.graph import ClassGraph, Edge
from navqa.model.iri import (
    IRI,
    OWL_THING,
    RDFS_LABEL,
    WELL_KNOWN_PREFIXES,
    compact,
    local_name,
    split_words,
)
from navqa.model.mapping import MappingSet
from navqa.model.ontology import Ontology
from navqa.model.template import IriTemplate
from navqa.model.xsd import (
    DATE_TYPES,
    DATETIME_TYPES,
    LANG_STRING,
    NUMERIC_TYPES,
    STRING_TYPES,
    TIME_TYPES,
    XSD_BOOLEAN,
    XSD_GYEAR,
)
from navqa.offline.artifacts import IndexBundle
from navqa.online.constant_values import ConstantObject, constant_objects
from navqa.online.reading.lexicon import Phenomenon, words

# The datatype groups of the synthesizer and the value grounding (from navqa.model.xsd;
# a gYear counts as a number here, a dateTime as a date).
NUMERIC = NUMERIC_TYPES | {XSD_GYEAR}
DATES = DATE_TYPES | DATETIME_TYPES
TIMES = TIME_TYPES
BOOLEAN = XSD_BOOLEAN
STRINGS = STRING_TYPES | {LANG_STRING}
_GENERIC_NAMES = words(Phenomenon.NAME_PROPERTY)
_NAME_WORDS = re.compile(rf"(^|[^a-z])({'|'.join(sorted(_GENERIC_NAMES))})($|[^a-z])", re.I)
_CODE_WORDS = re.compile(rf"({'|'.join(sorted(words(Phenomenon.CODE_PROPERTY)))}|id$)", re.I)


_CHUNK = re.compile(r"[^A-Za-zÀ-ÿ0-9]+")


def singular(word: str) -> str:
    """A crude English singular (``cities`` → ``city``, ``stations`` → ``station``)."""
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("ches", "ch"), ("shes", "sh"),
                         ("xes", "x"), ("s", "")):
        if word.endswith(suffix) and len(word) > len(suffix) + 2 and not word.endswith("ss"):
            return word[: -len(suffix)] + repl
    return word


def normal(text: str) -> str:
    """Lower-case, singularise every word, collapse separators."""
    return " ".join(singular(w) for w in re.findall(r"[a-zà-ÿ0-9]+", text.lower()))


STEM_LENGTH = 6
"""Letters a stem keeps: ``operator``, ``operated``, ``operation`` all become ``operat``."""


def stem(word: str) -> str:
    """A dictionary-free stem: the crude singular, cut to :data:`STEM_LENGTH` letters."""
    w = singular(word.lower())
    return w[:STEM_LENGTH]


def stems(text: str) -> frozenset[str]:
    """The stems of the words of ``text`` (identifiers split at camelCase and ``_``).

    Words of one or two letters and numbers carry no lexical evidence and are left out.

    Example:
        >>> sorted(stems("fldOperatorName, wells_drilled"))
        ['drille', 'fld', 'name', 'operat', 'well']
    """
    out: set[str] = set()
    for chunk in _CHUNK.split(text):
        for w in split_words(chunk):
            if len(w) > 2 and not w.isdigit():
                out.add(stem(w))
    return frozenset(out)


@dataclass(frozen=True, slots=True)
class LexicalProfile:
    """What the VKG says about one element in words, as stems (:func:`stems`).

    Attributes:
        name: Its labels and the words of its local name.
        comment: Its comments and other textual annotations (``notes``).
        source: For a property, the names of the columns its mappings read; for a
            class, the tables of its subject's columns.
        domain: For a property, the name words of the classes it is on (the sources of
            its edges in the class graph and their subclasses); empty for a class. These
            words say which class the property belongs to, not which property it is: a
            question that names the class ("the deepest exploration wellbore") is no
            evidence for every property whose comment names that class's table
            (:func:`navqa.online.linking.lexical_score`).
    """

    name: frozenset[str]
    comment: frozenset[str]
    source: frozenset[str]
    domain: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Neighbour:
    """An edge seen from one class: ``direction`` is ``out`` when that class is the subject."""

    edge: Edge
    direction: str

    @property
    def other(self) -> IRI:
        return self.edge.target if self.direction == "out" else self.edge.source


class SchemaContext:
    """Schema, vectors and typing for one VKG, as the online stage sees it.

    Args:
        bundle: The loaded index.
        embedder: Embeds questions and mentions (same model as the index).
        use_active_ontology: ``False`` runs NaVQA "w/o AOC": every element of T may be used.
    """

    def __init__(self, bundle: IndexBundle, embedder: Embedder, *,
                 use_active_ontology: bool = True) -> None:
        self.bundle = bundle
        self.embedder = embedder
        self.use_active = use_active_ontology
        self.ontology: Ontology = bundle.ontology
        self.mappings: MappingSet = bundle.mappings
        self.active: ActiveOntology = bundle.active
        if use_active_ontology:
            self.graph: ClassGraph = bundle.graph
            self.class_ids, self.class_vecs = bundle.class_index.ids, bundle.class_index.vectors()
            self.prop_ids, self.prop_vecs = (bundle.property_index.ids,
                                             bundle.property_index.vectors())
        else:
            self.graph, (self.class_ids, self.class_vecs), (self.prop_ids, self.prop_vecs) = \
                _full_ontology_view(bundle, embedder)
        self._cls_pos = {iri: i for i, iri in enumerate(self.class_ids)}
        self._prop_pos = {iri: i for i, iri in enumerate(self.prop_ids)}

    # -- naming ----------------------------------------------------------------------------

    @cached_property
    def prefixes(self) -> dict[str, str]:
        """Prefixes for queries and listings: the mapping's, the ontology's, the usual ones."""
        out = dict(WELL_KNOWN_PREFIXES)
        for src in (self.ontology.prefixes, self.mappings.prefixes):
            for p, ns in src.items():
                if p and ns and p not in out and ns not in out.values():
                    out[p] = ns
        if "" in self.mappings.prefixes:
            ns = self.mappings.prefixes[""]
            if ns not in out.values():
                out["ns"] = ns
        return out

    def compact(self, iri: IRI) -> str:
        return compact(iri, self.prefixes)

    def label(self, iri: IRI) -> str:
        return self.ontology.label(iri)

    # -- what may be used ------------------------------------------------------------------

    def allowed(self, iri: IRI) -> bool:
        """Whether a query may use ``iri`` (active, or anything declared for w/o AOC)."""
        if self.use_active:
            return self.active.is_active(iri)
        return iri in self.ontology.signature or self.active.is_active(iri)

    @cached_property
    def classes(self) -> frozenset[IRI]:
        return frozenset(self.class_ids)

    @cached_property
    def properties(self) -> frozenset[IRI]:
        return frozenset(self.prop_ids)

    # -- graph views -----------------------------------------------------------------------

    def lineage(self, cls: IRI) -> list[IRI]:
        """``cls`` and its superclasses that are in the graph's class set, nearest first."""
        out = [cls]
        for sup in sorted(self.ontology.superclasses(cls, reflexive=False)):
            if sup in self.classes and sup not in out:
                out.append(sup)
        return out

    def same_lineage(self, a: IRI, b: IRI) -> bool:
        """Whether ``a`` and ``b`` are one class, or one is a superclass of the other."""
        sup = self.ontology.superclasses
        return a == b or a in sup(b) or b in sup(a)

    @cached_property
    def row_superclasses(self) -> dict[IRI, frozenset[IRI]]:
        """Class → the classes some of its instances are by the mappings' rows
        (:func:`navqa.offline.class_graph.row_superclasses`), those in the graph."""
        from navqa.offline.class_graph import row_superclasses

        return {c: frozenset(d for d in ds if d in self.classes)
                for c, ds in row_superclasses(self.ontology, self.mappings).items()}

    def _walked(self, cls: IRI) -> list[IRI]:
        """The classes whose edges an instance of ``cls`` may take: its lineage, its
        subclasses, and the lineages of its row superclasses."""
        out = list(self.lineage(cls))
        out += [c for c in sorted(self.ontology.subclasses(cls, reflexive=False))
                if c in self.classes and c not in out]
        for d in sorted(self.row_superclasses.get(cls, ())):
            out += [c for c in self.lineage(d) if c not in out]
        return out

    def neighbours(self, cls: IRI, *, data: bool | None = None) -> list[Neighbour]:
        """Edges an instance of ``cls`` can take part in.

        * outgoing: edges leaving ``cls``, a superclass (inherited) or a subclass (an
          instance may be of the subclass), or a class some of its instances are by the
          mappings' rows (:attr:`row_superclasses`: a vessel mapped from the table of
          moveable facilities has a moveable facility's responsible company);
        * incoming (object properties only): edges arriving at ``cls``, a superclass or a
          subclass (the mappings often type a shared IRI template on the superclass);
        * edges are taken from the graph's most specific view (:meth:`specific_edges`),
          and edges from or to ``owl:Thing`` are left out: they connect everything.
        """
        seen: set[tuple[IRI, IRI, str]] = set()
        out: list[Neighbour] = []
        walked = self._walked(cls)
        for c in walked:
            for e in self._specific_out.get(c, ()):
                if data is not None and e.is_data != data:
                    continue
                key = (e.prop, e.target, "out")
                if key not in seen and e.target != OWL_THING:
                    seen.add(key)
                    out.append(Neighbour(e, "out"))
        if data is True:
            return out
        for c in walked:
            for e in self._specific_in.get(c, ()):
                key = (e.prop, e.source, "in")
                if key not in seen and e.source != OWL_THING:
                    seen.add(key)
                    out.append(Neighbour(e, "in"))
        return out

    @cached_property
    def specific_edges(self) -> list[Edge]:
        """Ga without edges that a more specific edge of the same property subsumes.

        An entailed ⟨City, partOfRegion, Place⟩ (range inherited from ``locatedIn``) adds
        nothing next to the declared ⟨City, partOfRegion, Region⟩, and would let a path
        treat any Place — a Station — as a region. An edge is subsumed only by one whose
        source is the same class or a *superclass* (it holds for every instance the edge
        does): ⟨Facility, name⟩ is not subsumed by ⟨TUFacility, name⟩ (a fixed facility,
        not a TUFacility, still has a name), while ⟨TUFacility, name⟩ adds nothing next to
        ⟨Facility, name⟩ (:meth:`neighbours` inherits it).
        """
        sup = self.ontology.superclasses
        by_prop: dict[IRI, list[Edge]] = {}
        for e in self.graph.edges:
            by_prop.setdefault(e.prop, []).append(self._narrow(e))
        keep: list[Edge] = []
        for edges in by_prop.values():
            for e in edges:
                subsumed = any(
                    o is not e and o.is_data == e.is_data
                    and (o.source == e.source or o.source in sup(e.source))
                    and (o.target == e.target or (not e.is_data and e.target in sup(o.target)))
                    and (o.source, o.target) != (e.source, e.target)
                    for o in edges)
                if not subsumed:
                    keep.append(e)
        return keep

    def _narrow(self, e: Edge) -> Edge:
        """Intersect an edge's ends with the property's declared (inherited) domain/range.

        Template typing attaches a shared IRI template to the most general class that
        uses it (``Company``); T may say more (``operatedBy`` has range ``OperatorCompany``).
        """
        sup = self.ontology.superclasses
        source, target = e.source, e.target
        for d in sorted(self.ontology.inherited_domains(e.prop)):
            if d != source and source in sup(d) and d in self.classes:
                source = d
                break
        if not e.is_data:
            for r in sorted(self.ontology.inherited_ranges(e.prop)):
                if r != target and target in sup(r) and r in self.classes:
                    target = r
                    break
        if (source, target) == (e.source, e.target):
            return e
        return Edge(source, e.prop, target, e.is_data, e.provenance)

    @cached_property
    def _specific_out(self) -> dict[IRI, list[Edge]]:
        d: dict[IRI, list[Edge]] = {}
        for e in self.specific_edges:
            d.setdefault(e.source, []).append(e)
        return d

    @cached_property
    def _specific_in(self) -> dict[IRI, list[Edge]]:
        d: dict[IRI, list[Edge]] = {}
        for e in self.specific_edges:
            if not e.is_data:
                d.setdefault(e.target, []).append(e)
        return d

    def data_properties_of(self, cls: IRI) -> list[Edge]:
        """Data-property edges of ``cls`` and its superclasses."""
        return [n.edge for n in self.neighbours(cls, data=True)]

    def datatype(self, prop: IRI, cls: IRI | None = None) -> IRI | None:
        """The datatype of a data property (on ``cls`` if given), else from its range."""
        edges = self.graph.edges_of(prop)
        if cls is not None:
            lineage = set(self.lineage(cls))
            scoped = [e for e in edges if e.is_data and e.source in lineage]
            edges = scoped or edges
        for e in edges:
            if e.is_data and e.target in NUMERIC | DATES | TIMES | {BOOLEAN}:
                return e.target
        for e in edges:
            if e.is_data:
                return e.target
        p = self.ontology.property(prop)
        if p is not None:
            for r in p.ranges:
                return r
        return None

    def is_data_property(self, prop: IRI) -> bool:
        return prop in self.ontology.data_properties or any(
            e.is_data for e in self.graph.edges_of(prop))

    @cached_property
    def name_like_properties(self) -> list[IRI]:
        """String data properties that name things (name/label/title), best first; then codes."""
        names, codes = [], []
        for prop in self.prop_ids:
            if not self.is_data_property(prop):
                continue
            dt = self.datatype(prop)
            if dt is not None and dt not in STRINGS:
                continue
            text = f"{local_name(prop)} {self.label(prop)}"
            if _NAME_WORDS.search(text) or prop == RDFS_LABEL:
                names.append(prop)
            elif _CODE_WORDS.search(local_name(prop)) or _CODE_WORDS.search(self.label(prop)):
                codes.append(prop)
        # the generic name (``name``, ``label``, ``title``, rdfs:label) before compounds such
        # as NPD's ``licensingActivityName`` or ``shortName``
        names.sort(key=lambda p: p != RDFS_LABEL and local_name(p).lower() not in _GENERIC_NAMES)
        return names + codes

    def name_property(self, cls: IRI) -> IRI | None:
        """The property that names instances of ``cls`` (``name``/``label`` first)."""
        props = {e.prop for e in self.data_properties_of(cls)}
        for p in self.name_like_properties:
            if p in props:
                return p
        return None

    # -- typing by IRI templates -----------------------------------------------------------

    @cached_property
    def _class_templates(self) -> list[tuple[IriTemplate, IRI]]:
        out = []
        for _, atom in self.mappings.atoms():
            if atom.is_class and atom.subject.template is not None:
                out.append((atom.subject.template, atom.predicate))
        return out

    @cached_property
    def constant_objects(self) -> tuple[ConstantObject, ...]:
        """The mappings' constant IRI objects (:mod:`navqa.online.constant_values`), their
        subjects typed by the class templates they unify with (most specific)."""
        def classes_of(tpl: IriTemplate) -> list[IRI]:
            return self.most_specific(c for t, c in self._class_templates if t.unifies(tpl))
        return constant_objects(self.mappings, classes_of)

    def classes_of_iri(self, iri: str) -> set[IRI]:
        """Mapped classes whose subject template can produce ``iri`` (no data access)."""
        return {c for tpl, c in self._class_templates if tpl.matches(iri)}

    def most_specific(self, classes: Iterable[IRI]) -> list[IRI]:
        """Drop classes that are superclasses of others in the set."""
        cs = set(classes)
        return sorted(c for c in cs if not any(
            o != c and c in self.ontology.superclasses(o, reflexive=False) for o in cs))

    # -- words ---------------------------------------------------------------------------

    @cached_property
    def lexical_profiles(self) -> dict[IRI, LexicalProfile]:
        """A :class:`LexicalProfile` per indexed class and property (built once)."""
        from navqa.offline.descriptions import mapping_columns

        columns = mapping_columns(self.mappings)
        out: dict[IRI, LexicalProfile] = {}
        class_names: dict[IRI, frozenset[str]] = {}
        for iri in [*self.class_ids, *self.prop_ids]:
            entity = self.ontology.entity(iri)
            labels = [x.text for x in entity.labels] if entity is not None else []
            comments = [x.text for x in (*entity.comments, *entity.notes)
                        ] if entity is not None else []
            refs = columns.get(iri, ())
            # a property is named by its columns; its table names the class it is on
            part = 0 if iri in self._cls_pos else 2
            source = stems(" ".join(r.rpartition(".")[part].rpartition(".")[2] for r in refs))
            name = stems(" ".join([local_name(iri), *labels]))
            if part == 0:
                class_names[iri] = name
                out[iri] = LexicalProfile(name=name, comment=stems(" ".join(comments)),
                                          source=source)
                continue
            on = {e.source for e in self.graph.edges_of(iri)}
            on |= {sub for c in on for sub in self.ontology.subclasses(c)}
            domain = frozenset().union(*(class_names.get(c) or stems(local_name(c))
                                         for c in on))
            out[iri] = LexicalProfile(name=name, comment=stems(" ".join(comments)),
                                      source=source, domain=domain)
        return out

    @cached_property
    def stem_weights(self) -> dict[str, float]:
        """Inverse document frequency of each stem over the profiles (rare words weigh more).

        A stem that every element carries (a namespace word, ``has``) weighs nearly 0.
        """
        profiles = self.lexical_profiles.values()
        n = len(profiles)
        df: dict[str, int] = {}
        for p in profiles:
            for s in p.name | p.comment | p.source:
                df[s] = df.get(s, 0) + 1
        return {s: max(0.0, float(np.log((n + 1) / (d + 0.5)))) for s, d in df.items()}

    # -- vectors ---------------------------------------------------------------------------

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.embedder.dim), dtype=np.float32)
        return np.asarray(self.embedder.embed(list(texts)), dtype=np.float32)

    def class_scores(self, queries: np.ndarray) -> dict[IRI, float]:
        """S(c, W) = max cosine between each class vector and the query vectors."""
        return _max_scores(self.class_ids, self.class_vecs, queries)

    def property_scores(self, queries: np.ndarray) -> dict[IRI, float]:
        return _max_scores(self.prop_ids, self.prop_vecs, queries)

    @cached_property
    def _unmapped_classes(self) -> tuple[list[IRI], np.ndarray]:
        """Vectors of T's classes outside the index (embedded once, on first use)."""
        from navqa.offline.descriptions import ElementKind, describe_element

        ids = sorted(c for c in self.ontology.classes if c not in self._cls_pos)
        if not ids:
            return [], np.zeros((0, self.embedder.dim), dtype=np.float32)
        texts = [describe_element(self.ontology, c, ElementKind.CLASS) for c in ids]
        return ids, self.embed(texts)

    def unmapped_class_scores(self, vec: np.ndarray) -> dict[IRI, float]:
        """Cosine of ``vec`` with each class of T that is not in the index."""
        ids, vecs = self._unmapped_classes
        return {i: float(s) for i, s in zip(ids, vecs @ vec, strict=True)}

    def unmapped_class_vector(self, iri: IRI) -> np.ndarray | None:
        ids, vecs = self._unmapped_classes
        return vecs[ids.index(iri)] if iri in ids else None

    def vector(self, iri: IRI) -> np.ndarray | None:
        if iri in self._cls_pos:
            return self.class_vecs[self._cls_pos[iri]]
        if iri in self._prop_pos:
            return self.prop_vecs[self._prop_pos[iri]]
        return None


def _max_scores(ids: list[str], vecs: np.ndarray, queries: np.ndarray) -> dict[IRI, float]:
    if len(ids) == 0 or queries.shape[0] == 0:
        return {i: 0.0 for i in ids}
    sims = vecs @ queries.T
    best = sims.max(axis=1)
    return {iri: float(s) for iri, s in zip(ids, best, strict=True)}


def _full_ontology_view(bundle: IndexBundle, embedder: Embedder
                        ) -> tuple[ClassGraph, tuple[list[str], np.ndarray],
                                   tuple[list[str], np.ndarray]]:
    """Class graph and vectors over all of T (the "w/o AOC" ablation), built in memory."""
    from navqa.offline.class_graph import build_class_graph
    from navqa.offline.descriptions import ElementKind, describe

    onto = bundle.ontology
    everything = ActiveOntology(ontology=onto, mapped=bundle.active.mapped,
                                signature=onto.signature | bundle.active.signature)
    graph = build_class_graph(everything, bundle.mappings)
    descs = describe(everything, bundle.mappings, graph)
    classes = sorted(i for i, d in descs.items() if d.kind is ElementKind.CLASS)
    props = sorted(i for i, d in descs.items() if d.kind is not ElementKind.CLASS)
    known = {**dict(zip(bundle.class_index.ids, bundle.class_index.vectors(), strict=True)),
             **dict(zip(bundle.property_index.ids, bundle.property_index.vectors(),
                        strict=True))}
    missing = [i for i in classes + props if i not in known]
    if missing:
        vecs = embedder.embed([descs[i].text for i in missing])
        known.update(zip(missing, np.asarray(vecs, dtype=np.float32), strict=True))
    dim = embedder.dim

    def mat(ids: list[str]) -> np.ndarray:
        return np.stack([known[i] for i in ids]) if ids else np.zeros((0, dim), np.float32)

    return graph, (classes, mat(classes)), (props, mat(props))
