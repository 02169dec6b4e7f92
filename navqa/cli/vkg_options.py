"""The options that choose a VKG, shared by every command: ``--vkg`` or Ontop's own flags.

``--vkg NAME`` picks a bundled VKG. ``-t/--ontology``, ``-m/--mapping``,
``-p/--properties``, ``-x/--xml-catalog`` and ``-l/--lenses`` mean what they mean to
Ontop's CLI; ``--endpoint URL`` uses a SPARQL endpoint that is already running. With none
of them, ``navqa.toml`` (searched upward from the working directory) is used, else the
bundled ``demo``. :func:`resolve` turns them into a
:class:`~navqa.model.vkg_source.VkgSource` (see :mod:`navqa.runtime.project`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer

from navqa.cli.state import state
from navqa.config import NavqaConfig
from navqa.model.vkg_source import VkgSource

_PANEL = "VKG (bundled, your own files, or a running endpoint)"

VkgOpt = Annotated[str | None, typer.Option(
    "--vkg", help="A bundled VKG (see `navqa datasets list`); default: ./navqa.toml, else "
    "demo.", rich_help_panel=_PANEL)]
OntologyOpt = Annotated[Path | None, typer.Option(
    "-t", "--ontology", help="Your OWL ontology (as Ontop's -t).", dir_okay=False,
    rich_help_panel=_PANEL)]
MappingOpt = Annotated[Path | None, typer.Option(
    "-m", "--mapping", help="Your mapping, .obda or R2RML (as Ontop's -m). With --vkg: obda "
    "or r2rml, the bundled mapping to serve.", dir_okay=False, rich_help_panel=_PANEL)]
PropertiesOpt = Annotated[Path | None, typer.Option(
    "-p", "--properties", help="Ontop .properties: jdbc.url, jdbc.user, jdbc.password (or "
    "$ONTOP_DB_PASSWORD), jdbc.driver, ontop.* settings.", dir_okay=False,
    rich_help_panel=_PANEL)]
CatalogOpt = Annotated[Path | None, typer.Option(
    "-x", "--xml-catalog", "--catalog", help="XML catalog resolving owl:imports (as Ontop's "
    "-x).", dir_okay=False, rich_help_panel=_PANEL)]
LensesOpt = Annotated[Path | None, typer.Option(
    "-l", "--lenses", help="Ontop lenses file (as Ontop's -l).", dir_okay=False,
    rich_help_panel=_PANEL)]
EndpointOpt = Annotated[str | None, typer.Option(
    "--endpoint", help="A running SPARQL endpoint (your Ontop, in Docker or not); give -t/-m "
    "for what navqa reads offline.", rich_help_panel=_PANEL)]

#: ``--mapping`` values that choose a bundled VKG's mapping rather than name a file.
BUNDLED_MAPPINGS = ("obda", "r2rml")


@dataclass(frozen=True)
class ChosenVkg:
    """The VKG a command works on, and the configuration with its project settings."""

    source: VkgSource
    config: NavqaConfig


def resolve(
    ctx: typer.Context,
    vkg: str | None = None,
    ontology: Path | None = None,
    mapping: Path | None = None,
    properties: Path | None = None,
    catalog: Path | None = None,
    lenses: Path | None = None,
    endpoint: str | None = None,
) -> ChosenVkg:
    """The VKG chosen by the shared options (see the module docstring).

    Raises:
        typer.BadParameter: an unknown ``--vkg`` name or contradictory options (exit 2).
        ConfigError, InputError: see :func:`navqa.runtime.project.resolve_project`.
    """
    from navqa.errors import ConfigError, DatasetError, InputError
    from navqa.runtime.project import VkgFlags, resolve_project

    choice = None
    if mapping is not None and str(mapping) in BUNDLED_MAPPINGS and not mapping.exists():
        choice, mapping = str(mapping), None
    if vkg is not None:
        from navqa.cli.inputs import vkg_name

        vkg_name(vkg)
    if vkg is not None and any(v is not None for v in (ontology, mapping, properties, catalog,
                                                       lenses)):
        raise typer.BadParameter("--vkg NAME cannot be combined with -t/-m/-p/-x/-l",
                                 param_hint="--vkg")
    flags = VkgFlags(vkg=vkg, ontology=ontology, mapping=mapping, properties=properties,
                     catalog=catalog, lenses=lenses, endpoint=endpoint, mapping_choice=choice)
    cfg = state(ctx).config
    try:
        project = resolve_project(cfg, flags)
    except DatasetError:
        raise  # a download or checksum failure, not a usage error
    except (ConfigError, InputError) as e:
        raise typer.BadParameter(str(e)) from e
    return ChosenVkg(source=project.source, config=project.apply(cfg))
