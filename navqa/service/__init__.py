"""``navqa serve`` and ``navqa mcp``: the pipeline as a long-running service.

The service sits beside :mod:`navqa.cli` (it may import everything below it; the library
never imports it). It loads the index, the embedder and the LLM client once, keeps Ontop
up, and answers over HTTP:

* :mod:`navqa.service.runtime` — :class:`~navqa.service.runtime.VkgService`, one VKG
  ready to answer (pipelines, lint, audit), and the request work on it;
* :mod:`navqa.service.app` — the ASGI app (FastAPI): JSON API, Server-Sent Events,
  TEXT2SPARQL, the web page, ``/mcp``;
* :mod:`navqa.service.guard` — bearer auth, body-size limit; :mod:`navqa.service.pool` —
  the bounded worker pool (503 when full) with per-request timeouts;
* :mod:`navqa.service.mcp_server` — the MCP tools (stdio and streamable HTTP);
* :mod:`navqa.service.registry` — where a running service is recorded, so that
  ``navqa ask`` can send its question there.

FastAPI, uvicorn and mcp are the ``serve`` extra; they are imported only here.
"""
