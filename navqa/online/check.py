"""Checks a query must pass before it is sent to the endpoint.

1. Read-only query forms only (UPDATE is refused).
2. It must parse (rdflib's SPARQL 1.1 parser). An undeclared prefix that the VKG knows
   is repaired by declaring it; any other syntax error is reported.
3. Every ontology term it uses must be in the active ontology
   (:func:`navqa.online.sparql_analysis.term_status`, as for ``navqa lint``). A term outside
   it is a *silent-failure risk*: the query would run and return nothing. The check names
   each such term and the nearest mapped alternatives.
"""

from __future__ import annotations

import re
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from rdflib import URIRef
from rdflib.plugins.sparql import parser as sparql_parser
from rdflib.plugins.sparql.algebra import translateQuery, traverse
from rdflib.plugins.sparql.parserutils import CompValue

from navqa.backends.sparql_http import query_form
from navqa.errors import SparqlSyntaxError
from navqa.model.iri import IRI
from navqa.online.context import SchemaContext
from navqa.online.sparql_analysis import (
    TermStatus,
    term_status,
    used_terms,
    vocabulary_namespaces,
)
from navqa.online.sparql_analysis import (
    nearest_alternatives as nearest_alternatives,  # re-exported: callers import it here
)
from navqa.online.sparql_analysis import path_iris as path_iris

_PREFIX_ERR = re.compile(r"Unknown namespace prefix\s*:?\s*['\"]?([\w\-]*)", re.I)


@dataclass
class CheckResult:
    """What the checks found.

    Attributes:
        sparql: The query, with repairs applied.
        ok: Whether it may be executed.
        issues: Human-readable findings.
        unmapped: Ontology terms outside the active ontology.
        unknown: Terms in the VKG's vocabulary namespaces that the ontology does not declare.
        alternatives: For each unmapped/unknown term, the nearest mapped terms.
        repaired: Whether the text was changed.
        predicates / classes: Terms used as properties and as ``rdf:type`` objects.
    """

    sparql: str
    ok: bool
    issues: list[str] = field(default_factory=list)
    unmapped: list[IRI] = field(default_factory=list)
    unknown: list[IRI] = field(default_factory=list)
    alternatives: dict[IRI, list[IRI]] = field(default_factory=dict)
    repaired: bool = False
    predicates: set[IRI] = field(default_factory=set)
    classes: set[IRI] = field(default_factory=set)


_DEEP_RECURSION_LIMIT = 60_000
"""Python frames allowed for one parse in the big-stack thread (about 10 per triple)."""
_DEEP_STACK_BYTES = 512 * 1024 * 1024
_DEEP_LOCK = threading.Lock()
_T = TypeVar("_T")


def _resolve_pnames(tree: Any) -> Any:
    """The parse tree with every prefixed name of a declared prefix resolved to its IRI.

    rdflib resolves prefixed names through a namespace manager that keeps one prefix per
    namespace, so a second prefix bound to the same namespace (``PREFIX a: <ns>`` and
    ``PREFIX rail: <ns>``) is forgotten and valid queries fail with "Unknown namespace
    prefix". Resolving them here, from the query's own declarations (the last one wins),
    leaves rdflib only the prefixes it knows by default and the undeclared ones.
    """
    base: str | None = None
    prefixes: dict[str, str] = {}
    for decl in tree[0]:
        if decl.name == "Base":
            base = str(decl.iri)
        elif decl.name == "PrefixDecl":
            iri = str(decl.iri)
            if base and ":" not in iri:
                iri = str(URIRef(iri, base=base))
            prefixes[decl.prefix or ""] = iri

    def visit(node: Any) -> Any:
        if isinstance(node, CompValue) and node.name == "pname":
            ns = prefixes.get(node.prefix or "")
            if ns is not None:
                return URIRef(ns + (node.localname or ""))
        return None

    return [tree[0], traverse(tree[1], visitPost=visit)]


def _parse_unchecked(sparql: str) -> Any:
    return translateQuery(_resolve_pnames(sparql_parser.parseQuery(sparql)))


def _parse_both(sparql: str) -> tuple[Any, Any]:
    tree = _resolve_pnames(sparql_parser.parseQuery(sparql))
    body = tree[1]
    return translateQuery(tree), body


def _tree_unchecked(sparql: str) -> Any:
    return _resolve_pnames(sparql_parser.parseQuery(sparql))


