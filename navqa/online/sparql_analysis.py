"""What a SPARQL query uses of the vocabulary, and the mapped terms to use instead.

One module for the three query analysers — the pipeline's static check
(:func:`navqa.online.check.check_query`), the linter (:mod:`navqa.audits.lint`) and the
agent's diagnosis (:mod:`navqa.online.saga.diagnose`) — so ``navqa ask`` and ``navqa
lint`` name the same terms and suggest the same replacements:

* :func:`used_terms` — the predicates and classes of a parsed query's triple patterns
  and property paths (:func:`path_iris`);
* :func:`vocabulary_term` — whether a term belongs to the VKG's vocabulary at all
  (built-in vocabularies such as RDF, OWL, XSD and GeoSPARQL, and IRIs of foreign
  namespaces, are not checked against the mappings);
* :func:`term_status` — whether a query may use a term: the one notion of "allowed"
  (populated by a mapping, or declared when the active ontology is not enforced) that the
  check and the linter share;
* :func:`comparisons` / :func:`as_comparison` — the ``?v op literal`` comparisons of the
  query's FILTERs, variable first;
* :func:`nearest_alternatives` — the mapped classes (properties) nearest to an unmapped
  or unknown term: description similarity plus :data:`NEIGHBOUR_BONUS` for its
  neighbours in the ontology; without an embedding, the neighbours ranked by name.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from rdflib import Literal, URIRef
from rdflib.paths import AlternativePath, InvPath, MulPath, NegatedPath, SequencePath
from rdflib.term import Variable

from navqa.model.active import ActiveOntology
from navqa.model.iri import IRI, OWL, RDF, RDF_TYPE, RDFS, XSD, humanize, local_name
from navqa.model.ontology import Ontology

if TYPE_CHECKING:
    from navqa.online.context import SchemaContext

__all__ = [
    "BUILTIN_NAMESPACES",
    "NEIGHBOUR_BONUS",
    "Comparison",
    "TermStatus",
    "as_comparison",
    "comparisons",
    "description",
    "nearest_alternatives",
    "path_iris",
    "rank_alternatives",
    "structural_alternatives",
    "term_status",
    "used_terms",
    "vocabulary_namespaces",
    "vocabulary_term",
]

BUILTIN_NAMESPACES = (RDF, RDFS, OWL, XSD, "http://www.opengis.net/ont/geosparql#",
                      "http://www.opengis.net/def/function/geosparql/",
                      "http://www.w3.org/2005/xpath-functions#")
"""Vocabularies no mapping is expected to populate (unless the ontology declares the term)."""

NEIGHBOUR_BONUS = 0.15
"""Added to the cosine of an alternative that neighbours the unmapped term in T."""


# -- terms ------------------------------------------------------------------------------------


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
    """(predicates, classes) used in the query's triple patterns and property paths.

    ``algebra`` is what :func:`navqa.online.check.parse` returns; ``rdf:type`` itself is
    not a predicate here, the objects of its patterns are the classes.
    """
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


def vocabulary_namespaces(signature: Iterable[str]) -> set[str]:
    """The namespaces of the ontology's terms (up to the last ``#`` or ``/``)."""
    out: set[str] = set()
    for iri in signature:
        for sep in ("#", "/"):
            if sep in iri:
                out.add(iri.rsplit(sep, 1)[0] + sep)
                break
    return out


def vocabulary_term(term: IRI, signature: set[IRI] | frozenset[IRI],
                    namespaces: set[str]) -> bool:
    """Whether ``term`` is the VKG's to map: declared, or in one of its namespaces, and
    not a built-in term the ontology does not declare."""
    if term in signature:
        return True
    if term.startswith(BUILTIN_NAMESPACES):
        return False
    return any(term.startswith(ns) for ns in namespaces)


class TermStatus(Enum):
    """What a query's use of a term means for the VKG."""

    FOREIGN = "foreign"
    """Not the VKG's to map (a built-in vocabulary, a foreign namespace)."""
    ALLOWED = "allowed"
    """Populated by a mapping (or declared, when the active ontology is not enforced)."""
    UNMAPPED = "unmapped"
    """Declared by the ontology, populated by no mapping: a silent failure."""
    UNKNOWN = "unknown"
    """In the VKG's namespaces but not declared at all."""


def term_status(term: IRI, ontology: Ontology, active: ActiveOntology, namespaces: set[str],
                *, declared_allowed: bool = False) -> TermStatus:
    """Whether a query may use ``term`` — the check's and the linter's one notion.

    Args:
        namespaces: :func:`vocabulary_namespaces` of the ontology's signature.
        declared_allowed: Allow every declared term, mapped or not (the pipeline without
            the active ontology, or a check that only reports).
    """
    signature = ontology.signature
    if not vocabulary_term(term, signature, namespaces):
        return TermStatus.FOREIGN
    if active.is_active(term) or (declared_allowed and term in signature):
        return TermStatus.ALLOWED
    return TermStatus.UNMAPPED if term in signature else TermStatus.UNKNOWN


# -- comparisons ------------------------------------------------------------------------------

