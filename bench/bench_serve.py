"""Measure ``navqa serve``: warm ``/api/ask`` latency, throughput, and ``navqa ask`` through a
running service against a cold ``navqa ask``.

Usage::

    NAVQA_DATASETS_MIRROR=/path/to/mirror python bench/bench_serve.py [demo npd]
        [--rounds 3] [--clients 8] [--json]

For each VKG it starts ``navqa serve --vkg NAME`` (offline backend, ``NAVQA_LLM=none``),
warms it with one pass over the questions, then prints:

* **warm latency** of ``POST /api/ask`` (median and p90 over ``--rounds`` passes over the
  questions), *Ontop included* (the client's wall time) and *Ontop excluded* (minus the
  pipeline's own ``values`` and ``execution`` stage times, which are the SPARQL requests);
* **throughput** with ``--clients`` concurrent clients, each asking every question once;
* for ``demo`` only: ``navqa ask`` (a new process) answered by the running service, against
  the same command answering by itself (``NAVQA_NO_SERVICE=1``: PostgreSQL check, Ontop
  start, index and model load) — medians of ``--cli-rounds`` runs.

Questions: the first ``--questions`` of ``datasets/NAME/questions.jsonl``. It prints
figures; it is not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent


def questions(name: str, n: int) -> list[str]:
    """The first ``n`` questions of the VKG's question set."""
    path = ROOT / "datasets" / name / "questions.jsonl"
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            out.append(json.loads(line)["question"])
        if len(out) >= n:
            break
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(name: str, log: Path) -> tuple[subprocess.Popen[bytes], str, float]:
    port = free_port()
    t0 = time.perf_counter()
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "navqa.cli", "serve", "--vkg", name,
                                 "--port", str(port), "--workers", "8", "--timeout", "600"],
                                stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "NAVQA_LLM": "none"})
    url = f"http://127.0.0.1:{port}"
    while True:
        if proc.poll() is not None:
            raise SystemExit(f"navqa serve --vkg {name} exited:\n{log.read_text()}")
        try:
            if requests.get(url + "/api/health", timeout=2).ok:
                return proc, url, time.perf_counter() - t0
        except requests.RequestException:
            pass
        time.sleep(0.5)


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()


def ask(session: requests.Session, url: str, q: str) -> tuple[float, float]:
    t0 = time.perf_counter()
    r = session.post(url + "/api/ask", json={"question": q}, timeout=900)
    wall = time.perf_counter() - t0
    r.raise_for_status()
    t = r.json()["timings"]
    return wall, wall - t.get("values", 0.0) - t.get("execution", 0.0)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p * (len(xs) - 1))))]


def cli_seconds(args: list[str], env: dict[str, str], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        p = subprocess.run([sys.executable, "-m", "navqa.cli", *args], capture_output=True,
                           env={**os.environ, "NAVQA_LLM": "none", **env}, timeout=900)
        times.append(time.perf_counter() - t0)
        if p.returncode != 0:
            raise SystemExit(p.stderr.decode())
    return statistics.median(times)


def bench(name: str, a: argparse.Namespace) -> dict[str, Any]:
    qs = questions(name, a.questions)
    log = Path(tempfile.mkdtemp(prefix="bench-serve-")) / f"{name}.log"
    proc, url, startup = start(name, log)
    try:
        with requests.Session() as s:
            for q in qs:  # warm-up
                ask(s, url, q)
            walls, inner = [], []
            for _ in range(a.rounds):
                for q in qs:
                    w, i = ask(s, url, q)
                    walls.append(w)
                    inner.append(i)

        def client(_n: int) -> int:
            with requests.Session() as s:
                for q in qs:
                    ask(s, url, q)
            return len(qs)

        t0 = time.perf_counter()
        with ThreadPoolExecutor(a.clients) as pool:
            done = sum(pool.map(client, range(a.clients)))
        elapsed = time.perf_counter() - t0
        out: dict[str, Any] = {
            "vkg": name, "questions": len(qs), "startup_s": startup,
            "warm_median_s": statistics.median(walls), "warm_p90_s": pct(walls, 0.9),
            "warm_no_ontop_median_s": statistics.median(inner),
            "warm_no_ontop_p90_s": pct(inner, 0.9),
            "clients": a.clients, "throughput_qps": done / elapsed,
        }
        if name == "demo" and a.cli_rounds:
            q = qs[0]
            out["cli_via_service_s"] = cli_seconds(["ask", "--vkg", "demo", q], {},
                                                   a.cli_rounds)
            out["cli_cold_s"] = cli_seconds(["ask", "--vkg", "demo", q],
                                            {"NAVQA_NO_SERVICE": "1"}, a.cli_rounds)
        return out
    finally:
        stop(proc)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("vkgs", nargs="*", default=["demo"])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--clients", type=int, default=8)
    ap.add_argument("--cli-rounds", type=int, default=3)
    ap.add_argument("--questions", type=int, default=10)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    results = [bench(n, a) for n in a.vkgs]
    if a.json:
        print(json.dumps(results, indent=1))
        return
    for r in results:
        print(f"{r['vkg']}: {r['questions']} questions, service up in {r['startup_s']:.1f} s")
        print(f"  warm /api/ask   median {r['warm_median_s']:.3f} s, p90 {r['warm_p90_s']:.3f} s"
              " (Ontop included)")
        print(f"                  median {r['warm_no_ontop_median_s']:.3f} s, "
              f"p90 {r['warm_no_ontop_p90_s']:.3f} s (Ontop excluded)")
        print(f"  throughput      {r['throughput_qps']:.2f} questions/s with "
              f"{r['clients']} clients")
        if "cli_cold_s" in r:
            print(f"  navqa ask       {r['cli_via_service_s']:.2f} s through the service, "
                  f"{r['cli_cold_s']:.2f} s cold")


if __name__ == "__main__":
    main()
