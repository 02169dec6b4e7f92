"""Answer-type prior (SAGA): what kind of thing the question wants back.

Offline version: wh-word rules plus a class-index lookup of the noun phrase that follows
the wh-word ("which **stations** …", "how many **electric locomotives** …", "in which
**city** …"); with an LLM, the mention-extraction call also names the answer (a label and a
kind) and the label goes through the same class-index lookup. "when" asks for a date,
"how many" for a count, yes/no questions for a boolean; "what is the **population** of X"
asks for an attribute of X, not for a class.

The noun phrase ends at its first plural word (only the head of an English compound is
plural: "which **drilling rigs** are …", "which **vehicles** owned by …"); a shorter prefix
that lacks the head noun loses a little (:data:`MODIFIER_PENALTY`). When the class's label is
the phrase or its head compound, or the genus of its comment says the head noun ("A railway
**vehicle** identified by …"), the phrase *names* the class (:attr:`AnswerType.named`).
The reranker favours the answer class as the root (:func:`root_bonus`); an extra
preference for a *named* class was removed by the held-out ablation of 2026-12-01 (it
changed one dev answer and no test answer: docs/evaluation.md), so ``named`` is recorded
but decides nothing.

When the phrase names an *unmapped* class, a mapped class stands in for it; the one that
an object property names in the role the question's active verb says comes first ("which
rig **drilled** …": ``drillingFacility`` → ``Facility``; grammar rule ``role-stand-in``).

The prior only *boosts* ranking; it never removes a candidate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, NamedTuple

from navqa.model.events import AnswerKind, Mentions
from navqa.model.iri import IRI
from navqa.online.context import SchemaContext
from navqa.online.reading.lexicon import Phenomenon, words
from navqa.online.reading.mentions import STOP

_HEAD = re.compile(
    r"^\W*(?:in\s+|on\s+|at\s+|from\s+|by\s+|for\s+|to\s+)?(?:which|what|how\s+many)\s+"
    r"(?P<rest>.*)$", re.I)
_OF_NP = re.compile(r"\bof\s+(?:any|each|every|all|the|a|an)?\s*(?P<rest>.*)$", re.I)
_AUXILIARIES = words(Phenomenon.AUXILIARY)
_PERFECT = words(Phenomenon.PERFECT)
_BE_FORM = words(Phenomenon.BE_FORM)
# A finite verb ends the noun phrase after the wh-word: an auxiliary, or a word with a
# past-tense inflection ("which stations opened …", "which companies managed …").
_INFLECTED_VERB = re.compile(r"[a-z]{3,}[^e]ed$")
_ATTRIBUTE = re.compile(r"^\W*(?:what|which)\s+(?:is|are|was|were)\s+the\s+", re.I)
# "What are the five highest measured points …": a plural copula with no "of" lists things of a
# class; the words before the noun (a number, a superlative) are not part of its name.
_LISTING = re.compile(r"^\W*(?:what|which)\s+(?:are|were)\s+the\s+(?P<rest>.*)$", re.I)
_QUANTIFIER = re.compile(r"^(?:\d+|[a-z]+est|first|last|top|most|least|many|few|several|"
                         r"one|two|three|four|five|six|seven|eight|nine|ten|twelve|twenty)$")
# "List the vessels registered in …", "Give the name and depth of each wellbore …": an
# imperative opening names the answer as its object (or after "of each" when the object is
# a list of values).
_IMPERATIVE = re.compile(
    r"^\W*(?:please\s+)?(?:" + "|".join(sorted(words(Phenomenon.COLUMN_VERB), key=len,
                                                reverse=True)) + r")\s+(?:me\s+)?(?P<rest>.*)$",
    re.I)
_PARTITIVE = re.compile(r"^of\s+(?:all\s+)?(?:the|these|those)\s+", re.I)
# distributive only: in "the branches of the city" the object, not "city", is the answer
_OF_EACH = re.compile(r"\bof\s+(?:each|every|all(?:\s+the)?|any)\s+(?P<rest>.*)$", re.I)
_DETERMINER = re.compile(r"^(?:the|all|every|each|any|a|an|some)$", re.I)
_OF_EACH_WORDS = 8
"""Words an imperative's list of values may take before its "of each X"."""
_WHO = re.compile(r"^\W*(?:who|whom|whose)\b", re.I)
_WHERE = re.compile(r"^\W*where\b", re.I)
_WHEN = re.compile(r"^\W*when\b|\bwhat\s+(?:year|date|time)\b|\bwhich\s+year\b", re.I)


