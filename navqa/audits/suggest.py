"""``navqa suggest``: which unmapped elements users need, and draft mappings for them.

1. **Read the log** (:func:`read_log`): questions (plain text, one per line, or JSON
   records with ``question``), traces of ``navqa ask --json`` (their ``MentionsExtracted``
   and ``QueryChecked.unmapped_terms`` events), and Ontop query logs (records with
   ``classesUsedInQuery``/``propertiesUsedInQuery`` — or ``classes``/``properties`` — at
   the top level or under ``payload``; a ``sparqlQuery``/``sparql`` field is parsed when the
   lists are missing). Records may be JSON lines, one JSON document, or several pretty-
   printed ones in a row.
2. **Demand** (:func:`compute_demand`): each question is linked against the **full**
   ontology (NaVQA's linking, :func:`navqa.online.linking.link`, over a
   :class:`~navqa.online.context.SchemaContext` built "w/o AOC", whose unmapped elements are
   described with :func:`~navqa.offline.descriptions.describe_element` and embedded with
   the index's embedder). An unmapped element among the top ``top_k`` classes or
   properties with a score of at least ``min_score`` is needed by that question. Terms
   a generated or logged query actually used count with score 1. Elements are ranked
   by the number of log entries needing them, then by their best score.
3. **Candidates** (:func:`candidates_for`): the database schema is read through
   ``information_schema`` (:mod:`navqa.audits.schema`); tables and columns are ranked by
   the cosine between the element's description and their names and comments, plus a
   bonus for the tables that already hold the element's domain and range classes.
4. **A draft assertion** in ``.obda`` syntax (:func:`draft_for`): subject IRIs reuse the
   domain class's existing template; an object property joins to the range class's
   template (one table holding both, e.g. an association table, or two tables joined
   along a foreign key); a data property takes the best column of a compatible SQL type;
   a class reuses the template of its superclass or sibling on the best-matching table.
5. **Validation** (:func:`validate_drafts`): ontology + original mapping + draft are loaded
   by ``NavqaOntop validate``; then one scratch endpoint serves the original mapping plus
   every valid draft and answers a test query per draft (``SELECT * { ?s <p> ?o } LIMIT
   5``). Everything happens on copies in a temporary directory: the user's mapping file
   is never written.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from navqa.audits.schema import Column, DbSchema, ForeignKey, sql_ident, sql_table
from navqa.backends.protocols import Embedder
from navqa.errors import InputError, MappingParseError
from navqa.model.events import Mentions, ValueMention
from navqa.model.iri import IRI, compact, local_name, split_words
from navqa.model.mapping import TermType
from navqa.model.ontology import EntityKind
from navqa.model.xsd import NumericKind, XsdFamily, xsd_type
from navqa.offline.artifacts import IndexBundle

logger = logging.getLogger(__name__)

__all__ = [
    "ClassSource",
    "Demand",
    "Draft",
    "Evidence",
    "LogEntry",
    "ScratchVkg",
    "SuggestReport",
    "Suggestion",
    "Validation",
    "candidates_for",
    "compute_demand",
    "draft_for",
    "insert_drafts",
    "read_log",
    "render_suggest_json",
    "render_suggest_markdown",
    "validate_drafts",
]

HINT_BONUS = 0.2
"""Added to the similarity of a table that already holds the element's domain or range."""
JOIN_PENALTY = 0.1
"""Subtracted per join in an object-property draft."""


