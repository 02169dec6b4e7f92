"""Usage errors, for every command: one line, exit code 2, never a traceback.

The commands are read from the app itself, so a command added later is covered too. Each
command gets an unknown option, its required parameters left out, and a bad value for each
option that has choices, takes a number, or wants a file. The pinned typer vendors click:
its ``UsageError`` is not ``click.UsageError``, and before ``run()`` caught typer's classes
every one of these printed a traceback and exited 1.
"""

from __future__ import annotations

import os
import subprocess
import sys
from enum import Enum
from pathlib import Path
from typing import Any

import pytest
import typer.main
from cli_harness import assert_clean, command_paths

from navqa.cli.main import app

NAVQA = [sys.executable, "-m", "navqa.cli"]
PATHS = command_paths()


def _command(path: tuple[str, ...]) -> Any:
    cmd: Any = typer.main.get_command(app)
    for name in path:
        cmd = cmd.commands[name]
    return cmd


LEAVES = [p for p in PATHS if not getattr(_command(p), "commands", None)]
GROUPS = [p for p in PATHS if getattr(_command(p), "commands", None)]


def _filler(param: Any, tmp: Path) -> list[str]:
    """A harmless value for a required parameter (an existing folder for folder arguments)."""
    return [str(tmp)] if "run" in param.name else ["x"]


def _required_args(path: tuple[str, ...], tmp: Path) -> list[str]:
    (tmp / "afile.txt").write_text("what is this?\n", encoding="utf-8")
    out: list[str] = []
    for p in _command(path).params:
        if p.required and p.param_type_name == "argument":
            out += _filler(p, tmp)
        elif p.required:
            out += [p.opts[0], str(tmp / "afile.txt")]
    return out


def _options(kind: str) -> list[Any]:
    """(path, option, bad value) for every option taking a choice or a number."""
    cases = []
    for path in LEAVES:
        for p in _command(path).params:
            if p.param_type_name != "option" or p.is_flag or p.count:
                continue
            t = getattr(getattr(p, "type_descriptor", None), "annotation", None)
            if not isinstance(t, type):
                continue
            option = next(o for o in p.opts if o.startswith("--"))
            ident = f"{' '.join(path)} {option}"
            if kind == "choice" and issubclass(t, Enum):
                cases.append(pytest.param(path, option, "not-a-choice", id=ident))
            elif kind == "number" and issubclass(t, int | float) and not issubclass(t, bool):
                cases.append(pytest.param(path, option, "NaN-ish", id=ident))
    return cases


def test_the_command_tree_is_found() -> None:
    flat = {" ".join(p) for p in PATHS}
    assert {"ask", "sparql", "lint", "index", "audit", "suggest", "eval run", "eval report",
            "endpoint up", "endpoint down", "datasets info"} <= flat


@pytest.mark.parametrize("path", PATHS, ids=" ".join)
def test_unknown_option(path: tuple[str, ...], navqa_cli, tmp_path: Path) -> None:
    res = navqa_cli(*path, "--no-such-option-xyz", *_required_args(path, tmp_path))
    assert_clean(res, 2, ["--no-such-option-xyz"])


@pytest.mark.parametrize("path", [p for p in LEAVES if any(
    q.required for q in _command(p).params)], ids=" ".join)
def test_missing_required_parameter(path: tuple[str, ...], navqa_cli) -> None:
    first = next(q for q in _command(path).params if q.required)
    res = navqa_cli(*path)
    assert_clean(res, 2, ["Missing"])
    wanted = first.opts[0] if first.param_type_name == "option" else first.name
    assert wanted.lower() in res.err.lower(), res.err


@pytest.mark.parametrize("path", GROUPS, ids=" ".join)
def test_unknown_subcommand(path: tuple[str, ...], navqa_cli) -> None:
    res = navqa_cli(*path, "no-such-command")
    assert_clean(res, 2, ["no-such-command"])


def test_unknown_top_level_command(navqa_cli) -> None:
    assert_clean(navqa_cli("no-such-command"), 2, ["no-such-command"])


def test_no_arguments_prints_the_help_not_a_traceback(navqa_cli) -> None:
    res = navqa_cli()
    assert_clean(res, 2, one_line=False)
    assert "Usage:" in res.out + res.err and "ask" in res.out + res.err


@pytest.mark.parametrize(("path", "option", "value"), _options("choice"))
def test_bad_choice(path: tuple[str, ...], option: str, value: str, navqa_cli,
                    tmp_path: Path) -> None:
    res = navqa_cli(*path, *_required_args(path, tmp_path), option, value)
    assert_clean(res, 2, [option, value])


@pytest.mark.parametrize(("path", "option", "value"), _options("number"))
def test_bad_number(path: tuple[str, ...], option: str, value: str, navqa_cli,
                    tmp_path: Path) -> None:
    res = navqa_cli(*path, *_required_args(path, tmp_path), option, value)
    assert_clean(res, 2, [option, value])


def test_option_lists_are_not_empty() -> None:
    assert len(_options("choice")) >= 3 and len(_options("number")) >= 4


@pytest.mark.parametrize("args", [
    ["--bogus"],
    ["ask"],
    ["lint", "/no/such/query.rq"],
    ["--config", "/", "ask", "q"],
], ids=" ".join)
def test_the_real_console_entry_point(args: list[str], tmp_path: Path) -> None:
    """The same through a real process (``python -m navqa.cli`` = the ``navqa`` script)."""
    env = {k: v for k, v in os.environ.items() if k != "NAVQA_CONFIG"}
    proc = subprocess.run(NAVQA + args, capture_output=True, text=True, timeout=300,
                          cwd=tmp_path, env=dict(env, COLUMNS="250"))
    assert "Traceback" not in proc.stdout + proc.stderr, proc.stderr
    assert proc.returncode == 2, proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), proc.stderr
    assert "navqa" in lines[0]  # the hint names the command: (see 'navqa ask --help')


def test_a_bad_input_is_refused_before_the_model_loads(tmp_path: Path) -> None:
    """Validate first: a missing query file costs no embedding model, index or service.

    Before, ``lint missing.rq`` loaded the index and the model (20 s, 1.5 GB) and then
    linted the file *name* as a query.
    """
    code = ("import sys\n"
            "from navqa.cli.main import run\n"
            "sys.argv = ['navqa', 'lint', 'missing.rq']\n"
            "try:\n"
            "    run()\n"
            "except SystemExit as e:\n"
            "    print('exit', e.code)\n"
            "heavy = [m for m in ('torch', 'sentence_transformers', 'faiss') "
            "if m in sys.modules]\n"
            "print('heavy', heavy)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=tmp_path)
    assert "exit 2" in proc.stdout, proc.stdout + proc.stderr
    assert "heavy []" in proc.stdout, proc.stdout
    assert "missing.rq" in proc.stderr
