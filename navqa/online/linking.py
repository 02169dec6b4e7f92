"""Element linking (NaVQA §3.2): S(e, W) = max cosine between e's vector and the mentions.

The top-k classes form C_cand; properties are ranked the same way. A small lexical
bonus breaks ties in favour of an element whose label (or local name) *is* a mention,
singular or plural — cosine alone often ranks "station code" above "station" for the
mention "stations".

Beside the cosine, each property gets lexical evidence (:attr:`Linking.lexical`): the
question's content words (stemmed, value mentions left out) against what the VKG says
about it for free — its label and local-name words, its comment, the column names its
mappings read (:class:`~navqa.online.context.LexicalProfile`), each word weighted by its
rarity in the schema. The context (:func:`navqa.online.expansion.complete`) adds the
properties with evidence, so one named only by its column's wording or by a word of its
comment reaches the chosen subgraph even when its embedding is far from the question.
The ranking of :attr:`Linking.properties` stays the cosine's: on the dev questions,
adding the lexical score to it lowered recall@12 (Bgee 35.9 → 33.3 %, demo unchanged).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from navqa.model.events import Mentions, ScoredTerm
from navqa.model.iri import IRI, humanize
from navqa.online.context import LexicalProfile, SchemaContext, normal, singular, stems
from navqa.online.reading.lexicon import quantity_of
from navqa.online.reading.mentions import STOP, mention_texts

__all__ = ["LEXICAL_BONUS", "LEXICAL_WEIGHT", "Linking", "lexical_score", "link", "normal",
           "question_stems", "singular"]

LEXICAL_BONUS = 0.12
LEXICAL_WEIGHT = 0.3
"""Weight of :func:`lexical_score` (in [0, 1]) next to the cosine in a property's relevance
to the question, when the context picks properties (not in the linking ranking)."""
COMMENT_FACTOR = 0.6
"""A comment's words are weaker evidence than the element's own name."""
SOURCE_FACTOR = 0.8
"""Column names: strong, but often abbreviated."""


def question_stems(question: str, mentions: Mentions) -> frozenset[str]:
    """The stems of the question's content words, without its value mentions.

    A superlative adjective also says the quantity it ranks by ("deepest" → "depth",
    :func:`~navqa.online.reading.lexicon.quantity_of`), the word a property's name uses.
    """
    text = question
    for v in mentions.values:
        if v.text:
            text = re.sub(re.escape(v.text), " ", text, flags=re.I)
    kept = [w for w in re.findall(r"[A-Za-zÀ-ÿ0-9]+", text) if w.lower() not in STOP]
    if mentions.cues.superlative_word:
        kept += quantity_of(mentions.cues.superlative_word).split()
    return stems(" ".join(kept))


def lexical_score(profile: LexicalProfile, words: frozenset[str],
                  weights: dict[str, float]) -> float:
    """How well the question's stems ``words`` name an element, in [0, 1].

    The best of: the share (by weight) of the element's name that the question says;
    the same for its source columns and tables (times :data:`SOURCE_FACTOR`); the share of
    the question's words its comment says (times :data:`COMMENT_FACTOR`).

    The words naming the classes a property is on (:attr:`LexicalProfile.domain`) are
    left out of the question's words for the comment's share: comments often name the
    table or class they describe ("… of table wellbore_exploration_all"), so a question
    naming a class would otherwise be evidence for every property of that class, and those
    would crowd the question's own properties out of the context. The name's share needs
    no such care: class words are common in property names, so their weight is low.
    """
    def share(part: frozenset[str], of: frozenset[str]) -> float:
        total = sum(weights.get(s, 0.0) for s in of)
        return sum(weights.get(s, 0.0) for s in part) / total if total > 0 else 0.0

    name = share(profile.name & words, profile.name)
    source = share(profile.source & words, profile.source)
    asked = words - profile.domain
    comment = share(profile.comment & asked, asked)
    return max(name, SOURCE_FACTOR * source, COMMENT_FACTOR * comment)


@dataclass
class Linking:
    """The outcome of linking one question.

    Attributes:
        classes: Top-k candidate classes (C_cand), best first.
        properties: Top properties, best first.
        class_scores / property_scores: S(e, W) for every element (before the bonus).
        mention_vectors: One row per mention text; the question itself is the last row.
        texts: The mention texts that were embedded.
        lexical: :func:`lexical_score` of each property with some evidence (> 0).
    """

    classes: list[ScoredTerm]
    properties: list[ScoredTerm]
    class_scores: dict[IRI, float]
    property_scores: dict[IRI, float]
    mention_vectors: np.ndarray
    texts: list[str]
    lexical: dict[IRI, float] = field(default_factory=dict)

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

    words = question_stems(question, mentions)
    weights = ctx.stem_weights
    profiles = ctx.lexical_profiles
    lexical: dict[IRI, float] = {}
    for iri in prop_scores:
        profile = profiles.get(iri)
        score = lexical_score(profile, words, weights) if profile is not None else 0.0
        if score > 0:
            lexical[iri] = round(score, 4)

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
        lexical=lexical,
    )
