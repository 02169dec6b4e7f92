"""``navqa endpoint``: serve a VKG until Ctrl-C, show what runs, stop it."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import threading
import time
from dataclasses import asdict

import typer
from rich.table import Table

from navqa.cli.console import console, err_console, status
from navqa.cli.state import state
from navqa.cli.vkg_options import (
    CatalogOpt,
    LensesOpt,
    MappingOpt,
    OntologyOpt,
    PropertiesOpt,
    VkgOpt,
    resolve,
)
from navqa.runtime.postgres import PrivateCluster
from navqa.runtime.serve import record_source_endpoint, serve_source
from navqa.runtime.vkg import clear_state, endpoint_states

app = typer.Typer(help="Start, inspect and stop SPARQL endpoints (Ontop over PostgreSQL).",
                  no_args_is_help=True)


@app.command("up")
def up(
    ctx: typer.Context,
    vkg: VkgOpt = None,
    ontology: OntologyOpt = None,
    mapping: MappingOpt = None,
    properties: PropertiesOpt = None,
    catalog: CatalogOpt = None,
    lenses: LensesOpt = None,
    port: int | None = typer.Option(None, help="Port for Ontop (default: a free one).",
                                    min=1, max=65535),
    dev: bool = typer.Option(True, help="Enable /ontop/reformulate (shows the SQL of a query)."),
) -> None:
    """Start PostgreSQL and Ontop for a VKG, print the SPARQL URL, serve until Ctrl-C."""
    chosen = resolve(ctx, vkg, ontology, mapping, properties, catalog, lenses)
    cfg, name = chosen.config, chosen.source.name
    with status(f"bringing up {name}") as update:
        cm = serve_source(cfg, chosen.source, dev=dev, port=port, reuse=False, status=update)
        running = cm.__enter__()
    recorded = None
    try:
        assert running.ontop is not None and running.ontop.pid is not None
        others = endpoint_states(cfg, name)
        recorded = record_source_endpoint(cfg, running)
        console.print(f"[green]SPARQL endpoint[/] {running.url}")
        for other in others:
            console.print(f"[yellow]note:[/] {name} is also served at {other.url} "
                          f"(pid {other.pid}); `navqa endpoint down --port {other.port}` "
                          "stops that one")
        if dev:
            console.print(f"SQL of a query: {running.ontop.base_url}/ontop/reformulate?query=…")
        if running.partial_note:
            console.print(f"[yellow]partial data:[/] {running.partial_note}")
        console.print("serving; press Ctrl-C to stop")
        stop = threading.Event()
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
        # Ctrl-C stops it even when started from a script's background job, which
        # inherits SIGINT as ignored
        signal.signal(signal.SIGINT, signal.default_int_handler)
        while not stop.is_set():
            if running.ontop.proc is not None and running.ontop.proc.poll() is not None:
                console.print(f"[red]Ontop exited[/]; log: {running.ontop.log_path}")
                raise typer.Exit(1)
            stop.wait(1.0)
    except KeyboardInterrupt:
        console.print("stopping")
    finally:
        if recorded is not None:
            clear_state(cfg, recorded)
        cm.__exit__(None, None, None)


@app.command("status")
def status_cmd(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List the endpoints started with `navqa endpoint up` that are still running, and
    probe the database behind each (exit 1 when one is unreachable)."""
    states = endpoint_states(state(ctx).config)
    probed = [(st, st.database_reachable()) for st in states]
    if as_json:
        print(json.dumps([asdict(st) | {"database": str(st.database), "database_reachable": ok}
                          for st, ok in probed], indent=1))
    elif not states:
        console.print("no navqa endpoint is running")
    else:
        t = Table("vkg", "url", "pid", "up since", "database", "log")
        t.columns[1].overflow = "fold"
        t.columns[4].overflow = "fold"
        t.columns[5].overflow = "fold"
        for st, ok in probed:
            db = f"{st.database} " + ("[green]ok[/]" if ok else "[red]unreachable[/]")
            t.add_row(st.name, st.url, str(st.pid), time.strftime(
                "%H:%M:%S", time.localtime(st.started_at)), db, st.log_path)
        console.print(t)
    dead = [st for st, ok in probed if not ok]
    for st in dead:
        fix = (f"any navqa command on {st.name} starts navqa's PostgreSQL again under it, "
               "or stop it with" if st.db_cluster is not None else
               "check that server (NAVQA_PG_DSN), or stop the endpoint with")
        err_console.print(f"[bold red]error:[/] the database behind {st.name} ({st.url}), "
                          f"{st.database}, is unreachable: its queries fail. Hint: {fix} "
                          f"`navqa endpoint down --port {st.port}`", soft_wrap=True)
    if dead:
        raise typer.Exit(1)


@app.command("down")
def down(
    ctx: typer.Context,
    vkg: str | None = typer.Option(None, "--vkg", help="Stop only this VKG (default: all)."),
    port: int | None = typer.Option(None, "--port", help="Stop only the endpoint on this port."),
) -> None:
    """Stop endpoints started with `navqa endpoint up`, then navqa's private PostgreSQL
    unless another navqa process still uses it."""
    cfg = state(ctx).config
    stopped = 0
    for st in endpoint_states(cfg, vkg, port):
        with contextlib.suppress(ProcessLookupError):
            os.kill(st.pid, signal.SIGTERM)
        for _ in range(60):
            if not st.alive():
                break
            time.sleep(0.25)
        clear_state(cfg, st)
        stopped += 1
        console.print(f"stopped {st.name} ({st.url})")
    if not stopped:
        console.print("no navqa endpoint was running")
    if cfg.runtime.pg_dsn is None:
        users = PrivateCluster(cfg).stop_unused()
        if users:
            console.print("navqa's PostgreSQL keeps running: still used by pid "
                          + ", ".join(map(str, users)))
