"""``navqa init``: write a ``navqa.toml`` for the VKG in a folder, from what is there."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from navqa.cli.console import console
from navqa.cli.vkg_options import (
    CatalogOpt,
    EndpointOpt,
    LensesOpt,
    MappingOpt,
    OntologyOpt,
    PropertiesOpt,
)


def init(
    folder: Annotated[Path, typer.Argument(
        help="The VKG's folder (default: the current one).", file_okay=False)] = Path("."),
    ontology: OntologyOpt = None,
    mapping: MappingOpt = None,
    properties: PropertiesOpt = None,
    catalog: CatalogOpt = None,
    lenses: LensesOpt = None,
    endpoint: EndpointOpt = None,
    name: Annotated[str | None, typer.Option(
        "--name", help="Project name (default: the folder's name).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing navqa.toml.")]
    = False,
) -> None:
    """Find an Ontop VKG's files in FOLDER (.properties, .obda/R2RML, .owl/.ttl, XML
    catalog, lenses, .jsonl question files) and write FOLDER/navqa.toml; afterwards
    `navqa ask "…"`, `navqa audit` and `navqa lint q.rq` need no flags there."""
    from navqa.errors import ConfigError, InputError
    from navqa.runtime.project import PROJECT_FILE, discover, render_project, user_source
    from navqa.runtime.project import VkgFlags as Flags

    if not folder.is_dir():
        raise typer.BadParameter(f"{folder} is not a folder", param_hint="FOLDER")
    target = folder / PROJECT_FILE
    if target.exists() and not force:
        raise typer.BadParameter(f"{target} exists; pass --force to overwrite it",
                                 param_hint="FOLDER")
    try:
        found = discover(folder, skip=(target,))
    except ConfigError as e:
        raise typer.BadParameter(e.message, param_hint="FOLDER") from e
    onto = ontology or found.ontology
    mapp = mapping or found.mapping
    props = properties if properties is not None else (None if endpoint else found.properties)
    if onto is None or mapp is None:
        missing = " and ".join(w for w, v in (("an ontology (-t)", onto), ("a mapping (-m)", mapp))
                               if v is None)
        raise typer.BadParameter(f"found no {missing} in {folder}", param_hint="FOLDER")
    if props is None and endpoint is None:
        raise typer.BadParameter(f"found no Ontop .properties in {folder}; give -p FILE, or "
                                 "--endpoint URL of your running endpoint", param_hint="FOLDER")
    cat = catalog or found.catalog
    lens = lenses or found.lenses
    try:  # check it all reads (keys of the properties file, files present) before writing
        src = user_source(Flags(ontology=onto, mapping=mapp, properties=props, catalog=cat,
                                lenses=lens, endpoint=endpoint),
                          name=name or folder.resolve().name)
    except (ConfigError, InputError) as e:
        raise typer.BadParameter(str(e)) from e
    target.write_text(render_project(folder, name=src.name, ontology=onto, mapping=mapp,
                                     properties=props, endpoint=endpoint, catalog=cat,
                                     lenses=lens, questions=found.questions),
                      encoding="utf-8")
    console.print(f"[green]wrote[/] {escape(str(target))} for {escape(src.name)}:")
    for role, p in (("ontology", onto), ("mapping", mapp), ("properties", props),
                    ("XML catalog", cat), ("lenses", lens)):
        if p is not None:
            console.print(f"  {role:<11} {escape(str(p))}")
    if endpoint:
        console.print(f"  endpoint    {escape(endpoint)}")
    if src.database is not None:
        console.print(f"  database    {escape(src.database.jdbc_url)} as "
                      f"{escape(src.database.user or '?')}")
    for q in found.questions:
        console.print(f"  questions   {escape(str(q))}")
    console.print('next: navqa audit · navqa ask "…" · navqa lint query.rq')
