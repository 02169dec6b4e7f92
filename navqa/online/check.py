"""Checks a query must pass before it is sent to the endpoint.

1. Read-only query forms only (UPDATE is refused).
2. It must parse (rdflib's SPARQL 1.1 parser). An undeclared prefix that the VKG knows
   is repaired by declaring it; any other syntax error is reported.
3. Every ontology term it uses must be in the active ontology. A term outside it is a
   *silent-failure risk*: the query would run and return nothing. The check names each
   such term and the nearest mapped alternatives.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from rdflib import URIRef
from rdflib.paths import AlternativePath, InvPath, MulPath, NegatedPath, SequencePath
from rdflib.plugins.sparql import parser as sparql_parser
from rdflib.plugins.sparql.algebra import translateQuery
from rdflib.term import Variable

from navqa.backends.sparql_http import query_form
from navqa.model.iri import IRI, OWL, RDF, RDF_TYPE, RDFS, XSD
from navqa.online.context import SchemaContext

_PREFIX_ERR = re.compile(r"Unknown namespace prefix\s*:?\s*['\"]?([\w\-]*)", re.I)
_BUILTIN_NS = (RDF, RDFS, OWL, XSD, "http://www.opengis.net/ont/geosparql#",
               "http://www.opengis.net/def/function/geosparql/", "http://www.w3.org/2005/xpath-functions#")


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


def parse(sparql: str) -> object:
    """rdflib's algebra of the query (raises on syntax errors)."""
    return translateQuery(sparql_parser.parseQuery(sparql))


def path_iris(p: object) -> set[IRI]:
    """Every IRI inside a property path (a plain IRI is a path of one)."""
    if isinstance(p, URIRef):
        return {str(p)}
    out: set[IRI] = set()
    if isinstance(p, SequencePath | AlternativePath | NegatedPath):
        for a in p.args:
            out |= path_iris(a)
    elif isinstance(p, MulPath):
        out |= path_iris(p.path)
    elif isinstance(p, InvPath):
        out |= path_iris(p.arg)
    return out


def used_terms(algebra: object) -> tuple[set[IRI], set[IRI]]:
    """(predicates, classes) used in the query's triple patterns and property paths."""
    preds: set[IRI] = set()
    classes: set[IRI] = set()

    def visit(node: object) -> None:
        if isinstance(node, dict):
            triples = node.get("triples") if getattr(node, "name", "") == "BGP" else None
            for _s, p_, o_ in triples or ():
                if isinstance(p_, URIRef):
                    preds.add(str(p_))
                    if str(p_) == RDF_TYPE and isinstance(o_, URIRef):
                        classes.add(str(o_))
                elif not isinstance(p_, Variable):
                    preds.update(path_iris(p_))
            for v in node.values():
                visit(v)
        elif isinstance(node, list | tuple):
            for v in node:
                visit(v)

    visit(getattr(algebra, "algebra", algebra))
    preds.discard(RDF_TYPE)
    return preds, classes


def _vocab_namespaces(ctx: SchemaContext) -> set[str]:
    out: set[str] = set()
    for iri in ctx.ontology.signature:
        for sep in ("#", "/"):
            if sep in iri:
                out.add(iri.rsplit(sep, 1)[0] + sep)
                break
    return out


def nearest_alternatives(ctx: SchemaContext, iri: IRI, *, want_class: bool, n: int = 3
                         ) -> list[IRI]:
    """The mapped classes/properties closest to ``iri`` by description similarity."""
    from navqa.model.iri import humanize

    ent = ctx.ontology.entity(iri)
    text = humanize(iri)
    if ent is not None:
        comment = ent.comment() or ""
        text = f"{ent.label()} {text} {comment}"[:300]
    vec = ctx.embed([text])
    scores = ctx.class_scores(vec) if want_class else ctx.property_scores(vec)
    ranked = sorted(((s, i) for i, s in scores.items() if ctx.active.is_active(i) and i != iri),
                    reverse=True)
    return [i for _, i in ranked[:n]]


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
        except Exception as e:  # pyparsing / rdflib raise several types
            msg = str(e)
            m = _PREFIX_ERR.search(msg)
            if m and m.group(1) in ctx.prefixes and f"PREFIX {m.group(1)}:" not in res.sparql:
                res.sparql = f"PREFIX {m.group(1)}: <{ctx.prefixes[m.group(1)]}>\n" + res.sparql
                res.repaired = True
                res.issues.append(f"declared the missing prefix {m.group(1)}:")
                continue
            res.ok = False
            res.issues.append(f"syntax error: {msg.splitlines()[0][:300]}")
            return res
    else:
        res.ok = False
        res.issues.append("too many undeclared prefixes")
        return res
    preds, classes = used_terms(algebra)
    res.predicates, res.classes = preds, classes
    vocab = _vocab_namespaces(ctx)
    for term in sorted(preds | classes):
        if term.startswith(_BUILTIN_NS) and term not in ctx.ontology.signature:
            continue
        if ctx.allowed(term) or (not enforce_active and term in ctx.ontology.signature):
            continue
        declared = term in ctx.ontology.signature
        if not declared and not any(term.startswith(ns) for ns in vocab):
            continue
        if declared:
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