def _deep(fn: Callable[[str], _T], sparql: str) -> _T:
    """``fn(sparql)``; on :class:`RecursionError`, again in a thread with a big stack.

    rdflib's grammar recurses once per triple pattern of a group (about ten frames each),
    so 90 patterns exceed Python's default limit of 1000 frames. The retry raises the
    limit only while that thread runs (under a lock: the limit is process-wide).
    """
    try:
        return fn(sparql)
    except RecursionError:
        pass
    box: list[_T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            box.append(fn(sparql))
        except BaseException as e:  # re-raised in the caller's thread below
            failure.append(e)

    with _DEEP_LOCK:
        old_limit = sys.getrecursionlimit()
        old_stack = threading.stack_size()
        sys.setrecursionlimit(max(old_limit, _DEEP_RECURSION_LIMIT))
        try:
            threading.stack_size(_DEEP_STACK_BYTES)
            worker = threading.Thread(target=run, name="navqa-sparql-parse", daemon=True)
            worker.start()
        finally:
            threading.stack_size(old_stack)
        worker.join()
        sys.setrecursionlimit(old_limit)
    if failure:
        raise failure[0]
    return box[0]


def _wrap_errors(fn: Callable[[str], _T], sparql: str) -> _T:
    try:
        return _deep(fn, sparql)
    except RecursionError as e:
        raise SparqlSyntaxError(
            "the query is nested too deeply for the SPARQL parser (thousands of patterns "
            "in one group)", query=sparql) from e
    except SparqlSyntaxError:
        raise
    except Exception as e:  # pyparsing's ParseException, rdflib's plain Exception
        msg = str(e)
        m = _PREFIX_ERR.search(msg)
        first = msg.splitlines()[0][:300] if msg else type(e).__name__
        raise SparqlSyntaxError(first, query=sparql, line=getattr(e, "lineno", None),
                                column=getattr(e, "col", None),
                                unknown_prefix=m.group(1) if m else None) from e


def parse_tree(sparql: str) -> Any:
    """rdflib's parse tree (``[prologue, query]``) with declared prefixed names resolved.

    For callers that translate parts of the tree themselves; see :func:`parse`.

    Raises:
        SparqlSyntaxError: the query does not parse.
    """
    return _wrap_errors(_tree_unchecked, sparql)


def parse_with_tree(sparql: str) -> tuple[Any, Any]:
    """:func:`parse`'s translated query and the query part of its parse tree.

    The tree keeps what the algebra loses (a VALUES row's own arity, for one).

    Raises:
        SparqlSyntaxError: the query does not parse.
    """
    return _wrap_errors(_parse_both, sparql)


def parse(sparql: str) -> Any:
    """rdflib's translated query (``.algebra``, ``.prologue``) of a SPARQL query.

    The one SPARQL parse of navqa: the check, the lint, the agent's diagnosis and the
    question-file loader all call it. Unlike a bare ``translateQuery(parseQuery(...))``
    it accepts several prefixes bound to one namespace and groups of any length.

    Raises:
        SparqlSyntaxError: the query does not parse (``line``/``column`` when the parser
            knows them; ``unknown_prefix`` for a prefix used without a declaration).
    """
    return _wrap_errors(_parse_unchecked, sparql)


def check_query(ctx: SchemaContext, sparql: str, *, enforce_active: bool = True,
                alternatives: bool = True) -> CheckResult:
    """Run the checks; never executes anything.

    Raises:
        UpdateRefusedError: for SPARQL UPDATE (never repaired, never sent).
    """
    query_form(sparql)
    res = CheckResult(sparql=sparql, ok=True)
    for _ in range(5):
        try:
            algebra = parse(res.sparql)
            break
        except SparqlSyntaxError as e:
            pfx = e.unknown_prefix
            if pfx is not None and pfx in ctx.prefixes and f"PREFIX {pfx}:" not in res.sparql:
                res.sparql = f"PREFIX {pfx}: <{ctx.prefixes[pfx]}>\n" + res.sparql
                res.repaired = True
                res.issues.append(f"declared the missing prefix {pfx}:")
                continue
            res.ok = False
            res.issues.append(f"syntax error: {e.message}")
            return res
    else:
        res.ok = False
        res.issues.append("too many undeclared prefixes")
        return res
    preds, classes = used_terms(algebra)
    res.predicates, res.classes = preds, classes
    vocab = vocabulary_namespaces(ctx.ontology.signature)
    for term in sorted(preds | classes):
        status = term_status(term, ctx.ontology, ctx.active, vocab,
                             declared_allowed=not (ctx.use_active and enforce_active))
        if status in (TermStatus.FOREIGN, TermStatus.ALLOWED):
            continue
        if status is TermStatus.UNMAPPED:
            res.unmapped.append(term)
            res.issues.append(f"{ctx.compact(term)} has no mapping: the query would return "
                              "nothing (silent failure)")
        else:
            res.unknown.append(term)
            res.issues.append(f"{ctx.compact(term)} is not declared by the ontology")
        if alternatives:
            res.alternatives[term] = nearest_alternatives(ctx, term, want_class=term in classes)
    if enforce_active and (res.unmapped or res.unknown):
        res.ok = False
    return res
