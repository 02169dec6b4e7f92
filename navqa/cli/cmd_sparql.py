"""``navqa sparql``: run one SPARQL query on a VKG (starting whatever is needed)."""

from __future__ import annotations

import contextlib
from pathlib import Path

import typer

from navqa.backends.sparql_http import HttpSparqlEndpoint, query_form
from navqa.cli.console import console, starting
from navqa.cli.render import to_csv, to_json, to_table
from navqa.cli.state import state
from navqa.runtime.vkg import serve_vkg


def read_query(query_or_file: str) -> str:
    """The query text: the argument itself, or the file it names, or stdin for ``-``."""
    if query_or_file == "-":
        import sys

        return sys.stdin.read()
    p = Path(query_or_file)
    if len(query_or_file) < 4096 and "\n" not in query_or_file and p.is_file():
        return p.read_text(encoding="utf-8")
    return query_or_file


def sparql(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="A SPARQL query, a file holding one, or - for stdin."),
    vkg: str = typer.Option("demo", "--vkg", help="Dataset to query."),
    endpoint: str | None = typer.Option(
        None, help="Query this endpoint URL instead of starting the VKG."),
    as_json: bool = typer.Option(False, "--json", help="Print SPARQL JSON results."),
    as_csv: bool = typer.Option(False, "--csv", help="Print CSV."),
    mapping: str | None = typer.Option(None, help="obda or r2rml (default: the manifest's)."),
) -> None:
    """Run a read-only SPARQL query and print the answer (UPDATE is refused)."""
    cfg = state(ctx).config
    text = read_query(query)
    query_form(text)  # refuse UPDATE / garbage before starting anything

    def run(url: str) -> None:
        ep = HttpSparqlEndpoint(url, timeout=cfg.runtime.query_timeout_s)
        result = ep.query(text)
        if as_json:
            print(to_json(result))
        elif as_csv:
            print(to_csv(result), end="")
        else:
            console.print(to_table(result))

    if endpoint:
        run(endpoint)
        return
    with contextlib.ExitStack() as stack:
        running = stack.enter_context(starting(f"starting {vkg}", serve_vkg, cfg, vkg,
                                               mapping=mapping))
        run(running.url)
