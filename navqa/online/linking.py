"""Element linking (NaVQA §3.2): S(e, W) = max cosine between e's vector and the mentions.

The top-k classes form C_cand; properties are ranked the same way. A small lexical
bonus breaks ties in favour of an element whose label (or local name) *is* a mention,
singular or plural — cosine alone often ranks "station code" above "station" for the
mention "stations".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from navqa.model.events import Mentions, ScoredTerm
from navqa.model.iri import IRI, humanize
from navqa.online.context import SchemaContext
from navqa.online.mentions import mention_texts

LEXICAL_BONUS = 0.12


def singular(word: str) -> str:
    """A crude English singular (``cities`` → ``city``, ``stations`` → ``station``)."""
    for suffix, repl in (("ies", "y"), ("sses", "ss"), ("ches", "ch"), ("shes", "sh"),
                         ("xes", "x"), ("s", "")):
        if word.endswith(suffix) and len(word) > len(suffix) + 2 and not word.endswith("ss"):
            return word[: -len(suffix)] + repl
    return word


def normal(text: str) -> str:
    """Lower-case, singularise every word, collapse separators."""
    return " ".join(singular(w) for w in re.findall(r"[a-zà-ÿ0-9]+", text.lower()))


@dataclass
class Linking:
    """The outcome of linking one question.

    Attributes:
        classes: Top-k candidate classes (C_cand), best first.
        properties: Top properties, best first.
        class_scores / property_scores: S(e, W) for every element (before the bonus).
        mention_vectors: One row per mention text; the question itself is the last row.
        texts: The mention texts that were embedded.
    """

    classes: list[ScoredTerm]
    properties: list[ScoredTerm]
    class_scores: dict[IRI, float]
    property_scores: dict[IRI, float]
    mention_vectors: np.ndarray
    texts: list[str]

    @property
    def question_vector(self) -> np.ndarray:
        return self.mention_vectors[-1]


def link(ctx: SchemaContext, question: str, mentions: Mentions, *, k: int = 5,
         k_props: int = 12) -> Linking:
    """Link the question's mentions to classes and properties of the schema."""
    texts = list(mention_texts(mentions))
    vecs = ctx.embed([*texts, question])
    mention_vecs = vecs[:-1] if texts else vecs
    class_scores = ctx.class_scores(mention_vecs)
    prop_scores = ctx.property_scores(mention_vecs)
    wanted = {normal(t) for t in texts}

    def bonus(iri: IRI) -> float:
        names = {normal(ctx.label(iri)), normal(humanize(iri))}
        return LEXICAL_BONUS if names & wanted else 0.0

    def top(scores: dict[IRI, float], n: int) -> list[ScoredTerm]:
        ranked = sorted(((s + bonus(i), i) for i, s in scores.items() if ctx.allowed(i)),
                        reverse=True)[:n]
        return [ScoredTerm(i, round(s, 4), ctx.label(i)) for s, i in ranked]

    return Linking(
        classes=top(class_scores, k),
        properties=top(prop_scores, k_props),
        class_scores={i: s + bonus(i) for i, s in class_scores.items()},
        property_scores={i: s + bonus(i) for i, s in prop_scores.items()},
        mention_vectors=vecs,
        texts=texts,
    )
