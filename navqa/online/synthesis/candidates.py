"""The queries the offline synthesizer could answer a question with: one per root class of
the rerank, in the rerank's order.

:func:`enumerate_candidates` is lazy: a candidate is synthesized only when the search
(:func:`navqa.online.synthesis.scoring.choose`) asks for it, so a question whose best-ranked
query has nothing against it costs one synthesis, as before the search existed.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from navqa.model.iri import IRI
from navqa.online.synthesis.plan import Plan

__all__ = ["Candidate", "enumerate_candidates"]


@dataclass(frozen=True, slots=True)
class Candidate:
    """One query the question could be answered with.

    Attributes:
        root: The answer class the query was written on (a root of the rerank).
        rank: Its position in the rerank (0: the best-scored root).
        sparql: The query text.
        plan: The query graph it was rendered from.
    """

    root: IRI
    rank: int
    sparql: str
    plan: Plan


def enumerate_candidates(ranked: Sequence[IRI],
                         synthesize: Callable[[IRI], tuple[str, Plan]],
                         *, limit: int) -> Iterator[Candidate]:
    """The offline query on each of the first ``limit`` roots of ``ranked``, in order.

    ``synthesize`` writes the query on one root (the offline synthesizer on that root's
    subgraph).
    """
    for rank, root in enumerate(ranked[:max(1, limit)]):
        sparql, plan = synthesize(root)
        yield Candidate(root=root, rank=rank, sparql=sparql, plan=plan)
