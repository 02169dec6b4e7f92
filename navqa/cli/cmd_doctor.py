"""``navqa doctor``: every external program and service navqa uses, found or missing."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

import typer
from rich.markup import escape

from navqa.cli.console import console
from navqa.cli.state import state
from navqa.runtime.doctor import Check, CheckStatus, DoctorReport, run_checks

_STYLE = {CheckStatus.FOUND: "green", CheckStatus.MISSING: "red", CheckStatus.BROKEN: "red"}


def doctor(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print the checks as JSON."),
) -> None:
    """Check java, javac, mvn, PostgreSQL, psql, PostGIS, Ontop, the embedding model, Docker.

    Says which encoder runs the embedding model (numpy, or sentence-transformers: the
    optional st extra, pip install 'navqa[st]'). Starts nothing and downloads nothing.
    Exits 1 when something required is missing or broken, naming the package that
    provides it.
    """
    report = run_checks(state(ctx).config)
    if as_json:
        print(json.dumps(report_json(report), indent=1))
    else:
        _render(report)
    if not report.ok:
        raise typer.Exit(1)


def report_json(report: DoctorReport) -> dict[str, Any]:
    """The report as JSON-ready data: ``{"ok": bool, "checks": [...]}``."""
    def one(c: Check) -> dict[str, Any]:
        d = asdict(c)
        d["status"] = c.status.value
        d["provider"] = c.provider.value
        return d

    return {"ok": report.ok, "checks": [one(c) for c in report.checks]}


def _render(report: DoctorReport) -> None:
    width = max(len(c.name) for c in report.checks)
    for c in report.checks:
        optional = not c.required and not c.ok
        style = "yellow" if optional else _STYLE[c.status]
        where = ", ".join(x for x in (c.location, c.detail) if x)
        package = f"{c.provider.value}: {c.package}" if c.package else c.provider.value
        console.print(f"[{style}]{c.status.value:<7}[/] {escape(c.name):<{width}}  "
                      f"{escape(where)}  [dim]({escape(package)})[/]", soft_wrap=True)
    problems = [c for c in report.checks if not c.ok]
    if problems:
        console.print()
    for c in problems:
        label = "[yellow]optional[/]" if not c.required else f"[red]{c.status.value}[/]"
        console.print(f"{label} {escape(c.name)}: {escape(c.hint)} [dim]({escape(c.purpose)})[/]",
                      soft_wrap=True)
    failed = report.failed_required
    if failed:
        console.print(f"[bold red]{len(failed)} required check(s) failed:[/] "
                      + ", ".join(escape(c.name) for c in failed), soft_wrap=True)
    else:
        console.print("[green]everything navqa needs is in place[/]")