@dataclass(frozen=True)
class AnswerType:
    """The expected answer: a kind, and a class for entity answers.

    Attributes:
        kind: Entity, count, date, boolean, quantity or text.
        cls: The expected class (entity and count answers), when one matches well.
        phrase: The words that named it.
        score: Similarity of ``cls`` to ``phrase``.
        attribute: The question asks for a property of a named thing ("what is the X of").
        named: ``phrase`` names ``cls`` outright: the class's label (or its comment's first
            sentence) says the phrase's head noun, or ``cls`` stands in for an unmapped class
            so named (recorded; the reranker no longer reads it).
        role: The object property whose name put ``cls`` in the role the question says,
            when that chose the stand-in of an unmapped class (grammar rule
            ``role-stand-in``): ``drillingFacility`` for "which rig drilled …".
    """

    kind: AnswerKind
    cls: IRI | None = None
    phrase: str = ""
    score: float = 0.0
    attribute: bool = False
    named: bool = False
    role: IRI | None = None


ROOT_BONUS = 0.8
"""Reranking bonus of a candidate root that *is* the answer class (half for a subclass)."""
NAMED_THRESHOLD = 0.5
"""An answer class matching the whole wh-phrase this well counts as named without a lexical
match."""
MODIFIER_PENALTY = 0.05
"""Score taken off a class matched by a prefix of the wh-phrase that lacks its head noun."""
MODIFIER_KEPT = 0.4
"""Bonus of a mapped stand-in whose name keeps all the modifiers of the wh-phrase."""
ROLE_PREFIX = 5
"""Letters two words share to say the same role: "drilled", "drilling" → ``drill``."""


def root_bonus(at: AnswerType | None, root: IRI, superclasses: frozenset[IRI] | set[IRI]
               ) -> float:
    """How much the answer type favours ``root`` as the chosen subgraph's root.

    :data:`ROOT_BONUS` for the answer class itself, half of it for one of its subclasses,
    0 otherwise. ``superclasses`` are ``root``'s.
    """
    if at is None or at.cls is None:
        return 0.0
    if root == at.cls:
        return ROOT_BONUS
    return ROOT_BONUS / 2 if at.cls in superclasses else 0.0


def _head(phrase: str) -> str:
    """The head noun of a noun phrase (its last word), singular."""
    from navqa.online.linking import normal

    words = normal(phrase).split()
    return words[-1] if words else ""


def _noun_phrases(text: str) -> list[str]:
    """Prefixes (1–3 words) of the noun phrase starting ``text``, longest last."""
    out: list[str] = []
    words: list[str] = []
    for w in re.findall(r"[a-zà-ÿ\-]+", text.lower()):
        if w in STOP or w in _AUXILIARIES or (words and _INFLECTED_VERB.match(w)):
            break
        words.append(w)
        out.append(" ".join(words))
        if len(words) == 3 or _plural(w):
            # only the head of an English compound is plural: "drilling rigs", and in
            # "which vehicles owned by …", "which operators run …" the noun phrase ends there
            break
    return out


