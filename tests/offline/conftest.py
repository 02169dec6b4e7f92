"""Local stand-in for the lead's ``shared_dataset`` fixture: paths into the dataset mirror.

Tests that use it carry the ``npd`` / ``bgee`` / ``atkis`` marker and *fail* when the mirror
is not present (CI always has it; a silent skip would hide a broken setup). The mirror is never copied into the
repository.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

MIRROR = Path(os.environ.get("NAVQA_DATASETS_MIRROR", "/work/shared/datasets"))

_FILES: dict[tuple[str, str], str] = {
    ("npd", "ontology"): "npd/ontology/npd-v2-ql.owl",
    ("npd", "mapping"): "npd/mappings/npd-v2-ql.obda",
    ("npd", "mapping-r2rml"): "npd/mappings/npd-v2-ql.r2rml",
    ("bgee", "ontology"): "bgee/ontology/bgee_v14_genex.owl",
    ("bgee", "mapping"): "bgee/mappings/bgee_v14_genex.obda",
    ("bgee", "mapping-r2rml"): "bgee/mappings/bgee_v14_genex.r2rml.ttl",
    ("atkis", "ontology"): "atkis/ontology/atkis2.ttl",
    ("atkis", "ontology-strict"): "atkis/ontology/atkis2.strict-turtle.ttl",
    ("atkis", "catalog"): "atkis/ontology/catalog-v001.xml",
    ("atkis", "mapping"): "atkis/mappings/atkis1.daf001d-reconstructed.obda",
    ("atkis", "mapping-head"): "atkis/mappings/atkis1.obda",
}


@pytest.fixture
def dataset_file() -> Callable[[str, str], Path]:
    """``dataset_file(name, role)`` → the local file; skips when the mirror lacks it."""

    def get(name: str, role: str) -> Path:
        rel = _FILES[(name, role)]
        path = MIRROR / rel
        if not path.is_file():
            pytest.fail(f"dataset file {rel} not found under {MIRROR} (set NAVQA_DATASETS_MIRROR)")
        return path

    return get
