"""String-pattern constraints of the offline synthesizer: prefixes, suffixes, substrings.

"Which genes have a name starting with 'Cec'?" asks for every gene whose name starts
with "Cec", not for the one gene named "Cec2": :mod:`navqa.online.reading.mentions` marks such a
value with its :class:`~navqa.model.events.StringMatch` and the phrase naming the
property ("name", "description"); value grounding leaves it alone; here it becomes

``?t p ?v . FILTER(STRSTARTS(LCASE(STR(?v)), "cec"))``

(``STRENDS`` / ``CONTAINS`` for the other two) on the answer class's string data property
the phrase names (by similarity, as the other constraints of the synthesizer are
placed), else on its name property. Case is ignored, unless the mention says the pattern
is case-sensitive (a quoted pattern with capitals, copied as stored). The pattern is
escaped (:func:`navqa.online.synthesis.plan.literal`).
"""

from __future__ import annotations

import re

from navqa.model.events import Mentions, StringMatch, ValueMention
from navqa.model.iri import IRI, local_name
from navqa.online.context import STRINGS, SchemaContext
from navqa.online.reading.lexicon import Phenomenon, words
from navqa.online.synthesis.plan import Plan, literal

__all__ = ["LEXICAL_BONUS", "MIN_SIMILARITY", "add_string_filters", "pattern_filter",
           "pattern_property"]

MIN_SIMILARITY = 0.4
"""Score a string property needs for the phrase naming it ("description"): its cosine,
plus :data:`LEXICAL_BONUS` when the phrase is a word of its name; below it the pattern
goes on the name property."""
LEXICAL_BONUS = 0.3

_FUNCTIONS = {StringMatch.PREFIX: "STRSTARTS", StringMatch.SUFFIX: "STRENDS",
              StringMatch.CONTAINS: "CONTAINS"}
_NAME_WORDS = words(Phenomenon.NAME_PROPERTY)


def _split(name: str) -> str:
    """``camelCase_name`` → ``camel case name``."""
    return " ".join(re.sub(r"([a-z])([A-Z])", r"\1 \2", name).replace("_", " ").lower().split())


def pattern_filter(var: str, v: ValueMention) -> str:
    """The FILTER expression of the pattern ``v`` on the variable ``var``.

    Example:
        >>> pattern_filter("?name", ValueMention("Cec", match=StringMatch.PREFIX))
        'STRSTARTS(LCASE(STR(?name)), "cec")'
    """
    fn = _FUNCTIONS[v.match]
    if v.case_sensitive:
        return f"{fn}(STR({var}), {literal(v.text)})"
    return f"{fn}(LCASE(STR({var})), {literal(v.text.lower())})"


def pattern_property(ctx: SchemaContext, cls: IRI, phrase: str | None) -> IRI | None:
    """The string data property of ``cls`` that ``phrase`` names; its name property when
    the phrase is missing, is a naming word ("name", "label"), or names none well."""
    name = ctx.name_property(cls)
    if phrase is None or phrase.split()[-1] in _NAME_WORDS:
        return name
    vec = ctx.embed([phrase])[0]
    best: tuple[float, IRI] | None = None
    for e in ctx.data_properties_of(cls):
        p = e.prop
        dt = ctx.datatype(p, cls)
        if not ctx.allowed(p) or (dt is not None and dt not in STRINGS):
            continue
        pv = ctx.vector(p)
        if pv is None:
            continue
        sc = float(pv @ vec)
        names = {ctx.label(p).lower(), _split(local_name(p))}
        if any(phrase == n or phrase in n.split() for n in names):
            sc += LEXICAL_BONUS  # the phrase is the property's name ("description")
        if best is None or sc > best[0]:
            best = (sc, p)
    if best is None or best[0] < MIN_SIMILARITY:
        return name
    return best[1]


def add_string_filters(ctx: SchemaContext, plan: Plan, mentions: Mentions, root: IRI,
                       t: str, *, disjunction: bool = False) -> None:
    """Add a FILTER on ``t`` (of class ``root``) for every string-pattern mention; with
    ``disjunction`` ("starting with 'A' or 'B'") the patterns are alternatives.

    A pattern with no string property to go on is reported in the plan's explanation
    (never dropped silently).
    """
    exprs: list[str] = []
    for v in mentions.values:
        if v.kind != "string" or v.match is StringMatch.EXACT:
            continue
        prop = pattern_property(ctx, root, v.match_property)
        if prop is None:
            plan.explain.append(f"no string property of {ctx.compact(root)} for the pattern "
                                f"{v.text!r}: the constraint is not placed")
            continue
        x = plan.data_var(ctx, t, prop)
        exprs.append(pattern_filter(x, v))
        plan.explain.append(f"pattern {v.match.value} {v.text!r} on {ctx.compact(prop)}"
                            f"{'' if v.case_sensitive else ' (case ignored)'}")
    if disjunction and len(exprs) > 1:
        plan.filters.append(" || ".join(f"({e})" for e in exprs))
    else:
        plan.filters += exprs
