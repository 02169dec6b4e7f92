"""Every endpoint of ``navqa serve`` through a real HTTP client, against a real service
over the demo VKG (real PostgreSQL and Ontop)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from serve_harness import DEMO_ANSWER, DEMO_QUESTION, Served

pytestmark = [pytest.mark.postgres, pytest.mark.ontop, pytest.mark.slow]

QUESTIONS = [
    DEMO_QUESTION,
    "How many electric locomotives are there?",
    "Which lines does Northern Vale Rail operate?",
    "How many lines are there?",
]


def test_health_and_vkgs(served: Served) -> None:
    h = served.get("/api/health")
    assert h.status_code == 200 and h.json()["vkgs"] == ["demo"]
    v = served.get("/api/vkgs").json()
    assert [x["name"] for x in v] == ["demo"]
    assert v[0]["kind"] == "bundled" and v[0]["endpoint"].endswith("/sparql")
    assert "password" not in json.dumps(v).lower()


def test_ask_returns_answer_sparql_result_confidence_and_events(served: Served) -> None:
    r = served.post("/api/ask", json={"question": DEMO_QUESTION})
    assert r.status_code == 200, r.text
    d = r.json()
    assert d["answer"] == [DEMO_ANSWER]
    assert "rail:operatedBy" in d["sparql"] and "operatesLine" not in d["sparql"]
    # an entity answer (the default convention): the company and its name; `answer`
    # shows the name
    assert d["result"]["head"]["vars"] == ["company", "name"]
    row = d["result"]["results"]["bindings"][0]
    assert row["name"]["value"] == DEMO_ANSWER and row["company"]["type"] == "uri"
    assert d["confidence"]["level"] == "high"
    types = [e["type"] for e in d["events"]]
    assert types[0] == "MentionsExtracted" and "QueryExecuted" in types
    assert d["lint"]["ok"] is True and d["error"] is None


def test_ask_refuses_bad_requests(served: Served) -> None:
    assert served.post("/api/ask", json={"question": "  "}).status_code == 422
    assert served.post("/api/ask", json={"question": "x" * 5000}).status_code == 422
    assert served.post("/api/ask", json={}).status_code == 422
    r = served.post("/api/ask", json={"question": DEMO_QUESTION, "strategy": "magic"})
    assert r.status_code == 422 and "unknown strategy" in r.json()["detail"]
    r = served.post("/api/ask", json={"question": DEMO_QUESTION, "llm": "openai"})
    assert r.status_code == 422 and "not configured" in r.json()["detail"]
    r = served.post("/api/ask", json={"question": DEMO_QUESTION, "vkg": "nope"})
    assert r.status_code == 404


def test_stream_yields_the_pipeline_events_in_order_then_the_answer(served: Served) -> None:
    with requests.get(served.url + "/api/ask/stream", params={"question": DEMO_QUESTION},
                      stream=True, timeout=300) as r:
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/event-stream")
        events: list[tuple[int, str, dict[str, object]]] = []
        block: dict[str, str] = {}
        for line in r.iter_lines(decode_unicode=True):
            if line == "":
                if block:
                    events.append((int(block["id"]), block["event"], json.loads(block["data"])))
                block = {}
                continue
            key, _, value = line.partition(": ")
            block[key] = value
    ids = [i for i, _, _ in events]
    assert ids == list(range(len(events)))
    kinds = [k for _, k, _ in events]
    assert kinds[-1] == "answer" and kinds.count("answer") == 1 and "error" not in kinds
    steps = [d["type"] for _, k, d in events if k == "step"]
    # the same events, in the same order, as the answer's own list
    final = events[-1][2]
    assert steps == [e["type"] for e in final["events"]]  # type: ignore[union-attr]
    order = ["MentionsExtracted", "Linked", "SubgraphsReranked", "QuerySynthesized",
             "QueryChecked", "QueryExecuted"]
    assert [s for s in steps if s in order][:1] == ["MentionsExtracted"]
    positions = [steps.index(s) for s in order]
    assert positions == sorted(positions)
    assert kinds.index("lint") > max(i for i, k in enumerate(kinds) if k == "step")
    assert final["answer"] == [DEMO_ANSWER]


def test_empty_result_comes_with_a_triage(served: Served) -> None:
    d = served.post("/api/ask", json={
        "question": "Which company currently operates the Zebra Moon Line?"}).json()
    assert d["error"] is None and d["empty"] is True and d["answer"] == []
    assert d["confidence"]["level"] == "low"
    assert any("Zebra Moon Line" in t for t in d["triage"])


def test_lint_finds_the_unmapped_shortcut(served: Served) -> None:
    q = ("PREFIX rail: <http://example.org/navqa/rail#>\n"
         "SELECT ?l WHERE { ?o rail:operatesLine ?l }")
    d = served.post("/api/lint", json={"query": q}).json()
    assert d["ok"] is False
    f = d["findings"][0]
    assert f["rule"] == "unmapped-term" and f["line"] == 2 and f["column"] == 22
    assert served.post("/api/lint", json={"query": ""}).status_code == 422


def test_audit(served: Served) -> None:
    d = served.get("/api/audit").json()
    assert d["vkg"] == "demo"
    unmapped = json.dumps(d["unmapped"])
    assert "operatesLine" in unmapped
    page = served.get("/audit")
    assert page.status_code == 200 and "operatesLine" in page.text
    report = served.get("/audit/report")
    assert report.status_code == 200 and report.text.lstrip().lower().startswith("<!doctype")


def test_sparql_runs_read_only_queries_and_refuses_update(served: Served) -> None:
    q = ("PREFIX rail: <http://example.org/navqa/rail#>\n"
         "SELECT (COUNT(*) AS ?n) WHERE { ?l a rail:Line }")
    d = served.post("/api/sparql", json={"query": q}).json()
    assert int(d["results"]["bindings"][0]["n"]["value"]) > 0
    r = served.post("/api/sparql", json={"query": "DELETE WHERE { ?s ?p ?o }"})
    assert r.status_code == 400 and r.json()["error_kind"] == "UpdateRefusedError"
    r = served.post("/api/sparql", json={"query": "SELEC nothing"})
    assert r.status_code == 400
    page = served.get("/query", params={"query": q})
    assert page.status_code == 200 and "navqa sparql --vkg demo" in page.text


def test_describe(served: Served) -> None:
    d = served.get("/api/describe", params={"term": "rail:operatedBy"}).json()
    assert d["mapped"] is True and d["samples"]
    assert served.get("/api/describe", params={"term": "rail:Nothing"}).status_code == 422


def test_openapi_docs(served: Served) -> None:
    assert served.get("/docs").status_code == 200
    paths = served.get("/openapi.json").json()["paths"]
    for p in ("/api/ask", "/api/ask/stream", "/api/lint", "/api/audit", "/api/sparql",
              "/api/vkgs", "/api/health", "/text2sparql"):
        assert p in paths


def test_32_concurrent_asks_from_8_clients_match_sequential_answers(served: Served) -> None:
    def key(d: dict[str, object]) -> tuple[object, ...]:
        return (d["sparql"], json.dumps(d["result"], sort_keys=True), d["error"])

    sequential = {q: key(served.post("/api/ask", json={"question": q}).json())
                  for q in QUESTIONS}

    def client(n: int) -> list[tuple[str, int, tuple[object, ...]]]:
        out = []
        with requests.Session() as s:
            for i in range(4):
                q = QUESTIONS[(n + i) % len(QUESTIONS)]
                r = s.post(served.url + "/api/ask", json={"question": q}, timeout=600)
                out.append((q, r.status_code, key(r.json()) if r.ok else (r.text,)))
        return out

    with ThreadPoolExecutor(8) as pool:
        results = [x for chunk in pool.map(client, range(8)) for x in chunk]
    assert len(results) == 32
    assert all(code == 200 for _, code, _ in results), results
    for q, _, k in results:
        assert k == sequential[q], q
