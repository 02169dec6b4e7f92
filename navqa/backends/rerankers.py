"""Three :class:`~navqa.backends.protocols.Reranker` implementations and their factory.

* :class:`CrossEncoderReranker`: a sentence-transformers ``CrossEncoder`` loaded from a
  **local directory only** (NaVQA used Qwen3-Reranker-8B; nothing is downloaded). It needs
  the optional ``st`` extra (``pip install 'navqa[st]'``); without it, asking for it is a
  :class:`~navqa.errors.ConfigError` that says so.
* :class:`LLMReranker`: one LLM call scores every document at once; the reply is
  validated as ``{"scores": [...]}`` with exactly one number per document (a wrong
  count goes through the LLM seam's single repair call, then fails loudly).
* :class:`BiEncoderReranker`: cosine similarity of embeddings, the always-available
  fallback.

:func:`make_reranker` picks one from :class:`~navqa.config.RerankerConfig`; ``auto``
means the cross-encoder when ``reranker.model_path`` is set, else the LLM when one is
configured, else the bi-encoder.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated, Any

import numpy as np
from pydantic import BaseModel, Field, create_model

from navqa.backends.protocols import LLM, Embedder, Reranker
from navqa.config import NavqaConfig
from navqa.errors import ConfigError, LLMResponseError, LLMUnavailableError
from navqa.model.llm import Message

log = logging.getLogger(__name__)


# --------------------------------------------------------------------------- cross-encoder


class CrossEncoderReranker:
    """Scores (query, document) pairs with a local sentence-transformers cross-encoder.

    Args:
        model_path: A local model directory (never a hub id: nothing is downloaded).
        device: Torch device.
        batch_size: Pairs per forward pass.
        max_length: Token limit per pair (``None`` keeps the model's).

    Raises:
        ConfigError: the directory does not exist, sentence-transformers is not installed
            (the hint says ``pip install 'navqa[st]'``), or the model cannot be loaded.
    """

    def __init__(
        self,
        model_path: str | Path,
        *,
        device: str = "cpu",
        batch_size: int = 32,
        max_length: int | None = None,
    ) -> None:
        path = Path(model_path).expanduser()
        if not path.is_dir():
            raise ConfigError(
                f"cross-encoder model directory {str(model_path)!r} does not exist",
                hint="reranker.model_path must be a local model directory (downloaded "
                "beforehand; nothing is fetched at run time), or unset it to rerank "
                "with the LLM or the bi-encoder",
            )
        from navqa.backends.embedder_st import require_sentence_transformers

        st = require_sentence_transformers(f"the cross-encoder reranker ({path})")
        try:
            self._model: Any = st.CrossEncoder(
                str(path), device=device, max_length=max_length, local_files_only=True
            )
        except Exception as e:  # noqa: BLE001 - any load failure is a configuration problem
            raise ConfigError(
                f"cannot load a cross-encoder from {path}: {type(e).__name__}: {e}",
                hint="reranker.model_path must hold a sentence-transformers CrossEncoder "
                "(config.json, weights, tokenizer)",
            ) from e
        self.name = f"cross-encoder:{path.name}"
        self.batch_size = max(1, int(batch_size))

    def __repr__(self) -> str:
        return f"CrossEncoderReranker({self.name!r})"

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance score per document (higher is better)."""
        if not documents:
            return []
        raw = self._model.predict(
            [(query, d) for d in documents],
            batch_size=self.batch_size,
            show_progress_bar=False,
            convert_to_numpy=True,
        )
        arr = np.asarray(raw, dtype=np.float64)
        if arr.ndim == 2:  # a two-label head: take the "relevant" column
            arr = arr[:, -1]
        return [float(x) for x in arr.reshape(-1)]


# --------------------------------------------------------------------------- LLM


RERANK_SYSTEM = (
    "You rate how relevant each numbered document is to a question, on a scale from 0 "
    "(unrelated) to 10 (exactly what the question needs). Rate every document "
    'independently. Reply with a JSON object {"scores": [...]} holding one number per '
    "document, in document order."
)


@functools.lru_cache(maxsize=128)
def scores_schema(n: int) -> type[BaseModel]:
    """The reply schema for ``n`` documents: ``{"scores": [n numbers]}``."""
    model: type[BaseModel] = create_model(
        "RerankScores",
        scores=(Annotated[list[float], Field(min_length=n, max_length=n)], ...),
    )
    return model


class LLMReranker:
    """Scores all documents against a query with a single LLM call.

    Args:
        llm: The LLM (its one repair call covers malformed replies and wrong counts).
        max_chars: Each document is cut to this many characters in the prompt.
    """

    def __init__(self, llm: LLM, *, max_chars: int = 1500) -> None:
        self.llm = llm
        self.max_chars = max_chars
        self.name = f"llm:{llm.model}"

    def __repr__(self) -> str:
        return f"LLMReranker({self.name!r})"

    def messages(self, query: str, documents: Sequence[str]) -> list[Message]:
        """The prompt sent for ``query`` and ``documents``."""
        docs = "\n".join(
            f"[{i}] {' '.join(d.split())[: self.max_chars]}"
            for i, d in enumerate(documents, start=1)
        )
        user = (
            f"Question: {query}\n\nDocuments:\n{docs}\n\n"
            f'Return {{"scores": [...]}} with exactly {len(documents)} numbers.'
        )
        return [Message.system(RERANK_SYSTEM), Message.user(user)]

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """One relevance score per document (higher is better).

        Raises:
            LLMResponseError: the reply does not hold exactly one score per document.
            LLMError: the call itself failed.
        """
        if not documents:
            return []
        schema = scores_schema(len(documents))
        response = self.llm.call(self.messages(query, documents), schema=schema)
        scores = getattr(response.parsed, "scores", None)
        if not isinstance(scores, list) or len(scores) != len(documents):
            raise LLMResponseError(
                f"LLM reranker expected {len(documents)} scores, got "
                f"{len(scores) if isinstance(scores, list) else 'none'}"
            )
        return [float(s) for s in scores]


# --------------------------------------------------------------------------- bi-encoder


class BiEncoderReranker:
    """Cosine similarity between the query's and each document's embedding.

    Args:
        embedder: Any :class:`~navqa.backends.protocols.Embedder`.
    """

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.name = f"bi-encoder:{embedder.name}"

    def __repr__(self) -> str:
        return f"BiEncoderReranker({self.name!r})"

    def score(self, query: str, documents: Sequence[str]) -> list[float]:
        """Cosine similarity of each document to the query."""
        if not documents:
            return []
        vecs = np.asarray(self.embedder.embed([query, *documents]), dtype=np.float64)
        norms = np.linalg.norm(vecs, axis=1)
        norms[norms == 0] = 1.0
        unit = vecs / norms[:, None]
        return [float(x) for x in unit[1:] @ unit[0]]


# --------------------------------------------------------------------------- factory


def make_reranker(config: NavqaConfig, embedder: Embedder | None, llm: LLM | None) -> Reranker:
    """The reranker ``config.reranker`` asks for.

    Args:
        config: The configuration (``reranker.kind`` and ``reranker.model_path``).
        embedder: The embedder, for the bi-encoder.
        llm: The LLM, or ``None`` in offline mode.

    Raises:
        ConfigError: the chosen kind lacks what it needs (a model path, an embedder,
            sentence-transformers for the cross-encoder).
        LLMUnavailableError: ``kind: llm`` without a configured LLM.
    """
    rc = config.reranker
    kind = rc.kind
    if kind == "auto":
        kind = "cross-encoder" if rc.model_path else ("llm" if llm is not None else "bi-encoder")
    log.debug("reranker: %s (configured %s)", kind, rc.kind)
    if kind == "cross-encoder":
        if not rc.model_path:
            raise ConfigError(
                "reranker.kind is cross-encoder but reranker.model_path is unset",
                hint="set reranker.model_path to a local model directory",
            )
        return CrossEncoderReranker(rc.model_path, device=config.embedder.device)
    if kind == "llm":
        if llm is None:
            raise LLMUnavailableError(
                "reranker.kind is llm but no LLM is configured",
                hint="configure llm.model, or use kind: auto",
            )
        return LLMReranker(llm)
    if embedder is None:
        raise ConfigError("the bi-encoder reranker needs an embedder")
    return BiEncoderReranker(embedder)


__all__ = [
    "BiEncoderReranker",
    "CrossEncoderReranker",
    "LLMReranker",
    "make_reranker",
    "scores_schema",
]
