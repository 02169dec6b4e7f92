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

from navqa.cli.console import console, status
from navqa.cli.state import state
from navqa.runtime.postgres import PrivateCluster
from navqa.runtime.vkg import (
    EndpointState,
    all_states,
    clear_state,
    read_state,
    serve_vkg,
    write_state,
)

app = typer.Typer(help="Start, inspect and stop SPARQL endpoints (Ontop over PostgreSQL).",
                  no_args_is_help=True)


@app.command("up")
def up(
    ctx: typer.Context,
    vkg: str = typer.Option("demo", "--vkg", help="Dataset to serve (see `navqa datasets list`)."),
    port: int | None = typer.Option(None, help="Port for Ontop (default: a free one)."),
    mapping: str | None = typer.Option(None, help="obda or r2rml (default: the manifest's)."),
    dev: bool = typer.Option(True, help="Enable /ontop/reformulate (shows the SQL of a query)."),
) -> None:
    """Start PostgreSQL and Ontop for a VKG, print the SPARQL URL, serve until Ctrl-C."""
    cfg = state(ctx).config
    with status(f"bringing up {vkg}") as update:
        cm = serve_vkg(cfg, vkg, mapping=mapping, dev=dev, port=port, reuse=False, status=update)
        running = cm.__enter__()
    try:
        assert running.ontop is not None and running.ontop.pid is not None
        write_state(cfg, EndpointState(
            name=vkg, url=running.url, pid=os.getpid(), ontop_pid=running.ontop.pid,
            port=running.ontop.port,
            mapping=str(running.ontop.spec.mapping), files_checksum=running.dataset.checksum(),
            started_at=time.time(), log_path=str(running.ontop.log_path)))
        console.print(f"[green]SPARQL endpoint[/] {running.url}")
        if dev:
            console.print(f"SQL of a query: {running.ontop.base_url}/ontop/reformulate?query=…")
        if running.dataset.manifest.partial:
            console.print(f"[yellow]partial data:[/] {running.dataset.manifest.partial_note}")
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
        clear_state(cfg, vkg)
        cm.__exit__(None, None, None)


@app.command("status")
def status_cmd(
    ctx: typer.Context,
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
) -> None:
    """List the endpoints started with `navqa endpoint up` that are still running."""
    states = all_states(state(ctx).config)
    if as_json:
        print(json.dumps([asdict(st) for st in states], indent=1))
        return
    if not states:
        console.print("no navqa endpoint is running")
        return
    t = Table("vkg", "url", "pid", "up since", "log")
    t.columns[1].overflow = "fold"
    t.columns[4].overflow = "fold"
    for st in states:
        t.add_row(st.name, st.url, str(st.pid), time.strftime("%H:%M:%S",
                  time.localtime(st.started_at)), st.log_path)
    console.print(t)


@app.command("down")
def down(
    ctx: typer.Context,
    vkg: str | None = typer.Option(None, "--vkg", help="Stop only this VKG (default: all)."),
) -> None:
    """Stop endpoints started with `navqa endpoint up`, and navqa's private PostgreSQL."""
    cfg = state(ctx).config
    states = [read_state(cfg, vkg)] if vkg else all_states(cfg)
    stopped = 0
    for st in states:
        if st is None:
            continue
        with contextlib.suppress(ProcessLookupError):
            os.kill(st.pid, signal.SIGTERM)
        for _ in range(60):
            if not st.alive():
                break
            time.sleep(0.25)
        clear_state(cfg, st.name)
        stopped += 1
        console.print(f"stopped {st.name} ({st.url})")
    if not all_states(cfg) and cfg.runtime.pg_dsn is None:
        PrivateCluster(cfg).force_stop()
    if not stopped:
        console.print("no navqa endpoint was running")
