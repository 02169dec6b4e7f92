"""Parse W3C R2RML mappings (Turtle) into a :class:`~navqa.model.mapping.MappingSet`.

Normalisation, in small steps (morph-kgc style):

1. **Triples maps** are the nodes typed ``rr:TriplesMap`` or carrying ``rr:logicalTable``.
   Each gives one :class:`~navqa.model.mapping.MappingAssertion` whose id is the triples
   map IRI written out in full (``urn:Stage``, ``Mapping:00001:...``), or as written when
   it is relative and the file declares no ``@base`` (``<#TriplesMap1>`` → ``#TriplesMap1``,
   never a path of this machine), or ``_:<id>`` for a blank node. It is located at the
   line where the IRI first starts a line in the file.
2. **Logical table**: ``rr:sqlQuery`` is kept as written (trailing ``;`` dropped);
   ``rr:tableName "wellbore"`` becomes ``SELECT * FROM "wellbore"`` (a name already in
   double quotes is kept; ``schema.table`` becomes ``"schema"."table"``).
3. **Shortcuts** are expanded: ``rr:subject`` / ``rr:predicate`` / ``rr:object`` /
   ``rr:graph`` X mean a term map with ``rr:constant X``.
4. **Term maps**: ``rr:template`` / ``rr:column`` / ``rr:constant``; ``rr:termType`` defaults
   to IRI, except for object maps that are column-valued or carry ``rr:datatype`` or
   ``rr:language`` (literals), as in R2RML §7.4. Template text is kept as written
   (``{"wlbName"}`` keeps its quotes); column term maps hold the unquoted column name.
   ``rr:class`` on the subject map gives class atoms. Graph maps are read but not
   represented (atoms carry no graph).
5. **Referencing object maps** (``rr:parentTriplesMap``):

   * without ``rr:joinCondition`` the parent's logical table must be the child's (R2RML
     §8); the parent's subject map is then evaluated on the child rows and the atom
     stays in the child's assertion;
   * with join conditions the atom goes into an extra assertion with id
     ``<child id>#ref<k>`` (k counts the joins of the child from 1) and SQL::

         SELECT child.*, parent.<c> AS "parent_<c>", ...
         FROM (<child SQL>) AS child JOIN (<parent SQL>) AS parent
           ON child.<child col> = parent.<parent col> AND ...

     where ``<c>`` ranges over the columns of the parent's subject map; its object is the
     parent's subject template with each placeholder renamed to ``{"parent_<c>"}``, so
     the template key (and the IRIs it builds) is the parent subject's.

A triples map with several subject maps breaks R2RML (exactly one is required). Ontop's
OBDA→R2RML export produces them when one ``.obda`` mapping has two subjects: it writes one
triples map per subject, all with the same IRI, and the RDF merge glues them together
(Bgee's ``urn:Species``). Which predicate-object maps belong to which subject is then lost.
By default every predicate-object map is applied to every subject map (a superset of the
original, with a warning); ``strict=True`` raises instead.

Errors (:class:`~navqa.errors.MappingParseError` with file, line and triples-map id):
malformed Turtle, a triples map without logical table or subject map, a term map with no
or several of template/column/constant, a non-constant predicate map, a literal subject,
an unknown parent triples map, a join-less reference between different logical tables.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

from rdflib import BNode, Graph, Literal, Namespace, URIRef
from rdflib.namespace import RDF
from rdflib.term import Node

from navqa.errors import MappingParseError
from navqa.model.mapping import (
    MappingAssertion,
    MappingAtom,
    MappingSet,
    SourceLocation,
    TermKind,
    TermMap,
    TermType,
)
from navqa.model.template import PLACEHOLDER, unquote_column

logger = logging.getLogger(__name__)

__all__ = ["PARENT_ALIAS_PREFIX", "parse_r2rml"]

RR = Namespace("http://www.w3.org/ns/r2rml#")
_TERM_TYPES: dict[Node, TermType] = {
    RR.IRI: TermType.IRI,
    RR.BlankNode: TermType.BLANK,
    RR.Literal: TermType.LITERAL,
}
_BASE = "http://navqa.invalid/r2rml-base/"
"""Base IRI for relative IRIs in a document without ``@base``; stripped again from ids."""
PARENT_ALIAS_PREFIX = "parent_"
"""Prefix of the column aliases the join rewrite gives the parent's subject columns."""


