"""Judges for the iterative subgraph expansion: which properties to follow from a node.

NaVQA's formulation is one LLM decision per property; navqa batches them — **one call
per node** lists every candidate with its score and returns the selected ones.

* :class:`OfflineJudge` — deterministic: keep candidates whose score (similarity to the
  property mentions and the question, plus guidance towards grounded values) is above
  a threshold, at most ``top_n`` object properties.
* :class:`LLMJudge` — one JSON call per node; unknown answers are ignored, never invented.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, Field

from navqa.backends.protocols import LLM
from navqa.model.events import Candidate
from navqa.model.iri import IRI
from navqa.model.llm import Message

NodeBatch = tuple[str, str, Sequence[Candidate], Sequence[bool]]
"""``(node_id, node_label, candidates, is_data_flags)`` — one node's decision to make."""


class Judge(Protocol):
    """Selects, for each node of a batch, the properties to follow or keep.

    ``judge_level`` receives every node of one expansion level (all candidate roots) and
    returns ``{node_id: selected properties}``. Each node gets its own decision; how
    many calls that takes is the judge's business (the LLM judge: one).
    """

    method: str

    def judge_level(self, question: str, batch: Sequence[NodeBatch]) -> dict[str, list[IRI]]:
        ...


class OfflineJudge:
    """Threshold + top-n on the candidates' scores.

    Args:
        threshold: Minimum score of an object property to be followed.
        top_n: At most this many object properties per node.
        data_top_n: At most this many data properties kept per node.
    """

    method = "offline"

    def __init__(self, threshold: float = 0.3, top_n: int = 4, data_top_n: int = 6) -> None:
        self.threshold = threshold
        self.top_n = top_n
        self.data_top_n = data_top_n

    def judge_level(self, question: str, batch: Sequence[NodeBatch]) -> dict[str, list[IRI]]:
        return {node: self.select(cands, flags) for node, _, cands, flags in batch}

    def select(self, candidates: Sequence[Candidate], data: Sequence[bool]) -> list[IRI]:
        """One node's decision."""
        objs = sorted((c for c, d in zip(candidates, data, strict=True) if not d),
                      key=lambda c: -c.score)
        dats = sorted((c for c, d in zip(candidates, data, strict=True) if d),
                      key=lambda c: -c.score)
        picked = [c.prop for c in objs if c.score >= self.threshold][: self.top_n]
        picked += [c.prop for c in dats if c.score >= self.threshold * 0.8][: self.data_top_n]
        return list(dict.fromkeys(picked))


class _NodeSelection(BaseModel):
    node: str
    selected: list[str] = Field(default_factory=list)


class _Selections(BaseModel):
    nodes: list[_NodeSelection] = Field(default_factory=list)


_PROMPT = """You help build a SPARQL query over a knowledge graph by exploring its schema.
Question: {question}

For each class below, its candidate properties are listed (compact name, relevance score,
description, domain and range). For each class, select the properties needed to answer
the question — to reach other classes the question talks about, or because the question
asks about or constrains them. Select none if none is needed.

{listing}

Answer with JSON: {{"nodes": [{{"node": "<class id>", "selected": ["<compact name>", ...]}}]}}
using only the class ids and property names shown."""


class LLMJudge:
    """Batched judging: one LLM call per expansion level, one decision per node in it."""

    method = "llm"

    def __init__(self, llm: LLM, compact: dict[IRI, str]) -> None:
        self.llm = llm
        self.compact = compact

    def judge_level(self, question: str, batch: Sequence[NodeBatch]) -> dict[str, list[IRI]]:
        batch = [b for b in batch if b[2]]
        if not batch:
            return {}
        blocks = []
        for node, label, cands, _ in batch:
            lines = "\n".join(f"  - {c.listing} (score {c.score:.2f})" for c in cands)
            blocks.append(f"class id {node} ({label}):\n{lines}")
        resp = self.llm.call(
            [Message.user(_PROMPT.format(question=question, listing="\n\n".join(blocks)))],
            schema=_Selections)
        out: dict[str, list[IRI]] = {node: [] for node, *_ in batch}
        cands_of = {node: cands for node, _, cands, _ in batch}
        for sel in resp.parsed.nodes:
            node = sel.node.strip()
            if node not in cands_of:
                continue
            by_name: dict[str, IRI] = {}
            for c in cands_of[node]:
                by_name[self.compact.get(c.prop, c.prop)] = c.prop
                by_name[c.prop] = c.prop
            picked = [by_name[x.strip().strip("<>")] for x in sel.selected
                      if x.strip().strip("<>") in by_name]
            out[node] = list(dict.fromkeys(picked))
        return out