# -- the log ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One question or query from the log.

    Attributes:
        source: ``file:line`` (or ``file#n`` for the n-th JSON document).
        origin: ``question``, ``trace`` (``navqa ask --json``) or ``query-log`` (Ontop).
        question: The natural-language question, if any.
        mentions: Mentions recorded in a trace (else extracted again).
        used_unmapped: Unmapped terms a generated query used (``QueryChecked``).
        used_terms: Classes and properties a logged query used.
    """

    source: str
    origin: str
    question: str | None = None
    mentions: Mentions | None = None
    used_unmapped: tuple[IRI, ...] = ()
    used_terms: tuple[IRI, ...] = ()


def _json_documents(text: str) -> list[tuple[int, Any]]:
    """Every JSON value in ``text`` (JSON lines, one document, or several), with its line."""
    dec = json.JSONDecoder()
    out: list[tuple[int, Any]] = []
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        line = text.count("\n", 0, i) + 1
        value, i = dec.raw_decode(text, i)
        out.append((line, value))
    return out


def _sparql_terms(sparql: str) -> tuple[IRI, ...]:
    from navqa.online.check import parse, used_terms

    try:
        preds, classes = used_terms(parse(sparql))
    except Exception:  # an unparsable logged query tells nothing; it is not an error here
        return ()
    return tuple(sorted(preds | classes))


def _mentions(data: Any) -> Mentions | None:
    if not isinstance(data, dict):
        return None
    values = []
    for v in data.get("values") or ():
        if isinstance(v, dict) and isinstance(v.get("text"), str):
            values.append(ValueMention(v["text"]))
    return Mentions(classes=tuple(x for x in data.get("classes") or () if isinstance(x, str)),
                    properties=tuple(x for x in data.get("properties") or ()
                                     if isinstance(x, str)),
                    values=tuple(values))


def _entry(rec: Any, source: str) -> LogEntry | None:
    if isinstance(rec, str):
        return LogEntry(source, "question", question=rec.strip()) if rec.strip() else None
    if not isinstance(rec, dict):
        return None
    payload: dict[str, Any] = rec["payload"] if isinstance(rec.get("payload"), dict) else rec
    classes = payload.get("classesUsedInQuery", payload.get("classes"))
    props = payload.get("propertiesUsedInQuery", payload.get("properties"))
    sparql = payload.get("sparqlQuery") or payload.get("sparql")
    question = rec.get("question") if isinstance(rec.get("question"), str) else None
    if isinstance(rec.get("events"), list):
        mentions, unmapped = None, []
        for ev in rec["events"]:
            if not isinstance(ev, dict):
                continue
            if ev.get("type") == "MentionsExtracted":
                mentions = _mentions(ev.get("mentions"))
            elif ev.get("type") == "QueryChecked":
                unmapped += [t for t in ev.get("unmapped_terms") or () if isinstance(t, str)]
        used = _sparql_terms(rec["sparql"]) if isinstance(rec.get("sparql"), str) else ()
        return LogEntry(source, "trace", question=question, mentions=mentions,
                        used_unmapped=tuple(dict.fromkeys(unmapped)), used_terms=used)
    if (isinstance(classes, list) or isinstance(props, list)) and question is None:
        terms = [t for t in [*(classes or ()), *(props or ())] if isinstance(t, str)]
        return LogEntry(source, "query-log", used_terms=tuple(dict.fromkeys(terms)))
    if question is None and isinstance(sparql, str):
        return LogEntry(source, "query-log", used_terms=_sparql_terms(sparql))
    if question is not None:
        used = _sparql_terms(sparql) if isinstance(sparql, str) else ()
        return LogEntry(source, "question", question=question, used_terms=used)
    return None


def read_log(path: Path) -> list[LogEntry]:
    """Read questions, ``navqa ask --json`` traces and Ontop query logs (see module doc).

    Raises:
        InputError: the file is missing, or starts like JSON but is not.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise InputError(f"cannot read the log: {e.strerror or e}", path=path) from e
    out: list[LogEntry] = []
    if text.lstrip()[:1] in ("{", "["):
        try:
            docs = _json_documents(text)
        except ValueError as e:
            raise InputError(f"not valid JSON / JSON lines: {e}", path=path) from e
        for at, doc in docs:
            items = doc if isinstance(doc, list) else [doc]
            for k, item in enumerate(items):
                src = f"{path.name}:{at}" + (f"[{k}]" if isinstance(doc, list) else "")
                entry = _entry(item, src)
                if entry is not None:
                    out.append(entry)
        return out
    for n, row in enumerate(text.splitlines(), 1):
        q = row.strip()
        if q and not q.startswith("#"):
            out.append(LogEntry(f"{path.name}:{n}", "question", question=q))
    return out


# -- demand ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Evidence:
    """Why one log entry needs an element."""

    source: str
    question: str | None
    score: float
    reason: str


@dataclass
class Demand:
    """An unmapped element and the log entries that need it."""

    iri: IRI
    kind: str
    label: str
    evidence: list[Evidence] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len({e.source for e in self.evidence})

    @property
    def max_score(self) -> float:
        return max((e.score for e in self.evidence), default=0.0)

    @property
    def mean_score(self) -> float:
        return float(np.mean([e.score for e in self.evidence])) if self.evidence else 0.0


def _element_kind(bundle: IndexBundle, iri: IRI) -> str:
    k = bundle.ontology.kind(iri)
    return str(k) if k is not None else "other"


def compute_demand(
    bundle: IndexBundle,
    embedder: Embedder,
    entries: Sequence[LogEntry],
    *,
    top_k: int = 3,
    min_score: float = 0.4,
) -> list[Demand]:
    """Rank the unmapped elements the log needs (see the module docstring)."""
    from navqa.online.context import SchemaContext
    from navqa.online.linking import link
    from navqa.online.reading.mentions import extract_mentions

    unmapped = bundle.active.unmapped
    onto = bundle.ontology
    found: dict[IRI, Demand] = {}

    def add(iri: IRI, ev: Evidence) -> None:
        d = found.get(iri)
        if d is None:
            d = found[iri] = Demand(iri, _element_kind(bundle, iri), onto.label(iri))
        if not any(e.source == ev.source and e.reason == ev.reason for e in d.evidence):
            d.evidence.append(ev)

    ctx = None
    for entry in entries:
        for t in entry.used_unmapped:
            if t in unmapped:
                add(t, Evidence(entry.source, entry.question, 1.0, "a generated query used it"))
        for t in entry.used_terms:
            if t in unmapped:
                add(t, Evidence(entry.source, entry.question, 1.0, "a logged query used it"))
        if not entry.question:
            continue
        if ctx is None:
            ctx = SchemaContext(bundle, embedder, use_active_ontology=False)
        mentions = entry.mentions or extract_mentions(entry.question)
        linked = link(ctx, entry.question, mentions, k=top_k, k_props=top_k)
        for term in [*linked.classes, *linked.properties]:
            if term.iri in unmapped and term.score >= min_score:
                add(term.iri, Evidence(entry.source, entry.question, round(term.score, 4),
                                       "linked to the question"))
    return sorted(found.values(), key=lambda d: (-d.count, -d.max_score, d.iri))


# -- where IRIs of a class come from ---------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClassSource:
    """A table that produces IRIs of a class through an existing template.

    Attributes:
        cls: The class (or the subclass whose mapping it is).
        template: The template as written in the mapping, expanded (``…/station/{code}``).
        columns: Its placeholder columns, in order.
        table: A table holding those columns.
        mapping_id: The assertion it comes from.
    """

    cls: IRI
    template: str
    columns: tuple[str, ...]
    table: str
    mapping_id: str


@dataclass(frozen=True, slots=True)
class Provider:
    """Columns of ``table`` that hold the values of a :class:`ClassSource`'s template."""

    table: str
    columns: tuple[str, ...]
    via: str  # "self", "fk" or "name"


def class_sources(bundle: IndexBundle, schema: DbSchema, cls: IRI) -> list[ClassSource]:
    """Tables producing IRIs of ``cls`` (its own class atoms first, then its subclasses')."""
    from navqa.model.template import IriTemplate

    onto = bundle.ontology
    order = [cls, *sorted(onto.subclasses(cls, reflexive=False))] if cls in onto.classes \
        else [cls]
    out: list[ClassSource] = []
    seen: set[tuple[str, str]] = set()
    for c in order:
        for a, atom in bundle.mappings.atoms_for(c):
            if not atom.is_class or atom.subject.template is None:
                continue
            tpl = atom.subject.value
            cols = IriTemplate(tpl).columns
            for t in a.tables:
                table = schema.resolve_table(t)
                if table is None or not schema.has_columns(table, cols):
                    continue
                if (tpl, table) in seen:
                    continue
                seen.add((tpl, table))
                out.append(ClassSource(c, tpl, cols, table, a.id))
    return out


def providers(schema: DbSchema, src: ClassSource) -> list[Provider]:
    """Every table holding the values of ``src``'s template columns."""
    out = [Provider(src.table, src.columns, "self")]
    for fk in schema.foreign_keys:
        if fk.ref_table == src.table and set(fk.ref_columns) == set(src.columns) \
                and fk.table != src.table:
            cols = tuple(fk.columns[fk.ref_columns.index(c)] for c in src.columns)
            out.append(Provider(fk.table, cols, "fk"))
    have = {p.table for p in out}
    for table in schema.tables:
        if table not in have and schema.has_columns(table, src.columns):
            out.append(Provider(table, src.columns, "name"))
    return out


# -- candidates ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TableCandidate:
    table: str
    score: float
    hint: bool


@dataclass(frozen=True, slots=True)
class ColumnCandidate:
    table: str
    column: str
    data_type: str
    score: float
    hint: bool


def _words(name: str) -> str:
    return " ".join(split_words(name)) or name


class SchemaVectors:
    """Embeddings of every table and column text of a schema (computed once)."""

    def __init__(self, schema: DbSchema, embedder: Embedder) -> None:
        self.schema = schema
        self.tables = [t for t in schema.tables if not t.startswith("pg_catalog.")]
        texts = []
        for t in self.tables:
            cols = ", ".join(_words(c.name) for c in schema.columns[t][:30])
            comment = schema.table_comments.get(t, "")
            texts.append(f"table {_words(t.split('.')[-1])}: {cols}. {comment}".strip())
        self.columns: list[Column] = [c for t in self.tables for c in schema.columns[t]]
        ctexts = [f"{_words(c.name)} of {_words(c.table.split('.')[-1])} ({c.data_type}). "
                  f"{c.comment or ''}".strip() for c in self.columns]
        vecs = np.asarray(embedder.embed(texts + ctexts), dtype=np.float32) \
            if texts or ctexts else np.zeros((0, 1), np.float32)
        self.table_vecs = vecs[: len(texts)]
        self.column_vecs = vecs[len(texts):]
        self._col_pos = {(c.table, c.name): i for i, c in enumerate(self.columns)}
        self._table_pos = {t: i for i, t in enumerate(self.tables)}

    def table_score(self, vec: np.ndarray, table: str) -> float:
        i = self._table_pos.get(table)
        return float(self.table_vecs[i] @ vec) if i is not None else 0.0

    def column_score(self, vec: np.ndarray, table: str, column: str) -> float:
        i = self._col_pos.get((table, column))
        return float(self.column_vecs[i] @ vec) if i is not None else 0.0


def element_description(bundle: IndexBundle, iri: IRI) -> str:
    """desc(e) of an element of T, active or not."""
    from navqa.offline.descriptions import ElementKind, describe_element

    kind = {EntityKind.CLASS: ElementKind.CLASS,
            EntityKind.OBJECT_PROPERTY: ElementKind.OBJECT_PROPERTY}.get(
        bundle.ontology.kind(iri), ElementKind.DATA_PROPERTY)  # type: ignore[arg-type]
    return describe_element(bundle.ontology, iri, kind)


def _related_classes(bundle: IndexBundle, iri: IRI) -> tuple[list[IRI], list[IRI]]:
    """(domain-side, range-side) classes of a property; for a class: (superclasses and
    siblings, [])."""
    onto = bundle.ontology
    if iri in onto.classes:
        c = onto.classes[iri]
        rel: list[IRI] = []
        for p in sorted(c.parents):
            rel += [s for s in sorted(onto.subclasses(p, reflexive=False)) if s != iri]
            rel.append(p)
        for p in sorted(onto.superclasses(iri, reflexive=False)):
            if p not in rel:
                rel.append(p)
        return rel, []
    prop = onto.property(iri)

    def specific(stated: Iterable[IRI], inherited: Iterable[IRI]) -> list[IRI]:
        cs = {c for c in stated if c in onto.classes} or \
            {c for c in inherited if c in onto.classes}
        # most specific first: a range Region beats the Place inherited from locatedIn
        return sorted(cs, key=lambda c: (-len(onto.superclasses(c)), c))

    doms = specific(prop.domains if prop else (), onto.inherited_domains(iri))
    rngs = specific(prop.ranges if prop else (), onto.inherited_ranges(iri))
    return doms, rngs


def hint_tables(bundle: IndexBundle, schema: DbSchema, iri: IRI) -> set[str]:
    """Tables already mapped to the element's domain/range classes (or related classes)."""
    doms, rngs = _related_classes(bundle, iri)
    out: set[str] = set()
    for c in [*doms, *rngs]:
        out |= {s.table for s in class_sources(bundle, schema, c)}
    return out


def candidates_for(bundle: IndexBundle, vectors: SchemaVectors, vec: np.ndarray, iri: IRI,
                   *, n_tables: int = 5, n_columns: int = 8
                   ) -> tuple[list[TableCandidate], list[ColumnCandidate]]:
    """The tables and columns closest to the element's description (hints boosted)."""
    schema = vectors.schema
    hints = hint_tables(bundle, schema, iri)
    tables = sorted((TableCandidate(t, round(vectors.table_score(vec, t)
                                             + (HINT_BONUS if t in hints else 0.0), 4),
                                    t in hints) for t in vectors.tables),
                    key=lambda c: (-c.score, c.table))[:n_tables]
    rng = _data_range(bundle, iri)
    cols = []
    for c in vectors.columns:
        if bundle.ontology.kind(iri) is EntityKind.DATA_PROPERTY and \
                _value_expression(c, rng, "x") is None:
            continue
        s = vectors.column_score(vec, c.table, c.name) + (HINT_BONUS if c.table in hints else 0)
        cols.append(ColumnCandidate(c.table, c.name, c.data_type, round(s, 4),
                                    c.table in hints))
    cols.sort(key=lambda c: (-c.score, c.table, c.column))
    return tables, cols[:n_columns]


# -- drafts ----------------------------------------------------------------------------------


@dataclass
class Draft:
    """A draft mapping assertion for a maintainer to review.

    Attributes:
        iri: The element it maps.
        mapping_id: Its ``mappingId``.
        target: The ``.obda`` target line.
        source: The SQL (several lines, no blank line).
        explanation: How it was derived.
        test_query: The SPARQL that checks it returns rows.
    """

    iri: IRI
    mapping_id: str
    target: str
    source: str
    explanation: str
    test_query: str

    @property
    def text(self) -> str:
        """The assertion in ``.obda`` syntax."""
        src = self.source.replace("\n", "\n\t\t\t")
        return f"mappingId\t{self.mapping_id}\ntarget\t\t{self.target}\nsource\t\t{src}\n"


def _compact_iri(iri: str, prefixes: dict[str, str]) -> str:
    c = compact(iri, prefixes)
    return c


def _render_template(template: str, names: Sequence[str], prefixes: dict[str, str]) -> str:
    """The template with its placeholders renamed (keeping their quoting), prefixed."""
    it = iter(names)

    def repl(m: re.Match[str]) -> str:
        inner = m.group(1).strip()
        new = next(it)
        return "{" + (f'"{new}"' if inner.startswith('"') else new) + "}"

    text = re.sub(r"(?<!\\)\{([^{}]*)\}", repl, template)
    best = ""
    for p, ns in prefixes.items():
        if ns and text.startswith(ns) and len(ns) > len(prefixes.get(best, "")) and p:
            best = p
    if best and re.fullmatch(r"[^\s<>\"]*", text[len(prefixes[best]):]):
        return f"{best}:{text[len(prefixes[best]):]}"
    return f"<{text}>"


def _data_range(bundle: IndexBundle, iri: IRI) -> str | None:
    rngs = [r for r in bundle.ontology.inherited_ranges(iri) if r not in bundle.ontology.classes]
    return rngs[0] if len(rngs) == 1 else None


def _value_expression(col: Column, rng: str | None, ref: str) -> str | None:
    """SQL turning ``col`` into a value of datatype ``rng`` (``None``: incompatible)."""
    fam = col.family
    if fam == "geometry":
        return None
    if rng is None:
        return ref if fam != "other" else None
    t = xsd_type(rng)
    want = None if t is None else t.family
    if want is XsdFamily.YEAR:
        if fam in ("date", "datetime"):
            return f"CAST(EXTRACT(YEAR FROM {ref}) AS INTEGER)"
        return ref if fam == "integer" else None
    if want is XsdFamily.DATE:
        return ref if fam == "date" else f"CAST({ref} AS DATE)" if fam == "datetime" else None
    if want in (XsdFamily.DATETIME, XsdFamily.TIME, XsdFamily.BOOLEAN):
        return ref if fam == want.value else None
    if t is not None and t.numeric is NumericKind.INTEGER:
        return ref if fam == "integer" else None
    if want is XsdFamily.NUMERIC:
        return ref if fam in ("integer", "numeric") else None
    return ref if fam == "text" else None


def _snake(name: str) -> str:
    return "_".join(split_words(name)) or "value"


def _mapping_id(bundle: IndexBundle, iri: IRI) -> str:
    base = f"navqa-draft-{local_name(iri)}"
    ids = {a.id for a in bundle.mappings}
    out, n = base, 1
    while out in ids:
        n += 1
        out = f"{base}-{n}"
    return out


def _aliases(first: Sequence[str], second: Sequence[str]) -> tuple[list[str], list[str]]:
    a = list(first)
    b = [f"{c}_o" if c in a else c for c in second]
    return a, b


def draft_for(bundle: IndexBundle, schema: DbSchema, vectors: SchemaVectors,
              vec: np.ndarray, iri: IRI, *, prefixes: dict[str, str] | None = None
              ) -> tuple[Draft | None, str | None]:
    """A draft assertion for ``iri``, or ``(None, why not)``."""
    pre = dict(prefixes if prefixes is not None else bundle.mappings.prefixes)
    kind = bundle.ontology.kind(iri)
    if kind is EntityKind.OBJECT_PROPERTY:
        return _draft_object_property(bundle, schema, vectors, vec, iri, pre)
    if kind is EntityKind.DATA_PROPERTY:
        return _draft_data_property(bundle, schema, vectors, vec, iri, pre)
    if kind is EntityKind.CLASS:
        return _draft_class(bundle, schema, vectors, vec, iri, pre)
    return None, f"{iri} is not a class or property the ontology declares"


def _sources_of(bundle: IndexBundle, schema: DbSchema, classes: Iterable[IRI]
                ) -> list[ClassSource]:
    out: list[ClassSource] = []
    for c in classes:
        out += class_sources(bundle, schema, c)
    return out


def _draft_data_property(bundle: IndexBundle, schema: DbSchema, vectors: SchemaVectors,
                         vec: np.ndarray, iri: IRI, pre: dict[str, str]
                         ) -> tuple[Draft | None, str | None]:
    doms, _ = _related_classes(bundle, iri)
    sources = _sources_of(bundle, schema, doms)
    if not sources:
        return None, "its domain class has no mapped template to attach values to"
    rng = _data_range(bundle, iri)
    hints = {s.table for s in sources}
    best: tuple[float, ClassSource, Provider, Column, str] | None = None
    for src in sources:
        for prov in providers(schema, src):
            if prov.via == "name":
                continue
            for col in schema.columns.get(prov.table, ()):
                expr = _value_expression(col, rng, "t1." + sql_ident(col.name))
                if expr is None or col.name in prov.columns:
                    continue
                score = vectors.column_score(vec, col.table, col.name) + (
                    HINT_BONUS if prov.table in hints else 0.0)
                if best is None or score > best[0]:
                    best = (score, src, prov, col, expr)
    if best is None:
        return None, ("no column of a table holding its domain class has a type compatible "
                      f"with {compact(rng, pre) if rng else 'its range'}")
    _, src, prov, col, expr = best
    alias = _snake(local_name(iri))
    subj_names = list(src.columns)
    if alias in subj_names:
        alias += "_value"
    select = ", ".join(f"t1.{sql_ident(c)} AS {sql_ident(a)}"
                       for c, a in zip(prov.columns, subj_names, strict=True))
    source = (f"SELECT {select}, {expr} AS {sql_ident(alias)}\n"
              f"FROM {sql_table(prov.table)} t1\n"
              f"WHERE t1.{sql_ident(col.name)} IS NOT NULL")
    dt = f"^^{_compact_iri(rng, pre)}" if rng else ""
    target = (f"{_render_template(src.template, subj_names, pre)} "
              f"{_compact_iri(iri, pre)} {{{alias}}}{dt} .")
    how = (f"subjects reuse the template of {compact(src.cls, pre)} ({src.mapping_id}); "
           f"values from {prov.table}.{col.name} ({col.data_type})")
    return Draft(iri, _mapping_id(bundle, iri), target, source, how,
                 f"SELECT ?s ?o WHERE {{ ?s <{iri}> ?o }} LIMIT 5"), None


def _join_paths(schema: DbSchema, d_prov: list[Provider], r_prov: list[Provider]
                ) -> list[tuple[Provider, Provider, ForeignKey | None, bool]]:
    """(domain provider, range provider, join FK or None for one table, fk from d side)."""
    out: list[tuple[Provider, Provider, ForeignKey | None, bool]] = []
    for pd in d_prov:
        for pr in r_prov:
            if pd.table == pr.table:
                if not (pd.via == "self" and pr.via == "self") or pd.columns != pr.columns:
                    out.append((pd, pr, None, True))
                continue
            # A join along the very foreign key that makes one table a provider of the
            # other end adds nothing: that table alone is a one-table path.
            for fk in schema.fks_from(pd.table):
                if fk.ref_table == pr.table and not (
                        pr.via == "self" and set(fk.ref_columns) == set(pr.columns)):
                    out.append((pd, pr, fk, True))
            for fk in schema.fks_from(pr.table):
                if fk.ref_table == pd.table and not (
                        pd.via == "self" and set(fk.ref_columns) == set(pd.columns)):
                    out.append((pd, pr, fk, False))
    return out


def _draft_object_property(bundle: IndexBundle, schema: DbSchema, vectors: SchemaVectors,
                           vec: np.ndarray, iri: IRI, pre: dict[str, str]
                           ) -> tuple[Draft | None, str | None]:
    doms, rngs = _related_classes(bundle, iri)
    d_src = _sources_of(bundle, schema, doms)
    r_src = _sources_of(bundle, schema, rngs)
    if not d_src or not r_src:
        side = "domain" if not d_src else "range"
        return None, f"its {side} class has no mapped template to reuse"
    hints = {s.table for s in d_src + r_src}
    best: tuple[float, ClassSource, ClassSource, Any] | None = None
    for sd in d_src:
        d_prov = [p for p in providers(schema, sd) if p.via != "name"] or providers(schema, sd)
        for sr in r_src:
            r_prov = [p for p in providers(schema, sr) if p.via != "name"] or \
                providers(schema, sr)
            for path in _join_paths(schema, d_prov, r_prov):
                pd, pr, fk, _ = path
                tables = {pd.table, pr.table}
                # the weakest table decides: a join only helps when both tables fit
                sim = min(vectors.table_score(vec, t) for t in tables)
                score = sim + (HINT_BONUS if tables & hints else 0.0) \
                    - (JOIN_PENALTY if fk is not None else 0.0)
                if best is None or score > best[0]:
                    best = (score, sd, sr, path)
    if best is None:
        return None, ("no table (or pair of tables joined by a foreign key) holds both the "
                      "domain's and the range's template columns")
    _, sd, sr, (pd, pr, fk, d_side) = best
    s_names, o_names = _aliases(sd.columns, sr.columns)
    r_ref = "t1" if fk is None else "t2"
    sel = [f"t1.{sql_ident(c)} AS {sql_ident(a)}" for c, a in zip(pd.columns, s_names,
                                                                   strict=True)]
    sel += [f"{r_ref}.{sql_ident(c)} AS {sql_ident(a)}" for c, a in zip(pr.columns, o_names,
                                                                        strict=True)]
    frm = f"FROM {sql_table(pd.table)} t1"
    if fk is not None:
        left, right = ("t1", "t2") if d_side else ("t2", "t1")
        on = " AND ".join(f"{left}.{sql_ident(a)} = {right}.{sql_ident(b)}"
                          for a, b in zip(fk.columns, fk.ref_columns, strict=True))
        frm += f" JOIN {sql_table(pr.table)} t2 ON {on}"
    where = " AND ".join(f"{r_ref}.{sql_ident(c)} IS NOT NULL" for c in pr.columns)
    source = f"SELECT DISTINCT {', '.join(sel)}\n{frm}\nWHERE {where}"
    target = (f"{_render_template(sd.template, s_names, pre)} {_compact_iri(iri, pre)} "
              f"{_render_template(sr.template, o_names, pre)} .")
    if fk is None:
        via = f"both from {pd.table}"
    else:
        pairs = ", ".join(f"{a} = {b}" for a, b in zip(fk.columns, fk.ref_columns, strict=True))
        via = f"{pd.table} joined to {pr.table} on {pairs}"
    how = (f"subjects reuse the template of {compact(sd.cls, pre)} ({sd.mapping_id}), objects "
           f"that of {compact(sr.cls, pre)} ({sr.mapping_id}); {via}")
    return Draft(iri, _mapping_id(bundle, iri), target, source, how,
                 f"SELECT ?s ?o WHERE {{ ?s <{iri}> ?o }} LIMIT 5"), None


def _draft_class(bundle: IndexBundle, schema: DbSchema, vectors: SchemaVectors,
                 vec: np.ndarray, iri: IRI, pre: dict[str, str]
                 ) -> tuple[Draft | None, str | None]:
    related, _ = _related_classes(bundle, iri)
    sources = _sources_of(bundle, schema, related)
    hints = {s.table for s in sources}
    best: tuple[float, ClassSource | None, Provider | None, str] | None = None
    for src in sources:
        for prov in providers(schema, src):
            if prov.via == "name":
                continue
            score = vectors.table_score(vec, prov.table) + (
                HINT_BONUS if prov.table in hints else 0.0)
            if best is None or score > best[0]:
                best = (score, src, prov, prov.table)
    if best is None:
        # no related template: mint one on the best table with a primary key
        ranked = sorted(((vectors.table_score(vec, t), t) for t in vectors.tables
                         if schema.primary_keys.get(t)), reverse=True)
        if not ranked:
            return None, "no related class has a template and no table has a primary key"
        table = ranked[0][1]
        pk = schema.primary_keys[table]
        base = _data_namespace(bundle) + local_name(iri).lower() + "/"
        template = base + "/".join("{" + c + "}" for c in pk)
        target = f"{_render_template(template, list(pk), pre)} a {_compact_iri(iri, pre)} ."
        sel = ", ".join(f"t1.{sql_ident(c)} AS {sql_ident(c)}" for c in pk)
        return Draft(iri, _mapping_id(bundle, iri), target,
                     f"SELECT DISTINCT {sel}\nFROM {sql_table(table)} t1",
                     f"a new template on {table}'s primary key (no related class is mapped)",
                     f"SELECT ?s WHERE {{ ?s a <{iri}> }} LIMIT 5"), None
    _, best_src, best_prov, _t = best
    assert best_src is not None and best_prov is not None
    src, prov = best_src, best_prov
    sel = ", ".join(f"t1.{sql_ident(c)} AS {sql_ident(a)}"
                    for c, a in zip(prov.columns, src.columns, strict=True))
    where = " AND ".join(f"t1.{sql_ident(c)} IS NOT NULL" for c in prov.columns)
    target = (f"{_render_template(src.template, list(src.columns), pre)} a "
              f"{_compact_iri(iri, pre)} .")
    how = (f"reuses the template of the related class {compact(src.cls, pre)} "
           f"({src.mapping_id}) on {prov.table}; restrict the rows (WHERE …) to the instances "
           "that really are of this class")
    return Draft(iri, _mapping_id(bundle, iri), target,
                 f"SELECT DISTINCT {sel}\nFROM {sql_table(prov.table)} t1\nWHERE {where}", how,
                 f"SELECT ?s WHERE {{ ?s a <{iri}> }} LIMIT 5"), None


def _data_namespace(bundle: IndexBundle) -> str:
    """The longest common ``…/`` prefix of the class templates (where data IRIs live)."""
    keys = sorted({atom.subject.value for _, atom in bundle.mappings.atoms()
                   if atom.is_class and atom.subject.term_type is TermType.IRI})
    if not keys:
        return "http://example.org/data/"
    prefix = os.path.commonprefix(keys)
    cut = max(prefix.rfind("/"), prefix.rfind("#"))
    return prefix[: cut + 1] if cut > len("http://") else "http://example.org/data/"


# -- validation ------------------------------------------------------------------------------


def insert_drafts(mapping_text: str, drafts: Sequence[Draft]) -> str:
    """The ``.obda`` text with the draft assertions added to its mapping collection."""
    end = mapping_text.rfind("]]")
    if end < 0:
        raise InputError("the mapping has no [MappingDeclaration] collection to extend")
    body = mapping_text[:end].rstrip("\n") + "\n"
    blocks = "".join("\n" + d.text for d in drafts)
    return body + blocks + mapping_text[end:]


@dataclass
class Validation:
    """What Ontop said about one draft.

    Attributes:
        status: ``valid``, ``invalid`` or ``not-validated``.
        messages: Ontop's error lines (for ``invalid``).
        query_status: ``rows``, ``empty`` or ``error`` for the test query.
        rows: Up to 5 rows of the test query, as strings.
        error: The endpoint's message when the test query failed.
    """

    status: str
    messages: list[str] = field(default_factory=list)
    query_status: str | None = None
    rows: list[list[str]] = field(default_factory=list)
    error: str | None = None


@dataclass
class ScratchVkg:
    """What a scratch Ontop needs: the VKG's files, its database and the Ontop install.

    Attributes:
        install: An :class:`~navqa.runtime.ontop_setup.OntopInstall`.
        ontology: The ontology file.
        mapping: The user's mapping (read, never written).
        jdbc_url / user / password: The database.
        properties: Extra Ontop properties (the dataset manifest's).
        catalog: XML catalog for ``owl:imports``.
        workdir: Where the temporary copies go.
        driver_jars: JDBC driver jars for Ontop's class path (other databases than
            PostgreSQL).
    """

    install: Any
    ontology: Path
    mapping: Path
    jdbc_url: str
    user: str
    password: str | None
    properties: dict[str, str] = field(default_factory=dict)
    catalog: Path | None = None
    workdir: Path | None = None
    java_heap: str = "1g"
    start_timeout: float = 240.0
    driver_jars: tuple[Path, ...] = ()


def _properties_file(scratch: ScratchVkg, path: Path) -> Path:
    props = {"jdbc.url": scratch.jdbc_url, "jdbc.user": scratch.user,
             "jdbc.driver": "org.postgresql.Driver", "jdbc.initScript": "SET TIME ZONE 'UTC'"}
    props.update(scratch.properties)
    path.write_text("".join(f"{k}={v.replace(chr(92), chr(92) * 2)}\n"
                            for k, v in props.items()), encoding="utf-8")
    return path


def _ontop_validate(scratch: ScratchVkg, mapping: Path, props: Path) -> tuple[bool, list[str]]:
    from navqa.runtime.ontop_setup import MAIN_CLASS

    inst = scratch.install
    cmd = [inst.java, f"-Xmx{scratch.java_heap}", "-Dfile.encoding=UTF-8",
           "-Duser.timezone=UTC", "-cp",
           os.pathsep.join([inst.classpath, *map(str, scratch.driver_jars)]), MAIN_CLASS,
           "validate",
           "--ontology", str(scratch.ontology), "--mapping", str(mapping),
           "--properties", str(props)]
    if scratch.catalog is not None:
        cmd += ["--xml-catalog", str(scratch.catalog)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("ONTOP_")}
    if scratch.password is not None:
        env["ONTOP_DB_PASSWORD"] = scratch.password
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env,
                          timeout=scratch.start_timeout, stdin=subprocess.DEVNULL)
    out = proc.stdout + proc.stderr
    lines = [ln[len("navqa-ontop: "):] for ln in out.splitlines()
             if ln.startswith("navqa-ontop: ") and ln[len("navqa-ontop: "):] != "VALID"]
    ok = proc.returncode == 0 and "navqa-ontop: VALID" in out
    return ok, lines[:12]


