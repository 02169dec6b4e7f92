"""``dataset_file(name, role)``: a verified local copy of one dataset file.

Files come through navqa's dataset fetcher (``shared_dataset`` in ``tests/conftest.py``):
from the cache, the mirror (``NAVQA_DATASETS_MIRROR``; CI always sets it) or upstream,
checked against the manifest's SHA-256. A missing file *fails* the test — a silent skip
would hide a broken setup. Two extra "roles" name files the manifests keep as ``doc``:
ATKIS's strict-Turtle copy of its ontology and the HEAD revision of its mapping.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from navqa.runtime.datasets import LocalDataset

_EXTRA: dict[tuple[str, str], str] = {
    ("atkis", "ontology-strict"): "ontology/atkis2.strict-turtle.ttl",
    ("atkis", "mapping-head"): "mappings/atkis1.obda",
}


@pytest.fixture
def dataset_file(shared_dataset: Callable[[str], LocalDataset]) -> Callable[[str, str], Path]:
    """``dataset_file(name, role)`` → the local, checksum-verified file."""

    def get(name: str, role: str) -> Path:
        ds = shared_dataset(name)
        if (name, role) in _EXTRA:
            return ds.local(_EXTRA[(name, role)])
        return ds.path(role)  # type: ignore[arg-type]

    return get
