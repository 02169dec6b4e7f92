"""Helpers for the CLI tests: run ``navqa`` in-process, enumerate its commands.

The in-process run (fixture ``navqa_cli`` in ``conftest.py``) is the way the console script runs it.

:func:`navqa.cli.main.run` is exactly what ``.venv/bin/navqa`` calls. Called here with a
patched ``sys.argv``, a traceback is what it would be in a shell: an exception other than
``SystemExit`` escaping ``run()`` (or one a log handler prints). The fixture records
either, with stdout, stderr and the exit code.

With ``heavy_guard`` on (the default), the entry points that load the index, the
embedding model, PostgreSQL or Ontop raise :class:`HeavyWorkStarted`: a bad input must be
refused before any of them starts.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import pytest

#: (module, attribute) of everything heavy a command may start.
HEAVY = (
    ("navqa.runtime.vkg", "serve_vkg"),
    ("navqa.runtime.vkg", "start_vkg"),
    ("navqa.runtime.serve", "serve_source"),
    ("navqa.runtime.postgres", "postgres"),
    ("navqa.runtime.datasets", "fetch_dataset"),
    ("navqa.offline.artifacts", "ensure_index"),
    ("navqa.offline.artifacts", "build_index"),
    ("navqa.offline.artifacts", "load_index"),
    ("navqa.runtime.ontop_setup", "ensure_ontop"),
    ("navqa.backends.embedder_factory", "make_embedder"),
)


class HeavyWorkStarted(AssertionError):
    """A command started loading or serving something before refusing a bad input."""


@dataclass(frozen=True)
class Outcome:
    code: int
    out: str
    err: str
    #: the traceback of an exception that escaped ``run()`` ("" when none did)
    escaped: str

    @property
    def text(self) -> str:
        return self.out + self.err + self.escaped

    @property
    def error_lines(self) -> list[str]:
        return [ln for ln in self.err.splitlines() if ln.strip()]


def guard_heavy_work(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make every heavy entry point raise, wherever it was imported by name."""
    for mod_name, attr in HEAVY:
        try:
            mod = importlib.import_module(mod_name)
        except ModuleNotFoundError:
            continue
        original = getattr(mod, attr, None)
        if original is None:
            continue

        def refuse(*_a: object, _name: str = f"{mod_name}.{attr}", **_k: object) -> None:
            raise HeavyWorkStarted(f"{_name} was called before the bad input was refused")

        for m in list(sys.modules.values()):
            name = getattr(m, "__name__", "")
            if name.startswith("navqa") and getattr(m, attr, None) is original:
                monkeypatch.setattr(m, attr, refuse)
    from navqa.backends.embedder_st import SentenceTransformerEmbedder

    def no_model(*_a: object, **_k: object) -> None:
        raise HeavyWorkStarted("the embedding model was loaded before the bad input was refused")

    monkeypatch.setattr(SentenceTransformerEmbedder, "from_config", no_model)


def command_paths() -> list[tuple[str, ...]]:
    """Every command and group of the ``navqa`` app, e.g. ``("eval", "run")``."""
    import typer.main

    from navqa.cli.main import app

    out: list[tuple[str, ...]] = []

    def walk(cmd: object, path: tuple[str, ...]) -> None:
        subs = getattr(cmd, "commands", None)
        if path:
            out.append(path)
        if subs:
            for name, sub in sorted(subs.items()):
                if not getattr(sub, "hidden", False):
                    walk(sub, (*path, name))

    walk(typer.main.get_command(app), ())
    return out


def assert_clean(res: Outcome, code: int, names: Sequence[str] = (),
                 one_line: bool = True) -> None:
    """No traceback, the documented exit code, a message naming the input."""
    assert not res.escaped, f"an exception escaped run():\n{res.escaped}"
    assert "Traceback" not in res.text, res.text
    assert res.code == code, f"exit {res.code}, expected {code}:\n{res.text}"
    for name in names:
        assert name in res.err, f"{name!r} not named in the message:\n{res.err}"
    if one_line:
        assert len(res.error_lines) == 1, f"not one line:\n{res.err}"
        assert res.error_lines[0].startswith("error:"), res.err
