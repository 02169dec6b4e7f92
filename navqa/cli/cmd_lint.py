"""``navqa lint``: static silent-failure analysis of SPARQL queries against one VKG."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from navqa.backends.protocols import Embedder
from navqa.cli.cmd_audit import exit_with, load_bundle
from navqa.cli.cost import MaxCostOpt
from navqa.cli.inputs import query_argument
from navqa.cli.vkg_options import (
    CatalogOpt,
    LensesOpt,
    MappingOpt,
    OntologyOpt,
    PropertiesOpt,
    VkgOpt,
    resolve,
)
from navqa.errors import InputError

if TYPE_CHECKING:
    from navqa.audits.lint import LintResult
    from navqa.config import NavqaConfig
    from navqa.model.vkg_source import VkgSource
    from navqa.offline.artifacts import IndexBundle


class LintFormat(StrEnum):
    text = "text"
    json = "json"
    sarif = "sarif"


def _queries(args: list[str]) -> list[tuple[str, str | None]]:
    """(query text, source) for each argument: a query, a file, ``-`` (stdin), or a JSONL
    file of question records (each ``sparql`` is one query, its source ``file#L<line>``).

    Raises:
        typer.BadParameter: an argument names a directory or a missing file.
        InputError: a file is not UTF-8 (with the byte offset) or not JSON lines.
    """
    out: list[tuple[str, str | None]] = []
    for arg in args:
        text, source = query_argument(arg)
        if source is None or source == "<stdin>" or Path(arg).suffix != ".jsonl":
            out.append((text, source))
            continue
        p = Path(arg)
        found = 0
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except ValueError as e:
                raise InputError(f"not a JSON line: {e}", path=p, line=n) from e
            if not isinstance(rec, dict) or "sparql" not in rec:
                continue
            if not isinstance(rec["sparql"], str):
                raise InputError(f'"sparql" must be a string, not {type(rec["sparql"]).__name__}',
                                 path=p, line=n)
            out.append((rec["sparql"], f"{arg}#L{n}"))
            found += 1
        if not found:
            raise InputError('no record has a "sparql" field: nothing to lint', path=p)
    return out


def lint(
    ctx: typer.Context,
    query: Annotated[list[str], typer.Argument(
        help="SPARQL queries: query text, .rq files, - for stdin, or .jsonl question files "
        "(their `sparql` fields).")],
    vkg: VkgOpt = None,
    ontology: OntologyOpt = None,
    mapping: MappingOpt = None,
    properties: PropertiesOpt = None,
    catalog: CatalogOpt = None,
    lenses: LensesOpt = None,
    fmt: Annotated[LintFormat, typer.Option("--format", help="Output format.")] = LintFormat.text,
    embedder: Annotated[bool, typer.Option(
        help="Rank the nearest mapped alternatives of unmapped terms with the index's "
        "embedder (loads the model); without it, by their neighbourhood in the ontology "
        "and name similarity.")] = True,
    cost: Annotated[bool, typer.Option(
        "--cost", help="Also ask the database for each query's estimated cost (Ontop's SQL, "
        "EXPLAIN without ANALYZE; starts the VKG) and report [costly-query] above "
        "--max-cost.")] = False,
    max_cost: MaxCostOpt = None,
) -> None:
    """Find silent-failure risks in SPARQL without running it: unmapped or unknown terms,
    joins whose IRI templates cannot unify, constant IRIs no template produces, FILTER
    and literal datatype mismatches, undeclared prefixes. Exits with 1 on any error."""
    from navqa.audits.lint import Linter
    from navqa.audits.lint_report import render_lint_json, render_lint_text, render_sarif

    items = _queries(query)  # bad arguments fail before the index or a model loads
    chosen = resolve(ctx, vkg, ontology, mapping, properties, catalog, lenses)
    cfg = chosen.config
    bundle = load_bundle(cfg, chosen.source)
    name = chosen.source.name

    def query_embedder() -> Embedder:
        from navqa.backends.embedder_factory import make_embedder

        return make_embedder(cfg.embedder)

    linter = Linter(bundle, embedder=query_embedder if embedder else None)
    results = [linter.lint(text, source=src) for text, src in items]
    if cost:
        _lint_cost(results, cfg, chosen.source, bundle, max_cost)
    if fmt is LintFormat.text:
        print(render_lint_text(results), end="")
    elif fmt is LintFormat.json:
        print(render_lint_json(results, vkg=name))
    else:
        from navqa.offline.artifacts import navqa_version

        print(render_sarif(results, vkg=name, version=navqa_version()))
    if any(r.errors for r in results):
        exit_with(1)


def _lint_cost(results: list[LintResult], cfg: NavqaConfig, source: VkgSource,
               bundle: IndexBundle, max_cost: float | None) -> None:
    """Add ``costly-query`` findings: serve the VKG in dev mode and estimate every query."""
    from navqa.audits.cost import lint_cost
    from navqa.cli.console import starting
    from navqa.cli.cost import guard_for
    from navqa.runtime.serve import serve_source

    with starting(f"starting {source.name}", serve_source, cfg, source, dev=True) as served:
        guard = guard_for(served, mappings=bundle.mappings, max_cost=max_cost,
                          timeout_s=cfg.runtime.query_timeout_s, config=cfg)
        for res in results:
            lint_cost(res, guard)
