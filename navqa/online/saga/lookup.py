"""SAGA's lookup in the VKG setting: what a lookup at a node could show, and what it shows.

**The type-blind pool.** A type-blind tool cannot tell which properties apply to a node;
it lists the properties a *search* finds for the question. navqa's type-blind search
(the agent's ``search`` action, and SPINACH/GRASP-style property search) returns, for a
phrase, the ``k`` properties of the active property index closest to it. The pool of a
question is the union of those results over its mentions (k = ``pipeline.property_top_k``;
the question itself counts as one phrase), best first by S(p, W).

**Available** at a node x = x's neighbourhood in Ga (every edge an instance of x, of a
superclass or of a subclass can take part in) ∪ the type-blind pool. That is what the
lookup would list without types, and what the ``--no-type-filter`` ablation shows.
**Shown** = available minus what the TypeFilter removes. Ga edges are type-compatible by
construction, so the filter only ever removes pool properties whose known domain (range,
for edges traversed backwards) conflicts with x.

:func:`typed_lookup` renders the shown candidates in SAGA's CompactFormat for the agent.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from navqa.model.events import Candidate
from navqa.model.iri import IRI
from navqa.online.context import SchemaContext
from navqa.online.linking import Linking

__all__ = ["compact_format", "rank_by_answer_type", "search_properties", "type_blind_pool"]


def search_properties(ctx: SchemaContext, vectors: np.ndarray, k: int
                      ) -> list[list[tuple[IRI, float]]]:
    """For each query vector, the ``k`` allowed properties closest to it (cosine)."""
    if vectors.shape[0] == 0 or len(ctx.prop_ids) == 0:
        return [[] for _ in range(vectors.shape[0])]
    allowed = np.array([ctx.allowed(p) for p in ctx.prop_ids])
    sims = ctx.prop_vecs @ vectors.T
    sims[~allowed, :] = -np.inf
    out = []
    for j in range(vectors.shape[0]):
        col = sims[:, j]
        top = np.argsort(-col, kind="stable")[:k]
        out.append([(ctx.prop_ids[i], float(col[i])) for i in top if np.isfinite(col[i])])
    return out


def type_blind_pool(ctx: SchemaContext, linking: Linking, *, k: int = 12
                    ) -> list[tuple[IRI, float]]:
    """The properties a type-blind search would show for this question, best first.

    The union, over every mention text and the question itself, of the ``k`` properties
    most similar to it; ranked by the linking score S(p, W) (lexical bonus included).
    """
    hits = search_properties(ctx, linking.mention_vectors, k)
    pool = {p for row in hits for p, _ in row}
    for t in linking.properties:
        pool.add(t.iri)
    scored = [(p, round(linking.property_scores.get(p, 0.0), 4)) for p in pool]
    scored.sort(key=lambda x: (-x[1], x[0]))
    return scored


def rank_by_answer_type(candidates: Sequence[Candidate], ranges: dict[IRI, frozenset[IRI]],
                        answer_classes: frozenset[IRI], boost: float = 0.15) -> list[Candidate]:
    """Stable re-ranking: candidates whose range meets the expected answer type first.

    The answer-type prior only *boosts*: nothing is removed.
    """
    def key(c: Candidate) -> float:
        rng = ranges.get(c.prop, frozenset()) | {c.neighbour}
        return -(c.score + (boost if rng & answer_classes else 0.0))

    return sorted(candidates, key=key)


def describe_property(ctx: SchemaContext, prop: IRI, limit: int = 140) -> str:
    """A property's short description (its comment, else the index description)."""
    entity = ctx.ontology.property(prop)
    comment = entity.comment() if entity is not None else None
    desc = ctx.bundle.descriptions.get(prop)
    text = (comment or (desc.base if desc else "") or "").strip().replace("\n", " ")
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text


def compact_format(ctx: SchemaContext, prop: IRI, direction: str, *,
                   domain: frozenset[IRI], range_: frozenset[IRI],
                   datatypes: frozenset[IRI] = frozenset(),
                   observed: Sequence[IRI] = ()) -> str:
    """SAGA's CompactFormat: ``label (prefix:local): description [domain: … | range: …]``.

    Unknown sides read ``unknown``; a range known only from this interaction's results
    reads ``observed: …`` (trace-local evidence, never a constraint).
    """
    def names(cs: frozenset[IRI] | Sequence[IRI]) -> str:
        return ", ".join(ctx.compact(c) for c in sorted(cs))

    dom = names(domain) or "unknown"
    if range_:
        rng = names(range_)
    elif datatypes:
        rng = names(datatypes)
    elif observed:
        rng = f"observed: {names(list(observed)[:3])}"
    else:
        rng = "unknown"
    inverse = " (inverse: the looked-up node is its object)" if direction == "in" else ""
    desc = describe_property(ctx, prop)
    return f"{ctx.label(prop)} ({ctx.compact(prop)}){inverse}: {desc} [domain: {dom} | " \
           f"range: {rng}]"
