"""``navqa datasets``: list, fetch and describe the VKG datasets."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.progress import TaskID
from rich.table import Table

from navqa.cli.console import console, progress_bar, status
from navqa.cli.inputs import vkg_name
from navqa.cli.state import state
from navqa.errors import DatasetError
from navqa.runtime.datasets import fetch_dataset, list_manifests, load_manifest
from navqa.runtime.postgres import postgres

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
def fetch_cmd(
    ctx: typer.Context,
    name: str = typer.Argument(..., help="Dataset name."),
    full: bool = typer.Option(False, "--full", help="atkis only: download BKG's DLM250 "
                              "shapefiles and load every layer into the atkis-full database "
                              "(needs internet, shp2pgsql and PostGIS); serve it with "
                              "--vkg atkis-full."),
    zip_file: str | None = typer.Option(None, "--zip", help="With --full: use this "
                                        "dlm250.gk3.shape.ebenen.zip instead of downloading it."),
) -> None:
    """Download (or copy from $NAVQA_DATASETS_MIRROR) and verify every file of NAME."""
    vkg_name(name, "NAME")
    cfg = state(ctx).config
    if full or zip_file is not None:
        _fetch_atkis_full(ctx, name, Path(zip_file) if zip_file else None)
        return
    with progress_bar(bytes_=True) as bar:
        tasks: dict[str, TaskID] = {}

        def progress(path: str, done: int, total: int | None) -> None:
            if path not in tasks:
                tasks[path] = bar.add_task(path, total=total)
            bar.update(tasks[path], completed=done)

        ds = fetch_dataset(name, cfg, progress=progress)
    console.print(f"[green]{escape(name)}[/]: {len(ds.files)} files verified in "
                  f"{escape(str(ds.root))}")
    if ds.manifest.partial:
        console.print(f"[yellow]note:[/] {escape(ds.manifest.partial_note or '')}")


@app.command("info")
def info_cmd(ctx: typer.Context, name: str = typer.Argument(..., help="Dataset name.")) -> None:
    """Show a dataset's files, their origin and checksums, and its load order."""
    m = load_manifest(vkg_name(name, "NAME"))
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


def _fetch_atkis_full(ctx: typer.Context, name: str, zip_path: Path | None) -> None:
    """``fetch atkis --full``: the full DLM250 layers into the atkis-full database."""
    if name not in ("atkis", "atkis-full"):
        raise DatasetError(f"--full and --zip only apply to the atkis dataset, not {name!r}")
    from navqa.runtime.atkis_full import load_full

    cfg = state(ctx).config
    with status("loading the full ATKIS DLM250") as update, postgres(cfg) as pg:
        report = load_full(cfg, pg, zip_path=zip_path, status=update)
    console.print(f"[green]atkis-full[/]: {len(report.layers)} DLM250 layers loaded into "
                  f"{report.database} in {report.seconds:.0f} s (zip sha256 {report.zip_sha256})")
    console.print("serve it with: navqa endpoint up --vkg atkis-full")
