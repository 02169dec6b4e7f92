"""``navqa audit``: how much of the ontology the mappings populate, and what is wrong with them.

Coverage (the figure ``--fail-under`` tests) is

    coverage = |E0 ∩ declared| / |declared|

where *declared* are the classes, object properties and data properties the ontology T
declares (annotation properties excluded) and E0 the terms used in a mapping target
(:attr:`~navqa.model.active.ActiveOntology.mapped`). Every count comes from
:func:`navqa.offline.artifacts.compute_stats`, the function behind ``navqa index --stats``,
so the two commands always agree. Beside it the audit reports:

* **populated through reasoning** — active (in E) but not mapped: what Ontop's OWL 2 QL
  reasoning populates from the mappings (:mod:`navqa.offline.entailment`: superclasses,
  equivalents, super- and inverse properties, domains and ranges, existentials), with the
  mapped terms each one is populated via;
* **unmapped** — declared but not active (queries on them return nothing), ranked by
  centrality in the *full* ontology: how many of their neighbours (domain and range
  classes, properties having them as domain or range, direct super- and sub-elements)
  are mapped, then their degree;
* **domain/range gaps** — mapped properties whose stated domain or range class has no
  mapping of its own;
* **template mismatches** — a property's object (subject) IRI template that no mapped
  class's subject template can produce (``orphan``; templates on another host than every
  class template, i.e. links to web pages or other datasets, are not reported), or that
  its declared range (domain) classes' own templates cannot (``range``/``domain``):
  joins through those IRIs never produce rows;
* **overlaps** — the same atom (predicate, subject template, object shape) stated by
  several assertions, and assertions with identical SQL;
* **undeclared mapped terms** — mapped IRIs the ontology does not declare;
* with ``--live`` (:func:`probe_live`): mapped elements that yield no rows through Ontop
  (one bounded ASK each) and the SQL Ontop generates for each (``/ontop/reformulate``).
"""

from __future__ import annotations

import logging
import re
import time
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from typing import Any
from urllib.parse import urlsplit

import requests

from navqa.audits.lint import vkg_prefixes
from navqa.audits.shapes import Shape, ShapeIndex, ShapeKind, shape_of
from navqa.errors import EndpointError, EndpointUnreachableError
from navqa.model.iri import IRI, compact, namespace
from navqa.model.ontology import EntityKind
from navqa.offline.artifacts import IndexBundle, compute_stats

logger = logging.getLogger(__name__)

__all__ = [
    "AuditReport",
    "DomainRangeGap",
    "KindCoverage",
    "LiveElement",
    "Overlap",
    "RankedElement",
    "ReasoningElement",
    "TemplateMismatch",
    "audit",
    "probe_live",
]

KINDS: tuple[str, ...] = ("class", "object_property", "data_property")
_ONTOLOGY_KEYS = {"class": "classes", "object_property": "object_properties",
                  "data_property": "data_properties"}


def _pct(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 1) if whole else 100.0


@dataclass(frozen=True, slots=True)
class KindCoverage:
    """Coverage of one kind (or one namespace).

    Attributes:
        name: ``class``/``object_property``/``data_property``/``total``, or a namespace.
        declared: Declared in T.
        mapped: In E0 (used in a mapping target).
        reasoning: Active but not mapped (populated through reasoning).
        unmapped: Declared but not active.
    """

    name: str
    declared: int
    mapped: int
    reasoning: int
    unmapped: int

    @property
    def coverage(self) -> float:
        """mapped / declared, in percent."""
        return _pct(self.mapped, self.declared)

    @property
    def active_coverage(self) -> float:
        """(mapped + reasoning) / declared, in percent."""
        return _pct(self.mapped + self.reasoning, self.declared)

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "coverage": self.coverage,
                "active_coverage": self.active_coverage}


@dataclass(frozen=True, slots=True)
class RankedElement:
    """An unmapped element with its centrality in the full ontology."""

    iri: IRI
    kind: str
    label: str
    rank: int
    degree: int
    mapped_neighbours: int
    neighbours: tuple[IRI, ...]