def _term_text(t: Any) -> str:
    if t is None:
        return ""
    return str(getattr(t, "value", getattr(t, "id", t)))


def validate_drafts(scratch: ScratchVkg, drafts: Sequence[Draft],
                    status: Callable[[str], None] | None = None) -> list[Validation]:
    """Validate each draft with ``NavqaOntop validate``, then run its test query on one
    scratch endpoint serving the original mapping plus every valid draft.

    The user's mapping is only read; copies go to a temporary directory (removed after).
    """
    from navqa.backends.sparql_http import HttpSparqlEndpoint
    from navqa.errors import EndpointError
    from navqa.offline.obda_parser import parse_obda_text
    from navqa.runtime.ontop import OntopProcess, OntopSpec

    say = status or (lambda _m: None)
    original = scratch.mapping.read_text(encoding="utf-8")
    results = [Validation("not-validated") for _ in drafts]
    if scratch.mapping.suffix.lower() != ".obda":
        for v in results:
            v.messages.append("drafts are .obda assertions; the VKG's mapping is R2RML")
        return results
    with tempfile.TemporaryDirectory(prefix="navqa-suggest-",
                                     dir=scratch.workdir) as tmp_name:
        tmp = Path(tmp_name)
        props = _properties_file(scratch, tmp / "db.properties")
        valid: list[int] = []
        for i, d in enumerate(drafts):
            path = tmp / f"draft-{i}.obda"
            text = insert_drafts(original, [d])
            try:
                parse_obda_text(text, path=path)
            except MappingParseError as e:
                results[i] = Validation("invalid", [e.message])
                continue
            path.write_text(text, encoding="utf-8")
            say(f"validating the draft for {local_name(d.iri)}")
            ok, msgs = _ontop_validate(scratch, path, props)
            results[i] = Validation("valid" if ok else "invalid", msgs)
            if ok:
                valid.append(i)
        if not valid:
            return results
        combined = tmp / "combined.obda"
        combined.write_text(insert_drafts(original, [drafts[i] for i in valid]),
                            encoding="utf-8")
        spec = OntopSpec(ontology=scratch.ontology, mapping=combined, jdbc_url=scratch.jdbc_url,
                         user=scratch.user, password=scratch.password,
                         properties=dict(scratch.properties), xml_catalog=scratch.catalog,
                         driver_jars=scratch.driver_jars)
        say("starting a scratch endpoint with the valid drafts")
        proc = OntopProcess(scratch.install, spec, log_path=tmp / "ontop.log",
                            java_heap=scratch.java_heap)
        proc.start(timeout=scratch.start_timeout)
        try:
            ep = HttpSparqlEndpoint(proc.url, timeout=120)
            for i in valid:
                v = results[i]
                t0 = time.monotonic()
                try:
                    res = ep.select(drafts[i].test_query)
                except EndpointError as e:
                    v.query_status, v.error = "error", str(e)[:500]
                    continue
                v.rows = [[_term_text(x) for x in row] for row in res.rows[:5]]
                v.query_status = "rows" if res.rows else "empty"
                logger.info("test query of %s: %d rows in %.2fs", drafts[i].mapping_id,
                            len(res.rows), time.monotonic() - t0)
        finally:
            proc.stop()
    return results


