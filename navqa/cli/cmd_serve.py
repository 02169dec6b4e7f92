"""``navqa serve``: the pipeline as an HTTP service (JSON API, SSE, TEXT2SPARQL, web page, MCP)."""

from __future__ import annotations

import contextlib
import os
from typing import Annotated

import typer
from rich.markup import escape

from navqa.cli.console import err_console, starting, status
from navqa.cli.inputs import endpoint_url
from navqa.cli.vkg_options import (
    CatalogOpt,
    EndpointOpt,
    LensesOpt,
    MappingOpt,
    OntologyOpt,
    PropertiesOpt,
    VkgOpt,
    resolve,
)
from navqa.config import NavqaConfig
from navqa.model.vkg_source import VkgSource

TOKEN_ENV = "NAVQA_SERVE_TOKEN"
#: Set to make ``navqa ask`` answer by itself even when a service of its VKG runs.
NO_SERVICE_ENV = "NAVQA_NO_SERVICE"


def require_serve_extra() -> None:
    """Raise a :class:`~navqa.errors.SetupError` naming what to install when the ``serve``
    extra (FastAPI, uvicorn, the MCP SDK) is missing."""
    import importlib.util

    from navqa.errors import SetupError

    missing = [m for m in ("fastapi", "uvicorn", "mcp") if importlib.util.find_spec(m) is None]
    if missing:
        raise SetupError(f"navqa serve and navqa mcp need {', '.join(missing)}: install the "
                         "serve extra (pip install -e '.[serve]'; scripts/bootstrap.sh does)")


def serve(
    ctx: typer.Context,
    vkg: VkgOpt = None,
    ontology: OntologyOpt = None,
    mapping: MappingOpt = None,
    properties: PropertiesOpt = None,
    catalog: CatalogOpt = None,
    lenses: LensesOpt = None,
    endpoint: EndpointOpt = None,
    port: Annotated[int, typer.Option(help="TCP port.", min=1, max=65535)] = 8765,
    host: Annotated[str, typer.Option(help="Address to bind; anything but loopback needs "
                                      "--token or --no-auth.")] = "127.0.0.1",
    token: Annotated[str | None, typer.Option(
        help=f"Bearer token every request must carry (default: ${TOKEN_ENV}).",
        show_default=False)] = None,
    no_auth: Annotated[bool, typer.Option("--no-auth", help="Serve a non-loopback address "
                                          "without a token (anyone who reaches it may ask).")
                       ] = False,
    cors: Annotated[list[str] | None, typer.Option(
        "--cors", help="Allow this browser origin (repeatable); CORS is off by default.")
    ] = None,
    workers: Annotated[int, typer.Option(help="Requests worked on at once.", min=1)] = 4,
    queue: Annotated[int, typer.Option(help="Requests that may wait; beyond, 503.", min=0)
                     ] = 32,
    timeout: Annotated[float, typer.Option(help="Seconds allowed per request (then 504).",
                                           min=1)] = 120.0,
    max_question: Annotated[int, typer.Option(help="Longest question, in characters.",
                                              min=1)] = 1000,
    max_body: Annotated[int, typer.Option(help="Largest request body, in bytes.", min=256)
                        ] = 65536,
    mcp: Annotated[bool, typer.Option(help="Serve MCP (streamable HTTP) at /mcp.")] = True,
) -> None:
    """Serve a VKG over HTTP until Ctrl-C: the index, embedder and LLM client load once and
    Ontop stays up. JSON API under /api, TEXT2SPARQL at /text2sparql, a web page at /, MCP
    at /mcp, OpenAPI docs at /docs. See docs/serve.md."""
    from navqa.service.settings import Limits, ServiceSettings

    token = token or os.environ.get(TOKEN_ENV) or None
    loopback = host in ("127.0.0.1", "localhost", "::1")
    if not loopback and token is None and not no_auth:
        raise typer.BadParameter(f"binding {host} exposes the service: give --token TOKEN "
                                 f"(or ${TOKEN_ENV}) or --no-auth", param_hint="--host")
    if token is not None and no_auth:
        raise typer.BadParameter("give --token or --no-auth, not both", param_hint="--no-auth")
    if endpoint is not None:
        endpoint_url(endpoint)
    from pydantic import SecretStr

    settings = ServiceSettings(
        host=host, port=port, token=SecretStr(token) if token else None,
        cors_origins=tuple(cors or ()),
        limits=Limits(max_body_bytes=max_body, max_question_chars=max_question,
                      request_timeout_s=timeout, workers=workers, queue=queue))
    require_serve_extra()
    chosen = resolve(ctx, vkg, ontology, mapping, properties, catalog, lenses, endpoint)
    cfg, source = chosen.config, chosen.source
    import uvicorn

    from navqa.runtime.serve import serve_source
    from navqa.service.app import create_app
    from navqa.service.registry import clear_service, new_record, record_service
    from navqa.service.runtime import build_service

    with starting(f"preparing {source.name}", serve_source, cfg, source) as running:
        with status(f"loading the index, embedder and LLM client of {source.name}"):
            svc = build_service(cfg, source, running.url,
                                ontop_managed=running.ontop is not None)
        app = create_app({svc.name: svc}, settings, mcp=mcp)
        shown = host if ":" not in host else f"[{host}]"
        url = f"http://{shown}:{port}"
        server = uvicorn.Server(uvicorn.Config(
            app, host=host, port=port, log_level="info" if state_verbose(ctx) else "warning",
            timeout_graceful_shutdown=5))
        local = f"http://127.0.0.1:{port}" if host in ("0.0.0.0", "127.0.0.1") else url
        path = record_service(cfg, new_record(svc.name, local, source,
                                              auth=token is not None))
        err_console.print(f"serving {escape(svc.name)} at [bold]{escape(url)}[/] "
                          f"(SPARQL: {escape(running.url)}; docs: {escape(url)}/docs)"
                          + ("" if token is None else "; bearer token required")
                          + " — Ctrl-C stops")
        try:
            server.run()
        finally:
            clear_service(path)
    if not getattr(server, "started", True):
        raise typer.Exit(1)  # uvicorn could not bind (it said why)


