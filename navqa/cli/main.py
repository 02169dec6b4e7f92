"""The ``navqa`` command line.

Every command is a thin layer over the library; this package is the only place that
configures logging, prints, or draws progress bars. A :class:`~navqa.errors.NavqaError`
becomes one red line on stderr and exit code 1 (2 when the user's input is at fault);
bad usage exits with 2 — never with a traceback.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import NoReturn

import typer
from rich.markup import escape

# Every command module, imported explicitly: a broken one is an error, never a missing
# command. They keep their heavy imports (torch, rdflib, the index) inside the commands.
from navqa.cli import (
    cmd_ask,
    cmd_audit,
    cmd_datasets,
    cmd_doctor,
    cmd_endpoint,
    cmd_eval,
    cmd_index,
    cmd_init,
    cmd_lint,
    cmd_mcp,
    cmd_serve,
    cmd_suggest,
)
from navqa.cli.cmd_setup import setup
from navqa.cli.cmd_sparql import sparql
from navqa.cli.console import err_console, setup_logging
from navqa.cli.state import CliState
from navqa.errors import ConfigError, DatasetError, InputError, NavqaError

# The CLI owns the console: no model-loading progress bars from transformers/hf-hub.
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

app = typer.Typer(
    name="navqa",
    help=(
        "Ask questions in natural language over Virtual Knowledge Graphs (OWL + Ontop "
        "mappings over PostgreSQL), audit how much of the ontology the mappings populate, "
        "and suggest the mappings users need.\n\n"
        "Start with:  navqa ask --vkg demo \"Which lines does Northern Vale Rail operate?\""
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.callback()
def main(
    ctx: typer.Context,
    config: Path | None = typer.Option(
        None, "--config", "-c", help="YAML config file (default: $NAVQA_CONFIG or ./navqa.yaml).",
        dir_okay=False),
    verbose: int = typer.Option(0, "--verbose", "-v", count=True,
                                help="Show library logs (-v info, -vv debug)."),
) -> None:
    """Global options."""
    st = CliState(config_path=config, verbose=verbose)
    ctx.obj = st
    setup_logging(verbose, st.config.secrets())


app.command()(setup)
app.command()(sparql)
app.add_typer(cmd_datasets.app, name="datasets")
app.add_typer(cmd_endpoint.app, name="endpoint")


app.command(name="index")(cmd_index.index)
app.command(name="ask")(cmd_ask.ask)
app.add_typer(cmd_eval.app, name="eval")
app.command(name="audit")(cmd_audit.audit)
app.command(name="lint")(cmd_lint.lint)
app.command(name="suggest")(cmd_suggest.suggest)
app.command(name="doctor")(cmd_doctor.doctor)
app.command(name="init")(cmd_init.init)
app.command(name="serve")(cmd_serve.serve)
app.command(name="mcp")(cmd_mcp.mcp)


#: Exit codes, documented in the README ("Exit codes").
EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def exit_code(e: NavqaError) -> int:
    """2 when the user's input is at fault (config, a file or argument they gave), else 1.

    ``DatasetError`` is an ``InputError`` but mostly says a download or checksum failed;
    the CLI checks dataset *names* itself (:func:`navqa.cli.inputs.vkg_name`).
    """
    if isinstance(e, ConfigError | InputError) and not isinstance(e, DatasetError):
        return EXIT_USAGE
    return EXIT_FAILED


def _usage_error(e: typer.TyperException) -> NoReturn:
    """One line for a usage error of typer's (vendored) click: the message and a hint."""
    ctx = getattr(e, "ctx", None)
    if type(e).__name__ == "NoArgsIsHelpError" and ctx is not None:
        # ``navqa`` or ``navqa endpoint`` alone: the help *is* the message (typer's rich
        # help prints itself and returns "")
        text = ctx.get_help()
        if text.strip():
            err_console.print(escape(text), soft_wrap=True)
        sys.exit(EXIT_USAGE)
    message = " ".join(e.format_message().split())
    value = _given_value(e)
    if value is not None and value not in message:
        message += f" (got {value!r})"
    hint = ""
    if ctx is not None:
        hint = f" (see '{ctx.command_path} --help')"
    err_console.print(f"[bold red]error:[/] {escape(message)}{escape(hint)}", soft_wrap=True)
    sys.exit(EXIT_USAGE if e.exit_code in (0, EXIT_USAGE) or isinstance(e, typer.BadParameter)
             else e.exit_code)


def _given_value(e: typer.TyperException) -> str | None:
    """What the user typed for the option a ``BadParameter`` is about, from ``sys.argv``.

    typer's own messages ("Input should be a valid integer") do not quote the value.
    """
    param = getattr(e, "param", None)
    opts = [o for o in getattr(param, "opts", []) if o.startswith("-")]
    hint = getattr(e, "param_hint", None)
    if not opts and isinstance(hint, str) and hint.startswith("-"):
        opts = [hint]
    if not isinstance(e, typer.BadParameter) or not opts:
        return None
    args, value = sys.argv[1:], None
    for i, arg in enumerate(args):
        for opt in opts:
            if arg == opt and i + 1 < len(args):
                value = args[i + 1]
            elif arg.startswith(opt + "=") and opt.startswith("--"):
                value = arg[len(opt) + 1:]
    return value


def run() -> None:
    """Console-script entry point: exit 0 answered, 1 failed, 2 usage or bad input."""
    try:
        # Without standalone mode click *returns* the code of a ``typer.Exit`` instead of
        # exiting with it.
        rc = app(standalone_mode=False, prog_name="navqa")
        if isinstance(rc, int) and rc != 0:
            sys.exit(rc)
    except NavqaError as e:
        code = exit_code(e)
        # the user's mistake fits on one line; a failure may quote a log (OntopStartupError)
        text = " ".join(str(e).split()) if code == EXIT_USAGE else str(e)
        err_console.print(f"[bold red]error:[/] {escape(text)}", soft_wrap=True)
        sys.exit(code)
    except typer.Abort:
        err_console.print("aborted")
        sys.exit(130)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except typer.TyperException as e:
        # typer >= 0.2x vendors click: its UsageError, BadParameter, NoSuchOption,
        # MissingParameter ... derive from ``typer.TyperException``, not ``click``'s classes
        _usage_error(e)