def _imperative_object(question: str) -> list[str]:
    """The noun phrases an imperative opening names as the answer: its object after the
    determiners and quantifiers ("list **the five largest fields**" → "largest fields" …),
    or the noun after "of each / every / all / any" when a short list of values comes
    first ("give the name and total depth **of each wellbore** …"). A possessive object
    ("give the field's production") names an attribute of a thing, not a class: none."""
    m = _IMPERATIVE.match(question)
    if m is None:
        return []
    rest = m.group("rest")
    of = _OF_EACH.search(rest)
    if of is not None:
        before = re.findall(r"[A-Za-zÀ-ÿ\-]+", rest[:of.start()].lower())
        if len(before) <= _OF_EACH_WORDS and not any(
                w in _AUXILIARIES or _INFLECTED_VERB.match(w) for w in before):
            return _noun_phrases(of.group("rest"))
    head = rest.split()
    while head and (_DETERMINER.match(head[0]) or _QUANTIFIER.match(head[0].lower())):
        head = head[1:]
    if any(w.endswith(("'s", "’s")) for w in head[:4]):
        return []
    return _noun_phrases(" ".join(head))


def _plural(word: str) -> bool:
    from navqa.online.linking import singular

    return word.endswith("s") and singular(word) != word


def offline_answer_type(ctx: SchemaContext, question: str, mentions: Mentions, *,
                        hint: Any = None, roles: bool = True) -> AnswerType:
    """The answer-type prior: deterministic, or from the LLM's ``hint`` (label + kind).

    The noun phrase after the wh-word (or after "of" in "what is the X of any Y") is
    matched against the class index; of its 1–3-word prefixes the best-matching one wins.
    When an *unmapped* class of T matches clearly better than every mapped one (the
    question uses the intuitive but unmapped term), the nearest mapped class stands in —
    preferably a sibling under the same superclass. With ``roles`` (grammar rule
    ``role-stand-in``), a mapped class that an object property names in the role the
    question's verb says comes first (:func:`_role_words`, :func:`_role_of`).
    """
    cues = mentions.cues
    if hint is not None and getattr(hint, "kind", "") == "boolean" or cues.yes_no:
        return AnswerType(AnswerKind.BOOLEAN)
    attribute = bool(_ATTRIBUTE.match(question))
    kind = (AnswerKind.COUNT if cues.how_many else
            AnswerKind.DATE if _WHEN.search(question) else AnswerKind.ENTITY)
    phrases: list[str] = []
    if attribute:
        m = _OF_NP.search(question)
        if m:
            phrases = _noun_phrases(m.group("rest"))
        kind = AnswerKind.QUANTITY if kind is AnswerKind.ENTITY else kind
    listing = _LISTING.match(question) if attribute and not phrases else None
    if listing is not None:
        # "what are the five highest measured terrain points": a list of things, not an attribute
        rest = listing.group("rest").split()
        while rest and _QUANTIFIER.match(rest[0].lower()):
            rest = rest[1:]
        phrases = _noun_phrases(" ".join(rest))
    if not attribute:
        m = _HEAD.match(question)
        if m and not phrases:
            # a partitive names the class after "of": "how many of the mobile units …"
            phrases = _noun_phrases(_PARTITIVE.sub("", m.group("rest")))
        if not phrases:
            phrases = _imperative_object(question)
        if not phrases and _WHO.match(question):
            phrases = ["person organisation company"]
        elif not phrases and _WHERE.match(question):
            phrases = ["place location"]
    if hint is not None:
        try:
            kind = AnswerKind(hint.kind)
        except ValueError:
            kind = AnswerKind.ENTITY
        label = (hint.label or "").strip().lower()
        phrases = [label] if label and kind in (AnswerKind.ENTITY, AnswerKind.COUNT) else []
        attribute = attribute or kind in (AnswerKind.QUANTITY, AnswerKind.DATE)
    if not phrases or kind is AnswerKind.DATE:
        return AnswerType(kind, attribute=attribute or kind is AnswerKind.DATE)
    from navqa.online.linking import normal

    vecs = ctx.embed(phrases)
    full, head = phrases[-1], _head(phrases[-1])
    best: tuple[float, IRI, str, bool] | None = None
    for phrase, vec in zip(phrases, vecs, strict=True):
        scores = ctx.class_scores(vec[None, :])
        for iri, s in scores.items():
            if not ctx.allowed(iri):
                continue
            label, said = normal(ctx.label(iri)), normal(phrase)
            # the label is the phrase, or its head compound: "test site" of "vehicle test sites"
            tail = label != said and f" {said}".endswith(f" {label}")
            s += 0.15 if label == said else 0.1 if tail else 0.0
            s += 0.1 if _in_comment(ctx, iri, phrase) else 0.0
            # a shorter prefix lacks the head noun: "vehicle" of "vehicle test sites"
            s -= 0.0 if phrase == full else MODIFIER_PENALTY
            if best is None or s > best[0]:
                best = (s, iri, phrase, label == said or tail or (
                    phrase == full and defined_as(ctx, iri, head)))
    if best is None:
        return AnswerType(kind, phrase=phrases[0], attribute=attribute)
    score, cls, phrase, named = best
    role_words = _role_words(question, phrase) if roles else frozenset()
    redirected = _mapped_stand_in(ctx, phrase, score, role_words)
    role: IRI | None = None
    if redirected is not None:
        cls, phrase, named = redirected.cls, redirected.phrase, redirected.named and phrase == full
        role = redirected.role
        if role is not None:
            # the question names the unmapped class, and its stand-in plays the role the
            # question says: the stand-in is as well named as the unmapped class
            score = max(score, redirected.score)
    found = score >= 0.3 or redirected is not None
    if listing is not None and attribute and hint is None:
        if not found:  # not a class after all: "what are the coordinates …" asks for values
            return AnswerType(kind, phrase=phrase, attribute=True)
        attribute = False
        kind = AnswerKind.ENTITY if kind is AnswerKind.QUANTITY else kind
    named = named or (score >= NAMED_THRESHOLD and phrase.startswith(full))
    return AnswerType(kind, cls=cls if found else None, phrase=phrase,
                      score=round(score, 4), attribute=attribute, named=found and named,
                      role=role if found else None)


