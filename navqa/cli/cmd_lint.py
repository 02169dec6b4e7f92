"""``navqa lint``: static silent-failure analysis of SPARQL queries against one VKG."""

from __future__ import annotations

import json
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from navqa.backends.protocols import Embedder
from navqa.cli.cmd_audit import exit_with, load_bundle
from navqa.cli.state import state
from navqa.errors import InputError


class LintFormat(StrEnum):
    text = "text"
    json = "json"
    sarif = "sarif"


def _queries(args: list[str]) -> list[tuple[str, str | None]]:
    """(query text, source) for each argument: a query, a file, ``-`` (stdin), or a JSONL
    file of question records (each ``sparql`` is one query, its source ``file#L<line>``)."""
    import sys

    out: list[tuple[str, str | None]] = []
    for arg in args:
        if arg == "-":
            out.append((sys.stdin.read(), "<stdin>"))
            continue
        p = Path(arg)
        is_file = len(arg) < 4096 and "\n" not in arg and p.is_file()
        if not is_file:
            out.append((arg, None))
            continue
        text = p.read_text(encoding="utf-8")
        if p.suffix == ".jsonl":
            for n, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    rec = json.loads(line)
                except ValueError as e:
                    raise InputError(f"not a JSON line: {e}", path=p, line=n) from e
                if isinstance(rec, dict) and isinstance(rec.get("sparql"), str):
                    out.append((rec["sparql"], f"{arg}#L{n}"))
            continue
        out.append((text, arg))
    return out


def lint(
    ctx: typer.Context,
    query: Annotated[list[str], typer.Argument(
        help="SPARQL queries: query text, .rq files, - for stdin, or .jsonl question files "
        "(their `sparql` fields).")],
    vkg: Annotated[str, typer.Option("--vkg", help="Dataset whose ontology and mappings to "
                                     "check against.")] = "demo",
    fmt: Annotated[LintFormat, typer.Option("--format", help="Output format.")] = LintFormat.text,
    embedder: Annotated[bool, typer.Option(
        help="Rank the nearest mapped alternatives of unmapped terms with the index's "
        "embedder (loads the model); without it, by their neighbourhood in the ontology "
        "and name similarity.")] = True,
) -> None:
    """Find silent-failure risks in SPARQL without running it: unmapped or unknown terms,
    joins whose IRI templates cannot unify, constant IRIs no template produces, FILTER
    and literal datatype mismatches, undeclared prefixes. Exits with 1 on any error."""
    from navqa.audits.lint import Linter
    from navqa.audits.lint_report import render_lint_json, render_lint_text, render_sarif

    cfg = state(ctx).config
    items = _queries(query)
    bundle = load_bundle(cfg, vkg)

    def make_embedder() -> Embedder:
        from navqa.backends.embedder_st import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder.from_config(cfg.embedder)

    linter = Linter(bundle, embedder=make_embedder if embedder else None)
    results = [linter.lint(text, source=src) for text, src in items]
    if fmt is LintFormat.text:
        print(render_lint_text(results), end="")
    elif fmt is LintFormat.json:
        print(render_lint_json(results, vkg=vkg))
    else:
        from navqa.offline.artifacts import navqa_version

        print(render_sarif(results, vkg=vkg, version=navqa_version()))
    if any(r.errors for r in results):
        exit_with(1)
