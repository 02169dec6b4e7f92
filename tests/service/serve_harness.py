"""Starting and stopping a real ``navqa serve`` (used by ``conftest.py`` and the tests)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import requests

DEMO_QUESTION = "Which company currently operates the Aster Coast Line?"
DEMO_ANSWER = "Aster Coast Trains"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Served:
    url: str
    proc: subprocess.Popen[bytes]
    log: Path

    def get(self, path: str, **kw: object) -> requests.Response:
        return requests.get(self.url + path, timeout=300, **kw)  # type: ignore[arg-type]

    def post(self, path: str, **kw: object) -> requests.Response:
        return requests.post(self.url + path, timeout=300, **kw)  # type: ignore[arg-type]


def start_serve(args: list[str], log: Path, *, env: dict[str, str] | None = None,
                wait: float = 600.0) -> Served:
    """``navqa serve ARGS`` in its own process; returns once ``/api/health`` answers."""
    port = free_port()
    cmd = [sys.executable, "-m", "navqa.cli", "serve", *args, "--port", str(port)]
    with log.open("wb") as out:  # the child keeps its own descriptor
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, **(env or {})})
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"navqa serve exited with {proc.returncode}:\n"
                                 + log.read_text(errors="replace"))
        try:
            if requests.get(url + "/api/health", timeout=2).status_code == 200:
                return Served(url, proc, log)
        except requests.RequestException:
            pass
        time.sleep(0.5)
    stop_serve(proc)
    raise AssertionError("navqa serve did not come up:\n" + log.read_text(errors="replace"))


def stop_serve(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