def _in_comment(ctx: SchemaContext, iri: IRI, phrase: str) -> bool:
    """Whether the phrase's head word occurs in the first sentence of the class comment."""
    from navqa.online.linking import normal

    ent = ctx.ontology.entity(iri)
    comment = ent.comment() if ent is not None else None
    if not comment or not phrase:
        return False
    words = normal(phrase).split()
    if not words:
        return False
    head = words[-1]
    first = normal(comment.split(".")[0])
    return f" {head} " in f" {first} "


_GENUS_END = re.compile(r"[,;:(]|\b(?:of|with|that|which|who|whose|where|when|in|on|at|for|"
                        r"from|by|to|used|located|identified|run|made)\b")


def defined_as(ctx: SchemaContext, iri: IRI, head: str) -> bool:
    """Whether the class's comment defines it as a ``head``: "A railway station or **halt**, …".

    Only the genus of the comment's first sentence counts — the words before its first
    comma, preposition or relative clause — not every word of it ("a sequence of points"
    does not define a point).
    """
    from navqa.online.linking import normal

    ent = ctx.ontology.entity(iri)
    comment = ent.comment() if ent is not None else None
    if not comment or not head:
        return False
    genus = _GENUS_END.split(comment.split(".")[0].lower(), maxsplit=1)[0]
    return head in normal(genus).split()


def _role_words(question: str, phrase: str) -> frozenset[str]:
    """The verb that says the answer's role, cut to :data:`ROLE_PREFIX` letters.

    The verb that follows the wh-phrase in the active voice ("which rig **drilled** …",
    "which rig has **drilled** …"): the answer does what it says. After a form of "be"
    ("which wells were drilled") the answer undergoes it, so the verb names no role of
    the answer. The phrase's modifiers do not count: "production wells" names a kind of
    well (a class keeping the modifier), not a well in the production role.
    """
    from navqa.online.linking import normal

    said = normal(phrase).split()
    text = re.findall(r"[a-zà-ÿ]+", question.lower())
    norm = [normal(w) for w in text]
    for i in range(len(norm) - len(said) + 1):
        if said and norm[i:i + len(said)] == said:
            rest = text[i + len(said):]
            while rest and rest[0] in _PERFECT:
                rest = rest[1:]
            if rest and rest[0] not in _BE_FORM and rest[0] not in STOP \
                    and len(rest[0]) >= ROLE_PREFIX:
                return frozenset({rest[0][:ROLE_PREFIX]})
            break
    return frozenset()


