"""The ASGI app of ``navqa serve``: JSON API, Server-Sent Events, TEXT2SPARQL, web page, MCP.

:func:`create_app` takes VKGs that are already loaded (:class:`~navqa.service.runtime.VkgService`)
and the :class:`~navqa.service.settings.ServiceSettings`; it starts nothing itself. Every
blocking step (the pipeline, lint, SPARQL) runs on the bounded
:class:`~navqa.service.pool.WorkerPool` with the request timeout. Errors answer JSON
``{"detail", "error_kind"}`` with a status that says whose fault it is: 4xx for the
request, 502/504 for Ontop, 503 when every worker is busy.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import json
import string
from collections.abc import AsyncIterator, Callable, Mapping
from importlib import resources
from typing import Annotated, Any, TypeVar

from fastapi import FastAPI, Query, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict

from navqa.errors import (
    ConfigError,
    EndpointError,
    EndpointTimeoutError,
    InputError,
    NavqaError,
    QueryCheckError,
)
from navqa.service import runtime
from navqa.service.guard import Guard
from navqa.service.pool import PoolFull, WorkerPool, WorkTimeout
from navqa.service.runtime import LlmChoice, VkgService
from navqa.service.settings import ServiceSettings

T = TypeVar("T")


class AskRequest(BaseModel):
    """``POST /api/ask``."""

    model_config = ConfigDict(extra="forbid")

    question: str
    strategy: str = "navqa"
    llm: LlmChoice | None = None
    vkg: str | None = None


class QueryRequest(BaseModel):
    """``POST /api/sparql`` and ``POST /api/lint``."""

    model_config = ConfigDict(extra="forbid")

    query: str
    vkg: str | None = None


class Text2SparqlResponse(BaseModel):
    """The TEXT2SPARQL challenge's response model (its client's ``ResponseMessage``)."""

    dataset: str
    question: str
    query: str


class RequestRefused(Exception):
    """A request the service refuses before doing any work (status and message)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


def status_of(e: NavqaError) -> int:
    """The HTTP status for a navqa error: whose fault it is."""
    if isinstance(e, EndpointTimeoutError):
        return 504
    if isinstance(e, EndpointError):
        return 502
    if isinstance(e, QueryCheckError):
        return 400
    if isinstance(e, ConfigError | InputError):
        return 422
    return 500


def error_body(e: BaseException) -> dict[str, Any]:
    if isinstance(e, NavqaError):
        return {"detail": str(e), "error_kind": type(e).__name__}
    if isinstance(e, RequestRefused):
        return {"detail": e.detail, "error_kind": "RequestRefused"}
    if isinstance(e, PoolFull):
        return {"detail": "every worker is busy; try again shortly", "error_kind": "Busy"}
    if isinstance(e, WorkTimeout):
        return {"detail": "the request took longer than the service's timeout",
                "error_kind": "Timeout"}
    return {"detail": "internal error", "error_kind": "InternalError"}


def _asset(name: str) -> str:
    return resources.files("navqa.service").joinpath(name).read_text(encoding="utf-8")


