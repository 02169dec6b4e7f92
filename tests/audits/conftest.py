"""Fixtures for the maintainers' tools: indexes of the four VKGs, one embedder, one linter each.

Indexes are built (or loaded) through :func:`navqa.offline.artifacts.ensure_index` with the
bundled embedder, exactly as ``navqa audit``/``lint``/``suggest`` load them.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest

from navqa.audits.lint import Linter
from navqa.backends.embedder_st import SentenceTransformerEmbedder
from navqa.offline.artifacts import IndexBundle, ensure_index


@pytest.fixture(scope="session")
def embedder() -> SentenceTransformerEmbedder:
    """The bundled all-MiniLM-L6-v2, loaded once (offline)."""
    return SentenceTransformerEmbedder()


@pytest.fixture(scope="session")
def index_bundle(navqa_config, shared_dataset, embedder) -> Callable[[str], IndexBundle]:
    """``index_bundle(name)``: the VKG's index, built on first use."""
    cache: dict[str, IndexBundle] = {}

    def get(name: str) -> IndexBundle:
        if name not in cache:
            cache[name] = ensure_index(navqa_config, shared_dataset(name), embedder=embedder)
        return cache[name]

    return get


@pytest.fixture(scope="session")
def linter(index_bundle, embedder) -> Callable[[str], Linter]:
    """``linter(name)``: a linter with embedding alternatives."""
    cache: dict[str, Linter] = {}

    def get(name: str) -> Linter:
        if name not in cache:
            cache[name] = Linter(index_bundle(name), embedder=embedder)
        return cache[name]

    return get


@pytest.fixture
def cli_env(navqa_config) -> dict[str, str]:
    """The environment for ``navqa`` subprocesses: same cache, mirror and cluster."""
    return dict(os.environ, NAVQA_CACHE_DIR=str(navqa_config.runtime.cache_dir),
                HF_HUB_OFFLINE="1", COLUMNS="200")
