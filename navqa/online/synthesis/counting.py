"""Counting shapes of the offline synthesizer: answers ranked, bounded or grouped by a count.

Three shapes, read by :mod:`navqa.online.reading.question_shape` and placed here on a
:class:`~navqa.online.synthesis.plan.Plan`:

* **ranking by a count** ("Which X has drilled the most Y?", "the five X with the
  largest number of Y, and how many?") → ``GROUP BY`` the answer's name, ``ORDER BY``
  ``COUNT(DISTINCT ?y)``, ``LIMIT n``;
* **bound on a count** ("Which X have more than 60 different Y?") → ``GROUP BY`` the
  answer's name, ``HAVING(COUNT(DISTINCT ?y) > 60)``;
* **count per year** ("How many X were made in each year?") → ``GROUP BY`` the year of the
  date (or the year) property the question names.

The counted things must be a *class*: the phrase after the superlative or the number
names a class reachable from the answer class, and names it better than any data
property nearby names a quantity ("the most pages" of a book orders by its page count,
"the most oil" by the oil produced: those stay orderings on a data property). The count
column is projected only when the question asks for it ("…, and in how many?", "with
their counts").

The functions are stateless: they take the schema context, the plan and a path finder
(the synthesizer's cheapest-path search) and return what they placed, or ``None`` when
the shape does not apply — then the synthesizer's other rules answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from navqa.model.iri import IRI, OWL_THING, local_name
from navqa.online.context import DATES, NUMERIC, Neighbour, SchemaContext, stems
from navqa.online.reading.lexicon import Phenomenon, words
from navqa.online.reading.question_shape import CountBound, CountRank
from navqa.online.synthesis.plan import OrderKey, Plan

__all__ = ["CountedClass", "PathFinder", "bound_by_count", "count_per_year",
           "counted_class", "rank_by_count"]

PathFinder = Callable[[IRI, set[IRI]], "list[Neighbour] | None"]
"""The cheapest object-property path from a class to one of a set of classes."""

_STOP = words(Phenomenon.STOPWORD) | words(Phenomenon.DISTINCT_WORD)
_CLASS_MINIMUM = 0.4
"""How well the phrase must name a class to be counted."""
_QUANTITY_MARGIN = 0.02
"""A data property naming the phrase this much better than the class wins (a quantity)."""


@dataclass(frozen=True, slots=True)
class CountedClass:
    """The class whose instances are counted, and the plan variable holding them."""

    cls: IRI
    var: str
    score: float


def _content(phrase: str) -> list[str]:
    return [w for w in re.findall(r"[a-zà-ÿ][a-zà-ÿ\-]*", phrase.lower()) if w not in _STOP]


def _lexical(ctx: SchemaContext, iri: IRI, phrase_stems: frozenset[str]) -> float:
    """How much of the phrase the element's name says, and of its name the phrase
    (Jaccard over stems): "exploration wellbores" names ``ExplorationWellbore`` fully,
    ``Wellbore`` half."""
    profile = ctx.lexical_profiles.get(iri)
    if profile is None or not phrase_stems or not profile.name:
        return 0.0
    return len(phrase_stems & profile.name) / len(phrase_stems | profile.name)


def _score(ctx: SchemaContext, iri: IRI, similarity: float, phrase_stems: frozenset[str]
           ) -> float:
    """The embedding similarity, raised by a lexical match of the element's name."""
    lex = _lexical(ctx, iri, phrase_stems)
    return max(similarity, 0.3 + 0.6 * lex) if lex > 0 else similarity


def _best_class(ctx: SchemaContext, phrase: str, root: IRI) -> tuple[float, IRI] | None:
    ws = _content(phrase)
    if not ws:
        return None
    texts = list(dict.fromkeys([" ".join(ws), *(" ".join(ws[:i]) for i in range(1, len(ws))),
                                ws[-1]]))
    similarity: dict[IRI, float] = {}
    for vec in ctx.embed(texts):
        for iri, sc in ctx.class_scores(vec[None, :]).items():
            similarity[iri] = max(sc, similarity.get(iri, -1.0))
    phrase_stems = stems(" ".join(ws))
    scored = [(_score(ctx, iri, sc, phrase_stems), iri) for iri, sc in similarity.items()
              if iri != root and ctx.allowed(iri)]
    return max(scored, default=None)


def _best_quantity(ctx: SchemaContext, phrase: str, root: IRI) -> float:
    """How well a numeric data property of ``root`` or of a neighbour names the phrase."""
    ws = _content(phrase)
    vec = ctx.embed([" ".join(ws)])[0]
    phrase_stems = stems(" ".join(ws))
    classes = [root] + [n.other for n in ctx.neighbours(root, data=False)
                        if n.other != OWL_THING and ctx.allowed(n.edge.prop)]
    best = -1.0
    for cls in dict.fromkeys(classes):
        for e in ctx.data_properties_of(cls):
            v = ctx.vector(e.prop)
            if v is not None and ctx.allowed(e.prop) and ctx.datatype(e.prop, cls) in NUMERIC:
                best = max(best, _score(ctx, e.prop, float(v @ vec), phrase_stems))
    return best