@dataclass(frozen=True, slots=True)
class ReasoningElement:
    """An element populated only through reasoning, and what populates it."""

    iri: IRI
    kind: str
    label: str
    via: tuple[IRI, ...]


@dataclass(frozen=True, slots=True)
class DomainRangeGap:
    """A mapped property whose stated domain or range class is not mapped itself."""

    prop: IRI
    role: str
    cls: IRI
    status: str


@dataclass(frozen=True, slots=True)
class TemplateMismatch:
    """An IRI template of a property that cannot meet the classes it should connect.

    Attributes:
        prop: The property.
        position: ``subject`` or ``object``.
        template: The template (``prefix:…/{}`` form).
        mapping_ids: The assertions stating it.
        kind: ``orphan`` (no mapped class produces such IRIs) or ``domain``/``range``
            (the declared domain/range classes' templates cannot).
        expected: The declared classes (for ``domain``/``range``).
        expected_templates: Their templates.
    """

    prop: IRI
    position: str
    template: str
    mapping_ids: tuple[str, ...]
    kind: str
    expected: tuple[IRI, ...] = ()
    expected_templates: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Overlap:
    """Assertions that state the same atom, or run identical SQL."""

    kind: str
    key: str
    mapping_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class LiveElement:
    """What the live endpoint says about one active element.

    Attributes:
        iri: The element.
        kind: Its kind.
        mapped: Whether it is in E0 (else populated through reasoning).
        status: ``rows``, ``empty``, ``error`` or ``timeout``.
        seconds: Time of the ASK.
        error: The endpoint's message for ``error``/``timeout``.
        sql: The SQL Ontop generates for ``SELECT * { ?s <p> ?o }`` / ``{ ?s a <C> }``.
    """

    iri: IRI
    kind: str
    mapped: bool
    status: str
    seconds: float
    error: str | None = None
    sql: str | None = None


