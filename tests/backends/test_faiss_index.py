"""FaissIndex: search order, empty searches, save/load round trips, corrupt artifacts."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from navqa.backends.faiss_index import FaissIndex
from navqa.backends.protocols import VectorIndex
from navqa.errors import IndexError_


def _unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    v = rng.normal(size=(n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


@pytest.fixture
def data() -> tuple[list[str], np.ndarray, np.ndarray]:
    rng = np.random.default_rng(7)
    ids = [f"http://example.org/C{i}" for i in range(40)]
    return ids, _unit(rng, 40, 16), _unit(rng, 3, 16)


def _expected(vectors: np.ndarray, queries: np.ndarray, ids: list[str], k: int) -> list[list[str]]:
    """Brute-force oracle with numpy."""
    scores = queries @ vectors.T
    return [[ids[j] for j in np.argsort(-row, kind="stable")[:k]] for row in scores]


def test_search_returns_best_first_like_brute_force(data: tuple) -> None:
    ids, vectors, queries = data
    index = FaissIndex(16)
    assert isinstance(index, VectorIndex)
    index.add(ids, vectors)
    assert len(index) == 40
    hits = index.search(queries, 5)
    assert [[i for i, _ in row] for row in hits] == _expected(vectors, queries, ids, 5)
    for q, row in zip(queries, hits, strict=True):
        scores = [s for _, s in row]
        assert scores == sorted(scores, reverse=True)
        np.testing.assert_allclose(scores[0], float(np.max(vectors @ q)), rtol=1e-5)


def test_a_vector_finds_itself_first(data: tuple) -> None:
    ids, vectors, _ = data
    index = FaissIndex(16)
    index.add(ids, vectors)
    row = index.search(vectors[11], 1)
    assert row[0][0][0] == ids[11]
    assert row[0][0][1] == pytest.approx(1.0, abs=1e-5)


def test_empty_index_and_small_k(data: tuple) -> None:
    ids, vectors, queries = data
    empty = FaissIndex(16)
    assert empty.search(queries, 5) == [[], [], []]
    small = FaissIndex(16)
    small.add(ids[:2], vectors[:2])
    assert [len(r) for r in small.search(queries, 10)] == [2, 2, 2]
    assert small.search(queries, 0) == [[], [], []]


def test_bad_shapes_are_rejected(data: tuple) -> None:
    ids, vectors, _ = data
    index = FaissIndex(16)
    with pytest.raises(ValueError, match="ids for"):
        index.add(ids[:3], vectors[:4])
    with pytest.raises(ValueError, match="shape"):
        index.add(ids[:2], np.zeros((2, 8), dtype=np.float32))


@pytest.mark.parametrize("target", ["as-dir", "prefix.faiss"])
def test_save_load_round_trip(data: tuple, tmp_path: Path, target: str) -> None:
    ids, vectors, queries = data
    index = FaissIndex(16)
    index.add(ids, vectors)
    path = tmp_path / "out" / target
    index.save(path)
    loaded = FaissIndex.load(path)
    assert loaded.dim == 16 and loaded.ids == ids
    assert loaded.search(queries, 7) == index.search(queries, 7)
    leftovers = [p.name for p in tmp_path.rglob("*.tmp")]
    assert leftovers == []


def test_save_layouts(tmp_path: Path) -> None:
    index = FaissIndex(4)
    index.add(["a"], np.ones((1, 4), dtype=np.float32) / 2)
    index.save(tmp_path / "d")
    index.save(tmp_path / "p.faiss")
    assert (tmp_path / "d" / "index.faiss").is_file()
    assert json.loads((tmp_path / "d" / "ids.json").read_text()) == ["a"]
    assert (tmp_path / "p.faiss").is_file() and (tmp_path / "p.ids.json").is_file()


def test_missing_or_inconsistent_artifacts_raise_index_error(data: tuple, tmp_path: Path) -> None:
    ids, vectors, _ = data
    with pytest.raises(IndexError_, match="missing"):
        FaissIndex.load(tmp_path / "nothing")
    index = FaissIndex(16)
    index.add(ids, vectors)
    index.save(tmp_path / "x")
    (tmp_path / "x" / "ids.json").write_text(json.dumps(ids[:-1]))
    with pytest.raises(IndexError_, match="39 ids but"):
        FaissIndex.load(tmp_path / "x")
    (tmp_path / "x" / "ids.json").write_text("{not json")
    with pytest.raises(IndexError_, match="id sidecar"):
        FaissIndex.load(tmp_path / "x")
    (tmp_path / "x" / "ids.json").write_text(json.dumps(ids))
    (tmp_path / "x" / "index.faiss").write_bytes(b"garbage")
    with pytest.raises(IndexError_, match="cannot read the vector index"):
        FaissIndex.load(tmp_path / "x")
