"""Fixtures for the SAGA tests: the demo schema (no services), and the served demo VKG."""

from __future__ import annotations

import pytest

from navqa.backends.embedder_st import SentenceTransformerEmbedder
from navqa.offline.artifacts import IndexBundle, ensure_index
from navqa.online.context import SchemaContext
from navqa.online.pipeline import Pipeline
from navqa.online.saga.schema_index import SchemaIndex
from navqa.online.saga.typefilter import TypeFilter


@pytest.fixture(scope="session")
def embedder() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


@pytest.fixture(scope="session")
def demo_bundle(navqa_config, shared_dataset, embedder) -> IndexBundle:
    """The demo's index (built once into the cache; no database or endpoint needed)."""
    return ensure_index(navqa_config, shared_dataset("demo"), embedder=embedder)


@pytest.fixture(scope="session")
def demo_ctx(demo_bundle, embedder) -> SchemaContext:
    return SchemaContext(demo_bundle, embedder)


@pytest.fixture(scope="session")
def demo_index(demo_ctx) -> SchemaIndex:
    return SchemaIndex.build(demo_ctx)


@pytest.fixture(scope="session")
def demo_filter(demo_ctx, demo_index) -> TypeFilter:
    return TypeFilter(demo_ctx, demo_index)


@pytest.fixture(scope="session")
def served_demo(vkg):
    return vkg("demo")


@pytest.fixture(scope="session")
def offline_pipeline(navqa_config, served_demo, embedder) -> Pipeline:
    """The pipeline on the served demo VKG, offline backend (no LLM)."""
    return Pipeline.for_vkg(navqa_config, served_demo.running, embedder=embedder)