@dataclass
class AuditReport:
    """Everything ``navqa audit`` reports for one VKG (see the module docstring)."""

    vkg: str
    coverage: KindCoverage
    by_kind: list[KindCoverage]
    by_namespace: list[KindCoverage]
    stats: dict[str, Any]
    unmapped: list[RankedElement]
    reasoning: list[ReasoningElement]
    domain_range_gaps: list[DomainRangeGap]
    template_mismatches: list[TemplateMismatch]
    overlaps: list[Overlap]
    undeclared_mapped: list[IRI]
    prefixes: dict[str, str] = field(default_factory=dict)
    live: list[LiveElement] | None = None
    live_note: str | None = None

    def compact(self, iri: str) -> str:
        return compact(iri, self.prefixes)

    def findings(self) -> list[dict[str, Any]]:
        """Every finding as one flat list (``id`` is unique and stable)."""
        out: list[dict[str, Any]] = []
        for u in self.unmapped:
            out.append(_f(f"unmapped:{u.iri}", "unmapped", "warning", u.iri,
                          f"{self.compact(u.iri)} ({u.kind}) has no mapping; "
                          f"{u.mapped_neighbours} of its {u.degree} neighbours are mapped"))
        for r in self.reasoning:
            out.append(_f(f"reasoning:{r.iri}", "reasoning", "note", r.iri,
                          f"{self.compact(r.iri)} is populated only through reasoning (via "
                          f"{', '.join(self.compact(v) for v in r.via[:3]) or 'the closure'})"))
        for g in self.domain_range_gaps:
            out.append(_f(f"gap:{g.prop}:{g.role}:{g.cls}", "domain-range-gap", "note",
                          g.prop, f"{self.compact(g.prop)} is mapped but its {g.role} "
                          f"{self.compact(g.cls)} has no mapping of its own ({g.status})"))
        for t in self.template_mismatches:
            sev = "warning" if t.kind == "orphan" else "error"
            out.append(_f(f"template:{t.prop}:{t.position}:{t.template}:{t.kind}",
                          "template-mismatch", sev, t.prop, _mismatch_text(self, t)))
        for o in self.overlaps:
            out.append(_f(f"overlap:{o.kind}:{o.key}", "overlap", "note", o.key,
                          f"{o.kind}: {o.key} is stated by {', '.join(o.mapping_ids)}"))
        for iri in self.undeclared_mapped:
            out.append(_f(f"undeclared:{iri}", "undeclared-mapped", "warning", iri,
                          f"{self.compact(iri)} is used in a mapping but not declared by the "
                          "ontology"))
        for e in self.live or ():
            if e.status == "rows":
                continue
            sev = "error" if e.status == "empty" and e.mapped else "warning"
            what = {"empty": "yields no rows", "error": "fails", "timeout": "timed out"}
            out.append(_f(f"live:{e.iri}", f"live-{e.status}", sev, e.iri,
                          f"{self.compact(e.iri)} ({'mapped' if e.mapped else 'reasoning'}) "
                          f"{what.get(e.status, e.status)} on the live endpoint"
                          + (f": {e.error}" if e.error else "")))
        return out

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready view (the ``--format json`` report)."""
        return {
            "vkg": self.vkg,
            "coverage_definition": "mapped (E0) classes + object properties + data properties "
                                   "/ declared classes + object properties + data properties",
            "coverage": self.coverage.as_dict(),
            "by_kind": [k.as_dict() for k in self.by_kind],
            "by_namespace": [k.as_dict() for k in self.by_namespace],
            "stats": self.stats,
            "unmapped": [asdict(u) for u in self.unmapped],
            "reasoning": [asdict(r) for r in self.reasoning],
            "domain_range_gaps": [asdict(g) for g in self.domain_range_gaps],
            "template_mismatches": [asdict(t) for t in self.template_mismatches],
            "overlaps": [asdict(o) for o in self.overlaps],
            "undeclared_mapped": list(self.undeclared_mapped),
            "live": None if self.live is None else [asdict(e) for e in self.live],
            "live_note": self.live_note,
            "findings": self.findings(),
        }


def _f(fid: str, kind: str, severity: str, element: str, message: str) -> dict[str, Any]:
    return {"id": fid, "kind": kind, "severity": severity, "element": element,
            "message": message}


def _mismatch_text(report: AuditReport, t: TemplateMismatch) -> str:
    p = report.compact(t.prop)
    if t.kind == "orphan":
        return (f"the {t.position}s of {p} ({t.template}, {', '.join(t.mapping_ids)}) are "
                "instances of no mapped class: joins from them to any class never produce "
                "rows")
    cls = ", ".join(report.compact(c) for c in t.expected)
    return (f"the {t.position}s of {p} ({t.template}) can never be IRIs of its declared "
            f"{'range' if t.position == 'object' else 'domain'} {cls} "
            f"({', '.join(t.expected_templates)}): joins through {p} to {cls}'s own data "
            "never produce rows")


# -- the static audit ------------------------------------------------------------------------


def audit(bundle: IndexBundle, name: str, *, prefixes: dict[str, str] | None = None
          ) -> AuditReport:
    """The static audit of one VKG's index (no endpoint needed).

    Args:
        bundle: The VKG's index.
        name: The VKG's name (for the report).
        prefixes: Prefixes for compact names (default: the ontology's and the mapping's).
    """
    onto, maps, active = bundle.ontology, bundle.mappings, bundle.active
    stats = compute_stats(onto, maps, active, bundle.graph)
    seeds, act = stats["closure"]["seeds"], stats["closure"]["active"]
    by_kind: list[KindCoverage] = []
    for k in KINDS:
        declared = stats["ontology"][_ONTOLOGY_KEYS[k]]
        by_kind.append(KindCoverage(k, declared, seeds.get(k, 0),
                                    act.get(k, 0) - seeds.get(k, 0),
                                    declared - act.get(k, 0)))
    total = KindCoverage("total", *(sum(getattr(b, f) for b in by_kind)
                                    for f in ("declared", "mapped", "reasoning", "unmapped")))

    declared = onto.signature
    ns_rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for iri in declared:
        row = ns_rows[namespace(iri)]
        row[0] += 1
        if iri in active.mapped:
            row[1] += 1
        elif iri in active.signature:
            row[2] += 1
        else:
            row[3] += 1
    by_ns = sorted((KindCoverage(ns, *r) for ns, r in ns_rows.items()),
                   key=lambda k: (-k.declared, k.name))

    pre = dict(prefixes or vkg_prefixes(bundle))
    return AuditReport(
        vkg=name,
        coverage=total,
        by_kind=by_kind,
        by_namespace=by_ns,
        stats=stats,
        unmapped=rank_unmapped(bundle),
        reasoning=reasoning_elements(bundle),
        domain_range_gaps=domain_range_gaps(bundle),
        template_mismatches=template_mismatches(bundle),
        overlaps=overlaps(bundle),
        undeclared_mapped=sorted(active.undeclared_mapped),
        prefixes=pre,
    )


def _kind(bundle: IndexBundle, iri: IRI) -> str:
    k = bundle.ontology.kind(iri)
    return str(k) if k is not None else "other"


def neighbours(bundle: IndexBundle, iri: IRI) -> set[IRI]:
    """The neighbourhood of an element in the full ontology (see the module docstring)."""
    onto = bundle.ontology
    out: set[IRI] = set()
    if iri in onto.classes:
        c = onto.classes[iri]
        out |= c.parents
        out |= {k.iri for k in onto.classes.values() if iri in k.parents}
        for p in onto.properties.values():
            ends = p.domains | (p.ranges if p.kind is EntityKind.OBJECT_PROPERTY else set())
            if iri in ends:
                out.add(p.iri)
                out |= {c2 for c2 in p.domains | p.ranges if c2 in onto.classes}
    else:
        prop = onto.property(iri)
        if prop is not None:
            doms = prop.domains or onto.inherited_domains(iri)
            rngs = prop.ranges or onto.inherited_ranges(iri)
            out |= {c for c in doms | rngs if c in onto.classes}
            out |= prop.parents
            out |= {q.iri for q in onto.properties.values() if iri in q.parents}
    out.discard(iri)
    return out


def rank_unmapped(bundle: IndexBundle) -> list[RankedElement]:
    """Declared elements outside the active ontology, most central first."""
    onto, active = bundle.ontology, bundle.active
    rows = []
    for iri in active.unmapped:
        nb = neighbours(bundle, iri)
        mapped = sorted(n for n in nb if n in active.mapped)
        rows.append((len(mapped), len(nb), iri, nb))
    rows.sort(key=lambda r: (-r[0], -r[1], r[2]))
    return [RankedElement(iri=iri, kind=_kind(bundle, iri), label=onto.label(iri), rank=i,
                          degree=deg, mapped_neighbours=m, neighbours=tuple(sorted(nb)))
            for i, (m, deg, iri, nb) in enumerate(rows, 1)]


def reasoning_elements(bundle: IndexBundle) -> list[ReasoningElement]:
    """Active elements that no mapping populates directly, with what populates them.

    Both come from the active ontology (:attr:`~navqa.model.active.ActiveOntology.via`,
    computed by :mod:`navqa.offline.entailment`, Ontop's OWL 2 QL reasoning): the audit
    has no rule of its own.
    """
    onto, active = bundle.ontology, bundle.active
    return [ReasoningElement(iri, _kind(bundle, iri), onto.label(iri),
                             tuple(sorted(active.via.get(iri, ()))))
            for iri in sorted((active.signature - active.mapped) & onto.signature)]


def domain_range_gaps(bundle: IndexBundle) -> list[DomainRangeGap]:
    """Mapped properties whose stated domain or range classes have no mapping of their own."""
    onto, active = bundle.ontology, bundle.active
    out = []
    for p in sorted(active.mapped):
        prop = onto.property(p)
        if prop is None:
            continue
        ends = [("domain", prop.domains)]
        if prop.kind is EntityKind.OBJECT_PROPERTY:
            ends.append(("range", prop.ranges))
        for role, classes in ends:
            for c in sorted(classes):
                if c in onto.classes and c not in active.mapped:
                    status = "populated through reasoning" if active.is_active(c) \
                        else "unmapped"
                    out.append(DomainRangeGap(p, role, c, status))
    return out


def template_mismatches(bundle: IndexBundle) -> list[TemplateMismatch]:
    """IRI templates of property atoms that cannot meet the classes they should connect."""
    onto, maps = bundle.ontology, bundle.mappings
    shapes = ShapeIndex(onto, maps)
    class_templates = [Shape(ShapeKind.TEMPLATE, k) for k in shapes.mapped_class_templates()]
    pre = vkg_prefixes(bundle)
    sites = {_site(t.value) for t in class_templates}

    def own_templates(cls: IRI) -> set[Shape]:
        out: set[Shape] = set()
        for sub in onto.subclasses(cls):
            out |= {s for s in shapes.direct_classes.get(sub, ()) if s.is_iri}
        return out

    found: dict[tuple[IRI, str, str, str], list[str]] = defaultdict(list)
    expected: dict[tuple[IRI, str, str, str], tuple[tuple[IRI, ...], tuple[str, ...]]] = {}
    for a, atom in maps.atoms():
        if atom.is_class or atom.object is None:
            continue
        ends = [("subject", shape_of(atom.subject))]
        if atom.object.term_type.value == "iri":
            ends.append(("object", shape_of(atom.object)))
        for position, sh in ends:
            if sh.kind is not ShapeKind.TEMPLATE:
                continue
            text = sh.text(pre)
            if not any(sh.compatible(c) for c in class_templates):
                if _site(sh.value) not in sites:
                    continue  # a link to another site (a web page, an external dataset)
                key = (atom.predicate, position, text, "orphan")
                found[key].append(a.id)
                continue
            stated = (onto.inherited_domains(atom.predicate) if position == "subject"
                      else onto.inherited_ranges(atom.predicate))
            stated = frozenset(c for c in stated if c in onto.classes)
            if not stated:
                continue
            templates: set[Shape] = set()
            for c in stated:
                templates |= own_templates(c)
            if templates and not any(sh.compatible(t) for t in templates):
                kind = "domain" if position == "subject" else "range"
                key = (atom.predicate, position, text, kind)
                found[key].append(a.id)
                expected[key] = (tuple(sorted(stated)),
                                 tuple(sorted(t.text(pre) for t in templates)))
    out = []
    for key, ids in sorted(found.items()):
        exp, exp_t = expected.get(key, ((), ()))
        out.append(TemplateMismatch(prop=key[0], position=key[1], template=key[2],
                                    mapping_ids=tuple(sorted(set(ids))), kind=key[3],
                                    expected=exp, expected_templates=exp_t))
    return out


def _site(template_key: str) -> str:
    """Scheme and host of a template (``http://example.org``)."""
    parts = urlsplit(template_key.split("{}", 1)[0])
    return f"{parts.scheme}://{parts.netloc}"


def _normal_sql(sql: str) -> str:
    try:
        import sqlglot

        return sqlglot.transpile(sql, read="postgres", write="postgres", pretty=False)[0]
    except Exception:  # sqlglot raises several types; fall back to whitespace
        return " ".join(sql.split())


def overlaps(bundle: IndexBundle) -> list[Overlap]:
    """Atoms stated by several assertions, and assertions with identical SQL."""
    pre = vkg_prefixes(bundle)
    by_key: dict[tuple[str, str, str], set[str]] = defaultdict(set)
    for a, atom in bundle.mappings.atoms():
        subj = shape_of(atom.subject).text(pre)
        obj = "" if atom.object is None else shape_of(atom.object).text(pre)
        by_key[(compact(atom.predicate, pre), subj, obj)].add(a.id)
    out = []
    for (p, s, o), ids in sorted(by_key.items()):
        if len(ids) > 1:
            key = f"{s} {'a' if not o else p} {o if o else p}"
            out.append(Overlap("same-atom", key, tuple(sorted(ids))))
    by_sql: dict[str, list[str]] = defaultdict(list)
    for a in bundle.mappings:
        by_sql[_normal_sql(a.source)].append(a.id)
    for sql, same in sorted(by_sql.items()):
        if len(same) > 1:
            short = sql if len(sql) <= 120 else sql[:117] + "..."
            out.append(Overlap("identical-sql", short, tuple(sorted(same))))
    return out


# -- the live audit --------------------------------------------------------------------------


def probe_live(
    report: AuditReport,
    bundle: IndexBundle,
    endpoint: Any,
    *,
    reformulate_url: str | None = None,
    timeout: float = 60.0,
    progress: Callable[[int, int], None] | None = None,
    elements: Iterable[IRI] | None = None,
) -> AuditReport:
    """Ask the live endpoint, for every active element, whether it yields any row.

    One ``ASK { ?s a <C> }`` / ``ASK { ?s <p> ?o }`` per element, bounded by ``timeout``
    seconds; with ``reformulate_url`` (Ontop in dev mode) also the SQL Ontop generates.

    Args:
        report: The static report; its ``live`` is filled in and it is returned.
        bundle: The VKG's index.
        endpoint: A :class:`~navqa.backends.sparql_http.HttpSparqlEndpoint`.
        reformulate_url: ``http://host:port/ontop/reformulate``, or ``None``.
        timeout: Seconds per ASK.
        progress: ``progress(done, total)``.
        elements: Which elements (default: the active signature, mapped ones first).

    Raises:
        EndpointUnreachableError: the endpoint is down (never reported as "no rows").
    """
    onto, active = bundle.ontology, bundle.active
    todo = sorted(elements if elements is not None else active.signature,
                  key=lambda i: (i not in active.mapped, i))
    classes = bundle.mappings.classes() | frozenset(onto.classes)
    out: list[LiveElement] = []
    sql_note: str | None = None
    session = requests.Session()
    for n, iri in enumerate(todo, 1):
        is_class = iri in classes
        pattern = f"?s a <{iri}>" if is_class else f"?s <{iri}> ?o"
        t0 = time.monotonic()
        status, error = "rows", None
        try:
            if not endpoint.ask(f"ASK {{ {pattern} }}", timeout=timeout).value:
                status = "empty"
        except EndpointUnreachableError:
            raise
        except EndpointError as e:
            from navqa.errors import EndpointTimeoutError

            status = "timeout" if isinstance(e, EndpointTimeoutError) else "error"
            error = _one_line(getattr(e, "server_message", None) or str(e))
        seconds = time.monotonic() - t0
        sql = None
        if reformulate_url is not None and sql_note is None:
            sql, sql_note = _reformulate(session, reformulate_url,
                                         f"SELECT * WHERE {{ {pattern} }}", timeout)
        out.append(LiveElement(iri=iri, kind=_kind(bundle, iri) if iri in onto.signature
                               else ("class" if is_class else "other"),
                               mapped=iri in active.mapped, status=status,
                               seconds=round(seconds, 3), error=error, sql=sql))
        if progress is not None:
            progress(n, len(todo))
    report.live = out
    report.live_note = sql_note
    return report


def _one_line(text: str, n: int = 300) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _reformulate(session: requests.Session, url: str, query: str, timeout: float
                 ) -> tuple[str | None, str | None]:
    """(sql, note): the note is set when the endpoint cannot reformulate at all."""
    try:
        r = session.get(url, params={"query": query, "format": "sql"}, timeout=timeout)
    except requests.RequestException as e:
        raise EndpointUnreachableError(f"cannot reach {url}: {e}", endpoint=url) from e
    if r.status_code == 404:
        return None, ("the endpoint is not in dev mode: /ontop/reformulate is unavailable, "
                      "so no SQL is shown")
    if r.status_code != 200:
        return f"-- reformulation failed ({r.status_code}): {_one_line(r.text)}", None
    return _tidy_sql(r.text), None


def _tidy_sql(sql: str) -> str:
    return re.sub(r"\n{3,}", "\n\n", sql.strip())