def state_verbose(ctx: typer.Context) -> bool:
    from navqa.cli.state import state

    with contextlib.suppress(Exception):
        return state(ctx).verbose > 0
    return False


# -- `navqa ask` through a running service ----------------------------------------------------

#: The keys of ``navqa ask --json`` (the service's answer has a few more).
ASK_JSON_KEYS = ("question", "strategy", "sparql", "result", "empty", "error", "timings",
                 "llm", "confidence", "unplaced", "alternatives", "events")


def ask_running_service(source: VkgSource, config: NavqaConfig, question: str, *,
                        strategy: str, llm: str | None, as_json: bool) -> bool:
    """Send the question to a running ``navqa serve`` of the same VKG and print what
    ``navqa ask`` prints; ``False`` when no such service runs (the caller answers itself).

    Raises:
        ServiceError: the service refused or failed the request.
        typer.Exit: the answer has an error (exit 1, as ``navqa ask``).
    """
    import json

    from rich.syntax import Syntax

    from navqa.cli.console import console
    from navqa.cli.render import confidence_lines, to_table
    from navqa.model.events_json import assessment_from_json
    from navqa.model.iri import compact
    from navqa.model.resultio import result_from_json
    from navqa.service.client import ask_service, service_prefixes
    from navqa.service.registry import find_service

    if os.environ.get(NO_SERVICE_ENV):
        return False
    rec = find_service(config, source)
    if rec is None:
        return False
    out = ask_service(rec, question, strategy=strategy, llm=llm,
                      timeout=config.runtime.query_timeout_s + 600)
    if as_json:
        print(json.dumps({k: out.get(k) for k in ASK_JSON_KEYS}, indent=1, ensure_ascii=False,
                         default=str))
        if out.get("error"):
            raise typer.Exit(1)
        return True
    err_console.print(f"[dim]answered by the navqa service at {escape(rec.url)}[/]")
    if out.get("sparql"):
        console.print(Syntax(out["sparql"], "sparql", word_wrap=True))
    assessment = assessment_from_json(out)
    prefixes = (service_prefixes(rec) if out.get("result") is not None or assessment[2]
                else {})
    if out.get("result") is not None:
        console.print(to_table(result_from_json(out["result"]), prefixes))
        if out.get("empty"):
            console.print("[yellow]The query ran and returned nothing.[/]")
    # the same compact names as a local ask prints (its pipeline's prefixes)
    for line in confidence_lines(*assessment, lambda iri: compact(iri, prefixes)):
        console.print(line)
    if out.get("error"):
        err_console.print(f"[bold red]no answer:[/] {escape(out['error'])}", soft_wrap=True)
        raise typer.Exit(1)
    return True
