"""Asked columns that live on a relation between two nodes of the query (``relation-column``).

A second shape (``record-column``, :func:`record_column`): a history table keeps a value
of an entity with the dates it held (NPD's ``FieldStatus``: a field, a status, a start and
an end date), and the VKG often also maps the current value onto the entity itself
(``Field.status``). "What is the status of Volve, and since when?" asks for the status
and a date of the record that holds it: the record class carries the projected property
too, and the asked column.

Relational schemas keep a many-to-many relation with attributes in a table of its own,
and a VKG maps that table to a class whose instances link the two sides: NPD's
``FieldLicensee`` links a company to a field and records the company's share and the
dates of its licence. The VKG often also has a shortcut between the sides
(``currentFieldOperator``), so the synthesizer may join the answer to the anchor directly.
"Which companies hold a share in the Grane field, and how large is each share?" asks for
a column of the relation itself: the share is on neither the company nor the field.

:func:`relation_column` finds such a class: it links the classes of two nodes of the
query that one triple joins directly, and it has the data property that best matches
the asked column. :func:`place_relation_column` puts it in the query: the direct triple
is replaced by the join through the relation's node (the question speaks of that
relation, so the shortcut, a different relation, no longer narrows the answer), and the
column is projected.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace

from navqa.model.iri import IRI, OWL_THING, local_name
from navqa.online.context import Neighbour, SchemaContext
from navqa.online.synthesis.plan import Plan, Triple

__all__ = ["RecordColumn", "RelationColumn", "place_record_column", "place_relation_column",
           "record_column", "relation_column"]


@dataclass(frozen=True)
class RelationColumn:
    """A relation class carrying an asked column, between two nodes of the query.

    Attributes:
        cls: The relation's class (``FieldLicensee``).
        prop: Its data property that the column asks for (``companyShare``).
        score: How well ``prop`` matches the column phrase.
        shortcut: The query's triple joining the two nodes directly, which the relation
            replaces.
        near / far: The two nodes' variables; ``near`` is the answer's.
        to_near / to_far: The relation's edges, seen from ``near``'s class and from the
            relation's class.
    """

    cls: IRI
    prop: IRI
    score: float
    shortcut: Triple
    near: str
    far: str
    to_near: Neighbour
    to_far: Neighbour


NAMED_RELATION = 0.1
"""Bonus of a relation whose edges the question names ("operated": ``fieldOperator``), by
their lexical evidence: two relations often carry the same kind of column (a start date)."""


def _fact_classes(ctx: SchemaContext, cls: IRI, in_query: set[IRI], *,
                  exclude: tuple[IRI, ...] = ()) -> Iterator[Neighbour]:
    """The neighbours of ``cls`` (by an allowed object property) whose class has no name:
    facts about ``cls`` (a share, a status record), not things of their own (a wellbore of
    a field). A class of the lineage of one in the query offers its columns on its own
    node, so it is none; nor ``cls``, ``owl:Thing`` or ``exclude``."""
    for n in ctx.neighbours(cls, data=False):
        other = n.other
        if other in (OWL_THING, cls, *exclude) or not ctx.allowed(other) \
                or not ctx.allowed(n.edge.prop) or ctx.name_property(other) is not None \
                or any(ctx.same_lineage(other, c) for c in in_query):
            continue
        yield n


def relation_column(ctx: SchemaContext, plan: Plan, near: str, kinds: frozenset[IRI],
                    score: Callable[[IRI], float], *,
                    lexical: Mapping[IRI, float] | None = None) -> RelationColumn | None:
    """The best relation class between ``near`` and a node one triple away that has a data
    property of a datatype in ``kinds`` scoring well by ``score``; ``None`` if none.
    ``lexical`` is the lexical evidence of properties in the question (0–1,
    :attr:`~navqa.online.linking.Linking.lexical`); the relation whose edges the question
    names best gets up to :data:`NAMED_RELATION` more.

    Only a triple between two typed nodes counts (``?field :currentFieldOperator
    ?company``); the relation is a class other than both that has an object property to
    each of them (two different edges) and no name: its instances are facts about the
    two, not things of their own (a wellbore links a company and a field too, but it has a
    name). A class already in the query, or a super- or subclass of one, is no candidate:
    that node offers its columns.
    """
    near_cls = plan.var_class.get(near)
    if near_cls is None:
        return None
    named = lexical or {}
    # a class already in the query (or of its lineage) offers its columns on its own node
    in_query = {c for c in plan.var_class.values() if c is not None}
    best: RelationColumn | None = None
    for s, p, o in plan.triples:
        if p == "a" or near not in (s, o) or s == o:
            continue
        far = o if s == near else s
        far_cls = plan.var_class.get(far)
        if far_cls is None:
            continue
        for n in _fact_classes(ctx, near_cls, in_query, exclude=(far_cls,)):
            rel = n.other
            back = [m for m in ctx.neighbours(rel, data=False)
                    if m.edge.prop != n.edge.prop and ctx.allowed(m.edge.prop)
                    and ctx.same_lineage(m.other, far_cls)]
            if not back:
                continue
            to_far = max(back, key=lambda m: named.get(m.edge.prop, 0.0))
            bonus = NAMED_RELATION * max(named.get(n.edge.prop, 0.0),
                                         named.get(to_far.edge.prop, 0.0))
            for e in ctx.data_properties_of(rel):
                if not ctx.allowed(e.prop) or ctx.datatype(e.prop, rel) not in kinds:
                    continue
                sc = score(e.prop) + bonus
                if best is None or sc > best.score:
                    best = RelationColumn(rel, e.prop, sc, (s, p, o), near, far, n, to_far)
    return best


def place_relation_column(ctx: SchemaContext, plan: Plan, rc: RelationColumn) -> str:
    """Join the relation's node in place of the shortcut triple; the column's variable."""
    plan.triples.remove(rc.shortcut)
    node = plan.new_var(local_name(rc.cls))
    plan.var_class[node] = rc.cls
    plan.add(node, "a", ctx.compact(rc.cls))
    plan.used.add(rc.cls)
    # to_near is seen from the answer's class: "in" means the relation points to it
    if rc.to_near.direction == "in":
        plan.add(node, ctx.compact(rc.to_near.edge.prop), rc.near)
    else:
        plan.add(rc.near, ctx.compact(rc.to_near.edge.prop), node)
    if rc.to_far.direction == "out":
        plan.add(node, ctx.compact(rc.to_far.edge.prop), rc.far)
    else:
        plan.add(rc.far, ctx.compact(rc.to_far.edge.prop), node)
    plan.used |= {rc.to_near.edge.prop, rc.to_far.edge.prop}
    plan.explain.append(f"column on the relation {ctx.compact(rc.cls)} between {rc.near} and "
                        f"{rc.far}, in place of {rc.shortcut[1]}")
    return plan.data_var(ctx, node, rc.prop)


@dataclass(frozen=True)
class RecordColumn:
    """A record class linked to a node of the query that holds a projected value of that
    node (the same data property) and the asked further column.

    Attributes:
        cls: The record's class (``FieldStatus``).
        prop: Its data property the column asks for (``dateStatusFrom``).
        score: How well ``prop`` matches the column phrase.
        node: The query node the record is about (``?field``).
        value_prop / value: The projected property shared by node and record, and its
            variable in the projection (``status``, ``?status``).
        edge: The record's edge, seen from the node's class.
    """

    cls: IRI
    prop: IRI
    score: float
    node: str
    value_prop: IRI
    value: str
    edge: Neighbour


def record_column(ctx: SchemaContext, plan: Plan, kinds: frozenset[IRI],
                  score: Callable[[IRI], float]) -> RecordColumn | None:
    """The best nameless record class, linked to a query node, that also has a data
    property the query projects from that node and a data property of a datatype in
    ``kinds`` scoring well by ``score``; ``None`` if none. A class already in the query
    (or of its lineage) is no candidate, nor a class with a name (a thing of its own)."""
    in_query = {c for c in plan.var_class.values() if c is not None}
    best: RecordColumn | None = None
    for (node, value_prop), value in plan.data_vars.items():
        node_cls = plan.var_class.get(node)
        if value not in plan.select or node_cls is None:
            continue
        for n in _fact_classes(ctx, node_cls, in_query):
            rec = n.other
            props = {e.prop for e in ctx.data_properties_of(rec) if ctx.allowed(e.prop)}
            if value_prop not in props:
                continue
            for prop in props - {value_prop}:
                if ctx.datatype(prop, rec) not in kinds:
                    continue
                sc = score(prop)
                if best is None or sc > best.score:
                    best = RecordColumn(rec, prop, sc, node, value_prop, value, n)
    return best


def place_record_column(ctx: SchemaContext, plan: Plan, rc: RecordColumn) -> str:
    """Join the record to its node, project the shared value from the record in place of
    the node's, and return the column's variable."""
    node = plan.new_var(local_name(rc.cls))
    plan.var_class[node] = rc.cls
    plan.add(node, "a", ctx.compact(rc.cls))
    plan.used |= {rc.cls, rc.edge.edge.prop}
    if rc.edge.direction == "in":  # seen from the node's class: the record points to it
        plan.add(node, ctx.compact(rc.edge.edge.prop), rc.node)
    else:
        plan.add(rc.node, ctx.compact(rc.edge.edge.prop), node)
    held = plan.data_var(ctx, node, rc.value_prop)
    plan.select = [held if v == rc.value else v for v in plan.select]
    plan.order = [replace(k, var=held) if k.var == rc.value else k for k in plan.order]
    plan.explain.append(f"{rc.value} and the asked column from the record "
                        f"{ctx.compact(rc.cls)} of {rc.node}")
    return plan.data_var(ctx, node, rc.prop)
