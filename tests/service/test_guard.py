"""Safe by default: bearer auth, body and question limits, the bounded worker pool (503),
per-request timeouts (504), CORS off unless asked, no secret in any response.

The app runs in a real uvicorn server (in this process, so that a test can hold a request
in the pipeline on purpose) over the demo VKG, whose Ontop is the running ``navqa serve``'s.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import requests
import uvicorn
from pydantic import SecretStr
from serve_harness import DEMO_ANSWER, DEMO_QUESTION, Served, free_port

from navqa.config import NavqaConfig
from navqa.runtime.project import VkgFlags, resolve_project
from navqa.service import runtime
from navqa.service.app import create_app
from navqa.service.runtime import VkgService, build_service
from navqa.service.settings import Limits, ServiceSettings

pytestmark = [pytest.mark.postgres, pytest.mark.ontop, pytest.mark.slow]

TOKEN = "s3cret-token-h9-0123456789"


@pytest.fixture(scope="module")
def demo_service(served: Served, navqa_config: NavqaConfig) -> VkgService:
    source = resolve_project(navqa_config, VkgFlags(vkg="demo")).source
    url = served.get("/api/vkgs").json()[0]["endpoint"]
    return build_service(navqa_config, source, url, ontop_managed=False)


@pytest.fixture
def run_app(demo_service: VkgService) -> Iterator[Callable[..., str]]:
    """``run_app(settings)`` → the base URL of a real uvicorn serving the app."""
    servers: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(settings: ServiceSettings) -> str:
        port = free_port()
        app = create_app({"demo": demo_service}, settings.model_copy(update={"port": port}))
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port,
                                               log_level="warning"))
        t = threading.Thread(target=server.run, daemon=True)
        t.start()
        servers.append((server, t))
        while not server.started:
            if not t.is_alive():
                raise AssertionError("uvicorn did not start")
            time.sleep(0.05)
        return f"http://127.0.0.1:{port}"

    yield start
    for server, t in servers:
        server.should_exit = True
        t.join(timeout=30)


def test_token_required_everywhere_but_health(run_app: Callable[..., str]) -> None:
    url = run_app(ServiceSettings(token=SecretStr(TOKEN)))
    assert requests.get(url + "/api/health", timeout=30).status_code == 200
    for path in ("/api/vkgs", "/", "/docs", "/openapi.json", "/api/audit",
                 "/text2sparql?question=x&dataset=demo"):
        r = requests.get(url + path, timeout=30)
        assert r.status_code == 401, path
        assert r.headers["www-authenticate"] == "Bearer"
    assert requests.post(url + "/mcp", json={}, timeout=30).status_code == 401
    bad = {"Authorization": "Bearer wrong"}
    assert requests.get(url + "/api/vkgs", headers=bad, timeout=30).status_code == 401
    basic = {"Authorization": f"Basic {TOKEN}"}
    assert requests.get(url + "/api/vkgs", headers=basic, timeout=30).status_code == 401
    good = {"Authorization": f"Bearer {TOKEN}"}
    r = requests.post(url + "/api/ask", json={"question": DEMO_QUESTION}, headers=good,
                      timeout=300)
    assert r.status_code == 200 and r.json()["answer"] == [DEMO_ANSWER]
    # no secret in any response
    for path in ("/api/health", "/api/vkgs", "/", "/openapi.json", "/audit", "/api/audit"):
        body = requests.get(url + path, headers=good, timeout=60).text
        assert TOKEN not in body, path
    assert TOKEN not in r.text


def test_body_and_question_limits(run_app: Callable[..., str]) -> None:
    url = run_app(ServiceSettings(limits=Limits(max_body_bytes=300, max_question_chars=40)))
    big = {"question": "x" * 400}
    r = requests.post(url + "/api/ask", json=big, timeout=30)
    assert r.status_code == 413 and "300 bytes" in r.json()["detail"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted as it arrives
        yield b'{"question": "'
        for _ in range(10):
            yield b"y" * 100
        yield b'"}'

    r = requests.post(url + "/api/ask", data=chunks(),
                      headers={"Content-Type": "application/json"}, timeout=30)
    assert r.status_code == 413
    r = requests.post(url + "/api/ask", json={"question": "a" * 41}, timeout=30)
    assert r.status_code == 422 and "40 characters" in r.json()["detail"]
    r = requests.get(url + "/api/ask/stream", params={"question": "a" * 41}, timeout=30)
    assert r.status_code == 422


def _held(monkeypatch: pytest.MonkeyPatch) -> tuple[threading.Event, threading.Event]:
    """Make ``runtime.ask`` wait until released (and say when it has started)."""
    entered, release = threading.Event(), threading.Event()
    real = runtime.ask

    def held(*args: Any, **kwargs: Any) -> dict[str, Any]:
        entered.set()
        release.wait(120)
        return real(*args, **kwargs)

    monkeypatch.setattr(runtime, "ask", held)
    return entered, release


def test_full_pool_answers_503(run_app: Callable[..., str],
                               monkeypatch: pytest.MonkeyPatch) -> None:
    url = run_app(ServiceSettings(limits=Limits(workers=1, queue=0)))
    entered, release = _held(monkeypatch)
    first: list[requests.Response] = []
    t = threading.Thread(target=lambda: first.append(requests.post(
        url + "/api/ask", json={"question": DEMO_QUESTION}, timeout=300)))
    t.start()
    try:
        assert entered.wait(60)
        r = requests.post(url + "/api/ask", json={"question": DEMO_QUESTION}, timeout=30)
        assert r.status_code == 503 and r.headers["retry-after"] == "1"
        s = requests.get(url + "/api/ask/stream", params={"question": DEMO_QUESTION},
                         timeout=30)
        assert s.status_code == 503
    finally:
        release.set()
        t.join(300)
    assert first[0].status_code == 200 and first[0].json()["answer"] == [DEMO_ANSWER]
    # the slot is free again
    r = requests.post(url + "/api/ask", json={"question": DEMO_QUESTION}, timeout=300)
    assert r.status_code == 200


def test_request_over_its_timeout_answers_504(run_app: Callable[..., str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    url = run_app(ServiceSettings(limits=Limits(request_timeout_s=1.0)))
    _entered, release = _held(monkeypatch)
    try:
        r = requests.post(url + "/api/ask", json={"question": DEMO_QUESTION}, timeout=120)
        assert r.status_code == 504 and r.json()["error_kind"] == "Timeout"
    finally:
        release.set()


def test_cors_is_off_unless_asked(run_app: Callable[..., str]) -> None:
    origin = {"Origin": "http://elsewhere.example"}
    off = run_app(ServiceSettings())
    r = requests.get(off + "/api/health", headers=origin, timeout=30)
    assert "access-control-allow-origin" not in r.headers
    on = run_app(ServiceSettings(cors_origins=("http://elsewhere.example",)))
    r = requests.get(on + "/api/health", headers=origin, timeout=30)
    assert r.headers["access-control-allow-origin"] == "http://elsewhere.example"


@pytest.mark.parametrize("args, message", [
    (["--host", "0.0.0.0"], "--token"),
    (["--host", "0.0.0.0", "--token", "t", "--no-auth"], "not both"),
])
def test_exposed_host_needs_a_token_or_no_auth(args: list[str], message: str) -> None:
    p = subprocess.run([sys.executable, "-m", "navqa.cli", "serve", "--vkg", "demo", *args],
                       capture_output=True, text=True, timeout=120,
                       env={"PATH": "/usr/bin:/bin", "COLUMNS": "250",
                            "HOME": "/nonexistent-h9"})
    assert p.returncode == 2, p.stderr
    assert message in p.stderr and "Traceback" not in p.stderr
