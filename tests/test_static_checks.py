"""The code stays typed and lint-clean: ruff and mypy run as part of the test suite."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=900)


def test_ruff_finds_nothing() -> None:
    proc = _run("ruff", "check", "navqa", "tests", "bench")
    assert proc.returncode == 0, proc.stdout[-4000:]


def test_mypy_finds_nothing() -> None:
    proc = _run("mypy")  # configured in pyproject.toml: packages = ["navqa"]
    assert proc.returncode == 0, proc.stdout[-4000:]
