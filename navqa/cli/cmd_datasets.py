"""``navqa datasets``: list, fetch and describe the VKG datasets."""

from __future__ import annotations

import typer
from rich.table import Table

from navqa.cli.console import console, progress_bar
from navqa.cli.state import state
from navqa.runtime.datasets import fetch_dataset, list_manifests, load_manifest

app = typer.Typer(help="List, fetch and describe datasets (ontology, mappings, database).",
                  no_args_is_help=True)


@app.command("list")
def list_cmd(ctx: typer.Context) -> None:
    """List the datasets navqa knows (one manifest per folder of datasets/)."""
    t = Table("name", "title", "database", "files", "state")
    for m in list_manifests():
        t.add_row(m.name, m.title, m.database, str(len(m.files)),
                  "[yellow]partial[/]" if m.partial else "complete")
    console.print(t)


@app.command("fetch")
def fetch_cmd(ctx: typer.Context, name: str = typer.Argument(..., help="Dataset name.")) -> None:
    """Download (or copy from $NAVQA_DATASETS_MIRROR) and verify every file of NAME."""
    cfg = state(ctx).config
    with progress_bar(bytes_=True) as bar:
        tasks: dict[str, int] = {}

        def progress(path: str, done: int, total: int | None) -> None:
            if path not in tasks:
                tasks[path] = bar.add_task(path, total=total)
            bar.update(tasks[path], completed=done)

        ds = fetch_dataset(name, cfg, progress=progress)
    console.print(f"[green]{name}[/]: {len(ds.files)} files verified in {ds.root}")
    if ds.manifest.partial:
        console.print(f"[yellow]note:[/] {ds.manifest.partial_note}")


@app.command("info")
def info_cmd(ctx: typer.Context, name: str = typer.Argument(..., help="Dataset name.")) -> None:
    """Show a dataset's files, their origin and checksums, and its load order."""
    m = load_manifest(name)
    console.print(f"[bold]{m.name}[/]: {m.title}")
    if m.description:
        console.print(m.description)
    if m.partial:
        console.print(f"[yellow]partial:[/] {m.partial_note}")
    t = Table("role", "path", "source", "sha256")
    for f in m.files:
        src = "repository" if f.in_repo else (f.url or "mirror only")
        t.add_row(f.role, f.path, src, (f.sha256 or "")[:16])
    console.print(t)
    console.print("load order: " + " → ".join(s.file for s in m.load))
    console.print(f"database: {m.database}; mapping served: {m.ontop.mapping}")
