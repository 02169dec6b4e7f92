"""Negated relations: what the answers must *not* be related to.

Two forms of the same phenomenon (:attr:`Phenomenon.NEGATION` of
:mod:`navqa.online.reading.lexicon`), both rendered as ``MINUS`` (Ontop 5.1.2 rejects
``FILTER NOT EXISTS``):

* a **negated value** — "expressed in the midgut *but not in the brain*", "lines not
  run by X": the value's join to the answer goes into a ``MINUS`` block, on variables of
  its own (the positive "midgut" and the negated "brain" must not share a node);
* a **negated relation to a class** — "discoveries that have *not* been included in
  *any field*", "wellbores that did *not* prove a discovery": ``MINUS { ?t p ?y }`` for
  the object property ``p`` joining the answer's class to the class the phrase names
  (one hop; the verb's words choose among several such properties).

Negated data values ("no description", "without a recorded date") stay with the
synthesizer's missing-value rule (``OPTIONAL`` + ``!BOUND``).

Example:
    >>> is_negated("Which genes are expressed in the midgut but not in the brain?", "brain")
    True
    >>> is_negated("Which genes are expressed in the midgut but not in the brain?", "midgut")
    False
    >>> negated_phrase("Which discoveries have not been included in any field?")
    ('field', 'included')
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from navqa.model.iri import IRI, OWL_THING, humanize, local_name
from navqa.online.context import SchemaContext, normal
from navqa.online.reading.lexicon import Phenomenon, pattern, words
from navqa.online.synthesis.plan import Plan

__all__ = ["before_negation", "is_negated", "negate_since", "negated_phrase", "negate_relation"]

_NEG = words(Phenomenon.NEGATION)
_BOUNDARY = {",", ";", "and", "but", "or", "which", "that", "who", "whose", "while"}
_STOP = words(Phenomenon.STOPWORD)
_TOKENS = re.compile(r"[\w\-]+|[,;]")
# "have not been included in any field", "did not prove a discovery", "never used by any Y"
_NEG_RELATION = re.compile(
    rf"(?:{pattern(Phenomenon.NEGATION)}|no\s+longer)\s+(?P<verb>(?:[a-zà-ÿ\-]+\s+){{0,3}}?)"
    r"(?:any|a|an)\s+(?P<phrase>[a-zà-ÿ][a-zà-ÿ\-]*(?:\s+[a-zà-ÿ][a-zà-ÿ\-]*){0,2}?)"
    r"(?=\s*[?,.;!]|$|\s+(?:and|or|but|in|on|at|since|before|after|during|with|from)\b)",
    re.I)


def is_negated(question: str, text: str, *, window: int = 4) -> bool:
    """Whether the mention ``text`` sits in the scope of a negation: a negation cue among
    the ``window`` words before it, with no clause boundary in between."""
    pos = question.find(text)
    if pos < 0:
        return False
    before = _TOKENS.findall(question[:pos].lower())
    for tok in reversed(before[-window:]):
        if tok in _BOUNDARY:
            return False
        if tok in _NEG:
            return True
    return False


def before_negation(text: str) -> str:
    """``text`` up to its first negation cue ("" when it starts with one).

    Example:
        >>> before_negation(" that have not been included in any field")
        ' that have '
    """
    for m in _TOKENS.finditer(text):
        if m.group(0).lower() in _NEG:
            return text[:m.start()]
    return text


def negated_phrase(question: str) -> tuple[str, str] | None:
    """The noun phrase and verb words of a negated relation ("not … any <phrase>")."""
    m = _NEG_RELATION.search(question)
    if m is None:
        return None
    verb = " ".join(w for w in m.group("verb").lower().split() if w not in _STOP)
    return m.group("phrase").strip().lower(), verb


def negate_since(plan: Plan, start: int) -> None:
    """Move the triples added since ``start`` into one ``MINUS`` block; their new
    variables are no nodes to hang further constraints or columns on."""
    added = plan.triples[start:]
    if not added:
        return
    del plan.triples[start:]
    plan.minus.append(added)
    outside = {x for tr in plan.triples for x in (tr[0], tr[2])}
    for tr in added:
        for x in (tr[0], tr[2]):
            if x.startswith("?") and x not in outside and x in plan.var_class:
                plan.var_class[x] = None


def _name_match(ctx: SchemaContext, cls: IRI, phrase: str) -> float:
    """Lexical evidence that ``phrase`` names ``cls``: its label or local name, as the
    phrase says it (1.0) or as the phrase's head noun (0.6)."""
    said = normal(phrase)
    best = 0.0
    for name in (ctx.label(cls), humanize(cls)):
        n = normal(name or "")
        if not n:
            continue
        if n == said:
            return 1.0
        if n.split()[-1] == said.split()[-1]:
            best = 0.6
    return best


def negate_relation(ctx: SchemaContext, plan: Plan, question: str, t: str, root: IRI,
                    embed: Callable[[str], np.ndarray | None], *,
                    minimum: float = 0.5) -> bool:
    """Add ``MINUS { ?t p ?y }`` for a negated relation of the question, if it names a
    class one object property away from ``root``. Returns whether it did."""
    found = negated_phrase(question)
    if found is None:
        return False
    phrase, verb = found
    vec = embed(phrase)
    if vec is None:
        return False
    verb_vec = embed(f"{verb} {phrase}") if verb else None
    best: tuple[float, IRI, IRI, str] | None = None
    for n in ctx.neighbours(root, data=False):
        if n.other == OWL_THING or not ctx.allowed(n.edge.prop):
            continue
        cv = ctx.vector(n.other)
        if cv is None:
            continue
        cls_sim = max(float(cv @ vec), _name_match(ctx, n.other, phrase))
        pv = ctx.vector(n.edge.prop)
        prop_sim = float(pv @ (verb_vec if verb_vec is not None else vec)) if pv is not None \
            else 0.0
        sc = cls_sim + 0.25 * prop_sim
        if cls_sim >= minimum and (best is None or sc > best[0]):
            best = (sc, n.other, n.edge.prop, n.direction)
    if best is None:
        plan.explain.append(f"negated {phrase!r}: no class one step from "
                            f"{ctx.compact(root)}")
        return False
    _, cls, prop, direction = best
    y = plan.new_var(local_name(cls))
    plan.var_class[y] = None  # inside MINUS only: no node for further constraints
    edge = (t, ctx.compact(prop), y) if direction == "out" else (y, ctx.compact(prop), t)
    plan.minus.append([edge, (y, "a", ctx.compact(cls))])
    plan.used |= {prop, cls}
    plan.explain.append(f"not related to any {ctx.compact(cls)} by {ctx.compact(prop)}")
    return True