def counted_class(ctx: SchemaContext, plan: Plan, phrase: str, root: IRI, t: str,
                  path: PathFinder) -> CountedClass | None:
    """Join the class ``phrase`` names to the target ``t`` and return its variable.

    ``None`` (and nothing added) when the phrase names no class reachable from ``root``,
    or names a quantity (a numeric data property nearby) better than a class.
    """
    found = _best_class(ctx, phrase, root)
    if found is None or found[0] < _CLASS_MINIMUM:
        plan.explain.append(f"counting: no class for {phrase!r}")
        return None
    score, cls = found
    quantity = _best_quantity(ctx, phrase, root)
    if quantity > score + _QUANTITY_MARGIN:
        plan.explain.append(f"counting: {phrase!r} names a quantity ({quantity:.2f}) rather "
                            f"than {ctx.compact(cls)} ({score:.2f})")
        return None
    existing = next((v for v, c in plan.var_class.items() if c == cls and v != t), None)
    if existing is not None:
        return CountedClass(cls, existing, score)
    steps = path(root, {cls})
    if not steps:
        plan.explain.append(f"counting: {ctx.compact(cls)} not reachable from "
                            f"{ctx.compact(root)}")
        return None
    var = t
    for n in steps:
        new = plan.new_var(local_name(n.other))
        plan.var_class[new] = n.other
        plan.used.add(n.edge.prop)
        if n.direction == "out":
            plan.add(var, ctx.compact(n.edge.prop), new)
        else:
            plan.add(new, ctx.compact(n.edge.prop), var)
        var = new
    # counted are instances of the class: the path may end on a superclass, or its last
    # property may reach other classes too
    plan.add(var, "a", ctx.compact(cls))
    plan.var_class[var] = cls
    plan.used.add(cls)
    plan.explain.append(f"counting {ctx.compact(cls)} as {var} (for {phrase!r})")
    return CountedClass(cls, var, score)


def _group_key(ctx: SchemaContext, plan: Plan, root: IRI, t: str) -> str:
    name = ctx.name_property(root)
    return plan.data_var(ctx, t, name) if name is not None else t


def rank_by_count(ctx: SchemaContext, plan: Plan, rank: CountRank, root: IRI, t: str,
                  path: PathFinder) -> Plan | None:
    """"Which X has the most Y?": the answers grouped, ordered by their count of Y."""
    counted = counted_class(ctx, plan, rank.phrase, root, t, path)
    if counted is None:
        return None
    key = _group_key(ctx, plan, root, t)
    count = f"COUNT(DISTINCT {counted.var})"
    keys = plan.entity(t, key)
    plan.select = [*keys, f"({count} AS ?count)"] if rank.show_count else keys
    plan.group_by = keys
    plan.order = [OrderKey("?count" if rank.show_count else count, rank.direction)]
    plan.limit = rank.limit
    plan.distinct = False
    plan.explain.append(f"ranked by the count of {ctx.compact(counted.cls)} "
                        f"{rank.direction.value} (limit {rank.limit})")
    return plan


def bound_by_count(ctx: SchemaContext, plan: Plan, bound: CountBound, root: IRI, t: str,
                   path: PathFinder) -> Plan | None:
    """"Which X have more than 60 different Y?": the answers grouped, HAVING a count."""
    counted = counted_class(ctx, plan, bound.phrase, root, t, path)
    if counted is None:
        return None
    key = _group_key(ctx, plan, root, t)
    count = f"COUNT(DISTINCT {counted.var})"
    keys = plan.entity(t, key)
    plan.select = [*keys, f"({count} AS ?count)"] if bound.show_count else keys
    plan.group_by = keys
    plan.having = [f"{count} {bound.comparator} {bound.value}"]
    plan.distinct = False
    plan.explain.append(f"having {count} {bound.comparator} {bound.value}")
    return plan


def _year_like(ctx: SchemaContext, prop: IRI, cls: IRI) -> bool:
    dt = ctx.datatype(prop, cls)
    return dt in DATES or (dt in NUMERIC and "year" in local_name(prop).lower())


def count_per_year(ctx: SchemaContext, plan: Plan, question: str, t: str) -> Plan | None:
    """"How many X were made in each year?": the count of the target per calendar year of
    the date (or year) property of the target the question names best.

    A date or year the question already filters by ("… since 2008") is that property.
    """
    cls = plan.var_class.get(t)
    if cls is None:
        return None
    props = [e.prop for e in ctx.data_properties_of(cls)
             if ctx.allowed(e.prop) and _year_like(ctx, e.prop, cls)]
    if not props:
        plan.explain.append(f"per year: no date of {ctx.compact(cls)}")
        return None
    filtered = [p for p in props if (t, p) in plan.data_vars and any(
        plan.data_vars[(t, p)] in f for f in plan.filters)]
    if filtered:
        prop = filtered[0]
    else:
        ws = _content(question)
        vec = ctx.embed([" ".join([*ws, "year date"])])[0]

        def score(p: IRI) -> float:
            v = ctx.vector(p)
            return float(v @ vec) if v is not None else -1.0

        prop = max(props, key=score)
    x = plan.data_var(ctx, t, prop)
    count = f"(COUNT(DISTINCT {t}) AS ?count)"
    if ctx.datatype(prop, cls) in DATES:
        plan.select = ["?year", count]
        plan.group_by = [f"(YEAR({x}) AS ?year)"]
    else:
        plan.select = [x, count]
        plan.group_by = [x]
    plan.distinct = False
    plan.explain.append(f"count per year of {ctx.compact(prop)}")
    return plan
