"""Which :class:`~navqa.backends.protocols.Embedder` runtime to build from the config.

Two runtimes compute the same vectors (to 1e-4 cosine, by test):

- :class:`~navqa.backends.embedder_numpy.NumpyBertEmbedder`: ``tokenizers`` +
  ``safetensors`` + a numpy forward pass. Imports in milliseconds and reads its weights on
  the first text; the query-time default (``navqa ask``, ``eval``), where only a
  question's mentions are encoded.
- :class:`~navqa.backends.embedder_st.SentenceTransformerEmbedder`: sentence-transformers
  on torch; seconds to import, any model sentence-transformers loads, any torch device.

:attr:`EmbedderRuntime.AUTO` picks the numpy runtime when the model folder has a layout it
reproduces (:func:`~navqa.backends.embedder_numpy.read_layout`) and the device is the CPU,
sentence-transformers otherwise. The choice reads a few small JSON files, nothing more.
"""

from __future__ import annotations

from enum import StrEnum

from navqa.backends.protocols import Embedder
from navqa.config import EmbedderConfig


class EmbedderRuntime(StrEnum):
    """How to compute embeddings."""

    AUTO = "auto"
    NUMPY = "numpy"
    SENTENCE_TRANSFORMERS = "sentence-transformers"


def choose_runtime(cfg: EmbedderConfig) -> EmbedderRuntime:
    """The runtime :attr:`EmbedderRuntime.AUTO` resolves to for ``cfg``.

    Raises:
        ConfigError: the configured model folder does not exist.
    """
    from navqa.backends.embedder_numpy import supports

    if cfg.device == "cpu" and supports(cfg.model):
        return EmbedderRuntime.NUMPY
    return EmbedderRuntime.SENTENCE_TRANSFORMERS


def make_embedder(cfg: EmbedderConfig,
                  runtime: EmbedderRuntime = EmbedderRuntime.AUTO) -> Embedder:
    """An embedder for ``cfg`` (``embedder`` section of the config).

    Args:
        cfg: Model, device and batch size.
        runtime: ``AUTO`` (see the module docstring), or one runtime explicitly.

    Raises:
        ConfigError: the model cannot be found or loaded by that runtime.
    """
    if runtime is EmbedderRuntime.AUTO:
        runtime = choose_runtime(cfg)
    if runtime is EmbedderRuntime.NUMPY:
        from navqa.backends.embedder_numpy import NumpyBertEmbedder

        return NumpyBertEmbedder(cfg.model, batch_size=cfg.batch_size)
    from navqa.backends.embedder_st import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder.from_config(cfg)


__all__ = ["EmbedderRuntime", "choose_runtime", "make_embedder"]
