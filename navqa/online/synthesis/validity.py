"""Facts that hold *now*: "which companies **currently** hold a share", "the **current**
status", "lines run **today**".

VKGs often reify a relation that changes over time as a node with a validity interval:
a licence share, an operatorship, a franchise, a status, each with a start date and an
end date that stays empty while the fact holds. When the question asks about the present
(:attr:`Phenomenon.CURRENCY`), every such node of the query gets "no end date, or one
still to come": ``OPTIONAL { ?r <end> ?end } FILTER(!BOUND(?end) || ?end >= NOW())``
(Ontop 5.1.2 rejects ``FILTER NOT EXISTS``; an expiry date in the future is no end yet).

A node is taken to carry an interval when its class has two date properties, one whose
name says it starts (:attr:`Phenomenon.VALIDITY_START`: "from", "start", "valid from") and
one whose name says it ends (:attr:`Phenomenon.VALIDITY_END`: "to", "end", "until"). The
names are read from the properties' labels and local names (``dateStatusTo``), never from
a list of one VKG's terms.

Example:
    >>> asks_present("Which companies currently hold a share in the field?")
    True
    >>> asks_present("Which companies held a share in 1990?")
    False
"""

from __future__ import annotations

import re

from navqa.model.iri import IRI, local_name, split_words
from navqa.online.context import DATES, SchemaContext
from navqa.online.reading.lexicon import Phenomenon, pattern, words
from navqa.online.synthesis.plan import Plan

__all__ = ["asks_present", "end_of_validity", "only_current"]

_PRESENT = re.compile(pattern(Phenomenon.CURRENCY), re.I)
_START = words(Phenomenon.VALIDITY_START)
_END = words(Phenomenon.VALIDITY_END)


def asks_present(question: str) -> bool:
    """Whether the question asks about what holds now."""
    return _PRESENT.search(question) is not None


def _name_words(ctx: SchemaContext, prop: IRI) -> set[str]:
    label = ctx.label(prop) or ""
    return set(split_words(local_name(prop))) | set(re.findall(r"[a-z]+", label.lower()))


def end_of_validity(ctx: SchemaContext, cls: IRI) -> IRI | None:
    """The end date of the validity interval instances of ``cls`` carry, if any."""
    dates = [e.prop for e in ctx.data_properties_of(cls)
             if ctx.allowed(e.prop) and ctx.datatype(e.prop, cls) in DATES]
    ends = [p for p in dates if _name_words(ctx, p) & _END]
    starts = [p for p in dates if _name_words(ctx, p) & _START and p not in ends]
    return ends[0] if ends and starts else None


def only_current(ctx: SchemaContext, plan: Plan, question: str) -> list[IRI]:
    """Keep only the facts that still hold, on every interval node of ``plan``.

    Returns the end-date properties it used. A node whose end date the query already
    reads (as a column or a filter) is left alone: the question asks about that date.
    """
    if not asks_present(question):
        return []
    used: list[IRI] = []
    in_query = {tr[0] for tr in plan.triples}
    for var, cls in list(plan.var_class.items()):
        if cls is None or var not in in_query:
            continue
        end = end_of_validity(ctx, cls)
        if end is None or (var, end) in plan.data_vars:
            continue
        x = plan.new_var(local_name(end))
        plan.var_class[x] = None
        plan.optionals.append([(var, ctx.compact(end), x)])
        plan.filters.append(f"!BOUND({x}) || {x} >= NOW()")
        plan.used.add(end)
        used.append(end)
        plan.explain.append(f"only current: {var} has no {ctx.compact(end)}")
    return used
