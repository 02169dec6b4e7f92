"""The query graph the offline synthesizer builds, and its rendering as SPARQL.

A :class:`Plan` is a small grammar over the query graph: triple patterns, FILTERs,
OPTIONAL and MINUS blocks, UNIONs of alternative blocks, a projection list (plain
variables or aggregates), GROUP BY with HAVING, an ordering with or without a bound
(``ORDER BY`` … ``LIMIT n``), and ASK. :func:`render` writes it out with the prefixes it
uses. Nothing is pasted from the question unescaped: constants go through
:func:`literal`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from navqa.model.iri import IRI, XSD, local_name
from navqa.model.rules import GrammarRule
from navqa.model.terms import escape_string
from navqa.online.context import SchemaContext
from navqa.online.reading.question_shape import Direction

Triple = tuple[str, str, str]

__all__ = ["Direction", "OrderKey", "Plan", "literal", "render", "render_body", "restates_value",
           "year_range"]


@dataclass(frozen=True, slots=True)
class OrderKey:
    """One ``ORDER BY`` key: a variable and a direction."""

    var: str
    direction: Direction

    def render(self) -> str:
        return f"{self.direction.value}({self.var})"


@dataclass
class Plan:
    """A query under construction (one per question: the synthesizer keeps no state).

    Attributes:
        triples: Basic graph pattern, in order.
        filters: FILTER expressions.
        optionals: OPTIONAL blocks, each a list of triples.
        minus: MINUS blocks, each a list of triples.
        unions: Groups of alternative blocks (``{ a } UNION { b }``).
        select: Projection: variables or ``(AGG(?x) AS ?y)`` expressions.
        group_by: GROUP BY variables (when ``select`` holds an aggregate per group).
        having: HAVING expressions.
        order: Ordering keys (empty: no ORDER BY).
        limit: The bound of the ordering (``None``: every answer, in order).
        ask: An ASK query (yes/no).
    """

    triples: list[Triple] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)
    optionals: list[list[Triple]] = field(default_factory=list)
    minus: list[list[Triple]] = field(default_factory=list)
    unions: list[list[list[Triple]]] = field(default_factory=list)
    select: list[str] = field(default_factory=list)
    distinct: bool = True
    group_by: list[str] = field(default_factory=list)
    having: list[str] = field(default_factory=list)
    order: list[OrderKey] = field(default_factory=list)
    limit: int | None = None
    ask: bool = False
    used: set[IRI] = field(default_factory=set)
    var_class: dict[str, IRI | None] = field(default_factory=dict)
    data_vars: dict[tuple[str, IRI], str] = field(default_factory=dict)
    explain: list[str] = field(default_factory=list)
    month_asked: bool = False
    rules: set[GrammarRule] = field(default_factory=set)
    """The switchable grammar rules that shaped this query (for ablations)."""
    unplaced_columns: list[str] = field(default_factory=list)
    """Asked column phrases no property, relation or entity was found for."""
    entity_answers: bool = True
    """Project an entity answer as the entity and its label (:meth:`entity`); off: the
    label alone (NaVQA's convention, :class:`~navqa.model.answers.EntityAnswer`)."""

    def entity(self, node: str, label: str) -> list[str]:
        """The columns of an entity answer: the node and its label (the node's name
        variable; the node itself when it has no name), or the label alone when
        :attr:`entity_answers` is off."""
        if label == node or not self.entity_answers:
            return [label]
        return [node, label]

    def labelled(self, label: str) -> list[str]:
        """:meth:`entity` for a label variable: the node it is a value of, then it."""
        node = next((n for (n, _), v in self.data_vars.items() if v == label), label)
        return self.entity(node, label)


    def new_var(self, base: str) -> str:
        """A variable named after ``base`` that the query does not use yet (neither as a
        node, nor as a value, nor in any triple: an anchor's node may be in a triple
        before it has a class)."""
        base = re.sub(r"[^A-Za-z0-9_]", "", base[:1].lower() + base[1:]) or "x"
        taken = set(self.var_class) | set(self.data_vars.values())
        for block in (self.triples, *self.optionals, *self.minus,
                      *(b for u in self.unions for b in u)):
            for s, _, o in block:
                taken.update((s, o))
        name, i = base, 2
        while f"?{name}" in taken:
            name, i = f"{base}{i}", i + 1
        return f"?{name}"

    def add(self, s: str, p: str, o: str) -> None:
        if (s, p, o) not in self.triples:
            self.triples.append((s, p, o))

    def data_var(self, ctx: SchemaContext, var: str, prop: IRI) -> str:
        """The variable holding ``prop`` of ``var`` (one per pair)."""
        key = (var, prop)
        if key not in self.data_vars:
            name = self.new_var(local_name(prop))
            self.data_vars[key] = name
            self.add(var, ctx.compact(prop), name)
            self.used.add(prop)
        return self.data_vars[key]


def restates_value(plan: Plan) -> bool:
    """Whether the query only gives back a value the question states: every projected
    variable is the value of a property on a node that the same property fixes to a
    constant (``?f :name "TROLL" . ?f :name ?name`` → ``?name``). Such a query answers
    nothing ("Who operates the Troll field?" → "TROLL") when it has an answer at all; a
    name placed on a class that does not hold it makes it empty instead. Yes/no,
    aggregates and groups are never restatements.
    """
    if plan.ask or plan.group_by or not plan.select or any(
            not v.startswith("?") or " " in v for v in plan.select):
        return False
    # the entity beside its label (an entity answer) restates what its label does
    values = [v for v in plan.select if v not in plan.var_class]
    if not values:
        return False
    fixed = {(s, p) for s, p, o in plan.triples if o.startswith('"')}
    return all(any(o == v and (s, p) in fixed for s, p, o in plan.triples)
               for v in values)


def _block(triples: list[Triple]) -> str:
    return " ".join(f"{s} {p} {o} ." for s, p, o in triples)


def render_body(plan: Plan) -> str:
    """The WHERE clause's lines."""
    body = [f"  {s} {p} {o} ." for s, p, o in plan.triples]
    for alternatives in plan.unions:
        body.append("  " + " UNION ".join(f"{{ {_block(b)} }}" for b in alternatives))
    body += [f"  OPTIONAL {{ {_block(o)} }}" for o in plan.optionals]
    body += [f"  MINUS {{ {_block(m)} }}" for m in plan.minus]
    body += [f"  FILTER({f})" for f in plan.filters]
    return "\n".join(body)


def render(prefixes: dict[str, str], plan: Plan) -> str:
    """The plan as SPARQL text with the prefixes (of ``prefixes``) it uses."""
    text = render_body(plan)
    tail = " ".join([*plan.select, *plan.group_by, *plan.having])
    used_prefixes = sorted({m.group(1) for m in re.finditer(r"(?<![\w?])([A-Za-z][\w\-]*):",
                                                            text + " " + tail)
                            if m.group(1) in prefixes})
    head = "".join(f"PREFIX {p}: <{prefixes[p]}>\n" for p in used_prefixes)
    if plan.ask:
        return f"{head}ASK WHERE {{\n{text}\n}}"
    sel = " ".join(plan.select)
    # Ontop 5.1.2 refuses DISTINCT with an ORDER BY key that is not projected
    # (DistinctOrderByDialectLimitationException); a superlative's single answer was
    # accepted, so only longer orderings drop DISTINCT
    distinct = plan.distinct and not (plan.order and plan.limit != 1 and any(
        k.var not in plan.select for k in plan.order))
    q = f"{head}SELECT {'DISTINCT ' if distinct else ''}{sel} WHERE {{\n{text}\n}}"
    if plan.group_by:
        q += f"\nGROUP BY {' '.join(plan.group_by)}"
    if plan.having:
        q += f"\nHAVING({' && '.join(plan.having)})"
    if plan.order:
        q += f"\nORDER BY {' '.join(k.render() for k in plan.order)}"
    if plan.limit is not None:
        q += f"\nLIMIT {plan.limit}"
    return q


def literal(value: str, datatype: IRI | None = None, *, lang: str | None = None) -> str:
    """A SPARQL literal with the value escaped (and its language tag, if any)."""
    body = f'"{escape_string(value)}"'
    if lang:
        return f"{body}@{lang}"
    if datatype and datatype != XSD + "string":
        return f"{body}^^<{datatype}>"
    return body


def year_range(var: str, year: int, op: str) -> list[str]:
    """FILTERs placing the date ``var`` in (or before/after) the calendar year ``year``.

    ``op`` is a comparator of the question (``=``, ``>``, ``>=``, ``<``, ``<=``) or
    ``decade`` (the ten years from ``year``).
    """
    lo, hi = {"=": (year, year + 1), "decade": (year, year + 10), ">": (year + 1, None),
              ">=": (year, None), "<": (None, year), "<=": (None, year + 1)
              }.get(op, (year, year + 1))
    out = []
    if lo is not None:
        out.append(f"{var} >= {literal(f'{lo:04d}-01-01', XSD + 'date')}")
    if hi is not None:
        out.append(f"{var} < {literal(f'{hi:04d}-01-01', XSD + 'date')}")
    return out
