"""The small protocols every I/O seam implements.

``offline`` and ``online`` code depends only on these; :mod:`navqa.backends.factory`
wires concrete implementations from :class:`navqa.config.NavqaConfig`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from navqa.model.llm import Message, Response
from navqa.model.terms import AskResult, GraphResult, QueryResult, SelectResult

Vectors = npt.NDArray[np.float32]


@runtime_checkable
class SparqlEndpoint(Protocol):
    """A read-only SPARQL 1.1 endpoint."""

    url: str

    def select(self, query: str, *, timeout: float | None = None) -> SelectResult: ...

    def ask(self, query: str, *, timeout: float | None = None) -> AskResult: ...

    def construct(self, query: str, *, timeout: float | None = None) -> GraphResult: ...

    def query(self, query: str, *, timeout: float | None = None) -> QueryResult:
        """Run any read-only query form and return the matching result type."""
        ...


@runtime_checkable
class LLM(Protocol):
    """One chat-completion call; ``schema`` asks for JSON validated against a pydantic model."""

    model: str

    def call(
        self,
        messages: Sequence[Message],
        *,
        schema: type[Any] | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> Response: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into L2-normalised float32 vectors."""

    name: str
    dim: int

    def embed(self, texts: Sequence[str]) -> Vectors: ...


@runtime_checkable
class VectorIndex(Protocol):
    """Inner-product nearest-neighbour search over normalised vectors, with string ids."""

    def add(self, ids: Sequence[str], vectors: Vectors) -> None: ...

    def search(self, vectors: Vectors, k: int) -> list[list[tuple[str, float]]]: ...

    def save(self, path: Path) -> None: ...

    def __len__(self) -> int: ...


@runtime_checkable
class Reranker(Protocol):
    """Scores documents against a query; higher is better."""

    name: str

    def score(self, query: str, documents: Sequence[str]) -> list[float]: ...


@runtime_checkable
class CostProbe(Protocol):
    """The SQL a VKG runs for a SPARQL query, and the database's plan for it (not executed).

    Both raise :class:`~navqa.errors.CostUnavailableError` when no estimate can be had.
    """

    def sql(self, query: str) -> str: ...

    def explain(self, sql: str) -> Mapping[str, Any]:
        """The root node of the plan, PostgreSQL ``EXPLAIN (FORMAT JSON)``'s ``Plan``."""
        ...
