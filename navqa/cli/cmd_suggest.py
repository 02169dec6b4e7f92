"""``navqa suggest``: unmapped elements a log of questions needs, with draft mappings."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from navqa.cli.cmd_audit import load_bundle
from navqa.cli.console import err_console, status
from navqa.cli.inputs import read_text_file, writable_file
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
from navqa.config import NavqaConfig
from navqa.errors import IndexError_
from navqa.model.vkg_source import VkgKind, VkgSource


class SuggestFormat(StrEnum):
    md = "md"
    json = "json"


def suggest(
    ctx: typer.Context,
    log: Annotated[Path, typer.Option(
        "--log", help="Questions (one per line, or JSONL with `question`), `navqa ask --json` "
        "traces, or Ontop query logs.", exists=True, dir_okay=False)],
    vkg: VkgOpt = None,
    ontology: OntologyOpt = None,
    mapping: MappingOpt = None,
    properties: PropertiesOpt = None,
    catalog: CatalogOpt = None,
    lenses: LensesOpt = None,
    endpoint: EndpointOpt = None,
    fmt: Annotated[SuggestFormat, typer.Option("--format", help="Report format.")] = \
        SuggestFormat.md,
    out: Annotated[Path | None, typer.Option("--out", help="Write the report here.",
                                             dir_okay=False)] = None,
    limit: Annotated[int, typer.Option(help="Draft mappings for at most this many elements "
                                       "(the most needed first).", min=1)] = 10,
    validate: Annotated[bool, typer.Option(
        help="Load each draft in Ontop and run a test query on a scratch endpoint (a temporary "
        "copy of the mapping; the mapping file is never written).")] = True,
    top_k: Annotated[int, typer.Option(help="An element is needed when it is among the top-k "
                                       "linked classes or properties of a question.")] = 3,
    min_score: Annotated[float, typer.Option(help="…and its linking score is at least this.")]
    = 0.4,
) -> None:
    """Find the unmapped ontology elements the logged questions needed (linking them against
    the full ontology), rank them by demand, propose candidate tables and columns, and draft
    a mapping assertion for each — validated by Ontop on a scratch endpoint."""
    from navqa.audits.suggest import (
        SuggestReport,
        compute_demand,
        read_log,
        render_suggest_json,
        render_suggest_markdown,
    )
    from navqa.backends.embedder_factory import make_embedder

    if out is not None:
        writable_file(out, "--out")
    read_text_file(log, what="log file")  # not UTF-8: say where, before anything loads
    chosen = resolve(ctx, vkg, ontology, mapping, properties, catalog, lenses, endpoint)
    source, cfg = chosen.source, chosen.config
    name = source.name
    if source.kind is not VkgKind.bundled and (source.database is None
                                                or not source.database.is_postgresql):
        raise typer.BadParameter(f"{name}: navqa suggest reads the schema of your PostgreSQL "
                                 "database (read-only); give -p/--properties FILE with a "
                                 "jdbc:postgresql: URL", param_hint="-p/--properties")
    entries = read_log(log)
    bundle = load_bundle(cfg, source)
    with status("loading the embedder"):
        embedder = make_embedder(cfg.embedder)
    if embedder.name != bundle.manifest.embedder_model:
        raise IndexError_(f"the index of {name} was built with "
                          f"{bundle.manifest.embedder_model}, the configured embedder is "
                          f"{embedder.name}", hint=f"navqa index {source.flags()} --force")
    with status(f"linking {len(entries)} log entries against the full ontology"):
        demands = compute_demand(bundle, embedder, entries, top_k=top_k,
                                 min_score=min_score)
    if source.kind is VkgKind.bundled:
        suggestions, drafts = _bundled(cfg, source, bundle, embedder, demands, limit=limit,
                                       validate=validate)
    else:
        suggestions, drafts = _own(cfg, source, bundle, embedder, demands, limit=limit,
                                   validate=validate)
    from navqa.audits.lint import vkg_prefixes

    report = SuggestReport(vkg=name, log=str(log), entries=len(entries), suggestions=suggestions,
                           prefixes=vkg_prefixes(bundle))
    text = render_suggest_json(report) + "\n" if fmt is SuggestFormat.json \
        else render_suggest_markdown(report)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        valid = sum(1 for s in suggestions if s.validation and s.validation.status == "valid")
        err_console.print(f"{escape(name)}: {len(demands)} needed elements, {len(drafts)} drafts, "
                          f"{valid} valid → {escape(str(out))}")
    else:
        print(text, end="")


def _attach(suggestions: list[Any], drafts: list[Any], results: list[Any]) -> None:
    for d, v in zip(drafts, results, strict=True):
        for s in suggestions:
            if s.draft is d:
                s.validation = v


def _bundled(cfg: NavqaConfig, source: VkgSource, bundle: Any, embedder: Any, demands: Any, *,
             limit: int, validate: bool) -> tuple[list[Any], list[Any]]:
    """Schema and validation of a bundled VKG: navqa's own PostgreSQL, loaded as needed."""
    from navqa.audits.schema import introspect
    from navqa.audits.suggest import ScratchVkg, build_suggestions, validate_drafts
    from navqa.runtime.datasets import fetch_dataset
    from navqa.runtime.loader import ensure_loaded
    from navqa.runtime.ontop_setup import ensure_ontop
    from navqa.runtime.postgres import postgres
    from navqa.runtime.vkg import mapping_file, xml_catalog

    dataset = fetch_dataset(source.name, cfg)
    with status("reading the database schema") as update, postgres(cfg) as pg:
        ensure_loaded(pg, dataset, status=update)
        with pg.connect(dataset.manifest.database) as conn:
            schema = introspect(conn)
        suggestions = build_suggestions(bundle, embedder, demands, schema, limit=limit)
        drafts = [s.draft for s in suggestions if s.draft is not None]
        if validate and drafts:
            scratch = ScratchVkg(
                install=ensure_ontop(cfg, status=update),
                ontology=dataset.path("ontology"),
                mapping=mapping_file(dataset, "obda"),
                jdbc_url=pg.jdbc_url(dataset.manifest.database),
                user=pg.user, password=pg.password,
                properties=dict(dataset.manifest.ontop.properties),
                catalog=xml_catalog(cfg, dataset),
                java_heap=cfg.runtime.java_heap,
                start_timeout=cfg.runtime.ontop_start_timeout_s,
            )
            _attach(suggestions, drafts, validate_drafts(scratch, drafts, status=update))
    return suggestions, drafts