@dataclass(frozen=True, slots=True)
class _Context:
    """What every step needs to read the graph and report errors."""

    g: Graph
    path: Path
    lines: dict[str, int]

    def error(self, message: str, tm: Node | None = None) -> MappingParseError:
        mid = _tm_id(tm) if tm is not None else None
        line = self.lines.get(mid) if mid else None
        return MappingParseError(message, path=self.path, line=line, mapping_id=mid)

    def one(self, node: Node, p: URIRef, tm: Node) -> Node | None:
        """The single value of ``p`` on ``node`` (``None`` if absent; several is an error)."""
        values = list(self.g.objects(node, p))
        if len(values) > 1:
            raise self.error(f"{self.g.qname(p)} is given {len(values)} times", tm)
        return values[0] if values else None


@dataclass(frozen=True, slots=True)
class _Subject:
    term: TermMap
    classes: tuple[str, ...]
    raw_columns: tuple[str, ...]  # placeholders / rr:column exactly as written


def parse_r2rml(path: Path, *, strict: bool = False) -> MappingSet:
    """Parse an R2RML mapping document (Turtle).

    Args:
        path: The R2RML file.
        strict: Raise on a triples map with several subject maps instead of applying
            every predicate-object map to each of them.

    Returns:
        The mapping set (``format="r2rml"``): one assertion per triples map (omitted when
        it yields no atom of its own), plus one per joined referencing object map.

    Raises:
        MappingParseError: The file is missing, is not Turtle, or is not valid R2RML.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise MappingParseError("mapping file not found", path=path) from e
    except (OSError, UnicodeDecodeError) as e:
        raise MappingParseError(f"cannot read mapping file: {e}", path=path) from e
    g = Graph(bind_namespaces="none")
    try:
        g.parse(data=text, format="turtle", publicID=_BASE)
    except Exception as e:  # noqa: BLE001 - rdflib raises many unrelated types
        m = re.search(r"\bline (\d+)", str(e))
        reason = " ".join(str(e).split())[:300]
        raise MappingParseError(
            f"not valid Turtle: {reason}", path=path, line=int(m.group(1)) if m else None
        ) from e

    tms = {s for s in g.subjects(RDF.type, RR.TriplesMap)} | set(g.subjects(RR.logicalTable, None))
    if not tms:
        raise MappingParseError(
            "the mapping file has no triples map (rr:TriplesMap or rr:logicalTable): the VKG "
            "would have no data", path=path)
    ctx = _Context(g, path, _locate(text, g, tms))
    ordered = sorted(tms, key=lambda t: (ctx.lines.get(_tm_id(t), 1 << 30), _tm_id(t)))
    assertions: list[MappingAssertion] = []
    for tm in ordered:
        assertions.extend(_triples_map(ctx, tm, strict))
    prefixes = {prefix: str(ns) for prefix, ns in g.namespaces()}
    return MappingSet(tuple(assertions), prefixes, path, "r2rml")


# -- locating -----------------------------------------------------------------------------


def _tm_id(tm: Node) -> str:
    if isinstance(tm, BNode):
        return f"_:{tm}"
    iri = str(tm)
    return iri[len(_BASE) :] if iri.startswith(_BASE) else iri


def _locate(text: str, g: Graph, tms: set[Node]) -> dict[str, int]:
    """Line of each triples map: where its IRI (full or prefixed) first starts a line."""
    starts: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        head = line.split(None, 1)[0] if line.strip() else ""
        if head and head not in starts:
            starts[head] = lineno
    names = list(g.namespaces())
    out: dict[str, int] = {}
    for tm in tms:
        if not isinstance(tm, URIRef):
            continue
        iri = str(tm)
        candidates = [f"<{iri}>", f"<{_tm_id(tm)}>"] + [
            f"{p}:{iri[len(str(ns)) :]}" for p, ns in names if iri.startswith(str(ns))
        ]
        found = [starts[c] for c in candidates if c in starts]
        if found:
            out[_tm_id(tm)] = min(found)
    return out


# -- triples maps -------------------------------------------------------------------------


def _triples_map(ctx: _Context, tm: Node, strict: bool) -> list[MappingAssertion]:
    mid = _tm_id(tm)
    sql = _logical_sql(ctx, tm)
    subjects = _subjects(ctx, tm)
    if len(subjects) > 1:
        if strict:
            raise ctx.error(
                f"{len(subjects)} subject maps; R2RML allows exactly one per triples map", tm
            )
        logger.warning(
            "%s: triples map %s has %d subject maps; applying every predicate-object map "
            "to each of them",
            ctx.path,
            mid,
            len(subjects),
        )
    line = ctx.lines.get(mid)
    location = SourceLocation(str(ctx.path), line) if line is not None else None

    atoms: list[MappingAtom] = []
    joined: list[MappingAssertion] = []
    for subject in subjects:
        atoms.extend(MappingAtom(c, subject.term, None, is_class=True) for c in subject.classes)
    for pom in sorted(ctx.g.objects(tm, RR.predicateObjectMap), key=lambda n: _canon(ctx.g, n)):
        predicates = _predicates(ctx, tm, pom)
        plain, refs = _objects(ctx, tm, pom)
        for subject in subjects:
            for p in predicates:
                atoms.extend(MappingAtom(p, subject.term, o) for o in plain)
        for ref in refs:
            parent = ctx.one(ref, RR.parentTriplesMap, tm)
            if parent is None or parent not in _all_tms(ctx):
                raise ctx.error("rr:parentTriplesMap does not name one triples map", tm)
            conditions = _join_conditions(ctx, tm, ref)
            parent_sql = _logical_sql(ctx, parent)
            for parent_subject in _subjects(ctx, parent):
                if not conditions:
                    if _norm_sql(parent_sql) != _norm_sql(sql):
                        raise ctx.error(
                            "referencing object map without rr:joinCondition, but the parent "
                            f"triples map {_tm_id(parent)} has a different logical table",
                            tm,
                        )
                    for subject in subjects:
                        atoms.extend(
                            MappingAtom(p, subject.term, parent_subject.term) for p in predicates
                        )
                    continue
                obj, join_sql = _join(sql, parent_sql, parent_subject, conditions)
                ref_atoms = tuple(
                    MappingAtom(p, subject.term, obj) for subject in subjects for p in predicates
                )
                joined.append(
                    MappingAssertion(f"{mid}#ref{len(joined) + 1}", join_sql, ref_atoms, location)
                )
    main = [MappingAssertion(mid, sql, tuple(atoms), location)] if atoms else []
    return main + joined


def _all_tms(ctx: _Context) -> set[Node]:
    return set(ctx.g.subjects(RDF.type, RR.TriplesMap)) | set(ctx.g.subjects(RR.logicalTable, None))


def _canon(g: Graph, node: Node) -> str:
    """A content-based sort key for a (blank) node, stable across parses.

    Blank node labels are random, so term maps are ordered by what they say instead;
    ``rr:parentTriplesMap`` is not followed (triples maps can reference each other).
    """
    if not isinstance(node, BNode):
        return _tm_id(node) if isinstance(node, URIRef) else repr(node)
    parts = sorted(
        f"{p}={_tm_id(o) if p == RR.parentTriplesMap else _canon(g, o)}"
        for p, o in g.predicate_objects(node)
    )
    return "[" + ";".join(parts) + "]"


def _norm_sql(sql: str) -> str:
    return " ".join(sql.split())


def _logical_sql(ctx: _Context, tm: Node) -> str:
    table = ctx.one(tm, RR.logicalTable, tm)
    if table is None:
        raise ctx.error("triples map has no rr:logicalTable", tm)
    query = ctx.one(table, RR.sqlQuery, tm)
    name = ctx.one(table, RR.tableName, tm)
    if isinstance(query, Literal) and name is None:
        return str(query).strip().rstrip(";").strip()
    if isinstance(name, Literal) and query is None:
        return f"SELECT * FROM {_quote_table(str(name))}"
    raise ctx.error("logical table needs exactly one rr:sqlQuery or rr:tableName", tm)


def _quote_table(name: str) -> str:
    name = name.strip()
    if name.startswith('"'):
        return name
    return ".".join(f'"{part}"' for part in name.split("."))


def _subjects(ctx: _Context, tm: Node) -> list[_Subject]:
    nodes = sorted(ctx.g.objects(tm, RR.subjectMap), key=lambda n: _canon(ctx.g, n))
    constants = sorted(ctx.g.objects(tm, RR.subject), key=lambda n: _canon(ctx.g, n))
    if not nodes and not constants:
        raise ctx.error("triples map has no subject map (rr:subjectMap or rr:subject)", tm)
    out: list[_Subject] = []
    for c in constants:
        out.append(_Subject(_constant(ctx, tm, c, "subject"), (), ()))
    for node in nodes:
        term, raw = _term_map(ctx, tm, node, "subject")
        classes = tuple(sorted(str(c) for c in ctx.g.objects(node, RR["class"])))
        out.append(_Subject(term, classes, raw))
    return out


def _predicates(ctx: _Context, tm: Node, pom: Node) -> list[str]:
    out = [str(p) for p in ctx.g.objects(pom, RR.predicate) if isinstance(p, URIRef)]
    for node in ctx.g.objects(pom, RR.predicateMap):
        term, _ = _term_map(ctx, tm, node, "predicate")
        if term.kind is not TermKind.CONSTANT or term.term_type is not TermType.IRI:
            raise ctx.error("only constant IRI predicate maps are supported", tm)
        out.append(term.value)
    if not out:
        raise ctx.error("predicate-object map has no rr:predicate or rr:predicateMap", tm)
    return sorted(set(out))


def _objects(ctx: _Context, tm: Node, pom: Node) -> tuple[list[TermMap], list[Node]]:
    constants = sorted(ctx.g.objects(pom, RR.object), key=lambda n: _canon(ctx.g, n))
    plain = [_constant(ctx, tm, o, "object") for o in constants]
    refs: list[Node] = []
    for node in sorted(ctx.g.objects(pom, RR.objectMap), key=lambda n: _canon(ctx.g, n)):
        if (node, RR.parentTriplesMap, None) in ctx.g:
            refs.append(node)
        else:
            plain.append(_term_map(ctx, tm, node, "object")[0])
    if not plain and not refs:
        raise ctx.error("predicate-object map has no rr:object or rr:objectMap", tm)
    return plain, refs


def _join_conditions(ctx: _Context, tm: Node, ref: Node) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for jc in sorted(ctx.g.objects(ref, RR.joinCondition), key=lambda n: _canon(ctx.g, n)):
        child, parent = ctx.one(jc, RR.child, tm), ctx.one(jc, RR.parent, tm)
        if not isinstance(child, Literal) or not isinstance(parent, Literal):
            raise ctx.error("rr:joinCondition needs one rr:child and one rr:parent", tm)
        out.append((str(child), str(parent)))
    return sorted(out)


# -- term maps ----------------------------------------------------------------------------


def _constant(ctx: _Context, tm: Node, value: Node, position: str) -> TermMap:
    if isinstance(value, URIRef):
        return TermMap(TermKind.CONSTANT, str(value), TermType.IRI)
    if isinstance(value, Literal) and position == "object":
        dt = str(value.datatype) if value.datatype is not None else None
        return TermMap(TermKind.CONSTANT, str(value), TermType.LITERAL, dt, value.language)
    raise ctx.error(f"a constant {position} must be an IRI, not {value!r}", tm)


def _term_map(
    ctx: _Context, tm: Node, node: Node, position: str
) -> tuple[TermMap, tuple[str, ...]]:
    """A term map node as a :class:`TermMap`, plus its column references as written."""
    g = ctx.g
    template = list(g.objects(node, RR.template))
    column = list(g.objects(node, RR.column))
    constant = list(g.objects(node, RR.constant))
    if len(template) + len(column) + len(constant) != 1:
        raise ctx.error(
            f"{position} map needs exactly one of rr:template, rr:column, rr:constant", tm
        )
    datatype = ctx.one(node, RR.datatype, tm)
    language = ctx.one(node, RR.language, tm)
    term_type = ctx.one(node, RR.termType, tm)
    if constant:
        return _constant(ctx, tm, constant[0], position), ()

    if term_type is None:
        literal = position == "object" and bool(column or datatype or language)
        kind_type = TermType.LITERAL if literal else TermType.IRI
    elif term_type in _TERM_TYPES:
        kind_type = _TERM_TYPES[term_type]
    else:
        raise ctx.error(f"unknown rr:termType {term_type}", tm)
    if kind_type is TermType.LITERAL and position != "object":
        raise ctx.error(f"a {position} map cannot produce literals", tm)
    dt = str(datatype) if isinstance(datatype, URIRef) else None
    lang = str(language) if isinstance(language, Literal) else None
    if template:
        text = str(template[0])
        raw = tuple(m.group(1) for m in PLACEHOLDER.finditer(text))
        return TermMap(TermKind.TEMPLATE, text, kind_type, dt, lang), raw
    raw_col = str(column[0])
    return TermMap(TermKind.COLUMN, unquote_column(raw_col), kind_type, dt, lang), (raw_col,)


# -- join rewrite -------------------------------------------------------------------------


def _alias(raw_column: str) -> str:
    return PARENT_ALIAS_PREFIX + unquote_column(raw_column)


def _join(
    child_sql: str,
    parent_sql: str,
    parent: _Subject,
    conditions: list[tuple[str, str]],
) -> tuple[TermMap, str]:
    """The joined SQL and the object term map that reads the parent's aliased columns."""
    raw_columns = list(dict.fromkeys(parent.raw_columns))
    select = ["child.*"] + [f'parent.{c} AS "{_alias(c)}"' for c in raw_columns]
    on = " AND ".join(f"child.{c} = parent.{p}" for c, p in conditions)
    sql = (
        f"SELECT {', '.join(select)} FROM ({child_sql}) AS child "
        f"JOIN ({parent_sql}) AS parent ON {on}"
    )
    term = parent.term
    if term.kind is TermKind.TEMPLATE:
        value = PLACEHOLDER.sub(lambda m: '{"' + _alias(m.group(1)) + '"}', term.value)
    elif term.kind is TermKind.COLUMN:
        value = _alias(raw_columns[0])
    else:
        value = term.value
    return TermMap(term.kind, value, term.term_type, term.datatype, term.language), sql
