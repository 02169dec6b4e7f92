"""``navqa setup``: resolve Ontop from Maven Central, verify the lock, compile the launcher."""

from __future__ import annotations

import typer
from rich.markup import escape
from rich.table import Table

from navqa.cli.console import console, status
from navqa.cli.state import state
from navqa.runtime.ontop_setup import LOCK_PATH, ensure_ontop, newest_resolvable_version
from navqa.runtime.postgres import postgres_bindir


def setup(
    ctx: typer.Context,
    ontop_version: str | None = typer.Option(
        None, help="Ontop version to use (default: the locked one)."),
    relock: bool = typer.Option(
        False, help="Re-resolve and write navqa/runtime/ontop-lock.json for this version."),
    probe: bool = typer.Option(
        False, help="Ask Maven Central which Ontop versions resolve, newest first, and stop."),
) -> None:
    """Get everything navqa needs to start Ontop, and check PostgreSQL is installed.

    Ontop's jars come from Maven Central into the cache (~/.cache/navqa/ontop/VERSION)
    and are verified against the committed lock (coordinates + SHA-256 of every jar).
    Commands that need Ontop run this implicitly.
    """
    cfg = state(ctx).config
    if probe:
        with status("probing Maven Central for Ontop versions"):
            results = newest_resolvable_version()
        for v, ok in results:
            console.print(f"{v}: {'[green]resolves[/]' if ok else '[red]does not resolve[/]'}")
        return
    with status("checking Ontop") as update:
        inst = ensure_ontop(cfg, version=ontop_version, status=update, update_lock=relock)
    t = Table(title="navqa runtime", show_header=False)
    t.add_row("Ontop", f"{inst.version} (library from Maven Central + navqa launcher)")
    t.add_row("jars", escape(str(inst.jars_dir)))
    t.add_row("lock", escape(str(LOCK_PATH)))
    t.add_row("java", escape(inst.java))
    t.add_row("PostgreSQL", escape(str(postgres_bindir())))
    t.add_row("cache", escape(str(cfg.runtime.cache_dir)))
    console.print(t)