_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}


@dataclass(frozen=True, slots=True)
class Comparison:
    """``?var op literal`` (or ``?var IN (literals)``) in a FILTER, the variable first.

    Attributes:
        var: The variable.
        op: ``=``, ``!=``, ``<``, ``>``, ``<=``, ``>=``, ``IN`` or ``NOT IN`` (flipped when
            the query writes the literal first: ``1900 < ?y`` is ``?y > 1900``).
        literals: The literals compared with (one, except for ``IN``).
    """

    var: Variable
    op: str
    literals: tuple[Literal, ...]


def as_comparison(node: object) -> Comparison | None:
    """The comparison a ``RelationalExpression`` node makes, if it compares a variable with
    literals; ``None`` for any other node."""
    if not isinstance(node, dict) or getattr(node, "name", "") != "RelationalExpression":
        return None
    left, op, right = node.get("expr"), str(node.get("op")), node.get("other")
    if isinstance(right, Variable) and isinstance(left, Literal):
        left, right, op = right, left, _FLIP.get(op, op)
    if not isinstance(left, Variable):
        return None
    lits = tuple(x for x in (right if isinstance(right, list) else [right])
                 if isinstance(x, Literal))
    return Comparison(left, op, lits) if lits else None


def comparisons(algebra: object) -> list[Comparison]:
    """Every variable-with-literal comparison in a parsed query, in the algebra's order."""
    out: list[Comparison] = []

    def visit(node: object) -> None:
        if isinstance(node, dict):
            c = as_comparison(node)
            if c is not None:
                out.append(c)
            for v in node.values():
                visit(v)
        elif isinstance(node, list | tuple):
            for v in node:
                visit(v)

    visit(getattr(algebra, "algebra", algebra))
    return out


# -- alternatives -----------------------------------------------------------------------------


def description(ontology: Ontology, iri: IRI) -> str:
    """The text an alternative is matched against: label, humanised name, comment."""
    text = humanize(iri)
    ent = ontology.entity(iri)
    if ent is not None:
        text = f"{ent.label()} {text} {ent.comment() or ''}"[:300]
    return text


def structural_alternatives(ontology: Ontology, active: ActiveOntology, iri: IRI, *,
                            want_class: bool) -> list[IRI]:
    """Mapped neighbours of ``iri`` in the ontology, most similar name first.

    Classes: siblings, parents and subclasses. Properties: parents, siblings and the
    properties sharing a domain or range (every mapped property when none is known).
    """
    onto = ontology
    near: set[IRI] = set()
    pool: set[IRI] | frozenset[IRI]
    if want_class and iri in onto.classes:
        c = onto.classes[iri]
        for parent in c.parents:
            near |= onto.subclasses(parent, reflexive=False)
            near.add(parent)
        near |= onto.subclasses(iri, reflexive=False)
        pool = active.classes
    elif want_class:
        pool = active.classes
        near = set(pool)
    else:
        p = onto.property(iri)
        if p is not None:
            for parent in p.parents:
                near.add(parent)
                near |= {q.iri for q in onto.properties.values() if parent in q.parents}
            doms, rngs = onto.inherited_domains(iri), onto.inherited_ranges(iri)
            for q in onto.properties.values():
                if doms & onto.inherited_domains(q.iri) or (
                        rngs and rngs & onto.inherited_ranges(q.iri)):
                    near.add(q.iri)
        pool = active.object_properties | active.data_properties
        if not near:
            near = set(pool)
    cands = [x for x in near if x in pool and x != iri]
    name = local_name(iri).lower()
    return sorted(cands, key=lambda x: (-difflib.SequenceMatcher(
        None, name, local_name(x).lower()).ratio(), x))


def rank_alternatives(ontology: Ontology, active: ActiveOntology, iri: IRI, *,
                      want_class: bool, scores: Mapping[IRI, float] | None,
                      n: int = 3) -> list[IRI]:
    """The ``n`` best mapped alternatives of ``iri``.

    Args:
        scores: Similarity of each candidate to :func:`description` of ``iri`` (the
            index's embeddings); ``None`` ranks the structural neighbours by name.
    """
    structural = structural_alternatives(ontology, active, iri, want_class=want_class)
    if scores is None:
        return structural[:n]
    near = set(structural)
    ranked = sorted(((s + (NEIGHBOUR_BONUS if i in near else 0.0), i)
                     for i, s in scores.items() if active.is_active(i) and i != iri),
                    key=lambda t: (-t[0], t[1]))
    return [i for _, i in ranked[:n]]


def nearest_alternatives(ctx: SchemaContext, iri: IRI, *, want_class: bool, n: int = 3
                         ) -> list[IRI]:
    """The mapped classes/properties nearest to ``iri`` (see :func:`rank_alternatives`)."""
    vec = ctx.embed([description(ctx.ontology, iri)])
    scores = ctx.class_scores(vec) if want_class else ctx.property_scores(vec)
    return rank_alternatives(ctx.ontology, ctx.active, iri, want_class=want_class,
                             scores=scores, n=n)
