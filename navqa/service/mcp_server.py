"""The MCP server of navqa: tools ``ask``, ``sparql``, ``lint``, ``audit``, ``describe``.

Built on the official ``mcp`` SDK (:class:`mcp.server.mcpserver.MCPServer`). ``navqa mcp``
runs it over stdio; ``navqa serve`` mounts its streamable HTTP transport at ``/mcp``
(behind the same bearer token and body limit). Every tool takes an optional ``vkg``
(default: the first VKG served) and returns JSON; a navqa error becomes the tool's error
message (the call fails, it never returns an empty answer).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError

from navqa.errors import NavqaError
from navqa.service import runtime
from navqa.service.runtime import VkgService

INSTRUCTIONS = (
    "navqa answers natural-language questions over Virtual Knowledge Graphs (an OWL "
    "ontology mapped onto a relational database, served by Ontop). Use `ask` for a "
    "question, `describe` to see a class or property with its mapped neighbourhood, "
    "`lint` to check SPARQL for silent failures (terms with no mapping return nothing), "
    "`sparql` to run a read-only query, `audit` for mapping coverage."
)


F = TypeVar("F", bound=Callable[..., dict[str, Any]])


def _tool_errors(fn: F) -> F:
    """A navqa error (or a bad argument) becomes the tool's error, with its message."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> dict[str, Any]:
        try:
            return fn(*args, **kwargs)
        except (NavqaError, ValueError) as e:
            raise ToolError(f"{type(e).__name__}: {e}") from e

    return wrapper  # type: ignore[return-value]


def build_mcp(services: Mapping[str, VkgService]) -> MCPServer[Any]:
    """An MCP server over the loaded VKGs."""
    if not services:
        raise ValueError("no VKG to serve")
    default = next(iter(services))
    names = ", ".join(services)
    server: MCPServer[Any] = MCPServer(name="navqa", instructions=INSTRUCTIONS,
                                       log_level="WARNING")

    def pick(vkg: str | None) -> VkgService:
        if vkg is None or vkg == "":
            return services[default]
        if vkg not in services:
            raise ValueError(f"unknown VKG {vkg!r}; served: {names}")
        return services[vkg]

    @server.tool(description=f"Answer a question in natural language over a VKG ({names}): "
                 "the answer, the SPARQL, the result rows, confidence, lint findings.")
    @_tool_errors
    def ask(question: str, vkg: str | None = None, strategy: str = "navqa") -> dict[str, Any]:
        out = runtime.ask(pick(vkg), question, strategy=strategy)
        out.pop("events", None)  # an assistant needs the outcome, not every step
        return out

    @server.tool(description="Run a read-only SPARQL query (UPDATE is refused); SPARQL JSON.")
    @_tool_errors
    def sparql(query: str, vkg: str | None = None) -> dict[str, Any]:
        return runtime.sparql(pick(vkg), query)

    @server.tool(description="Find silent-failure risks in SPARQL without running it: "
                 "unmapped terms, joins that cannot match, datatype mismatches.")
    @_tool_errors
    def lint(query: str, vkg: str | None = None) -> dict[str, Any]:
        return runtime.lint_json(pick(vkg), query)

    @server.tool(description="Mapping coverage of the VKG and its unmapped elements, most "
                 "central first.")
    @_tool_errors
    def audit(vkg: str | None = None, top: int = 20) -> dict[str, Any]:
        rep = pick(vkg).audit
        c = rep.coverage
        return {"vkg": rep.vkg, "coverage": round(c.coverage, 1), "mapped": c.mapped,
                "declared": c.declared, "unmapped_count": c.unmapped,
                "unmapped": [{"iri": u.iri, "name": rep.compact(u.iri), "kind": u.kind,
                              "degree": u.degree} for u in rep.unmapped[:max(0, top)]],
                "findings": len(rep.findings())}

    @server.tool(description="A class or property (IRI or prefixed name such as "
                 "rail:Company) with its neighbourhood, which of it is mapped, and sample "
                 "values from the data.")
    @_tool_errors
    def describe(term: str, vkg: str | None = None, samples: int = 5) -> dict[str, Any]:
        return runtime.describe(pick(vkg), term, samples=samples)

    return server
