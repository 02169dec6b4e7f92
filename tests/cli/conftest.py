"""The ``navqa_cli`` fixture: run the ``navqa`` entry point in-process (see ``cli_harness``)."""

from __future__ import annotations

import io
import logging
import sys
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_harness import Outcome, guard_heavy_work


@pytest.fixture
def navqa_cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
              capsys: pytest.CaptureFixture[str]) -> Iterator[Callable[..., Outcome]]:
    """``navqa_cli(*args, stdin=b"", heavy_guard=True)`` → :class:`Outcome`."""
    import navqa.cli.main as cli_main

    work = tmp_path / "cwd"
    work.mkdir()
    monkeypatch.chdir(work)  # no ./navqa.yaml or ./navqa.toml of the developer's
    for var in ("NAVQA_CONFIG", "NAVQA_LLM", "NAVQA_LLM_BASE_URL", "NAVQA_LLM_MODEL",
                "OPENAI_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("COLUMNS", "250")  # one message = one line, as in a wide terminal
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)

    def invoke(*args: str, stdin: bytes = b"", heavy_guard: bool = True) -> Outcome:
        with monkeypatch.context() as m:
            if heavy_guard:
                guard_heavy_work(m)
            m.setattr(sys, "argv", ["navqa", *args])
            m.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"))
            capsys.readouterr()
            code, escaped = 0, ""
            try:
                cli_main.run()
            except SystemExit as e:
                code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
            except BaseException:  # noqa: BLE001 - this is what a user would see
                code, escaped = 1, traceback.format_exc()
            finally:
                logging.captureWarnings(False)
            captured = capsys.readouterr()
        return Outcome(code=code, out=captured.out, err=captured.err, escaped=escaped)

    yield invoke
    root.handlers[:] = saved[0]
    root.setLevel(saved[1])