def _own(cfg: NavqaConfig, source: VkgSource, bundle: Any, embedder: Any, demands: Any, *,
         limit: int, validate: bool) -> tuple[list[Any], list[Any]]:
    """Schema and validation of the user's VKG, over read-only sessions only: the schema
    through a read-only psycopg session with a statement timeout, the drafts with Ontop's
    ``validate`` and a scratch endpoint whose JDBC sessions are read-only too."""
    import psycopg

    from navqa.audits.schema import introspect
    from navqa.audits.suggest import ScratchVkg, build_suggestions, validate_drafts
    from navqa.config import redact
    from navqa.errors import PostgresError
    from navqa.runtime.jdbc_drivers import driver_jars
    from navqa.runtime.ontop_setup import ensure_ontop
    from navqa.runtime.project import libpq_conninfo, read_only_jdbc_url, read_only_properties

    db = source.database
    assert db is not None
    timeout = cfg.runtime.query_timeout_s
    secret = [db.password.get_secret_value()] if db.password is not None else []
    with status("reading the database schema (read-only)") as update:
        try:
            with psycopg.connect(**libpq_conninfo(db, timeout)) as conn:
                schema = introspect(conn)
        except psycopg.Error as e:
            msg = redact(" ".join(str(e).split()), secret)
            raise PostgresError(f"cannot read the schema of {db.jdbc_url}: {msg}",
                                hint="check jdbc.url, jdbc.user and jdbc.password") from e
        suggestions = build_suggestions(bundle, embedder, demands, schema, limit=limit)
        drafts = [s.draft for s in suggestions if s.draft is not None]
        if validate and drafts:
            scratch = ScratchVkg(
                install=ensure_ontop(cfg, status=update),
                ontology=source.ontology, mapping=source.mapping,
                jdbc_url=read_only_jdbc_url(db.jdbc_url, timeout), user=db.user or "",
                password=secret[0] if secret else None,
                properties={"jdbc.driver": db.driver, **source.ontop_properties,
                            **read_only_properties(db.jdbc_url)},
                catalog=source.catalog, java_heap=cfg.runtime.java_heap,
                start_timeout=cfg.runtime.ontop_start_timeout_s,
                driver_jars=driver_jars(cfg.runtime.cache_dir, db),
            )
            _attach(suggestions, drafts, validate_drafts(scratch, drafts, status=update))
    return suggestions, drafts
