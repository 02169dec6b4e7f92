"""The MCP server through the official SDK's own client: streamable HTTP at ``/mcp`` of a
running ``navqa serve``, and stdio of ``navqa mcp demo``."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from serve_harness import DEMO_ANSWER, DEMO_QUESTION, Served

pytestmark = [pytest.mark.postgres, pytest.mark.ontop, pytest.mark.slow]

TOOLS = ["ask", "audit", "describe", "lint", "sparql"]


async def _exercise(client: Client) -> dict[str, Any]:
    tools = sorted(t.name for t in (await client.list_tools()).tools)
    ask = await client.call_tool("ask", {"question": DEMO_QUESTION})
    describe = await client.call_tool("describe", {"term": "rail:operatedBy"})
    lint = await client.call_tool("lint", {"query": (
        "PREFIX rail: <http://example.org/navqa/rail#>\n"
        "SELECT ?l WHERE { ?o rail:operatesLine ?l }")})
    audit = await client.call_tool("audit", {"top": 100})
    sparql = await client.call_tool("sparql", {"query": (
        "PREFIX rail: <http://example.org/navqa/rail#>\n"
        "SELECT (COUNT(*) AS ?n) WHERE { ?l a rail:Line }")})
    update = await client.call_tool("sparql", {"query": "DELETE WHERE { ?s ?p ?o }"})
    unknown = await client.call_tool("ask", {"question": DEMO_QUESTION, "vkg": "nope"})
    return {"tools": tools, "ask": ask, "describe": describe, "lint": lint, "audit": audit,
            "sparql": sparql, "update": update, "unknown": unknown}


def _check(r: dict[str, Any]) -> None:
    assert r["tools"] == TOOLS
    ask = r["ask"]
    assert not ask.is_error and ask.structured_content["answer"] == [DEMO_ANSWER]
    assert "rail:operatedBy" in ask.structured_content["sparql"]
    d = r["describe"].structured_content
    assert d["mapped"] is True and d["samples"] and d["kind"] == "object_property"
    lint = r["lint"].structured_content
    assert lint["ok"] is False and lint["findings"][0]["rule"] == "unmapped-term"
    audit = r["audit"].structured_content
    assert audit["vkg"] == "demo" and 0 < audit["coverage"] < 100
    assert "rail:operatesLine" in [u["name"] for u in audit["unmapped"]]
    assert int(r["sparql"].structured_content["results"]["bindings"][0]["n"]["value"]) > 0
    update = r["update"]
    assert update.is_error and "UpdateRefusedError" in update.content[0].text
    assert r["unknown"].is_error and "unknown VKG" in r["unknown"].content[0].text


def test_streamable_http_under_serve(served: Served) -> None:
    async def run() -> dict[str, Any]:
        async with Client(served.url + "/mcp", read_timeout_seconds=300) as c:
            return await _exercise(c)

    _check(asyncio.run(run()))


def test_stdio_navqa_mcp() -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "navqa.cli", "mcp",
                                                                 "demo"],
                                   env=dict(os.environ))

    async def run() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=600) as c:
            return await _exercise(c)

    _check(asyncio.run(run()))
