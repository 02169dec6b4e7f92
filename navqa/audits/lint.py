"""``navqa lint``: static analysis of SPARQL for silent-failure risks on one VKG.

A query that is valid SPARQL can still be certain to return nothing on a VKG. The lint
finds the causes it can see from the ontology and the mappings alone, without running
anything:

``unmapped-term`` (error)
    A class or property the ontology declares but no mapping populates, directly or
    through reasoning (it is outside the active ontology). Suggests the nearest mapped
    alternatives (the index's vectors when an embedder is given; siblings in the
    ontology otherwise).
``unknown-term`` (error)
    A term in one of the ontology's namespaces that the ontology does not declare
    (usually a typo).
``term-kind`` (error)
    A class used as a property, or a property used as a class.
``template-join`` (error; warning inside OPTIONAL, MINUS or one UNION branch)
    A variable used in several triple patterns whose positions can never produce the
    same term: for every pair of uses, the shapes each can produce (IRI templates of the
    property's subject/object term maps, of ``rdf:type C`` including subclasses, domains
    and ranges — see :mod:`navqa.audits.shapes`) must have a pair that unifies.
``constant-iri`` (error)
    A constant IRI in a position whose templates cannot produce it.
``literal-datatype`` (error; warning for numeric subtypes)
    A literal in a triple pattern whose datatype differs from the mapped one.
``filter-datatype`` (error)
    A FILTER comparing a variable bound by a data property with a literal of an
    incompatible type (an ``xsd:date`` with a string or a number, an ``xsd:string`` with
    a number, a language-tagged string with a plain one…).
``time-ordering`` (warning)
    ``<``/``>`` on ``xsd:time`` values, which Ontop 5.1 silently answers with nothing.
``exists-unsupported`` (warning)
    ``FILTER (NOT) EXISTS``, which Ontop 5.1 rejects.
``values-arity`` (error)
    A VALUES row with more or fewer values than variables (Ontop: HTTP 400).
``aggregate-grouping`` (error)
    A projected variable that is neither in GROUP BY nor aggregated (Ontop: HTTP 400).
``ill-typed-literal`` (error)
    ``"abc"^^xsd:integer``: a lexical form invalid for its datatype (Ontop rejects it).
``named-graph`` (error)
    GRAPH, FROM or FROM NAMED: a VKG has only the default graph, Ontop answers nothing.
``relative-iri`` (error)
    ``<name>`` without BASE (Ontop: not a valid absolute IRI).
``undeclared-prefix`` (error)
    A prefix used without a declaration (repaired for the other checks when the VKG
    knows it).
``syntax-error`` (error)
    The query does not parse.
``costly-query`` (error, only with ``navqa lint --cost``)
    The database's estimate for the SQL Ontop generates is above ``--max-cost``; names
    the join that explodes (see :mod:`navqa.audits.cost`).

Every finding carries a best-effort position (the first occurrence of the term's text,
1-based line and column) and a suggestion.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np
from rdflib import BNode, Literal, URIRef
from rdflib.term import Variable

from navqa.audits.shapes import Shape, ShapeIndex, ShapeKind
from navqa.audits.sparql import Branch, Locator, Triple, Walk, branches, iter_exprs, node_name
from navqa.backends.protocols import Embedder
from navqa.model.iri import IRI, OWL_THING, RDF_TYPE, XSD, compact
from navqa.model.xsd import (
    LANG_STRING,
    XSD_STRING,
    XsdFamily,
    family,
    is_valid_lexical,
    sparql_literal,
    xsd_type,
)
from navqa.offline.artifacts import IndexBundle
from navqa.online.sparql_analysis import (
    TermStatus,
    as_comparison,
    nearest_alternatives,
    rank_alternatives,
    term_status,
    used_terms,
    vocabulary_namespaces,
)

__all__ = [
    "Finding",
    "LintResult",
    "Linter",
    "Severity",
    "RULES",
]


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


RULES: dict[str, str] = {
    "unmapped-term": "The term has no mapping: patterns using it never match (silent failure).",
    "unknown-term": "The term is not declared by the ontology.",
    "term-kind": "A class used as a property, or a property used as a class.",
    "template-join": "A join whose IRI templates (or term kinds) cannot unify is always empty.",
    "constant-iri": "A constant IRI that no mapping template of its position can produce.",
    "literal-datatype": "A literal whose datatype differs from the mapped datatype never matches.",
    "filter-datatype": "A FILTER comparing values of incompatible datatypes is never true.",
    "time-ordering": "Ontop 5.1 answers ordering comparisons on xsd:time with nothing.",
    "exists-unsupported": "Ontop 5.1 rejects FILTER (NOT) EXISTS.",
    "values-arity": "A VALUES row whose arity differs from its variables': Ontop rejects it.",
    "aggregate-grouping": "A projected variable neither grouped nor aggregated: Ontop rejects it.",
    "ill-typed-literal": "A typed literal whose lexical form is invalid: Ontop rejects it.",
    "named-graph": "GRAPH or FROM on a VKG, which has only the default graph: never matches.",
    "relative-iri": "A relative IRI without BASE: Ontop rejects it.",
    "undeclared-prefix": "A prefix is used without being declared.",
    "syntax-error": "The query does not parse.",
    "costly-query": "The database estimates the query's SQL above --max-cost (lint --cost).",
}



@dataclass(frozen=True, slots=True)
class Finding:
    """One lint finding.

    Attributes:
        rule: The rule id (a key of :data:`RULES`).
        severity: error, warning or note.
        message: What is wrong.
        suggestion: What to do instead.
        line / column: 1-based start of the offending text (best effort; 1/1 if unknown).
        end_line / end_column: 1-based end (exclusive column).
        term: The IRI or variable concerned.
        alternatives: Mapped alternatives (for unmapped and unknown terms).
    """

    rule: str
    severity: Severity
    message: str
    suggestion: str
    line: int = 1
    column: int = 1
    end_line: int = 1
    end_column: int = 1
    term: str | None = None
    alternatives: tuple[IRI, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule, "severity": str(self.severity), "message": self.message,
            "suggestion": self.suggestion, "line": self.line, "column": self.column,
            "end_line": self.end_line, "end_column": self.end_column, "term": self.term,
            "alternatives": list(self.alternatives),
        }


@dataclass
class LintResult:
    """The findings for one query.

    Attributes:
        sparql: The query as given.
        findings: Sorted by position.
        repaired: The query with undeclared (known) prefixes declared, if that was needed.
        source: Where the query came from (a file path), for reports.
    """

    sparql: str
    findings: list[Finding] = field(default_factory=list)
    repaired: str | None = None
    source: str | None = None

    @property
    def errors(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.ERROR]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if f.severity is Severity.WARNING]

    @property
    def ok(self) -> bool:
        return not self.errors

    def as_dict(self) -> dict[str, Any]:
        return {"source": self.source, "sparql": self.sparql, "ok": self.ok,
                "errors": len(self.errors), "warnings": len(self.warnings),
                "findings": [f.as_dict() for f in self.findings]}


# -- datatypes -------------------------------------------------------------------------------

def _category(dt: str | None) -> XsdFamily | None:
    """The family of a datatype (:func:`navqa.model.xsd.family`); ``None``: none or unknown."""
    return family(dt) if dt else None


def _literal_datatype(lit: Literal) -> str:
    if lit.language:
        return LANG_STRING
    return str(lit.datatype) if lit.datatype else XSD_STRING


_TEMPORAL = {XsdFamily.DATE, XsdFamily.DATETIME, XsdFamily.YEAR, XsdFamily.TIME}
_TEXT = {XsdFamily.STRING, XsdFamily.LANG}


def _filter_mismatch(mapped: XsdFamily, given: XsdFamily, op: str
                     ) -> tuple[Severity, str] | None:
    """Whether comparing a value of family ``mapped`` with a literal of ``given`` fails."""
    if mapped == given:
        return None
    if mapped in _TEXT and given in _TEXT:
        if op in ("=", "!=", "IN", "NOT IN"):
            return (Severity.ERROR, "a language-tagged string never equals a plain one"
                    if XsdFamily.LANG in (mapped, given) else "")
        return None
    if {mapped, given} == {XsdFamily.DATE, XsdFamily.DATETIME}:
        return (Severity.WARNING, "xsd:date and xsd:dateTime values do not compare in SPARQL")
    if mapped in _TEMPORAL | _TEXT | {XsdFamily.NUMERIC, XsdFamily.BOOLEAN}:
        return (Severity.ERROR, "")
    return None


# -- the linter ------------------------------------------------------------------------------


class Linter:
    """Lints SPARQL queries against one VKG's index.

    Args:
        bundle: The VKG's index (ontology, mappings, active ontology).
        embedder: The index's embedder, or a factory for it, for the nearest mapped
            alternatives of unmapped terms; without one, alternatives come from the
            ontology (siblings, super- and sub-elements, ranked by name similarity).
    """

    def __init__(self, bundle: IndexBundle,
                 embedder: Embedder | Callable[[], Embedder] | None = None) -> None:
        self.bundle = bundle
        self.ontology = bundle.ontology
        self.active = bundle.active
        self.shapes = ShapeIndex(bundle.ontology, bundle.mappings)
        self._embedder = embedder
        self._ctx: Any = None
        from navqa.online.context import SchemaContext

        self._prefixes = vkg_prefixes(bundle)
        self._vocab = vocabulary_namespaces(self.ontology.signature)
        self._schema_context_cls = SchemaContext

    @property
    def prefixes(self) -> dict[str, str]:
        return self._prefixes

    def compact(self, iri: str) -> str:
        return compact(iri, self._prefixes)

    # -- alternatives -------------------------------------------------------------------

    def _context(self) -> Any:
        if self._ctx is None and self._embedder is not None:
            emb = self._embedder
            if not isinstance(emb, Embedder):
                emb = _LazyEmbedder(emb, self.bundle.manifest.embedder_model,
                                    self.bundle.manifest.dim)
            self._ctx = self._schema_context_cls(self.bundle, emb)
        return self._ctx

    def alternatives(self, iri: IRI, *, want_class: bool, n: int = 3) -> list[IRI]:
        """The mapped classes (properties) nearest to ``iri``: the ranking the pipeline's
        check uses too (:func:`navqa.online.sparql_analysis.nearest_alternatives`).

        With an embedder: cosine similarity between the term's label, name and comment and
        the index's vectors, plus :data:`~navqa.online.sparql_analysis.NEIGHBOUR_BONUS` for
        the term's neighbours in the ontology (siblings, super- and sub-elements,
        properties sharing its domain or range). Without one: those neighbours, ranked by
        name similarity.
        """
        ctx = self._context()
        if ctx is None:
            return rank_alternatives(self.ontology, self.active, iri, want_class=want_class,
                                     scores=None, n=n)
        return nearest_alternatives(ctx, iri, want_class=want_class, n=n)

    # -- linting ------------------------------------------------------------------------

    def lint(self, sparql: str, *, alternatives: bool = True,
             source: str | None = None) -> LintResult:
        """Lint one query; never executes anything."""
        from navqa.backends.sparql_http import query_form
        from navqa.errors import SparqlSyntaxError, UpdateRefusedError
        from navqa.online.check import parse_with_tree

        res = LintResult(sparql=sparql, source=source)
        loc = Locator(sparql)
        try:
            query_form(sparql)
        except UpdateRefusedError:
            res.findings.append(Finding(
                "syntax-error", Severity.ERROR, "this is a SPARQL UPDATE, not a query: a VKG "
                "is read-only", "write a SELECT, ASK, CONSTRUCT or DESCRIBE query"))
            return res
        except SparqlSyntaxError:
            pass  # the parser below says where
        text = sparql
        query = None
        tree: Any = None
        for _ in range(10):
            try:
                query, tree = parse_with_tree(text)
                break
            except SparqlSyntaxError as e:
                if e.unknown_prefix is not None and f"PREFIX {e.unknown_prefix}:" not in text:
                    pfx = e.unknown_prefix
                    ns = self._prefixes.get(pfx)
                    where = self._prefix_use(loc, pfx)
                    if ns is None:
                        res.findings.append(self._finding(
                            "undeclared-prefix", Severity.ERROR,
                            f"the prefix {pfx}: is not declared", "declare it with PREFIX "
                            f"{pfx}: <…>", loc, where, term=pfx))
                        break
                    res.findings.append(self._finding(
                        "undeclared-prefix", Severity.ERROR,
                        f"the prefix {pfx}: is not declared (the endpoint rejects the query)",
                        f"add PREFIX {pfx}: <{ns}>", loc, where, term=pfx))
                    text = f"PREFIX {pfx}: <{ns}>\n" + text
                    loc.prefixes.setdefault(pfx, ns)
                    continue
                line, col = e.line, e.column
                f = Finding("syntax-error", Severity.ERROR, f"syntax error: {e.message}",
                            "fix the syntax; `navqa sparql` shows the endpoint's message",
                            line or 1, col or 1, line or 1, (col or 1) + 1)
                res.findings.append(f)
                break
        if query is None:
            return self._done(res)
        if text != sparql:
            res.repaired = text
        algebra = query.algebra
        walk = Walk()
        root = algebra.get("p") if hasattr(algebra, "get") else None
        alts = branches(root, walk, 0, {}) if root is not None else [Branch()]
        self._check_terms(res, loc, query, alternatives)
        self._check_constants(res, loc, walk)
        self._check_joins(res, loc, alts)
        self._check_filters(res, loc, walk, algebra)
        self._check_engine(res, loc, algebra, tree)
        return self._done(res)

    @staticmethod
    def _done(res: LintResult) -> LintResult:
        seen: set[tuple[object, ...]] = set()
        out = []
        for f in sorted(res.findings, key=lambda f: (f.line, f.column, f.rule, f.message)):
            key = (f.rule, f.line, f.column, f.message)
            if key not in seen:
                seen.add(key)
                out.append(f)
        res.findings = out
        return res

    @staticmethod
    def _prefix_use(loc: Locator, pfx: str) -> tuple[int, int] | None:
        m = re.compile(rf"(?<![\w\-.:]){re.escape(pfx)}:").search(loc.masked, loc.body_start)
        return (m.start(), m.end() - 1) if m else None

    @staticmethod
    def _finding(rule: str, sev: Severity, message: str, suggestion: str, loc: Locator,
                 where: tuple[int, int] | None, *, term: str | None = None,
                 alternatives: Sequence[IRI] = ()) -> Finding:
        pos = (1, 1, 1, 1) if where is None else loc.span(*where)
        return Finding(rule, sev, message, suggestion, pos[0], pos[1], pos[2], pos[3],
                       term=term, alternatives=tuple(alternatives))

    # -- what the endpoint rejects or answers with nothing -------------------------------

    def _check_engine(self, res: LintResult, loc: Locator, algebra: Any, tree: Any) -> None:
        """Valid-looking SPARQL that Ontop rejects, or that a VKG answers with nothing."""
        values_at = [m.start() for m in re.finditer(r"(?<![\w?$])VALUES\b", loc.masked, re.I)]
        for i, node in enumerate(_values_blocks(tree)):
            width = len(node.get("var") or ())
            for row in node.get("value") or ():
                n = len(row) if isinstance(row, list) else 1
                if n != width:
                    where = values_at[i] if i < len(values_at) else None
                    res.findings.append(self._finding(
                        "values-arity", Severity.ERROR,
                        f"a VALUES row has {n} value{'s' if n != 1 else ''} for {width} "
                        "variable" + ("s" if width != 1 else "") + ": Ontop rejects the query",
                        "give every row one value per variable (UNDEF for none)", loc,
                        None if where is None else (where, where + 6)))
                    break
        seen_lit: set[Literal] = set()
        seen_iri: set[str] = set()
        for e in iter_exprs(algebra):
            name = node_name(e)
            if name == "AggregateJoin":
                self._check_grouping(res, loc, e)
            elif name == "Graph":
                m = re.search(r"(?<![\w?$:])GRAPH\b", loc.masked, re.I)
                res.findings.append(self._finding(
                    "named-graph", Severity.ERROR,
                    "GRAPH asks for a named graph: a VKG has only the default graph, so the "
                    "pattern never matches", "drop GRAPH and keep its pattern", loc,
                    (m.start(), m.end()) if m else None))
            elif isinstance(e, Literal) and _ill_typed(e) and e not in seen_lit:
                seen_lit.add(e)
                dt = self.compact(str(e.datatype))
                res.findings.append(self._finding(
                    "ill-typed-literal", Severity.ERROR,
                    f"{_lit_text(e, self._prefixes)} is not a valid {dt}: Ontop rejects "
                    "the query (invalid lexical form)",
                    f"write a valid {dt} value, or a plain string \"{e}\"", loc,
                    loc.find_literal(e)))
            elif isinstance(e, URIRef) and not _ABSOLUTE.match(e) and str(e) not in seen_iri:
                seen_iri.add(str(e))
                res.findings.append(self._finding(
                    "relative-iri", Severity.ERROR,
                    f"<{e}> is a relative IRI and the query has no BASE: Ontop rejects it "
                    "(not a valid absolute IRI)",
                    "write the full IRI, a prefixed name, or declare BASE <…>", loc,
                    loc.find_text(f"<{e}>"), term=str(e)))
        if algebra.get("datasetClause"):
            m = re.search(r"(?<![\w?$:])FROM\b", loc.masked, re.I)
            res.findings.append(self._finding(
                "named-graph", Severity.ERROR,
                "FROM / FROM NAMED selects graphs a VKG does not have (only the default graph "
                "exists): Ontop answers with nothing", "drop the FROM clause", loc,
                (m.start(), m.end()) if m else None))

    def _check_grouping(self, res: LintResult, loc: Locator, node: Any) -> None:
        group = node.get("p")
        keys = {v for v in (group.get("expr") or ()) if isinstance(v, Variable)} \
            if node_name(group) == "Group" else set()
        for agg in node.get("A") or ():
            # rdflib samples every projected variable that is not an aggregate itself; an
            # explicit SAMPLE(?v) carries a "distinct" entry, the implicit ones do not
            if node_name(agg) != "Aggregate_Sample" or "distinct" in agg:
                continue
            var = agg.get("vars")
            if not isinstance(var, Variable) or var in keys:
                continue
            res.findings.append(self._finding(
                "aggregate-grouping", Severity.ERROR,
                f"?{var} is projected but neither grouped nor aggregated: Ontop rejects the "
                "query", f"add ?{var} to GROUP BY, or project SAMPLE(?{var}) AS ?…", loc,
                loc.find_var(str(var), after=loc.body_start), term=f"?{var}"))

    # -- terms --------------------------------------------------------------------------

    def _check_terms(self, res: LintResult, loc: Locator, query: Any,
                     alternatives: bool) -> None:
        onto = self.ontology
        preds, classes = used_terms(query)
        for term in sorted(preds | classes):
            as_class = term in classes
            where = loc.find_iri(term)
            if term in preds and term in onto.classes and term not in onto.properties:
                res.findings.append(self._finding(
                    "term-kind", Severity.ERROR,
                    f"{self.compact(term)} is a class, used here as a property",
                    f"write ?x a {self.compact(term)} to ask for its instances", loc, where,
                    term=term))
                continue
            if as_class and term not in onto.classes and onto.property(term) is not None:
                res.findings.append(self._finding(
                    "term-kind", Severity.ERROR,
                    f"{self.compact(term)} is a property, used here as a class",
                    f"use it as a predicate: ?x {self.compact(term)} ?value", loc,
                    loc.find_iri(term), term=term))
                continue
            status = term_status(term, onto, self.active, self._vocab)
            if status in (TermStatus.FOREIGN, TermStatus.ALLOWED):
                continue
            declared = status is TermStatus.UNMAPPED
            alts = self.alternatives(term, want_class=as_class) if alternatives else []
            alt_text = ", ".join(self.compact(a) for a in alts)
            if declared:
                msg = (f"{self.compact(term)} has no mapping: the query returns nothing for "
                       "the patterns using it (silent failure)")
                sugg = (f"use a mapped {'class' if as_class else 'property'} instead: "
                        f"{alt_text}" if alt_text else "use a mapped term instead")
                res.findings.append(self._finding("unmapped-term", Severity.ERROR, msg, sugg,
                                                  loc, where, term=term, alternatives=alts))
            else:
                msg = f"{self.compact(term)} is not declared by the ontology"
                sugg = (f"did you mean {alt_text}?" if alt_text
                        else "check the spelling of the term")
                res.findings.append(self._finding("unknown-term", Severity.ERROR, msg, sugg,
                                                  loc, where, term=term, alternatives=alts))

    # -- constants ----------------------------------------------------------------------

    def _check_constants(self, res: LintResult, loc: Locator, walk: Walk) -> None:
        for t in walk.all_triples:
            p = str(t.p)
            if p == RDF_TYPE:
                if isinstance(t.s, URIRef) and isinstance(t.o, URIRef):
                    shapes = self.shapes.class_shapes(str(t.o))
                    self._constant(res, loc, str(t.s), shapes,
                                   f"an instance of {self.compact(str(t.o))}")
                continue
            pairs = self.shapes.property_pairs(p)
            if not pairs:
                continue
            subj = {s for s, _ in pairs}
            obj = {o for _, o in pairs}
            if isinstance(t.s, URIRef):
                self._constant(res, loc, str(t.s), subj, f"a subject of {self.compact(p)}")
            if isinstance(t.o, URIRef):
                self._constant(res, loc, str(t.o), obj, f"an object of {self.compact(p)}")
            elif isinstance(t.o, Literal):
                self._literal(res, loc, t.o, obj, p)

    def _constant(self, res: LintResult, loc: Locator, iri: str, shapes: set[Shape],
                  role: str) -> None:
        if not shapes or any(s.produces(iri) for s in shapes):
            return
        forms = ", ".join(sorted({s.text(self._prefixes) for s in shapes if s.is_iri})[:4])
        res.findings.append(self._finding(
            "constant-iri", Severity.ERROR,
            f"{self.compact(iri)} can never be {role}: its mappings only produce "
            f"{forms or 'literals'}",
            f"use an IRI of the form {forms}" if forms else "use a variable or a literal",
            loc, loc.find_iri(iri), term=iri))

    def _literal(self, res: LintResult, loc: Locator, lit: Literal, shapes: set[Shape],
                 prop: str) -> None:
        lits = [s for s in shapes if s.kind is ShapeKind.LITERAL]
        if not lits:
            if all(s.is_iri for s in shapes):
                res.findings.append(self._finding(
                    "literal-datatype", Severity.ERROR,
                    f"{self.compact(prop)} has IRI values, never the literal "
                    f"{_lit_text(lit, self._prefixes)}",
                    "match the object with a variable and filter on its name",
                    loc, loc.find_literal(lit), term=prop))
            return
        given = _literal_datatype(lit)
        known = [s for s in lits if s.datatype is not None]
        if len(known) != len(lits):
            return
        if any(s.datatype == given and (given != LANG_STRING or (
                (s.lang or "").lower() == (lit.language or "").lower())) for s in known):
            return
        mapped_cats = {_category(s.datatype) for s in known}
        given_cat = _category(given)
        sev = Severity.ERROR
        if given_cat is not None and mapped_cats == {given_cat} and given_cat is XsdFamily.NUMERIC:
            sev = Severity.WARNING
        dts = ", ".join(sorted({s.text(self._prefixes) for s in known}))
        res.findings.append(self._finding(
            "literal-datatype", sev,
            f"{self.compact(prop)} is mapped to {dts}; the literal "
            f"{_lit_text(lit, self._prefixes)} "
            "never matches it",
            f"write the value as {_example(known[0])} or compare with FILTER(STR(?v) = …)",
            loc, loc.find_literal(lit), term=prop))

    # -- joins --------------------------------------------------------------------------

    def _uses(self, triples: Iterable[Triple]) -> dict[Any, list[tuple[set[Shape], Triple, str]]]:
        uses: dict[Any, list[tuple[set[Shape], Triple, str]]] = defaultdict(list)
        for t in triples:
            p = str(t.p)
            if p == RDF_TYPE:
                if isinstance(t.o, URIRef) and isinstance(t.s, Variable | BNode):
                    shapes = self.shapes.class_shapes(str(t.o))
                    if shapes:
                        uses[t.s].append((shapes, t,
                                          f"an instance of {self.compact(str(t.o))}"))
                continue
            pairs = self.shapes.property_pairs(p)
            if not pairs:
                continue
            if isinstance(t.s, Variable | BNode):
                uses[t.s].append(({s for s, _ in pairs}, t,
                                  f"the subject of {self.compact(p)}"))
            if isinstance(t.o, Variable | BNode):
                uses[t.o].append(({o for _, o in pairs}, t,
                                  f"the object of {self.compact(p)}"))
        return uses

    @staticmethod
    def _conflict(uses: list[tuple[set[Shape], Triple, str]], *, involving: set[int] | None
                  ) -> tuple[tuple[set[Shape], Triple, str], tuple[set[Shape], Triple, str]] | None:
        for i in range(len(uses)):
            for j in range(i + 1, len(uses)):
                if involving is not None and not ({id(uses[i][1]), id(uses[j][1])} & involving):
                    continue
                a, b = uses[i][0], uses[j][0]
                if not any(x.compatible(y) for x in a for y in b):
                    return uses[i], uses[j]
        return None

    def _check_joins(self, res: LintResult, loc: Locator, branches: list[Branch]) -> None:
        empty_required: list[tuple[Any, tuple[Any, Any]]] = []
        branch_empty = []
        for br in branches:
            uses = self._uses(br.required)
            found = None
            for var, us in uses.items():
                c = self._conflict(us, involving=None)
                if c is not None:
                    found = (var, c)
                    break
            branch_empty.append(found is not None)
            if found is not None:
                empty_required.append(found)
            for kind, group in br.extras:
                if found is not None:
                    break
                uses_g = self._uses(br.required + group)
                ids = {id(t) for t in group}
                for var, us in uses_g.items():
                    c = self._conflict(us, involving=ids)
                    if c is not None:
                        what = ("the OPTIONAL part never matches: its variables stay unbound"
                                if kind == "optional" else
                                "the MINUS part never matches: it removes nothing")
                        res.findings.append(self._join_finding(loc, var, c, Severity.WARNING,
                                                               what))
                        break
        every = bool(branches) and all(branch_empty)
        for var, c in empty_required:
            if every:
                sev, what = Severity.ERROR, "the query returns nothing"
            else:
                sev, what = Severity.WARNING, "this UNION alternative never matches"
            res.findings.append(self._join_finding(loc, var, c, sev, what))

    def _join_finding(self, loc: Locator, var: Any, conflict: Any, sev: Severity,
                      consequence: str) -> Finding:
        (sa, ta, da), (sb, tb, db) = conflict
        name = str(var).split("__sub")[0]
        shown = f"?{name}" if isinstance(var, Variable) and not name.startswith("_path") \
            else "an intermediate node"

        def forms(shapes: set[Shape]) -> str:
            texts = sorted({s.text(self._prefixes) for s in shapes})
            return ", ".join(texts[:4]) + (", …" if len(texts) > 4 else "")

        where = self._triple_position(loc, tb)
        msg = (f"{shown} cannot be both {da} ({forms(sa)}) and {db} ({forms(sb)}): "
               f"no IRI template unifies, so {consequence}")
        bridge = self._bridge(sa, sb)
        if bridge:
            sugg = f"use two variables linked through the class graph, e.g. {bridge}"
        else:
            sugg = ("use a property or class whose IRIs match the rest of the join, or two "
                    "variables linked by a property that connects them")
        return self._finding("template-join", sev, msg, sugg, loc, where,
                             term=f"?{name}" if isinstance(var, Variable) else None)

    def _classes_of(self, shapes: set[Shape]) -> set[IRI]:
        """The mapped classes whose own subject templates match ``shapes``."""
        by_key = self.shapes.mapped_class_templates()
        out: set[IRI] = set()
        for sh in shapes:
            if sh.kind is ShapeKind.TEMPLATE:
                out |= by_key.get(sh.value, set())
        # the most general of them name the IRIs best (Company rather than Manufacturer)
        return {c for c in out if not (self.ontology.superclasses(c, reflexive=False) & out)}

    def _bridge(self, a: set[Shape], b: set[Shape], max_hops: int = 3) -> str | None:
        """A shortest chain of object properties in the class graph from a class of ``a``'s
        IRIs to one of ``b``'s, written ``C1 –p→ C2 ←q– C3``."""
        start, goal = self._classes_of(a), self._classes_of(b)
        if not start or not goal or start & goal:
            return None
        onto = self.ontology
        out_adj: dict[IRI, list[tuple[str, IRI]]] = defaultdict(list)
        in_adj: dict[IRI, list[tuple[str, IRI]]] = defaultdict(list)
        for e in self.bundle.graph.edges:
            if e.is_data or OWL_THING in (e.source, e.target):
                continue
            out_adj[e.source].append((f" –{self.compact(e.prop)}→ ", e.target))
            in_adj[e.target].append((f" ←{self.compact(e.prop)}– ", e.source))

        def steps(c: IRI) -> list[tuple[str, IRI]]:
            # an edge leaving a superclass holds for every instance of c; an edge arriving
            # at a superclass (range Place) need not reach c (a Station), so only c's own
            # and its subclasses' incoming edges count
            subs = set(onto.subclasses(c))
            out = [x for k in sorted(subs | set(onto.superclasses(c))) for x in out_adj[k]]
            return sorted(out + [x for k in sorted(subs) for x in in_adj[k]])

        goal_family = set().union(*(onto.subclasses(g) for g in goal))
        frontier: list[tuple[IRI, str]] = [(c, self.compact(c)) for c in sorted(start)]
        seen = set(start)
        for _ in range(max_hops):
            nxt: list[tuple[IRI, str]] = []
            for node, text in frontier:
                for arrow, other in steps(node):
                    if other in seen:
                        continue
                    path = f"{text}{arrow}{self.compact(other)}"
                    if other in goal_family:
                        return path
                    seen.add(other)
                    nxt.append((other, path))
            frontier = nxt
        return None

    def _triple_position(self, loc: Locator, t: Triple) -> tuple[int, int] | None:
        origin = t.origin
        iri = str(t.o) if str(t.p) == RDF_TYPE and isinstance(t.o, URIRef) else None
        if iri is not None:
            hits = loc.find_iri_all(iri)
            if hits:
                return hits[0]
        if isinstance(origin, URIRef):
            hits = loc.find_iri_all(str(origin))
            if hits:
                return hits[0]
        hits = loc.find_iri_all(str(t.p))
        return hits[0] if hits else None

    # -- filters ------------------------------------------------------------------------

    def _check_filters(self, res: LintResult, loc: Locator, walk: Walk, algebra: Any) -> None:
        by_var: dict[tuple[int, Any], set[str]] = defaultdict(set)
        for t in walk.all_triples:
            if str(t.p) != RDF_TYPE and isinstance(t.o, Variable):
                by_var[(t.scope, t.o)].add(str(t.p))
        for packed, scope in walk.filters:
            expr, rename = packed
            for e in iter_exprs(expr):
                name = node_name(e)
                if name in ("Builtin_EXISTS", "Builtin_NOTEXISTS"):
                    res.findings.append(self._finding(
                        "exists-unsupported", Severity.WARNING,
                        "Ontop 5.1 rejects FILTER (NOT) EXISTS (HTTP 500, not supported yet)",
                        "rewrite it with MINUS or OPTIONAL … FILTER(!BOUND(?x))", loc,
                        loc.find_text("EXISTS")))
                    continue
                cmp = as_comparison(e)
                if cmp is None:
                    continue
                props = by_var.get((scope, rename.get(cmp.var, cmp.var))) or set()
                if not props:
                    continue
                self._filter_finding(res, loc, cmp.var, cmp.op, props, list(cmp.literals))

    def _datatypes_of(self, prop: str) -> set[str] | None:
        """Mapped datatypes of a data property's values (``None``: unknown or not literal)."""
        pairs = self.shapes.property_pairs(prop)
        objs = [o for _, o in pairs]
        if not objs or not all(o.kind is ShapeKind.LITERAL for o in objs):
            return None
        dts = {o.datatype for o in objs}
        if None in dts:
            ranges = {r for r in self.ontology.inherited_ranges(prop) if r.startswith(XSD)
                      or r == LANG_STRING}
            if len(ranges) != 1:
                return None
            dts = (dts - {None}) | ranges
        return {d for d in dts if d is not None}

    def _filter_finding(self, res: LintResult, loc: Locator, var: Variable, op: str,
                        props: set[str], literals: list[Literal]) -> None:
        for lit in literals:
            given = _literal_datatype(lit)
            gcat = _category(given)
            if gcat is None:
                continue
            verdicts: list[tuple[Severity, str, str, str]] = []
            time_order = False
            for p in sorted(props):
                dts = self._datatypes_of(p)
                if not dts:
                    verdicts = []
                    break
                cats = {_category(d) for d in dts}
                if None in cats or len(cats) != 1:
                    verdicts = []
                    break
                cat = next(iter(cats))
                assert cat is not None
                if cat is gcat is XsdFamily.TIME and op in ("<", ">", "<=", ">="):
                    time_order = True
                v = _filter_mismatch(cat, gcat, op)
                if v is None:
                    verdicts = []
                    break
                verdicts.append((v[0], v[1], p, next(iter(dts))))
            where = loc.find_literal(lit) or loc.find_var(str(var), after=loc.body_start)
            if time_order:
                res.findings.append(self._finding(
                    "time-ordering", Severity.WARNING,
                    f"?{var} is an xsd:time value: Ontop 5.1 answers {op} on xsd:time with "
                    "nothing", f"compare strings instead: FILTER(STR(?{var}) {op} "
                    f"\"{lit}\")", loc, where, term=f"?{var}"))
            if not verdicts:
                continue
            sev = Severity.ERROR if all(v[0] is Severity.ERROR for v in verdicts) \
                else Severity.WARNING
            _, why, p, dt = verdicts[0]
            reason = f" ({why})" if why else ""
            res.findings.append(self._finding(
                "filter-datatype", sev,
                f"?{var} holds {self.compact(dt)} values of {self.compact(p)}; comparing them "
                f"with {_lit_text(lit, self._prefixes)} ({self.compact(given)}) is never "
                f"true{reason}",
                f"write the value as {_example(Shape(ShapeKind.LITERAL, dt))}"
                + (" or compare YEAR(?" + str(var) + ")" if _category(dt) in (
                    XsdFamily.DATE, XsdFamily.DATETIME) and gcat is XsdFamily.NUMERIC else ""),
                loc, where, term=f"?{var}"))


