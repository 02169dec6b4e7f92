"""A real ``navqa serve`` over the demo VKG (real PostgreSQL and Ontop), for the module.

The service runs as its own process, started with the same command a user types, and is
stopped with SIGINT (Ctrl-C) at the end. Requests go through real HTTP clients.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from serve_harness import Served, start_serve, stop_serve


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``navqa serve --vkg demo`` (offline backend), for the whole test session."""
    log = tmp_path_factory.mktemp("serve") / "serve.log"
    s = start_serve(["--vkg", "demo", "--workers", "4"], log,
                    env={"NAVQA_LLM": "none"})
    try:
        yield s
    finally:
        stop_serve(s.proc)


@pytest.fixture(scope="session")
def artifacts_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where tests leave artifacts (screenshots): ``$NAVQA_TEST_ARTIFACTS`` or a tmp dir."""
    d = Path(os.environ.get("NAVQA_TEST_ARTIFACTS") or tmp_path_factory.mktemp("artifacts"))
    d.mkdir(parents=True, exist_ok=True)
    return d
