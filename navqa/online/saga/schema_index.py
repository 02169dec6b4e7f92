"""SAGA's schema index in the VKG setting: δ(p) and ρ(p) of every property, with provenance.

SAGA stores, per property, its known domain δ(p) and range ρ(p): formal constraints where
the KG has them, otherwise the types of a few sampled subjects and objects, otherwise
nothing. A VKG knows more than Wikidata does, and knows it exactly:

``ontology-declared`` / ``ontology-entailed``
    ``rdfs:domain``/``rdfs:range`` stated on p, or inherited from a super-property (or
    from an ``owl:inverseOf`` property's range/domain). In OWL 2 QL, and so in Ontop,
    a domain axiom *types* every subject of p.
``mapping-template``
    The IRI templates of the mapping atoms of p **and of its sub-properties** (Ontop
    saturates the mappings: a sub-property's triples are p's triples too). A subject
    template that is also the subject template of class C's atoms produces C-instances
    (:func:`navqa.offline.class_graph.template_classes` picks the class a shared
    template stands for); a template no class uses exactly is matched by unification.
    This is what the class graph Ga's ``mapping-template`` edges record.
``empirical``
    Only when neither source knows a side: the types of the subjects/objects of a few
    sampled triples (``SELECT ?s ?o WHERE { ?s <p> ?o } LIMIT n``), typed by IRI
    template (:meth:`SchemaContext.classes_of_iri`) — never by ``?s a ?c`` scans.
    Samples are cached on disk under ``<cache>/saga/<vkg>/``.

The effective δ(p) takes the sources in order of precision. **Templates first**: in a
VKG they are exact — the subjects of p *are* the IRIs its subject templates produce — and
the ontology's domain axioms never narrow them (Ontop *types* every subject of p with
p's declared domain, so ``?f a npdv:Condeep4ShaftsFacility ; npdv:waterDepth ?d`` returns
data although ``waterDepth`` is declared on the sibling ``FixedFacility``: both classes
share the facility template). A declared domain ``Place`` next to the template class
``Station`` therefore becomes ``Station``. **The ontology** counts when no template
types p (no mapping of its own or of a sub-property, e.g. the "w/o AOC" view), or when
some of p's IRIs come from a column rather than a template (then the templates do not
cover every subject). **Empirical evidence** only when neither source knows a side.
``owl:Thing`` tells nothing and is dropped; a side no source knows stays unknown (∅):
the type filter never removes a property for lack of knowledge. Each side keeps all the
classes it proposed (a union: ``{Facility, TUFacility}`` stays as it is).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property
from pathlib import Path

from navqa.backends.protocols import SparqlEndpoint
from navqa.errors import EndpointError, EndpointUnreachableError
from navqa.model.graph import EdgeSource
from navqa.model.iri import IRI, OWL_THING
from navqa.model.mapping import TermKind, TermType
from navqa.model.ontology import Ontology
from navqa.model.template import IriTemplate
from navqa.model.terms import IRITerm, LiteralTerm
from navqa.model.xsd import XSD_STRING
from navqa.offline.class_graph import class_templates, template_classes
from navqa.online.context import SchemaContext

log = logging.getLogger(__name__)

__all__ = [
    "EmpiricalSample",
    "PropertySchema",
    "Provenance",
    "SchemaIndex",
    "Side",
    "endpoint_sampler",
]

SAMPLE_SIZE = 20
"""Triples sampled per property whose domain or range no other source knows."""
EMPIRICAL_SHARE = 0.2
"""A sampled class counts as evidence when at least this share of the typed samples has it."""


class Provenance(StrEnum):
    """Where a domain or range class comes from."""

    DECLARED = "ontology-declared"
    ENTAILED = "ontology-entailed"
    TEMPLATE = "mapping-template"
    EMPIRICAL = "empirical"


@dataclass(frozen=True)
class Side:
    """One end of a property: its domain (subjects) or its range (objects).

    Attributes:
        classes: The effective classes (δ or ρ); empty when unknown.
        provenance: Every class any source proposed → the sources that proposed it
            (classes dropped as less specific are listed too).
        datatypes: Literal datatypes at this end (the range of a data property).
        templates: IRI template keys of the IRIs at this end (``{}`` placeholders).
        open: Some IRIs at this end come from a column or a constant, not a template.
        display: The most specific classes of all sources (for listings; see :attr:`shown`).
    """

    classes: frozenset[IRI] = frozenset()
    provenance: Mapping[IRI, frozenset[Provenance]] = field(default_factory=dict)
    datatypes: frozenset[IRI] = frozenset()
    templates: frozenset[str] = frozenset()
    open: bool = False
    display: frozenset[IRI] = frozenset()

    @property
    def shown(self) -> frozenset[IRI]:
        """What a listing shows: the most specific classes any source proposed.

        ``builtBy`` is filtered on its template class ``Company`` but shown with the
        declared ``Manufacturer``: more telling, and true of every object by entailment.
        """
        return self.display or self.classes

    @property
    def known(self) -> bool:
        return bool(self.classes)

    @property
    def sources(self) -> frozenset[Provenance]:
        """The sources behind the effective classes."""
        out: set[Provenance] = set()
        for c in self.classes:
            out |= self.provenance.get(c, frozenset())
        return frozenset(out)


@dataclass(frozen=True)
class PropertySchema:
    """δ(p) and ρ(p) of one property."""

    prop: IRI
    is_data: bool
    domain: Side
    range: Side


@dataclass(frozen=True)
class EmpiricalSample:
    """Types seen on the sampled triples of one property (counts per class/datatype)."""

    rows: int
    subjects: Mapping[IRI, int] = field(default_factory=dict)
    objects: Mapping[IRI, int] = field(default_factory=dict)
    datatypes: Mapping[IRI, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {"rows": self.rows, "subjects": dict(self.subjects),
                "objects": dict(self.objects), "datatypes": dict(self.datatypes)}

    @classmethod
    def from_json(cls, d: Mapping[str, object]) -> EmpiricalSample:
        def counts(key: str) -> dict[IRI, int]:
            raw = d.get(key) or {}
            assert isinstance(raw, dict)
            return {str(k): int(v) for k, v in raw.items()}

        rows = d.get("rows", 0)
        return cls(rows=int(rows) if isinstance(rows, int | str) else 0,
                   subjects=counts("subjects"), objects=counts("objects"),
                   datatypes=counts("datatypes"))


Sampler = Callable[[IRI], EmpiricalSample]
"""Samples one property (see :func:`endpoint_sampler`)."""


def endpoint_sampler(ctx: SchemaContext, endpoint: SparqlEndpoint, *, limit: int = SAMPLE_SIZE,
                     timeout: float | None = 30.0) -> Sampler:
    """A sampler running one bounded query per property and typing IRIs by template.

    Raises (from the returned function):
        EndpointUnreachableError: a dead endpoint is never "no evidence".
        EndpointError: the sample query failed (the caller treats the side as unknown).
    """

    def sample(prop: IRI) -> EmpiricalSample:
        res = endpoint.select(f"SELECT ?s ?o WHERE {{ ?s <{prop}> ?o }} LIMIT {int(limit)}",
                              timeout=timeout)
        subj: Counter[IRI] = Counter()
        obj: Counter[IRI] = Counter()
        dts: Counter[IRI] = Counter()
        for s, o in res.rows:
            if isinstance(s, IRITerm):
                subj.update(ctx.most_specific(ctx.classes_of_iri(s.value)))
            if isinstance(o, IRITerm):
                obj.update(ctx.most_specific(ctx.classes_of_iri(o.value)))
            elif isinstance(o, LiteralTerm):
                dts[o.datatype or XSD_STRING] += 1
        return EmpiricalSample(rows=len(res.rows), subjects=dict(subj), objects=dict(obj),
                               datatypes=dict(dts))

    return sample


class SchemaIndex:
    """δ(p) and ρ(p) for every property of a VKG, and the IRI templates of every class.

    Build it with :meth:`build`. Lookups of properties the index does not hold return
    an unknown side (never an error): unknown stays unknown.
    """

    def __init__(self, ctx: SchemaContext, entries: Mapping[IRI, PropertySchema]) -> None:
        self.ctx = ctx
        self.entries = dict(entries)

    # -- construction ----------------------------------------------------------------------

    @classmethod
    def build(cls, ctx: SchemaContext, *, sampler: Sampler | None = None,
              cache_dir: Path | None = None) -> SchemaIndex:
        """Index every property of ``ctx`` (ontology + templates, then empirical).

        Args:
            ctx: The schema context.
            sampler: Samples a property's triples (:func:`endpoint_sampler`); ``None``
                leaves sides that neither the ontology nor the mappings know unknown.
            cache_dir: Where sampled evidence is cached (``<cache>/saga/<vkg>``); the
                file name carries a fingerprint of the ontology and mapping files.

        Raises:
            EndpointUnreachableError: from the sampler.
        """
        builder = _Builder(ctx)
        static = {p: builder.static(p) for p in sorted(builder.properties)}
        need = sorted(p for p, (dom, rng) in static.items()
                      if not dom.known or (not rng.known and not builder.is_data(p)))
        samples: dict[IRI, EmpiricalSample] = {}
        if need and (sampler is not None or cache_dir is not None):
            samples = _load_samples(ctx, cache_dir)
            missing = [p for p in need if p not in samples]
            if missing and sampler is not None:
                fresh: dict[IRI, EmpiricalSample] = {}
                for p in missing:
                    try:
                        fresh[p] = sampler(p)
                    except EndpointUnreachableError:
                        raise
                    except EndpointError as e:
                        log.warning("sampling %s failed (%s); its schema stays unknown", p, e)
                if fresh:
                    samples.update(fresh)
                    _save_samples(ctx, cache_dir, samples)
        entries = {}
        for p, (dom, rng) in static.items():
            s = samples.get(p)
            if s is not None:
                dom, rng = builder.with_sample(dom, rng, s)
            entries[p] = PropertySchema(p, builder.is_data(p), dom, rng)
        return cls(ctx, entries)

    # -- lookups ---------------------------------------------------------------------------

    def get(self, prop: IRI) -> PropertySchema:
        """The entry of ``prop``; an all-unknown one for a property the index lacks."""
        e = self.entries.get(prop)
        if e is None:
            return PropertySchema(prop, self.ctx.is_data_property(prop), Side(), Side())
        return e

    def domain(self, prop: IRI) -> frozenset[IRI]:
        """δ(p) (empty when unknown)."""
        return self.get(prop).domain.classes

    def range(self, prop: IRI) -> frozenset[IRI]:
        """ρ(p) for object properties (empty when unknown, and for data properties)."""
        return self.get(prop).range.classes

    def datatypes(self, prop: IRI) -> frozenset[IRI]:
        return self.get(prop).range.datatypes

    def unknown(self, side: str = "domain") -> list[IRI]:
        """Properties whose ``domain`` (or object-property ``range``) no source knows."""
        out = []
        for p, e in sorted(self.entries.items()):
            s = e.domain if side == "domain" else e.range
            if not s.known and (side == "domain" or not e.is_data):
                out.append(p)
        return out

    def stats(self) -> dict[str, dict[str, int]]:
        """How many effective domains/ranges each source supports (a class may have several)."""
        out: dict[str, Counter[str]] = {"domain": Counter(), "range": Counter()}
        for e in self.entries.values():
            for name, side in (("domain", e.domain), ("range", e.range)):
                if name == "range" and e.is_data:
                    continue
                if not side.known:
                    out[name]["unknown"] += 1
                for src in side.sources:
                    out[name][src.value] += 1
        return {k: dict(v) for k, v in out.items()}

    @cached_property
    def _class_template_keys(self) -> dict[IRI, frozenset[str]]:
        """Class → template keys of its own class atoms."""
        out: dict[IRI, set[str]] = {}
        for _, atom in self.ctx.mappings.atoms():
            if atom.is_class and atom.subject.template is not None:
                out.setdefault(atom.predicate, set()).add(atom.subject.template.key)
        return {c: frozenset(k) for c, k in out.items()}

    def instance_templates(self, cls: IRI) -> tuple[frozenset[str], bool]:
        """IRI template keys that can produce instances of ``cls``, and whether other IRIs can.

        Instances of C are the IRIs of the class atoms of C and its subclasses, and — by the
        ontology's domain and range axioms — the subjects (objects) of properties whose
        domain (range) is C or below it.
        """
        return self._instance_templates.get(cls, (frozenset(), False))

    @cached_property
    def _instance_templates(self) -> dict[IRI, tuple[frozenset[str], bool]]:
        onto = self.ctx.ontology
        own = self._class_template_keys
        keys: dict[IRI, set[str]] = {}
        open_: dict[IRI, bool] = {}
        for c, ks in own.items():
            for sup in onto.superclasses(c):
                keys.setdefault(sup, set()).update(ks)
        for e in self.entries.values():
            p = onto.property(e.prop)
            if p is None:
                continue
            for d in onto.inherited_domains(e.prop):
                for sup in onto.superclasses(d):
                    keys.setdefault(sup, set()).update(e.domain.templates)
                    open_[sup] = open_.get(sup, False) or e.domain.open
            if not e.is_data:
                for r in onto.inherited_ranges(e.prop):
                    for sup in onto.superclasses(r):
                        keys.setdefault(sup, set()).update(e.range.templates)
                        open_[sup] = open_.get(sup, False) or e.range.open
        return {c: (frozenset(k), open_.get(c, False)) for c, k in keys.items()}


def templates_unify(a: Iterable[str], b: Iterable[str]) -> bool:
    """Whether some template key of ``a`` unifies with one of ``b``."""
    bs = [IriTemplate(k) for k in b]
    return any(IriTemplate(k).unifies(t) for k in a for t in bs)


# -- building --------------------------------------------------------------------------------


class _Builder:
    def __init__(self, ctx: SchemaContext) -> None:
        self.ctx = ctx
        self.onto = ctx.ontology
        g_classes = ctx.graph.classes | frozenset(self.onto.classes)
        self.direct = class_templates(ctx.mappings, g_classes)
        self.attach = template_classes(self.onto, self.direct)
        self.properties = frozenset(ctx.properties) | ctx.graph.properties()
        self._children: dict[IRI, set[IRI]] = {}
        for q in set(self.onto.properties) | set(ctx.mappings.properties()):
            for sup in self.onto.superproperties(q):
                self._children.setdefault(sup, set()).add(q)
        self._unify_memo: dict[str, frozenset[IRI]] = {}

    def is_data(self, p: IRI) -> bool:
        return self.ctx.is_data_property(p)

    def family(self, p: IRI) -> set[IRI]:
        """p and its sub-properties (transitively)."""
        return self._children.get(p, set()) | {p}

    def _template_classes(self, key: str) -> frozenset[IRI]:
        """The classes an IRI template stands for: by equal key, else by unification."""
        if key in self.attach:
            return frozenset(self.attach[key])
        memo = self._unify_memo.get(key)
        if memo is not None:
            return memo
        tpl = IriTemplate(key)
        direct: set[IRI] = set()
        for k, cs in self.direct.items():
            if tpl.unifies(IriTemplate(k)):
                direct |= cs
        out = frozenset(template_classes(self.onto, {key: direct})[key]) if direct else frozenset()
        self._unify_memo[key] = out
        return out

    def _ontology_side(self, p: IRI, side: str) -> dict[IRI, set[Provenance]]:
        onto = self.onto
        prop = onto.property(p)
        stated = (prop.domains if side == "domain" else prop.ranges) if prop else frozenset()
        found = set(onto.inherited_domains(p) if side == "domain" else onto.inherited_ranges(p))
        for q in onto.superproperties(p):
            qp = onto.property(q)
            for inv in qp.inverses if qp is not None else ():
                found |= (onto.inherited_ranges(inv) if side == "domain"
                          else onto.inherited_domains(inv))
        out: dict[IRI, set[Provenance]] = {}
        for c in found:
            if c == OWL_THING or c not in onto.classes:
                continue
            out.setdefault(c, set()).add(
                Provenance.DECLARED if c in stated else Provenance.ENTAILED)
        return out

    def static(self, p: IRI) -> tuple[Side, Side]:
        """Domain and range from the ontology and the mapping templates."""
        is_data = self.is_data(p)
        dom: dict[IRI, set[Provenance]] = self._ontology_side(p, "domain")
        rng: dict[IRI, set[Provenance]] = ({} if is_data else self._ontology_side(p, "range"))
        s_keys: set[str] = set()
        o_keys: set[str] = set()
        s_open = o_open = False
        datatypes: set[IRI] = set()
        family = self.family(p)
        for q in family:
            for _, atom in self.ctx.mappings.atoms_for(q):
                subj = atom.subject
                if subj.template is not None:
                    s_keys.add(subj.template.key)
                elif subj.term_type is TermType.IRI:
                    s_open = True
                obj = atom.object
                if obj is None:
                    continue
                if obj.term_type is TermType.IRI:
                    if obj.template is not None:
                        o_keys.add(obj.template.key)
                    elif obj.kind is TermKind.CONSTANT:
                        for c in self.ctx.most_specific(self.ctx.classes_of_iri(obj.value)):
                            rng.setdefault(c, set()).add(Provenance.TEMPLATE)
                    else:
                        o_open = True
        for key in s_keys:
            for c in self._template_classes(key):
                dom.setdefault(c, set()).add(Provenance.TEMPLATE)
        if not is_data:
            for key in o_keys:
                for c in self._template_classes(key):
                    rng.setdefault(c, set()).add(Provenance.TEMPLATE)
        # Ga's mapping-template edges (the class graph's own attachment, which prefers
        # classes whose template uses the very same columns).
        for q in family:
            for e in self.ctx.graph.edges_of(q):
                if e.is_data:
                    datatypes.add(e.target)
                if EdgeSource.TEMPLATE in e.provenance:
                    if e.source != OWL_THING:
                        dom.setdefault(e.source, set()).add(Provenance.TEMPLATE)
                    if not e.is_data and e.target != OWL_THING:
                        rng.setdefault(e.target, set()).add(Provenance.TEMPLATE)
        if is_data:
            prop = self.onto.property(p)
            for r in prop.ranges if prop is not None else ():
                if r not in self.onto.classes:
                    datatypes.add(r)
        return (self._side(dom, s_keys, s_open),
                self._side(rng, o_keys, o_open, datatypes=datatypes))

    def _side(self, found: Mapping[IRI, set[Provenance]], keys: set[str], open_: bool, *,
              datatypes: Iterable[IRI] = ()) -> Side:
        prov = {c: frozenset(v) for c, v in found.items()}
        templ = {c for c, v in found.items() if Provenance.TEMPLATE in v}
        onto = {c for c, v in found.items() if v & {Provenance.DECLARED, Provenance.ENTAILED}}
        classes = templ if templ and not open_ else onto
        return Side(classes=frozenset(classes - {OWL_THING}), provenance=prov,
                    datatypes=frozenset(datatypes), templates=frozenset(keys), open=open_,
                    display=_most_specific(self.onto, found))

    def with_sample(self, dom: Side, rng: Side, s: EmpiricalSample) -> tuple[Side, Side]:
        """Fill unknown sides from a sample (only sides no other source knows)."""
        if not dom.known and s.subjects:
            dom = _empirical(dom, s.subjects)
        if not rng.known and s.objects:
            rng = _empirical(rng, s.objects)
        if not rng.datatypes and s.datatypes:
            rng = Side(classes=rng.classes, provenance=rng.provenance,
                       datatypes=frozenset(s.datatypes), templates=rng.templates,
                       open=rng.open, display=rng.display)
        return dom, rng


def _most_specific(onto: Ontology, classes: Iterable[IRI]) -> frozenset[IRI]:
    """Drop every class strictly above another of the set (equivalents are all kept)."""
    cs = {c for c in classes if c != OWL_THING}
    return frozenset(c for c in cs if not any(
        o != c and c in onto.superclasses(o) and o not in onto.superclasses(c) for o in cs))


def _empirical(side: Side, counts: Mapping[IRI, int]) -> Side:
    total = sum(counts.values())
    keep = {c for c, n in counts.items() if c != OWL_THING and n >= EMPIRICAL_SHARE * total}
    prov = dict(side.provenance)
    for c in counts:
        prov[c] = prov.get(c, frozenset()) | {Provenance.EMPIRICAL}
    return Side(classes=frozenset(keep), provenance=prov, datatypes=side.datatypes,
                templates=side.templates, open=side.open, display=frozenset(keep))


# -- the sample cache ------------------------------------------------------------------------


def _fingerprint(ctx: SchemaContext) -> str:
    h = hashlib.sha256()
    for role, f in sorted(ctx.bundle.manifest.inputs.items()):
        h.update(f"{role}={f.sha256}\n".encode())
    return h.hexdigest()[:16]


def _cache_file(ctx: SchemaContext, cache_dir: Path | None) -> Path | None:
    if cache_dir is None:
        return None
    name = ctx.bundle.manifest.name or "vkg"
    return Path(cache_dir) / "saga" / name / f"empirical-{_fingerprint(ctx)}.json"


_cache_lock = threading.Lock()


def _load_samples(ctx: SchemaContext, cache_dir: Path | None) -> dict[IRI, EmpiricalSample]:
    path = _cache_file(ctx, cache_dir)
    if path is None or not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return {p: EmpiricalSample.from_json(d) for p, d in data["samples"].items()}
    except (OSError, ValueError, KeyError, TypeError, AssertionError) as e:
        log.warning("ignoring the unreadable sample cache %s (%s)", path, e)
        return {}


def _save_samples(ctx: SchemaContext, cache_dir: Path | None,
                  samples: Mapping[IRI, EmpiricalSample]) -> None:
    path = _cache_file(ctx, cache_dir)
    if path is None:
        return
    with _cache_lock:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(json.dumps({"samples": {p: s.to_json() for p, s in
                                               sorted(samples.items())}}, indent=1),
                       encoding="utf-8")
        os.replace(tmp, path)
