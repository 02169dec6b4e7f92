"""``navqa audit``: mapping coverage of a VKG, what is unmapped, and what is broken."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer
from rich.markup import escape

from navqa.cli.console import err_console, progress_bar, starting, status
from navqa.cli.inputs import endpoint_url, writable_file
from navqa.cli.vkg_options import (
    CatalogOpt,
    EndpointOpt,
    LensesOpt,
    MappingOpt,
    OntologyOpt,
    PropertiesOpt,
    VkgOpt,
    resolve,
)
from navqa.model.vkg_source import VkgSource

if TYPE_CHECKING:
    from navqa.config import NavqaConfig
    from navqa.offline.artifacts import IndexBundle


def exit_with(code: int) -> NoReturn:
    """End the command with ``code``.

    ``typer.Exit(code)`` does not reach the shell through the ``navqa`` console script:
    :func:`navqa.cli.main.run` calls the app with ``standalone_mode=False``, where click
    *returns* the code of an ``Exit`` instead of exiting with it. ``SystemExit`` passes
    through click untouched (and ``typer.testing.CliRunner`` reports it as the exit code).
    """
    raise SystemExit(code)


class AuditFormat(StrEnum):
    md = "md"
    html = "html"
    json = "json"


def load_bundle(cfg: NavqaConfig, vkg: str | VkgSource) -> IndexBundle:
    """The VKG's index (built first when missing or stale), under a spinner."""
    from navqa.offline.artifacts import ensure_index

    if isinstance(vkg, VkgSource):
        with status(f"loading the index of {vkg.name}"):
            return ensure_index(cfg, vkg)
    from navqa.runtime.datasets import fetch_dataset

    with status(f"loading the index of {vkg}"):
        return ensure_index(cfg, fetch_dataset(vkg, cfg))


def audit(
    ctx: typer.Context,
    vkg: VkgOpt = None,
    ontology: OntologyOpt = None,
    mapping: MappingOpt = None,
    properties: PropertiesOpt = None,
    catalog: CatalogOpt = None,
    lenses: LensesOpt = None,
    live: Annotated[bool, typer.Option(
        "--live", help="Also ask the running VKG which elements yield rows, and show the SQL "
        "behind each (starts PostgreSQL and Ontop in dev mode as needed).")] = False,
    fmt: Annotated[AuditFormat, typer.Option("--format", help="Report format.")] = AuditFormat.md,
    out: Annotated[Path | None, typer.Option("--out", help="Write the report to this file "
                                             "instead of stdout.", dir_okay=False)] = None,
    fail_under: Annotated[float | None, typer.Option(
        "--fail-under", help="Exit with code 1 when coverage (mapped / declared classes and "
        "properties, in %) is below PCT.", metavar="PCT", min=0, max=100)] = None,
    endpoint: EndpointOpt = None,
    timeout: Annotated[float, typer.Option(
        "--timeout", help="With --live: seconds allowed per probe.")] = 60.0,
) -> None:
    """Audit how much of the ontology the mappings populate: coverage per kind and
    namespace, unmapped elements ranked by centrality, template mismatches, overlapping
    assertions and, with --live, mapped elements that yield no rows."""
    from navqa.audits.coverage import audit as run_audit
    from navqa.audits.coverage import probe_live
    from navqa.audits.report import render_html, render_json, render_markdown

    if out is not None:
        writable_file(out, "--out")
    if endpoint is not None:
        endpoint_url(endpoint)
    chosen = resolve(ctx, vkg, ontology, mapping, properties, catalog, lenses, endpoint)
    cfg, source = chosen.config, chosen.source
    name = source.name
    bundle = load_bundle(cfg, source)
    report = run_audit(bundle, name)

    if live:
        from navqa.backends.sparql_http import HttpSparqlEndpoint
        from navqa.runtime.serve import serve_source

        def probe(url: str, reformulate: str | None) -> None:
            ep = HttpSparqlEndpoint(url, timeout=timeout)
            bar = progress_bar()
            with bar:
                task = bar.add_task("probing elements", total=None)
                probe_live(report, bundle, ep, reformulate_url=reformulate, timeout=timeout,
                           progress=lambda done, total: bar.update(task, completed=done,
                                                                   total=total))

        with starting(f"starting {name}", serve_source, cfg, source, dev=True) as running:
            url = running.url
            base = url.rsplit("/sparql", 1)[0] if url.endswith("/sparql") else None
            probe(url, f"{base}/ontop/reformulate" if base else None)

    text = {AuditFormat.md: render_markdown, AuditFormat.html: render_html,
            AuditFormat.json: render_json}[fmt](report)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        c = report.coverage
        err_console.print(f"{escape(name)}: coverage {c.coverage:.1f} % ({c.mapped}/{c.declared}), "
                          f"{c.unmapped} unmapped → {escape(str(out))}")
    else:
        print(text, end="")
    if fail_under is not None and report.coverage.coverage < fail_under:
        err_console.print(f"[bold red]coverage {report.coverage.coverage:.1f} % is below "
                          f"--fail-under {fail_under:g} %[/]")
        exit_with(1)
