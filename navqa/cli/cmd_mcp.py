"""``navqa mcp``: navqa's tools for an assistant, as an MCP server over stdio."""

from __future__ import annotations

import contextlib
from typing import Annotated

import typer

from navqa.cli.console import starting, status
from navqa.cli.vkg_options import resolve


def mcp(
    ctx: typer.Context,
    vkgs: Annotated[list[str] | None, typer.Argument(
        help="Bundled VKGs to serve (default: ./navqa.toml, else demo); the first is the "
        "default of every tool.", show_default=False)] = None,
) -> None:
    """Serve the MCP tools ask, sparql, lint, audit and describe over stdio (for an
    assistant that calls tools). Status goes to stderr; stdout is the protocol."""
    from navqa.cli.cmd_serve import require_serve_extra
    from navqa.cli.inputs import vkg_name

    for name in vkgs or ():
        vkg_name(name, param_hint="VKG")
    chosen = [resolve(ctx, name) for name in vkgs] if vkgs else [resolve(ctx)]
    require_serve_extra()
    from navqa.runtime.serve import serve_source
    from navqa.service.mcp_server import build_mcp
    from navqa.service.runtime import VkgService, build_service

    with contextlib.ExitStack() as stack:
        services: dict[str, VkgService] = {}
        for c in chosen:
            running = stack.enter_context(starting(f"preparing {c.source.name}", serve_source,
                                                   c.config, c.source))
            with status(f"loading the index of {c.source.name}"):
                svc = build_service(c.config, c.source, running.url,
                                    ontop_managed=running.ontop is not None)
            services[svc.name] = svc
        build_mcp(services).run("stdio")
