"""``navqa suggest``: unmapped elements a log of questions needs, with draft mappings."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from navqa.cli.cmd_audit import load_bundle
from navqa.cli.console import err_console, status
from navqa.cli.state import state
from navqa.errors import IndexError_


class SuggestFormat(StrEnum):
    md = "md"
    json = "json"


def suggest(
    ctx: typer.Context,
    log: Annotated[Path, typer.Option(
        "--log", help="Questions (one per line, or JSONL with `question`), `navqa ask --json` "
        "traces, or Ontop query logs.", exists=True, dir_okay=False)],
    vkg: Annotated[str, typer.Option("--vkg", help="Dataset whose mappings to extend.")] = "demo",
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
    from navqa.audits.schema import introspect
    from navqa.audits.suggest import (
        ScratchVkg,
        SuggestReport,
        build_suggestions,
        compute_demand,
        read_log,
        render_suggest_json,
        render_suggest_markdown,
        validate_drafts,
    )
    from navqa.backends.embedder_st import SentenceTransformerEmbedder
    from navqa.runtime.loader import ensure_loaded
    from navqa.runtime.ontop_setup import ensure_ontop
    from navqa.runtime.postgres import postgres
    from navqa.runtime.vkg import mapping_file, xml_catalog

    cfg = state(ctx).config
    entries = read_log(log)
    bundle = load_bundle(cfg, vkg)
    with status("loading the embedder"):
        embedder = SentenceTransformerEmbedder.from_config(cfg.embedder)
    if embedder.name != bundle.manifest.embedder_model:
        raise IndexError_(f"the index of {vkg} was built with "
                          f"{bundle.manifest.embedder_model}, the configured embedder is "
                          f"{embedder.name}", hint=f"navqa index --vkg {vkg} --force")
    with status(f"linking {len(entries)} log entries against the full ontology"):
        demands = compute_demand(bundle, embedder, entries, top_k=top_k,
                                 min_score=min_score)
    from navqa.runtime.datasets import fetch_dataset

    dataset = fetch_dataset(vkg, cfg)
    with status("reading the database schema") as update, postgres(cfg) as pg:
        ensure_loaded(pg, dataset, status=update)
        with pg.connect(dataset.manifest.database) as conn:
            schema = introspect(conn)
        suggestions = build_suggestions(bundle, embedder, demands, schema,
                                        limit=limit)
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
            results = validate_drafts(scratch, drafts, status=update)
            for d, v in zip(drafts, results, strict=True):
                for s in suggestions:
                    if s.draft is d:
                        s.validation = v
    from navqa.audits.lint import vkg_prefixes

    report = SuggestReport(vkg=vkg, log=str(log), entries=len(entries), suggestions=suggestions,
                           prefixes=vkg_prefixes(bundle))
    text = render_suggest_json(report) + "\n" if fmt is SuggestFormat.json \
        else render_suggest_markdown(report)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
        valid = sum(1 for s in suggestions if s.validation and s.validation.status == "valid")
        err_console.print(f"{vkg}: {len(demands)} needed elements, {len(drafts)} drafts, "
                          f"{valid} valid → {out}")
    else:
        print(text, end="")
