"""Which :class:`~navqa.backends.protocols.Embedder` runtime to build from the config.

Two runtimes compute the same vectors (to 1e-4 cosine, by test):

- :class:`~navqa.backends.embedder_numpy.NumpyBertEmbedder`: ``tokenizers`` +
  ``safetensors`` + a numpy forward pass. Imports in milliseconds and reads its weights on
  the first text. It builds the index and encodes every query whenever it can run the
  model, and it needs no torch: navqa's default install has no sentence-transformers.
- :class:`~navqa.backends.embedder_st.SentenceTransformerEmbedder`: sentence-transformers
  on torch, the optional ``st`` extra (``pip install 'navqa[st]'``); seconds to import,
  any model sentence-transformers loads, any torch device.

:attr:`EmbedderRuntime.AUTO` (``embedder.runtime: auto``, the default) picks the numpy
runtime when the model folder has a layout it reproduces
(:func:`~navqa.backends.embedder_numpy.read_layout`) and the device is the CPU,
sentence-transformers otherwise. The choice reads a few small JSON files, nothing more;
:func:`explain_runtime` also says why, as ``navqa doctor`` prints it. When
sentence-transformers is needed but not installed, building the embedder raises a
:class:`~navqa.errors.ConfigError` that says how to install it.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from navqa.backends.protocols import Embedder
from navqa.config import EmbedderConfig


class EmbedderRuntime(StrEnum):
    """How to compute embeddings."""

    AUTO = "auto"
    NUMPY = "numpy"
    SENTENCE_TRANSFORMERS = "sentence-transformers"


@dataclass(frozen=True)
class RuntimeChoice:
    """The runtime that runs a model, and why.

    Attributes:
        runtime: :attr:`EmbedderRuntime.NUMPY` or :attr:`EmbedderRuntime.SENTENCE_TRANSFORMERS`.
        reason: Why, in a few words ("embedder.device is 'cuda'").
    """

    runtime: EmbedderRuntime
    reason: str


def runtime_for_folder(cfg: EmbedderConfig, folder: Path | None) -> RuntimeChoice:
    """The runtime for ``cfg`` when its model's files are in ``folder``.

    Args:
        cfg: The ``embedder`` section (``runtime`` and ``device`` are read here).
        folder: The model folder; ``None`` (or a path that is no folder) for a model that
            is not a local folder, such as a name in the Hugging Face cache.

    Raises:
        ConfigError: a JSON file of the folder is malformed.
    """
    from navqa.backends.embedder_numpy import read_layout

    if cfg.runtime != EmbedderRuntime.AUTO:
        return RuntimeChoice(EmbedderRuntime(cfg.runtime), f"embedder.runtime is {cfg.runtime}")
    if cfg.device != "cpu":
        return RuntimeChoice(EmbedderRuntime.SENTENCE_TRANSFORMERS,
                             f"embedder.device is {cfg.device!r}; the numpy encoder runs on "
                             "the CPU only")
    if folder is None or not folder.is_dir():
        return RuntimeChoice(EmbedderRuntime.SENTENCE_TRANSFORMERS,
                             "the model is not a local folder")
    if read_layout(folder) is None:
        return RuntimeChoice(EmbedderRuntime.SENTENCE_TRANSFORMERS,
                             "the model is not a BERT folder with mean pooling and "
                             "model.safetensors, which the numpy encoder needs")
    return RuntimeChoice(EmbedderRuntime.NUMPY,
                         "the model is a BERT folder with mean pooling and model.safetensors")


def explain_runtime(cfg: EmbedderConfig) -> RuntimeChoice:
    """The runtime :func:`make_embedder` uses for ``cfg``, and why.

    Raises:
        ConfigError: the configured model folder does not exist, or is malformed.
    """
    if cfg.runtime != EmbedderRuntime.AUTO:
        return runtime_for_folder(cfg, None)
    from navqa.backends.embedder_st import resolve_model

    location, _ = resolve_model(cfg.model)
    return runtime_for_folder(cfg, Path(location))


def choose_runtime(cfg: EmbedderConfig) -> EmbedderRuntime:
    """The runtime :attr:`EmbedderRuntime.AUTO` resolves to for ``cfg``.

    Raises:
        ConfigError: the configured model folder does not exist.
    """
    return explain_runtime(cfg).runtime


def make_embedder(cfg: EmbedderConfig,
                  runtime: EmbedderRuntime = EmbedderRuntime.AUTO) -> Embedder:
    """An embedder for ``cfg`` (``embedder`` section of the config).

    Args:
        cfg: Model, device, batch size and runtime.
        runtime: ``AUTO`` (``cfg.runtime``, see the module docstring), or one runtime
            explicitly.

    Raises:
        ConfigError: the model cannot be found or loaded by that runtime, or it needs
            sentence-transformers and that is not installed (the hint says
            ``pip install 'navqa[st]'``).
    """
    asked = runtime is not EmbedderRuntime.AUTO
    if not asked:
        runtime = choose_runtime(cfg)
    if runtime is EmbedderRuntime.NUMPY:
        from navqa.backends.embedder_numpy import NumpyBertEmbedder

        return NumpyBertEmbedder(cfg.model, batch_size=cfg.batch_size)
    from navqa.backends.embedder_st import (
        SentenceTransformerEmbedder,
        require_sentence_transformers,
    )

    reason = "the caller asks for it" if asked else explain_runtime(cfg).reason
    require_sentence_transformers(f"the embedding model {cfg.model!r} ({reason})")
    return SentenceTransformerEmbedder.from_config(cfg)


__all__ = [
    "EmbedderRuntime",
    "RuntimeChoice",
    "choose_runtime",
    "explain_runtime",
    "make_embedder",
    "runtime_for_folder",
]
