"""Answer-type prior (SAGA): what kind of thing the question wants back.

Offline version: wh-word rules plus a class-index lookup of the noun phrase that follows
the wh-word ("which **stations** …", "how many **electric locomotives** …", "in which
**city** …"); with an LLM, the mention-extraction call also names the answer (a label and a
kind) and the label goes through the same class-index lookup. "when" asks for a date,
"how many" for a count, yes/no questions for a boolean; "what is the **population** of X"
asks for an attribute of X, not for a class.

The prior only *boosts* ranking; it never removes a candidate.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from navqa.model.events import AnswerKind, Mentions
from navqa.model.iri import IRI
from navqa.online.context import SchemaContext
from navqa.online.lexicon import Phenomenon, words
from navqa.online.mentions import STOP

_HEAD = re.compile(
    r"^\W*(?:in\s+|on\s+|at\s+|from\s+|by\s+|for\s+|to\s+)?(?:which|what|how\s+many)\s+"
    r"(?P<rest>.*)$", re.I)
_OF_NP = re.compile(r"\bof\s+(?:any|each|every|all|the|a|an)?\s*(?P<rest>.*)$", re.I)
_AUXILIARIES = words(Phenomenon.AUXILIARY)
# A finite verb ends the noun phrase after the wh-word: an auxiliary, or a word with a
# past-tense inflection ("which stations opened …", "which companies managed …").
_INFLECTED_VERB = re.compile(r"[a-z]{3,}[^e]ed$")
_ATTRIBUTE = re.compile(r"^\W*(?:what|which)\s+(?:is|are|was|were)\s+the\s+", re.I)
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
    """

    kind: AnswerKind
    cls: IRI | None = None
    phrase: str = ""
    score: float = 0.0
    attribute: bool = False


def _noun_phrases(text: str) -> list[str]:
    """Prefixes (1–3 words) of the noun phrase starting ``text``, longest last."""
    out: list[str] = []
    words: list[str] = []
    for w in re.findall(r"[a-zà-ÿ\-]+", text.lower()):
        if w in STOP or w in _AUXILIARIES or (words and _INFLECTED_VERB.match(w)):
            break
        words.append(w)
        out.append(" ".join(words))
        if len(words) == 3:
            break
    return out


def offline_answer_type(ctx: SchemaContext, question: str, mentions: Mentions, *,
                        hint: Any = None) -> AnswerType:
    """The answer-type prior: deterministic, or from the LLM's ``hint`` (label + kind).

    The noun phrase after the wh-word (or after "of" in "what is the X of any Y") is
    matched against the class index; of its 1–3-word prefixes the best-matching one wins.
    When an *unmapped* class of T matches clearly better than every mapped one (the
    question uses the intuitive but unmapped term), the nearest mapped class stands in —
    preferably a sibling under the same superclass.
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
    else:
        m = _HEAD.match(question)
        if m:
            phrases = _noun_phrases(m.group("rest"))
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
    best: tuple[float, IRI, str] | None = None
    for phrase, vec in zip(phrases, vecs, strict=True):
        scores = ctx.class_scores(vec[None, :])
        for iri, s in scores.items():
            if not ctx.allowed(iri):
                continue
            s += 0.15 if normal(ctx.label(iri)) == normal(phrase) else 0.0
            s += 0.1 if _in_comment(ctx, iri, phrase) else 0.0
            if best is None or s > best[0]:
                best = (s, iri, phrase)
    if best is None:
        return AnswerType(kind, phrase=phrases[0], attribute=attribute)
    score, cls, phrase = best
    redirected = _mapped_stand_in(ctx, phrase, score)
    if redirected is not None:
        cls, phrase = redirected
    return AnswerType(kind, cls=cls if score >= 0.3 or redirected else None, phrase=phrase,
                      score=round(score, 4), attribute=attribute)


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


def _mapped_stand_in(ctx: SchemaContext, phrase: str, mapped_score: float
                     ) -> tuple[IRI, str] | None:
    """If an unmapped class matches ``phrase`` much better, the mapped class to use instead."""
    from navqa.online.linking import normal

    onto = ctx.ontology
    unmapped = [c for c in onto.classes if not ctx.allowed(c)]
    if not unmapped:
        return None
    vec = ctx.embed([phrase])[0]
    scores = ctx.unmapped_class_scores(vec)
    lexical = {c: 0.15 for c in unmapped if normal(onto.label(c)) == normal(phrase)}
    top = max(unmapped, key=lambda c: scores.get(c, 0.0) + lexical.get(c, 0.0))
    top_score = scores.get(top, 0.0) + lexical.get(top, 0.0)
    if top_score < mapped_score + 0.1:
        return None
    parents = onto.classes[top].parents
    top_vec = ctx.unmapped_class_vector(top)
    best: tuple[float, IRI] | None = None
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
        if best is None or s > best[0]:
            best = (s, alt)
    if best is None:
        return None
    return best[1], f"{phrase} (unmapped {ctx.compact(top)} → {ctx.compact(best[1])})"
