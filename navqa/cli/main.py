"""The ``navqa`` command line.

Every command is a thin layer over the library; this package is the only place that
configures logging, prints, or draws progress bars. A :class:`~navqa.errors.NavqaError`
becomes one red line on stderr and exit code 1; bad usage exits with 2.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import typer
from rich.markup import escape

from navqa.cli import cmd_datasets, cmd_endpoint
from navqa.cli.cmd_setup import setup
from navqa.cli.cmd_sparql import sparql
from navqa.cli.console import err_console, setup_logging
from navqa.cli.state import CliState
from navqa.errors import NavqaError

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


def _register_optional() -> None:
    """Commands of later stages register themselves here when their modules exist."""
    import importlib

    for mod, attr, name, kind in (
        ("navqa.cli.cmd_index", "index", "index", "command"),
        ("navqa.cli.cmd_ask", "ask", "ask", "command"),
        ("navqa.cli.cmd_eval", "app", "eval", "typer"),
        ("navqa.cli.cmd_audit", "audit", "audit", "command"),
        ("navqa.cli.cmd_lint", "lint", "lint", "command"),
        ("navqa.cli.cmd_suggest", "suggest", "suggest", "command"),
        ("navqa.cli.cmd_bench", "app", "bench", "typer"),
    ):
        try:
            module = importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name == mod:
                continue
            raise
        obj = getattr(module, attr)
        if kind == "typer":
            app.add_typer(obj, name=name)
        else:
            app.command(name=name)(obj)


_register_optional()


def run() -> None:
    """Console-script entry point."""
    try:
        # Without standalone mode click *returns* the code of a ``typer.Exit`` instead of
        # exiting with it.
        rc = app(standalone_mode=False)
        if isinstance(rc, int) and rc != 0:
            sys.exit(rc)
    except NavqaError as e:
        err_console.print(f"[bold red]error:[/] {escape(str(e))}", soft_wrap=True)
        sys.exit(1)
    except typer.Abort:
        err_console.print("aborted")
        sys.exit(130)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
    except typer.Exit as e:
        sys.exit(e.exit_code)
    except Exception as e:  # click usage errors
        import click

        if isinstance(e, click.ClickException):
            e.show()
            sys.exit(e.exit_code)
        raise