# -- the whole report ------------------------------------------------------------------------


@dataclass
class Suggestion:
    """One needed element: its demand, candidate tables/columns, draft and validation."""

    demand: Demand
    description: str
    tables: list[TableCandidate] = field(default_factory=list)
    columns: list[ColumnCandidate] = field(default_factory=list)
    draft: Draft | None = None
    note: str | None = None
    validation: Validation | None = None


@dataclass
class SuggestReport:
    """Everything ``navqa suggest`` reports."""

    vkg: str
    log: str
    entries: int
    suggestions: list[Suggestion]
    prefixes: dict[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out = []
        for s in self.suggestions:
            d = s.demand
            out.append({
                "element": d.iri, "kind": d.kind, "label": d.label, "demand": d.count,
                "max_score": round(d.max_score, 4), "mean_score": round(d.mean_score, 4),
                "evidence": [asdict(e) for e in d.evidence],
                "description": s.description,
                "tables": [asdict(t) for t in s.tables],
                "columns": [asdict(c) for c in s.columns],
                "draft": None if s.draft is None else {**asdict(s.draft), "obda": s.draft.text},
                "note": s.note,
                "validation": None if s.validation is None else asdict(s.validation),
            })
        return {"vkg": self.vkg, "log": self.log, "entries": self.entries, "suggestions": out}


def render_suggest_json(report: SuggestReport) -> str:
    return json.dumps(report.as_dict(), indent=1, ensure_ascii=False)


def render_suggest_markdown(report: SuggestReport) -> str:
    pre = report.prefixes
    lines = [f"# Mapping suggestions: {report.vkg}", "",
             f"{report.entries} log entries from `{report.log}`; "
             f"{len(report.suggestions)} unmapped elements are needed.", ""]
    if report.suggestions:
        lines += ["| element | kind | demand | best score | draft | validation | rows |",
                  "|---|---|---|---|---|---|---|"]
        for s in report.suggestions:
            v = s.validation
            lines.append(f"| `{compact(s.demand.iri, pre)}` | {s.demand.kind} | "
                         f"{s.demand.count} | {s.demand.max_score:.2f} | "
                         f"{'yes' if s.draft else 'no'} | {v.status if v else '—'} | "
                         f"{(v.query_status or '—') if v else '—'} |")
    for s in report.suggestions:
        d = s.demand
        lines += ["", f"## `{compact(d.iri, pre)}` ({d.kind}) — needed by {d.count} "
                  f"entr{'y' if d.count == 1 else 'ies'}", "", f"> {s.description}", ""]
        for e in d.evidence[:8]:
            q = f" “{e.question}”" if e.question else ""
            lines.append(f"- {e.source}{q} — {e.reason} ({e.score:.2f})")
        if len(d.evidence) > 8:
            lines.append(f"- … and {len(d.evidence) - 8} more")
        if s.tables:
            lines += ["", "Candidate tables: " + ", ".join(
                f"`{t.table}` ({t.score:.2f}{', hint' if t.hint else ''})" for t in s.tables)]
        if s.columns:
            lines += ["", "Candidate columns: " + ", ".join(
                f"`{c.table}.{c.column}` {c.data_type} ({c.score:.2f})" for c in s.columns)]
        if s.draft is None:
            lines += ["", f"No draft: {s.note}"]
            continue
        lines += ["", f"Draft ({s.draft.explanation}):", "", "```", s.draft.text.rstrip(), "```"]
        v = s.validation
        if v is None:
            continue
        lines += ["", f"Validation: **{v.status}**"
                  + (f"; test query `{s.draft.test_query}` → **{v.query_status}**"
                     if v.query_status else "")]
        lines += [f"    {m}" for m in v.messages]
        if v.error:
            lines.append(f"    {v.error}")
        if v.rows:
            lines += ["", "| " + " | ".join(f"col {i + 1}" for i in range(len(v.rows[0])))
                      + " |", "|" + "---|" * len(v.rows[0])]
            lines += ["| " + " | ".join(x.replace("|", "\\|") for x in r) + " |"
                      for r in v.rows]
    return "\n".join(lines) + "\n"


def build_suggestions(bundle: IndexBundle, embedder: Embedder, demands: Sequence[Demand],
                      schema: DbSchema, *, limit: int = 10) -> list[Suggestion]:
    """Candidates and a draft for each of the first ``limit`` needed elements."""
    vectors = SchemaVectors(schema, embedder)
    out = []
    for d in list(demands)[:limit]:
        desc = element_description(bundle, d.iri)
        vec = np.asarray(embedder.embed([desc]), dtype=np.float32)[0]
        tables, columns = candidates_for(bundle, vectors, vec, d.iri)
        draft, why = draft_for(bundle, schema, vectors, vec, d.iri)
        out.append(Suggestion(d, desc, tables, columns, draft, why))
    return out
