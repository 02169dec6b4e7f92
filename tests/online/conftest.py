"""Fixtures for the online stage: one offline pipeline over the served demo VKG."""

from __future__ import annotations

import pytest

from navqa.backends.embedder_st import SentenceTransformerEmbedder
from navqa.online.pipeline import Pipeline


@pytest.fixture(scope="session")
def embedder() -> SentenceTransformerEmbedder:
    """The bundled all-MiniLM-L6-v2 (loaded once per session, offline)."""
    return SentenceTransformerEmbedder()


@pytest.fixture(scope="session")
def demo_pipeline(navqa_config, vkg, embedder) -> Pipeline:
    """The NaVQA pipeline on the demo VKG with the deterministic offline backend."""
    served = vkg("demo")
    return Pipeline.for_vkg(navqa_config, served.running, embedder=embedder)
