"""The query-time encoder (numpy BERT) against sentence-transformers, on the real model."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from navqa.backends.embedder_factory import EmbedderRuntime, choose_runtime, make_embedder
from navqa.backends.embedder_numpy import NumpyBertEmbedder, read_layout
from navqa.backends.embedder_st import default_model_path
from navqa.backends.protocols import Embedder
from navqa.config import EmbedderConfig
from navqa.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def _texts() -> list[str]:
    """A few hundred texts like the ones navqa embeds: questions, mentions, descriptions."""
    questions = []
    for f in sorted((ROOT / "datasets").glob("*/questions.jsonl")):
        questions += [json.loads(line)["question"] for line in f.read_text("utf-8").splitlines()
                      if line.strip()]
    ttl = (ROOT / "ontologies" / "demo.ttl").read_text("utf-8")
    descriptions = re.findall(r'rdfs:(?:label|comment)\s+"([^"]+)"', ttl)
    mentions = sorted({w.strip("?,.'\"()").lower() for q in questions[:60] for w in q.split()}
                      - {""})
    edge = ["", "   ", "a", "Straße nach Montbrûlé — 東京 🚆", "x " * 400,  # > 256 tokens
            "wellbore " * 255, "\tcompany\noperates  ", "UPPER lower MiXeD", "1999-12-31"]
    texts = list(dict.fromkeys(questions + descriptions + mentions + edge))
    assert len(texts) >= 300
    return texts


@pytest.fixture(scope="module")
def numpy_embedder() -> NumpyBertEmbedder:
    return NumpyBertEmbedder()


def test_vectors_match_sentence_transformers_to_1e4_cosine(
        numpy_embedder: NumpyBertEmbedder, embedder: Any) -> None:
    texts = _texts()
    ours = numpy_embedder.embed(texts)
    theirs = embedder.embed(texts)
    assert ours.shape == theirs.shape == (len(texts), 384) and ours.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-5)
    cosine = np.sum(ours * theirs, axis=1)
    worst = int(np.argmin(cosine))
    assert cosine[worst] >= 1 - 1e-4, f"{texts[worst]!r}: cosine {cosine[worst]}"


def test_same_name_and_dimension_as_the_index_embedder(
        numpy_embedder: NumpyBertEmbedder, embedder: Any) -> None:
    # ensure_index compares names: an index built by either runtime is fresh for the other.
    assert isinstance(numpy_embedder, Embedder)
    assert (numpy_embedder.name, numpy_embedder.dim) == (embedder.name, embedder.dim)


def test_a_batch_gives_the_vectors_of_its_texts_alone(numpy_embedder: NumpyBertEmbedder) -> None:
    texts = ["company", "Which company currently operates the Aster Coast Line?", "", "x " * 300]
    batch = NumpyBertEmbedder(memo_size=0).embed(texts)  # padded to the longest text
    alone = np.vstack([numpy_embedder.embed([t]) for t in texts])
    np.testing.assert_allclose(batch, alone, atol=1e-5)


def test_weights_are_read_on_the_first_text_only() -> None:
    emb = NumpyBertEmbedder()
    assert not emb.loaded and emb.dim == 384
    assert emb.embed([]).shape == (0, 384)
    assert not emb.loaded  # nothing to encode, nothing loaded
    emb.embed(["licence"])
    assert emb.loaded


def test_memo_encodes_repeated_texts_once(numpy_embedder: NumpyBertEmbedder) -> None:
    numpy_embedder.clear_memo()
    before = numpy_embedder.encoded
    a = numpy_embedder.embed(["field", "discovery", "field"])
    b = numpy_embedder.embed(["discovery"])
    assert numpy_embedder.encoded - before == 2
    np.testing.assert_array_equal(a[0], a[2])
    np.testing.assert_array_equal(b[0], a[1])


def test_single_string_is_rejected(numpy_embedder: NumpyBertEmbedder) -> None:
    with pytest.raises(TypeError):
        numpy_embedder.embed("wellbore")


def test_auto_chooses_numpy_for_the_default_model_on_cpu() -> None:
    assert choose_runtime(EmbedderConfig()) is EmbedderRuntime.NUMPY
    assert isinstance(make_embedder(EmbedderConfig()), NumpyBertEmbedder)
    assert choose_runtime(EmbedderConfig(device="cuda")) is \
        EmbedderRuntime.SENTENCE_TRANSFORMERS


def _model_copy(tmp_path: Path) -> Path:
    """The default model folder: small files copied, weights linked (to edit the JSON)."""
    src, dst = default_model_path(), tmp_path / "model"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("model.safetensors"))
    (dst / "model.safetensors").symlink_to(src / "model.safetensors")
    return dst


def test_an_unmodified_copy_is_supported(tmp_path: Path) -> None:
    layout = read_layout(_model_copy(tmp_path))
    assert layout is not None
    assert (layout.hidden, layout.layers, layout.heads, layout.max_seq_length) == \
        (384, 6, 12, 256)


@pytest.mark.parametrize("edit", ["cls-pooling", "dense-module", "not-bert", "no-safetensors"])
def test_layouts_numpy_does_not_reproduce_go_to_sentence_transformers(
        tmp_path: Path, edit: str) -> None:
    model = _model_copy(tmp_path)
    if edit == "cls-pooling":
        cfg = json.loads((model / "1_Pooling" / "config.json").read_text())
        cfg.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
        (model / "1_Pooling" / "config.json").write_text(json.dumps(cfg))
    elif edit == "dense-module":
        mods = json.loads((model / "modules.json").read_text())
        mods.insert(2, {"idx": 2, "name": "2", "path": "2_Dense",
                        "type": "sentence_transformers.models.Dense"})
        (model / "modules.json").write_text(json.dumps(mods))
    elif edit == "not-bert":
        cfg = json.loads((model / "config.json").read_text())
        cfg["model_type"] = "roberta"
        (model / "config.json").write_text(json.dumps(cfg))
    else:
        (model / "model.safetensors").unlink()
    assert read_layout(model) is None
    assert choose_runtime(EmbedderConfig(model=str(model))) is \
        EmbedderRuntime.SENTENCE_TRANSFORMERS
    with pytest.raises(ConfigError, match="not a BERT sentence-transformers folder"):
        NumpyBertEmbedder(str(model))


def test_a_missing_model_directory_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        make_embedder(EmbedderConfig(model=str(tmp_path / "no-such-model")))


def test_unreadable_weights_are_a_config_error_naming_the_file(tmp_path: Path) -> None:
    model = _model_copy(tmp_path)
    (model / "model.safetensors").unlink()
    (model / "model.safetensors").write_bytes(b"not a safetensors file")
    emb = NumpyBertEmbedder(str(model))
    with pytest.raises(ConfigError, match="cannot read the model weights .*model.safetensors"):
        emb.embed(["wellbore"])
