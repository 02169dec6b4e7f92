"""Constants and helpers shared by the SAGA tests."""

from __future__ import annotations

RAIL = "http://example.org/navqa/rail#"
DATA = "http://example.org/navqa/rail/data/"
PREFIX = f"PREFIX rail: <{RAIL}>\n"


def pipeline_with(navqa_config, served_demo, embedder, **pipeline):
    """An offline pipeline on the served demo with some ``pipeline`` settings changed."""
    from navqa.online.pipeline import Pipeline

    cfg = navqa_config.with_overrides(pipeline=pipeline)
    return Pipeline.for_vkg(cfg, served_demo.running, embedder=embedder)