def create_app(services: Mapping[str, VkgService], settings: ServiceSettings, *,
               mcp: bool = True) -> FastAPI:
    """The app serving ``services`` (the first is the default VKG).

    Args:
        services: Loaded VKGs by name.
        settings: Host, token, CORS and limits.
        mcp: Mount the MCP server (streamable HTTP) at ``/mcp``.
    """
    if not services:
        raise ValueError("no VKG to serve")
    limits = settings.limits
    default = next(iter(services))
    pool = WorkerPool(limits.workers, limits.queue)
    mcp_server = None
    if mcp:
        from navqa.service.mcp_server import build_mcp

        mcp_server = build_mcp(services)
        mcp_app = mcp_server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True,
            max_request_body_size=limits.max_body_bytes, host=settings.host)

    @contextlib.asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        try:
            if mcp_server is not None:
                async with mcp_server.session_manager.run():
                    yield
            else:
                yield
        finally:
            pool.shutdown()

    app = FastAPI(title="navqa", version=_version(), lifespan=lifespan,
                  description="Questions, SPARQL, lint and audits over Virtual Knowledge "
                  "Graphs. See docs/serve.md.")

    def service(name: str | None) -> VkgService:
        if name is None:
            return services[default]
        if name not in services:
            raise RequestRefused(404, f"unknown VKG {name!r}; this service has: "
                                 f"{', '.join(services)}")
        return services[name]

    def check_question(q: str) -> str:
        if not q.strip():
            raise RequestRefused(422, "the question is empty")
        if len(q) > limits.max_question_chars:
            raise RequestRefused(422, f"the question is over {limits.max_question_chars} "
                                 "characters")
        return q

    def check_query(q: str) -> str:
        if not q.strip():
            raise RequestRefused(422, "the query is empty")
        if len(q) > limits.max_query_chars:
            raise RequestRefused(422, f"the query is over {limits.max_query_chars} characters")
        return q

    async def work(fn: Callable[[], T]) -> T:
        return await pool.run(fn, timeout=limits.request_timeout_s)

    @app.exception_handler(NavqaError)
    async def _navqa_error(_r: Request, e: NavqaError) -> JSONResponse:
        return JSONResponse(error_body(e), status_code=status_of(e))

    @app.exception_handler(RequestRefused)
    async def _refused(_r: Request, e: RequestRefused) -> JSONResponse:
        return JSONResponse(error_body(e), status_code=e.status)

    @app.exception_handler(PoolFull)
    async def _busy(_r: Request, e: PoolFull) -> JSONResponse:
        return JSONResponse(error_body(e), status_code=503, headers={"Retry-After": "1"})

    @app.exception_handler(WorkTimeout)
    async def _timeout(_r: Request, e: WorkTimeout) -> JSONResponse:
        return JSONResponse(error_body(e), status_code=504)

    # -- JSON API ---------------------------------------------------------------------------

    @app.get("/api/health", tags=["api"])
    async def health() -> dict[str, Any]:
        """Liveness: the VKGs served (answers without a token)."""
        return {"status": "ok", "version": _version(), "vkgs": list(services)}

    @app.get("/api/vkgs", tags=["api"])
    async def vkgs() -> list[dict[str, Any]]:
        """The VKGs this service answers for."""
        return [s.describe_json() for s in services.values()]

    @app.post("/api/ask", tags=["api"])
    async def ask(req: AskRequest) -> dict[str, Any]:
        """Answer a question: the answer, SPARQL, result (SPARQL JSON), confidence, events."""
        svc = service(req.vkg)
        q = check_question(req.question)
        return await work(lambda: runtime.ask(svc, q, strategy=req.strategy, llm=req.llm))

    @app.get("/api/ask/stream", tags=["api"])
    async def ask_stream(question: str, strategy: str = "navqa", llm: LlmChoice | None = None,
                         vkg: str | None = None) -> StreamingResponse:
        """The same as ``POST /api/ask``, as Server-Sent Events while they happen:
        ``step`` (one per pipeline event, in order), ``lint``, ``triage`` (empty result),
        then ``answer`` — or ``error``."""
        svc = service(vkg)
        q = check_question(question)
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[tuple[str, dict[str, Any]]] = asyncio.Queue()

        def sink(kind: str, data: dict[str, Any]) -> None:
            loop.call_soon_threadsafe(queue.put_nowait, (kind, data))

        def job() -> None:
            try:
                out = runtime.ask(svc, q, strategy=strategy, llm=llm,
                                  sink=lambda k, d: sink("step" if k == "event" else k, d))
                sink("answer", out)
            except NavqaError as e:
                sink("error", {**error_body(e), "status": status_of(e)})
            except Exception as e:  # noqa: BLE001 - reported to the client, never hidden
                sink("error", {**error_body(e), "status": 500})
            finally:
                sink("end", {})

        pool.submit(job)  # PoolFull → 503 before the stream starts

        async def events() -> AsyncIterator[str]:
            deadline = loop.time() + limits.request_timeout_s
            n = 0
            while True:
                try:
                    kind, data = await asyncio.wait_for(queue.get(), deadline - loop.time())
                except TimeoutError:
                    kind, data = "error", {**error_body(WorkTimeout()), "status": 504}
                    yield f"id: {n}\nevent: {kind}\ndata: {json.dumps(data)}\n\n"
                    return
                if kind == "end":
                    return
                yield (f"id: {n}\nevent: {kind}\n"
                       f"data: {json.dumps(data, ensure_ascii=False, default=str)}\n\n")
                n += 1

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache",
                                          "X-Accel-Buffering": "no"})

    @app.post("/api/lint", tags=["api"])
    async def lint(req: QueryRequest) -> dict[str, Any]:
        """Silent-failure risks of a SPARQL query, with positions (never runs it)."""
        svc = service(req.vkg)
        q = check_query(req.query)
        return await work(lambda: runtime.lint_json(svc, q))

    @app.get("/api/audit", tags=["api"])
    async def audit(vkg: str | None = None) -> dict[str, Any]:
        """Mapping coverage, unmapped elements by centrality, findings (``navqa audit``)."""
        return service(vkg).audit.as_dict()

    @app.post("/api/sparql", tags=["api"])
    async def sparql(req: QueryRequest) -> dict[str, Any]:
        """Run a read-only query: SPARQL JSON results (UPDATE is refused with 400)."""
        svc = service(req.vkg)
        q = check_query(req.query)
        return await work(lambda: runtime.sparql(svc, q))

    @app.get("/api/describe", tags=["api"])
    async def describe(term: str, vkg: str | None = None) -> dict[str, Any]:
        """A class or property with its mapped neighbourhood and sample values."""
        svc = service(vkg)
        return await work(lambda: runtime.describe(svc, check_query(term)))

    # -- TEXT2SPARQL ------------------------------------------------------------------------

    async def text2sparql_answer(question: str, dataset: str) -> Text2SparqlResponse:
        svc = _dataset_service(services, dataset)
        if svc is None:
            raise RequestRefused(404, f"unknown dataset {dataset!r}; this service has: "
                                 f"{', '.join(services)}")
        q = check_question(question)
        out = await work(lambda: runtime.ask(svc, q))
        if not out["sparql"]:
            raise RequestRefused(500, f"no query could be produced: {out['error']}")
        return Text2SparqlResponse(dataset=dataset, question=question, query=out["sparql"])

    @app.get("/text2sparql", tags=["text2sparql"], response_model=Text2SparqlResponse)
    async def text2sparql(question: Annotated[str, Query()],
                          dataset: Annotated[str, Query()]) -> Text2SparqlResponse:
        """The TEXT2SPARQL challenge's API: ``{"dataset", "question", "query"}``."""
        return await text2sparql_answer(question, dataset)

    # -- web page ---------------------------------------------------------------------------

    page = string.Template(_asset("templates/index.html"))
    audit_page = string.Template(_asset("templates/audit.html"))
    query_page = string.Template(_asset("templates/query.html"))

    @app.get("/", tags=["text2sparql"], response_model=None)
    async def index(question: str | None = None,
                    dataset: str | None = None) -> HTMLResponse | Text2SparqlResponse:
        """The web page; with ``question`` and ``dataset``, the TEXT2SPARQL API."""
        if question is None and dataset is None:
            return HTMLResponse(page.substitute(
                vkgs=html.escape(json.dumps([s.describe_json() for s in services.values()])),
                auth="true" if settings.token is not None else "false"))
        missing = [n for n, v in (("question", question), ("dataset", dataset)) if v is None]
        if missing:
            raise RequestRefused(422, f"missing query parameter: {', '.join(missing)}")
        assert question is not None and dataset is not None
        return await text2sparql_answer(question, dataset)

    @app.get("/audit", response_class=HTMLResponse, include_in_schema=False)
    async def audit_html(vkg: str | None = None) -> HTMLResponse:
        svc = service(vkg)
        rep = svc.audit
        c = rep.coverage
        rows = "\n".join(
            f"<tr><td>{html.escape(rep.compact(u.iri))}</td><td>{html.escape(u.kind)}</td>"
            f"<td>{u.degree}</td><td>{u.mapped_neighbours}</td></tr>"
            for u in rep.unmapped[:50])
        kinds = "\n".join(
            f"<tr><td>{html.escape(k.name)}</td><td>{k.mapped}</td><td>{k.declared}</td>"
            f"<td>{k.coverage:.1f} %</td></tr>" for k in rep.by_kind)
        return HTMLResponse(audit_page.substitute(
            vkg=html.escape(svc.name), coverage=f"{c.coverage:.1f}", mapped=c.mapped,
            declared=c.declared, unmapped=c.unmapped, kinds=kinds, rows=rows,
            vkg_q=html.escape(svc.name, quote=True)))

    @app.get("/audit/report", response_class=HTMLResponse, include_in_schema=False)
    async def audit_report(vkg: str | None = None) -> HTMLResponse:
        from navqa.audits.report import render_html

        return HTMLResponse(render_html(service(vkg).audit))

    @app.get("/query", response_class=HTMLResponse, include_in_schema=False)
    async def query_html(query: str, vkg: str | None = None) -> HTMLResponse:
        svc = service(vkg)
        q = check_query(query)
        command = f"navqa sparql --vkg {svc.name} {_shell_quote(q)}"
        return HTMLResponse(query_page.substitute(
            vkg=html.escape(svc.name), query=html.escape(q), command=html.escape(command),
            query_json=html.escape(json.dumps({"query": q, "vkg": svc.name})),
            auth="true" if settings.token is not None else "false"))

    app.mount("/static", StaticFiles(packages=[("navqa.service", "static")]), name="static")

    @app.get("/favicon.ico", include_in_schema=False)
    async def favicon() -> Response:
        return Response(status_code=204)

    if mcp_server is not None:
        app.mount("/", mcp_app)  # last: serves /mcp only
    if settings.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(settings.cors_origins),
                           allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type"])
    app.add_middleware(Guard, token=settings.token.get_secret_value() if settings.token
                       else None, max_body_bytes=limits.max_body_bytes)
    return app


def _dataset_service(services: Mapping[str, VkgService], dataset: str) -> VkgService | None:
    """The VKG a TEXT2SPARQL ``dataset`` names: its name, or an IRI whose last path
    segment is the name (``https://example.org/2025/demo/``)."""
    if dataset in services:
        return services[dataset]
    last = dataset.rstrip("/").rsplit("/", 1)[-1]
    if "/" in dataset and last in services:
        return services[last]
    return None


def _shell_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def _version() -> str:
    from navqa import __version__

    return __version__
