"""``navqa sparql``: run one SPARQL query on a VKG (starting whatever is needed)."""

from __future__ import annotations

import contextlib

import typer

from navqa.backends.sparql_http import HttpSparqlEndpoint, query_form
from navqa.cli.console import console, err_console, starting
from navqa.cli.cost import MaxCostOpt, warn_if_costly
from navqa.cli.inputs import endpoint_url, mapping_choice, query_argument
from navqa.cli.render import to_csv, to_json, to_table
from navqa.cli.state import state
from navqa.cli.vkg_options import (
    BUNDLED_MAPPINGS,
    CatalogOpt,
    EndpointOpt,
    LensesOpt,
    MappingOpt,
    OntologyOpt,
    PropertiesOpt,
    VkgOpt,
    resolve,
)
from navqa.errors import QueryCheckError
from navqa.runtime.serve import serve_source


def read_query(query_or_file: str) -> str:
    """The query text: the argument itself, or the file it names, or stdin for ``-``.

    Raises:
        typer.BadParameter: the argument names a directory or a file that does not exist.
        InputError: the file or stdin is not UTF-8 text.
    """
    return query_argument(query_or_file)[0]


def sparql(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="A SPARQL query, a file holding one, or - for stdin."),
    vkg: VkgOpt = None,
    ontology: OntologyOpt = None,
    mapping: MappingOpt = None,
    properties: PropertiesOpt = None,
    catalog: CatalogOpt = None,
    lenses: LensesOpt = None,
    endpoint: EndpointOpt = None,
    as_json: bool = typer.Option(False, "--json", help="Print SPARQL JSON results."),
    as_csv: bool = typer.Option(False, "--csv", help="Print CSV."),
    max_cost: MaxCostOpt = None,
) -> None:
    """Run a read-only SPARQL query and print the answer (UPDATE is refused)."""
    # Every argument is checked before anything starts (no Ontop for a typo).
    if as_json and as_csv:
        raise typer.BadParameter("give --json or --csv, not both", param_hint="--json")
    if endpoint:
        endpoint_url(endpoint)
    if mapping is not None and str(mapping) in BUNDLED_MAPPINGS:
        mapping_choice(str(mapping))
    text = read_query(query)
    try:
        query_form(text)  # refuse UPDATE / garbage before starting anything
    except QueryCheckError as e:
        shown = " ".join(text.split())
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        raise typer.BadParameter(f"{e.message}; got {shown!r}", param_hint="QUERY") from e
    cfg = state(ctx).config

    def run(url: str) -> None:
        ep = HttpSparqlEndpoint(url, timeout=cfg.runtime.query_timeout_s)
        result = ep.query(text)
        if as_json:
            print(to_json(result))
        elif as_csv:
            print(to_csv(result), end="")
        else:
            console.print(to_table(result))

    if endpoint and vkg is None and ontology is None and mapping is None:
        run(endpoint)  # a query needs no files
        return
    chosen = resolve(ctx, vkg, ontology, mapping, properties, catalog, lenses, endpoint)
    cfg = chosen.config
    with contextlib.ExitStack() as stack:
        running = stack.enter_context(starting(f"starting {chosen.source.name}", serve_source,
                                               cfg, chosen.source, dev=True))
        # the cost guard: warn before a query the database estimates will not finish
        from navqa.offline.artifacts import parse_mappings

        warn_if_costly(err_console, running, text, max_cost=max_cost,
                       mappings=parse_mappings(chosen.source.mapping),
                       timeout_s=cfg.runtime.query_timeout_s, config=cfg)
        run(running.url)