def _ill_typed(lit: Literal) -> bool:
    """Whether a typed literal's lexical form is invalid for its datatype (rdflib's verdict,
    else :func:`navqa.model.xsd.is_valid_lexical`)."""
    if lit.ill_typed is not None:
        return bool(lit.ill_typed)
    return lit.datatype is not None and not is_valid_lexical(str(lit), str(lit.datatype))


_ABSOLUTE = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def _values_blocks(tree: Any) -> list[Any]:
    """The VALUES blocks of a parse tree (inline and final), in text order."""
    out: list[Any] = []
    stack = [tree]
    while stack:
        n = stack.pop()
        if isinstance(n, dict):
            if node_name(n) in ("InlineData", "ValuesClause") and n.get("var"):
                out.append(n)
            stack.extend(reversed([v for k, v in n.items() if k != "_vars"]))
        elif isinstance(n, list | tuple):
            stack.extend(reversed(n))
    return out


def _lit_text(lit: Literal, prefixes: dict[str, str]) -> str:
    """A literal as a query would write it (``"1850"``, ``1900``, ``"x"@en``, ``"…"^^xsd:date``)."""
    return sparql_literal(str(lit), str(lit.datatype) if lit.datatype else None,
                          lang=lit.language, prefixes=prefixes)


def _example(shape: Shape) -> str:
    dt = shape.datatype or ""
    t = xsd_type(dt) if dt else None
    if t is None:
        return f'"…"^^<{dt}>'
    if t.family is XsdFamily.NUMERIC:
        return "a number"
    if t.family is XsdFamily.BOOLEAN:
        return "true or false"
    if t.family is XsdFamily.STRING:
        return 'a plain string "…"'
    if t.family is XsdFamily.LANG:
        return f'a tagged string "…"@{shape.lang or "en"}'
    return sparql_literal(t.example, t.iri, prefixes={"xsd": XSD})


def vkg_prefixes(bundle: IndexBundle) -> dict[str, str]:
    from navqa.model.iri import WELL_KNOWN_PREFIXES

    out = dict(WELL_KNOWN_PREFIXES)
    for src in (bundle.ontology.prefixes, bundle.mappings.prefixes):
        for p, ns in src.items():
            if ns and p not in out and ns not in out.values():
                out[p] = ns
    return out


class _LazyEmbedder:
    """An :class:`Embedder` that loads the model on first use."""

    def __init__(self, factory: Callable[[], Embedder], name: str, dim: int) -> None:
        self._factory = factory
        self._inner: Embedder | None = None
        self.name = name
        self.dim = dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self._inner is None:
            self._inner = self._factory()
        return np.asarray(self._inner.embed(texts), dtype=np.float32)