def _role_of(ctx: SchemaContext, cls: IRI, said: frozenset[str]) -> IRI | None:
    """An object property arriving at ``cls`` whose name is a role the question says.

    The property's label is a compound noun, role words then the class's label: "drilling
    facility" names a facility in the role of drilling (a label with a preposition, "wellbore
    for field", names none), and the question's verb says it ("which rig **drilled** …").
    Words match on their first :data:`ROLE_PREFIX` letters.
    """
    from navqa.online.linking import normal

    if not said:
        return None
    name = normal(ctx.label(cls))
    for n in ctx.neighbours(cls, data=False):
        if n.direction != "in":
            continue
        words = normal(ctx.label(n.edge.prop))
        if not name or not words.endswith(f" {name}"):
            continue
        role = words[: -len(name)].split()
        if any(w in STOP for w in role):
            continue  # "development wellbore for field" relates to a field, names no role
        if any(len(w) >= ROLE_PREFIX and w[:ROLE_PREFIX] in said for w in role):
            return n.edge.prop
    return None


class _StandIn(NamedTuple):
    """A mapped class standing in for the unmapped class a phrase names."""

    cls: IRI
    phrase: str
    """The phrase, annotated with the unmapped class and its stand-in."""
    named: bool
    """The unmapped class's label is the phrase or its head noun."""
    role: IRI | None
    """The property that named the stand-in's role (:func:`_role_of`), if one did."""
    score: float
    """How well the phrase matches the unmapped class."""


def _mapped_stand_in(ctx: SchemaContext, phrase: str, mapped_score: float,
                     said: frozenset[str] = frozenset()) -> _StandIn | None:
    """If an unmapped class matches ``phrase`` much better, the mapped class to use instead.

    ``said``: the question's role words (:func:`_role_words`); a mapped class that an
    object property names in one of those roles comes first, whatever the other scores.
    """
    from navqa.online.linking import normal

    onto = ctx.ontology
    unmapped = [c for c in onto.classes if not ctx.allowed(c)]
    if not unmapped:
        return None
    vec = ctx.embed([phrase])[0]
    scores = ctx.unmapped_class_scores(vec)
    head = _head(phrase)
    lexical = {c: 0.15 if normal(onto.label(c)) == normal(phrase) else 0.1 for c in unmapped
               if normal(onto.label(c)) in (normal(phrase), head)}
    top = max(unmapped, key=lambda c: scores.get(c, 0.0) + lexical.get(c, 0.0))
    top_score = scores.get(top, 0.0) + lexical.get(top, 0.0)
    if top_score < mapped_score + 0.1:
        return None
    parents = onto.classes[top].parents
    top_vec = ctx.unmapped_class_vector(top)
    # the words before the head ("injection" of "injection wells"): a mapped class whose
    # name keeps them ("injection wellbore") stands in better than the bare head's class
    modifiers = set(normal(phrase).split()[:-1])
    best: tuple[float, IRI, IRI | None] | None = None
    for alt in ctx.classes:
        if not ctx.allowed(alt):
            continue
        v = ctx.vector(alt)
        s = float(v @ top_vec) if v is not None and top_vec is not None else 0.0
        alt_cls = onto.classes.get(alt)
        if alt_cls is not None and alt_cls.parents & parents:
            s += 0.3
        if alt in onto.superclasses(top) or top in onto.superclasses(alt):
            s += 0.1
        if modifiers:
            s += MODIFIER_KEPT * len(modifiers & set(normal(ctx.label(alt)).split())) / len(
                modifiers)
        role = _role_of(ctx, alt, said)
        # a class the question's words put in a role wins over names and taxonomy
        if best is None or (role is not None, s) > (best[2] is not None, best[0]):
            best = (s, alt, role)
    if best is None:
        return None
    return _StandIn(best[1], f"{phrase} (unmapped {ctx.compact(top)} → {ctx.compact(best[1])})",
                    top in lexical, best[2], top_score)
