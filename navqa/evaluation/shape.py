"""What a (gold) SPARQL query looks like: features, hops, and the ontology terms it uses.

Everything here is read from rdflib's SPARQL algebra of the query, never from the
question file (whose ``hops`` and ``features`` are only compared against it).

Features (:data:`FEATURES`)
    ``filter``       a FILTER or HAVING anywhere, or a filter inside an OPTIONAL
    ``optional``     OPTIONAL
    ``union``        UNION
    ``minus``        MINUS
    ``aggregation``  an aggregate function or GROUP BY
    ``order``        ORDER BY
    ``limit``        LIMIT
    ``ask``          the query form is ASK
    ``subquery``     a nested SELECT
    A query with none of them is ``plain`` in the breakdowns.

Entity nodes
    A query node (variable, blank node or IRI) is an *entity node* when it is the
    subject of a triple pattern with a non-variable predicate, is typed by ``rdf:type``,
    or is the object of a known object property; an IRI in object position is always one.
    Literals and variables seen only as objects of (possibly unknown) properties are
    values, not entities.

Joins and hops
    A *join* is a triple pattern ``s p o`` whose predicate is an IRI other than
    ``rdf:type`` and not a known datatype property, and whose object is an entity node:
    an object-property edge between two class-typed (or class-typeable) nodes. Property
    paths count their steps (a sequence ``p/q`` is two joins when it ends on an entity
    node, one otherwise; an alternative counts as its longest branch; ``p*``/``p+``/``p?``
    count once; steps through ``rdf:type`` and ``rdfs:subClassOf`` count nothing).
    Variable predicates are not joins.

    The join count of a graph pattern adds up over conjunctions (``.``, OPTIONAL,
    MINUS, sub-queries) and takes the **maximum** over the branches of a UNION (an
    answer only ever follows one branch). The joins inside FILTER [NOT] EXISTS patterns
    are added to the whole query's count, wherever the filter stands.

    ``hops = max(1, joins)``: a query over one class and its attributes is 1-hop, as in
    NaVQA's Table 6. Breakdowns use the buckets ``1``, ``2`` and ``3+``.

    Known object/datatype properties come from the VKG's ontology when the caller
    passes them; without them, only the structural rules above apply.

Gold terms (for the grounding diagnostics)
    ``classes``: IRIs in the object position of ``rdf:type`` patterns.
    ``properties``: IRIs in predicate position (and inside property paths) except
    ``rdf:type`` and ``rdfs:subClassOf``.
    ``typed_properties``: ``(class, property, direction)`` for each pattern ``s p o``
    and each class ``C`` the query asserts of ``s`` (direction ``out``) or of ``o``
    (direction ``in``).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from navqa.errors import SparqlSyntaxError
from navqa.online.check import parse, parse_tree, path_iris

log = logging.getLogger(__name__)

__all__ = [
    "FEATURES",
    "HOP_BUCKETS",
    "QueryShape",
    "analyse_query",
    "hop_bucket",
]

FEATURES: tuple[str, ...] = (
    "filter", "optional", "union", "minus", "aggregation", "order", "limit", "ask",
    "subquery",
)
HOP_BUCKETS: tuple[str, ...] = ("1", "2", "3+")

_RDF_TYPE = "http://www.w3.org/1999/02/22-rdf-syntax-ns#type"
_SUBCLASS = "http://www.w3.org/2000/01/rdf-schema#subClassOf"
_NON_JOIN = frozenset({_RDF_TYPE, _SUBCLASS})

Direction = Literal["out", "in"]


@dataclass(frozen=True)
class QueryShape:
    """The structure of one query.

    Attributes:
        form: ``SELECT``, ``ASK``, ``CONSTRUCT`` or ``DESCRIBE``.
        features: Detected features (a subset of :data:`FEATURES`).
        joins: Object-property joins (see the module docstring).
        classes: Classes used with ``rdf:type``.
        properties: Properties used (not ``rdf:type``).
        typed_properties: ``(class, property, direction)`` triples.
        ordered: The outermost solution modifiers have ORDER BY and LIMIT (top-k).
    """

    form: str
    features: frozenset[str]
    joins: int
    classes: frozenset[str] = field(default_factory=frozenset)
    properties: frozenset[str] = field(default_factory=frozenset)
    typed_properties: frozenset[tuple[str, str, Direction]] = field(default_factory=frozenset)
    ordered: bool = False

    @property
    def hops(self) -> int:
        """``max(1, joins)``."""
        return max(1, self.joins)


def hop_bucket(hops: int) -> str:
    """The breakdown bucket of a hop count: ``1`` (also for 0), ``2`` or ``3+``."""
    if hops <= 1:
        return "1"
    if hops == 2:
        return "2"
    return "3+"


def _parse(sparql: str) -> tuple[Any, list[Any]]:
    """The translated query, and the translated patterns of all its [NOT] EXISTS.

    rdflib translates EXISTS patterns in place while it collects filters, and leaves some
    untranslated or loses nested ones; so they are taken from a second parse tree (with
    prefixes and paths resolved as rdflib does) and translated one by one here.
    """
    import functools

    from rdflib.plugins.sparql.algebra import (
        _simplifyFilters,
        _traverse,
        translateGroupGraphPattern,
        translatePath,
        translatePName,
        translatePrologue,
        traverse,
    )

    try:
        query = parse(sparql)
    except SparqlSyntaxError as e:
        raise SparqlSyntaxError(f"does not parse as SPARQL: {e.message}", query=sparql,
                                line=e.line, column=e.column,
                                unknown_prefix=e.unknown_prefix) from e
    exists: list[Any] = []
    if "EXISTS" not in sparql.upper():
        return query, exists
    try:
        # a second, untouched parse tree: resolve prefixed names and paths as rdflib
        # does, then translate each EXISTS pattern on its own
        fresh = parse_tree(sparql)
        prologue = translatePrologue(fresh[0], None)
        body = traverse(fresh[1], visitPost=functools.partial(translatePName,
                                                               prologue=prologue))
        _traverse(body, _simplifyFilters)
        body = traverse(body, visitPost=translatePath)
        todo = [n["graph"] for n in _walk(body) if n.name in _EXISTS]
        while todo:
            g = todo.pop()
            if getattr(g, "name", None) == "GroupGraphPatternSub":
                g = translateGroupGraphPattern(g)
            exists.append(g)
            todo.extend(n["graph"] for n in _walk(g) if n.name in _EXISTS)
    except Exception as e:  # an rdflib internal changed: the query itself is fine
        log.warning("EXISTS patterns not analysed (%s): their joins are not counted", e)
        exists = []
    return query, exists


def analyse_query(
    sparql: str,
    *,
    object_properties: frozenset[str] | set[str] = frozenset(),
    data_properties: frozenset[str] | set[str] = frozenset(),
) -> QueryShape:
    """Parse ``sparql`` and describe its structure.

    Args:
        sparql: The query text.
        object_properties: IRIs known (from the ontology) to be object properties.
        data_properties: IRIs known to be datatype properties.

    Raises:
        SparqlSyntaxError: when rdflib cannot parse it.

    Example:
        >>> s = analyse_query("PREFIX : <http://x/> SELECT ?n WHERE "
        ...                   "{ ?a a :A ; :b ?b . ?b :name ?n }")
        >>> s.joins, s.hops, sorted(s.features)
        (1, 1, [])
    """
    query, exists = _parse(sparql)
    root = query.algebra
    form = {"SelectQuery": "SELECT", "AskQuery": "ASK", "ConstructQuery": "CONSTRUCT",
            "DescribeQuery": "DESCRIBE"}.get(root.name, root.name)

    nodes = list(_walk(root)) + [n for g in exists for n in _walk(g)]
    triples = [t for n in nodes if n.name == "BGP" for t in n.triples]

    features: set[str] = set()
    if form == "ASK":
        features.add("ask")
    for n in nodes:
        name = n.name
        if name == "Filter":
            features.add("filter")
        elif name == "LeftJoin":
            features.add("optional")
            expr = n.get("expr")
            if expr is not None and getattr(expr, "name", None) != "TrueFilter":
                features.add("filter")
        elif name == "Union":
            features.add("union")
        elif name == "Minus":
            features.add("minus")
        elif name in ("AggregateJoin", "Group"):
            features.add("aggregation")
        elif name == "OrderBy":
            features.add("order")
        elif name == "Slice" and n.get("length") is not None:
            features.add("limit")
        elif name == "ToMultiSet" and getattr(n.get("p"), "name", None) != "values":
            features.add("subquery")

    entity = _entity_nodes(triples, object_properties)
    counter = _JoinCounter(entity, frozenset(data_properties))
    joins = counter.count(root.p if "p" in root else root) + sum(counter.count(g)
                                                                  for g in exists)

    classes, properties, typed = _gold_terms(triples)
    return QueryShape(form=form, features=frozenset(features), joins=joins, classes=classes,
                      properties=properties, typed_properties=typed,
                      ordered=_ordered(root))


_EXISTS = ("Builtin_EXISTS", "Builtin_NOTEXISTS")


def _walk(node: Any) -> Iterator[Any]:
    """Every CompValue under ``node``: patterns and expressions, but not the patterns
    inside [NOT] EXISTS (:func:`_parse` returns those separately)."""
    from pyparsing import ParseResults
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(node, CompValue):
        yield node
        if node.name in _EXISTS:
            return
        for key, value in node.items():
            if key == "_vars":
                continue
            yield from _walk(value)
    elif isinstance(node, list | tuple | ParseResults):
        for item in node:
            yield from _walk(item)


def _ordered(root: Any) -> bool:
    """ORDER BY and LIMIT among the outermost solution modifiers."""
    seen_order = seen_limit = False
    node = root.get("p")
    while node is not None and getattr(node, "name", None) in (
            "Slice", "Distinct", "Reduced", "Project", "OrderBy", "Extend"):
        if node.name == "Slice" and node.get("length") is not None:
            seen_limit = True
        if node.name == "OrderBy":
            seen_order = True
        node = node.get("p")
    return seen_order and seen_limit


def _is_path(p: Any) -> bool:
    from rdflib.paths import Path

    return isinstance(p, Path)


def _entity_nodes(triples: list[Any], object_properties: frozenset[str] | set[str]
                  ) -> frozenset[Any]:
    from rdflib.term import URIRef, Variable

    out: set[Any] = set()
    for s, p, o in triples:
        if isinstance(p, Variable):
            continue
        out.add(s)
        if isinstance(p, URIRef) and str(p) in object_properties:
            out.add(o)
    return frozenset(out)


class _JoinCounter:
    def __init__(self, entity: frozenset[Any], data_properties: frozenset[str]) -> None:
        self.entity = entity
        self.data_properties = data_properties

    def is_entity(self, node: Any) -> bool:
        from rdflib.term import URIRef

        return isinstance(node, URIRef) or node in self.entity

    def count(self, node: Any) -> int:
        from rdflib.plugins.sparql.parserutils import CompValue

        if not isinstance(node, CompValue):
            return 0
        name = node.name
        if name == "BGP":
            return sum(self.triple(t) for t in node.triples)
        if name == "Union":
            return max(self.count(node.p1), self.count(node.p2))
        return sum(self.count(node[key]) for key in ("p", "p1", "p2") if key in node)

    def triple(self, t: tuple[Any, Any, Any]) -> int:
        from rdflib.term import URIRef

        _s, p, o = t
        if isinstance(p, URIRef):
            return self.step(p, self.is_entity(o))
        if _is_path(p):
            return self.path(p, self.is_entity(o))
        return 0

    def step(self, p: Any, ends_on_entity: bool) -> int:
        iri = str(p)
        if iri in _NON_JOIN or iri in self.data_properties:
            return 0
        return 1 if ends_on_entity else 0

    def path(self, p: Any, ends_on_entity: bool) -> int:
        from rdflib.paths import AlternativePath, InvPath, MulPath, NegatedPath, SequencePath
        from rdflib.term import URIRef

        if isinstance(p, URIRef):
            return self.step(p, ends_on_entity)
        if isinstance(p, SequencePath):
            *init, last = p.args
            return sum(self.path(a, True) for a in init) + self.path(last, ends_on_entity)
        if isinstance(p, AlternativePath):
            return max(self.path(a, ends_on_entity) for a in p.args)
        if isinstance(p, InvPath):
            # o ^p s means s p o: the far end is the pattern's subject, always an entity
            return self.path(p.arg, True)
        if isinstance(p, MulPath):
            return self.path(p.path, ends_on_entity)
        if isinstance(p, NegatedPath):
            return 1 if ends_on_entity else 0
        return 0


def _is_type_path(p: Any) -> bool:
    """``rdf:type`` or ``rdf:type/rdfs:subClassOf*``-like paths (the object is a class)."""
    from rdflib.paths import SequencePath
    from rdflib.term import URIRef

    if isinstance(p, URIRef):
        return str(p) == _RDF_TYPE
    if isinstance(p, SequencePath):
        return isinstance(p.args[0], URIRef) and str(p.args[0]) == _RDF_TYPE and all(
            path_iris(a) <= _NON_JOIN for a in p.args[1:])
    return False


def _gold_terms(triples: list[Any]) -> tuple[
        frozenset[str], frozenset[str], frozenset[tuple[str, str, Direction]]]:
    from rdflib.term import URIRef, Variable

    classes: set[str] = set()
    properties: set[str] = set()
    types: dict[Any, set[str]] = {}
    for s, p, o in triples:
        if isinstance(p, Variable):
            continue
        if _is_type_path(p):
            if isinstance(o, URIRef):
                classes.add(str(o))
                types.setdefault(s, set()).add(str(o))
            continue
        iris = [str(p)] if isinstance(p, URIRef) else list(path_iris(p))
        properties.update(i for i in iris if i not in _NON_JOIN)
    typed: set[tuple[str, str, Direction]] = set()
    for s, p, o in triples:
        if not isinstance(p, URIRef) or str(p) in _NON_JOIN:
            continue
        for c in types.get(s, ()):
            typed.add((c, str(p), "out"))
        for c in types.get(o, ()):
            typed.add((c, str(p), "in"))
    return frozenset(classes), frozenset(properties), frozenset(typed)
