"""Embed the descriptions and build the two vector indices I_C and I_P (NaVQA §3.1).

The class index holds one vector per indexed class, the property index one per object
or data property; each row's id is the element's IRI (the FAISS id sidecar). Texts are
embedded in batches of similar length (less padding) so a caller can show progress.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from navqa.backends.faiss_index import FaissIndex
from navqa.backends.protocols import Embedder
from navqa.errors import IndexError_
from navqa.model.iri import IRI
from navqa.offline.descriptions import Description

logger = logging.getLogger(__name__)

__all__ = ["VectorIndexes", "build_vector_indexes"]

ProgressFn = Callable[[str, int, int | None], None]
"""``progress(stage, done, total)``."""


@dataclass
class VectorIndexes:
    """The class index I_C and the property index I_P."""

    classes: FaissIndex
    properties: FaissIndex


def build_vector_indexes(
    descriptions: Mapping[IRI, Description],
    embedder: Embedder,
    *,
    batch_size: int = 64,
    progress: ProgressFn | None = None,
) -> VectorIndexes:
    """Embed every description and split the vectors into the two indices.

    Args:
        descriptions: desc(e) per element (:func:`navqa.offline.descriptions.describe`).
        embedder: Any :class:`~navqa.backends.protocols.Embedder`.
        batch_size: Texts per ``embed`` call (one progress tick each).
        progress: Called as ``progress("embed", done, total)``.

    Returns:
        The two indices, rows in IRI order.

    Raises:
        IndexError_: the embedder returned vectors of the wrong shape.
    """
    items = sorted(descriptions.values(), key=lambda d: d.iri)
    total = len(items)
    vectors = np.zeros((total, embedder.dim), dtype=np.float32)
    step = max(1, int(batch_size))
    # Batches of similar length waste less padding; rows go back to IRI order below.
    order = sorted(range(total), key=lambda i: (len(items[i].text), i))
    if progress is not None:
        progress("embed", 0, total)
    for start in range(0, total, step):
        rows = order[start : start + step]
        out = np.asarray(embedder.embed([items[i].text for i in rows]), dtype=np.float32)
        if out.shape != (len(rows), embedder.dim):
            raise IndexError_(
                f"embedder {embedder.name!r} returned vectors of shape {out.shape}, "
                f"expected ({len(rows)}, {embedder.dim})"
            )
        vectors[rows] = out
        if progress is not None:
            progress("embed", start + len(rows), total)
    classes = FaissIndex(embedder.dim)
    properties = FaissIndex(embedder.dim)
    is_prop = np.array([d.kind.is_property for d in items], dtype=bool)
    ids = [d.iri for d in items]
    classes.add([i for i, p in zip(ids, is_prop, strict=True) if not p], vectors[~is_prop])
    properties.add([i for i, p in zip(ids, is_prop, strict=True) if p], vectors[is_prop])
    logger.info(
        "embedded %d descriptions with %s: %d classes, %d properties",
        total, embedder.name, len(classes), len(properties),
    )
    return VectorIndexes(classes=classes, properties=properties)
