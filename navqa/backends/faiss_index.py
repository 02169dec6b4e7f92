"""The :class:`~navqa.backends.protocols.VectorIndex` on FAISS (exact inner product).

:class:`FaissIndex` wraps ``faiss.IndexFlatIP`` and keeps the string ids in a sidecar
JSON list (row ``i`` of the index is ``ids[i]``). With L2-normalised vectors the score
is cosine similarity. On disk::

    save("out/classes")          ->  out/classes/index.faiss + out/classes/ids.json
    save("out/classes.faiss")    ->  out/classes.faiss       + out/classes.ids.json

Both files are written to a temporary name and renamed, so a crash never leaves a
half-written index next to a complete sidecar.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from navqa.backends.protocols import Vectors
from navqa.errors import IndexError_

log = logging.getLogger(__name__)

INDEX_FILE = "index.faiss"
IDS_FILE = "ids.json"


def _paths(path: Path | str) -> tuple[Path, Path]:
    """The index file and the id sidecar for a directory or a ``.faiss`` file path."""
    p = Path(path)
    if p.suffix == ".faiss":
        return p, p.with_suffix(".ids.json")
    return p / INDEX_FILE, p / IDS_FILE


def _faiss() -> Any:
    try:
        import faiss
    except ImportError as e:  # pragma: no cover - faiss-cpu is a dependency
        raise IndexError_("faiss is not installed", hint="pip install faiss-cpu") from e
    return faiss


class FaissIndex:
    """Exact inner-product search over float32 vectors with string ids.

    Args:
        dim: The vector dimension.

    Raises:
        ValueError: when ``dim`` is not positive.
    """

    def __init__(self, dim: int) -> None:
        if dim < 1:
            raise ValueError(f"dimension must be positive, got {dim}")
        self.dim = int(dim)
        self._index = _faiss().IndexFlatIP(self.dim)
        self._ids: list[str] = []

    def __len__(self) -> int:
        return len(self._ids)

    def __repr__(self) -> str:
        return f"FaissIndex(dim={self.dim}, size={len(self)})"

    @property
    def ids(self) -> list[str]:
        """The ids in insertion (row) order."""
        return list(self._ids)

    def _matrix(self, vectors: Vectors, what: str) -> np.ndarray:
        arr = np.asarray(vectors, dtype=np.float32)
        if arr.ndim == 1:
            arr = arr.reshape(1, -1)
        if arr.ndim != 2 or arr.shape[1] != self.dim:
            raise ValueError(f"{what} must have shape (n, {self.dim}), got {arr.shape}")
        return np.ascontiguousarray(arr)

    def vectors(self) -> np.ndarray:
        """All stored vectors, in id order (a copy), shape ``(len(self), dim)``."""
        if not self._ids:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.asarray(self._index.reconstruct_n(0, len(self._ids)), dtype=np.float32)

    def add(self, ids: Sequence[str], vectors: Vectors) -> None:
        """Append vectors with their ids.

        Raises:
            ValueError: when the counts differ or the dimension is wrong.
        """
        arr = self._matrix(vectors, "vectors")
        if len(ids) != arr.shape[0]:
            raise ValueError(f"{len(ids)} ids for {arr.shape[0]} vectors")
        if arr.shape[0] == 0:
            return
        self._index.add(arr)
        self._ids.extend(str(i) for i in ids)

    def search(self, vectors: Vectors, k: int) -> list[list[tuple[str, float]]]:
        """The ``k`` best ``(id, score)`` pairs per query row, best first.

        An empty index (or ``k < 1``) gives one empty list per query.
        """
        queries = self._matrix(vectors, "queries")
        n = queries.shape[0]
        k = min(int(k), len(self))
        if k < 1 or n == 0:
            return [[] for _ in range(n)]
        scores, rows = self._index.search(queries, k)
        out: list[list[tuple[str, float]]] = []
        for srow, irow in zip(scores, rows, strict=True):
            out.append(
                [(self._ids[int(i)], float(s)) for s, i in zip(srow, irow, strict=True) if i >= 0]
            )
        return out

    def save(self, path: Path) -> None:
        """Write the index and its id sidecar (see the module docstring for the layout)."""
        faiss = _faiss()
        index_path, ids_path = _paths(path)
        index_path.parent.mkdir(parents=True, exist_ok=True)
        tmp_index = index_path.with_name(index_path.name + ".tmp")
        tmp_ids = ids_path.with_name(ids_path.name + ".tmp")
        faiss.write_index(self._index, str(tmp_index))
        tmp_ids.write_text(json.dumps(self._ids, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp_ids, ids_path)
        os.replace(tmp_index, index_path)
        log.debug("saved %r to %s", self, index_path)

    @classmethod
    def load(cls, path: Path | str) -> FaissIndex:
        """Read an index written by :meth:`save`.

        Raises:
            IndexError_: missing files, unreadable index, or ids that do not match it.
        """
        faiss = _faiss()
        index_path, ids_path = _paths(path)
        for p in (index_path, ids_path):
            if not p.is_file():
                raise IndexError_(
                    f"vector index file {p} is missing", hint="rebuild the index (navqa index)"
                )
        try:
            index = faiss.read_index(str(index_path))
        except RuntimeError as e:
            raise IndexError_(
                f"cannot read the vector index {index_path}: {e}",
                hint="rebuild the index (navqa index)",
            ) from e
        try:
            ids = json.loads(ids_path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise IndexError_(f"cannot read the id sidecar {ids_path}: {e}") from e
        if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
            raise IndexError_(f"{ids_path} must hold a JSON list of string ids")
        if len(ids) != index.ntotal:
            raise IndexError_(
                f"{ids_path} has {len(ids)} ids but {index_path} has {index.ntotal} vectors",
                hint="the index is corrupt or half-written: rebuild it",
            )
        obj = cls.__new__(cls)
        obj.dim = int(index.d)
        obj._index = index
        obj._ids = ids
        return obj


__all__ = ["FaissIndex"]
