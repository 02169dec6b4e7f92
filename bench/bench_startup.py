"""Benchmark start-up: a cold ``navqa ask`` against a cold ``navqa --help``, in one run.

Usage::

    .venv/bin/python bench/bench_startup.py [--vkg demo] [--runs 5] [--compare-st] [--json]

The VKG's endpoint is started once (by the library, in this process) and its index built
once; then each run times, in fresh processes and back to back, ``navqa --help`` and
``navqa ask --vkg VKG --endpoint URL --llm none QUESTION``. Printed (never asserted;
target from the Performance issue): the median of each, the median of the per-run ratios
ask / help (target ≤ 4), and each command's peak RSS (``os.wait4``).

``--compare-st`` adds a third command per run: the same ``ask`` with the embedder forced
to the sentence-transformers runtime (what ``ask`` used before the numpy query encoder).

Unless ``--no-serve``, the run also starts ``navqa serve`` of the same VKG (same
``--endpoint``) on a free port and times ``ask (served)``: the same ``ask`` command, which
finds the running service and sends it the question (checked: its stderr says "answered by
the navqa service"); its ratio to ``--help`` has the target ≤ 2 (the ``navqa serve``
issue). The cold ``ask`` runs with ``NAVQA_NO_SERVICE=1`` so that no service (this one or
another) answers it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

TARGET_RATIO = 4.0
TARGET_SERVED_RATIO = 2.0
SERVED_MARK = "answered by the navqa service"
QUESTION = "Which company currently operates the Aster Coast Line?"

#: ``navqa`` with the embedder runtime forced to sentence-transformers (``--compare-st``).
_FORCE_ST = r"""
import sys
import navqa.backends.embedder_factory as f
f.choose_runtime = lambda cfg: f.EmbedderRuntime.SENTENCE_TRANSFORMERS
sys.argv = ["navqa", *sys.argv[1:]]
from navqa.cli.main import run
run()
"""


@dataclass
class Sample:
    seconds: float
    peak_rss_mb: float


#: Runs ``argv`` and prints its wall time and peak RSS. A small process of its own, because
#: a child forked from this one (which has the index and the model loaded) would report
#: this process's RSS as its own peak.
_MEASURE = r"""
import json, os, subprocess, sys, tempfile, time
with tempfile.TemporaryFile() as err:
    t0 = time.perf_counter()
    proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=err)
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - t0
    err.seek(0)
    tail = err.read().decode(errors="replace")[-1500:]
print(json.dumps({"seconds": seconds, "maxrss_kib": usage.ru_maxrss,
                  "code": os.waitstatus_to_exitcode(status), "stderr": tail}))
"""


def _env(served: bool) -> dict[str, str]:
    env = dict(os.environ, HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    env.pop("NAVQA_NO_SERVICE", None)
    if not served:
        env["NAVQA_NO_SERVICE"] = "1"  # a cold ask answers itself, whatever service runs
    return env


def _run(argv: list[str], *, served: bool = False) -> Sample:
    """Wall time and peak RSS of one fresh process (exits on failure, quoting stderr)."""
    proc = subprocess.run([sys.executable, "-c", _MEASURE, *argv], env=_env(served),
                          capture_output=True, text=True, check=True)
    res = json.loads(proc.stdout)
    if res["code"] != 0:
        raise SystemExit(f"{' '.join(argv[:4])} … failed (exit {res['code']}): {res['stderr']}")
    if served and SERVED_MARK not in res["stderr"]:
        raise SystemExit(f"ask did not go through the running service: {res['stderr']}")
    return Sample(res["seconds"], res["maxrss_kib"] / 1024)  # ru_maxrss is in KiB on Linux


@contextlib.contextmanager
def _service(navqa: list[str], args: list[str], timeout: float = 900.0) -> Iterator[str]:
    """``navqa serve ARGS`` on a free port until the block ends; yields its URL once
    ``/api/health`` answers."""
    import requests

    from navqa.runtime.postgres import free_port

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryFile() as log:
        proc = subprocess.Popen([*navqa, "serve", *args, "--port", str(port)], env=_env(True),
                                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            deadline = time.monotonic() + timeout
            while True:
                if proc.poll() is not None:
                    log.seek(0)
                    raise SystemExit(f"navqa serve exited ({proc.returncode}): "
                                     f"{log.read().decode(errors='replace')[-1500:]}")
                try:
                    if requests.get(f"{url}/api/health", timeout=2).status_code == 200:
                        break
                except requests.RequestException:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit(f"navqa serve did not answer within {timeout:g}s")
                time.sleep(1.0)
            yield url
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
                try:
                    proc.wait(timeout=60)
                except subprocess.TimeoutExpired:
                    os.killpg(proc.pid, signal.SIGKILL)
                    proc.wait()


def _summary(samples: list[Sample]) -> dict[str, float]:
    return {"median_s": statistics.median(s.seconds for s in samples),
            "min_s": min(s.seconds for s in samples),
            "peak_rss_mb": max(s.peak_rss_mb for s in samples)}


def bench(vkg: str, runs: int, question: str, compare_st: bool,
          serve: bool = True) -> dict[str, Any]:
    from navqa.backends.embedder_factory import choose_runtime, make_embedder
    from navqa.config import load_config
    from navqa.offline.artifacts import ensure_index
    from navqa.runtime.vkg import serve_vkg

    cfg = load_config().with_overrides(llm={"provider": "none"})
    navqa = [sys.executable, "-m", "navqa.cli"]
    with serve_vkg(cfg, vkg) as running:
        ensure_index(cfg, running.dataset, embedder=make_embedder(cfg.embedder))
        ask_args = ["ask", "--vkg", vkg, "--endpoint", running.url, "--llm", "none", question]
        commands = {"help": navqa + ["--help"], "ask": navqa + ask_args}
        if compare_st:
            commands["ask (sentence-transformers)"] = [sys.executable, "-c", _FORCE_ST,
                                                       *ask_args]
        _run(commands["ask"])  # warm the OS file cache once; not counted
        samples: dict[str, list[Sample]] = {name: [] for name in commands}
        for _ in range(runs):
            for name, argv in commands.items():
                samples[name].append(_run(argv))
        if serve:  # the same ask, answered by a running `navqa serve`, against --help again
            with _service(navqa, ["--vkg", vkg, "--endpoint", running.url]):
                _run(commands["ask"], served=True)  # the service's first answer; not counted
                samples["help (serve running)"], samples["ask (served)"] = [], []
                for _ in range(runs):
                    samples["help (serve running)"].append(_run(commands["help"]))
                    samples["ask (served)"].append(_run(commands["ask"], served=True))
    out: dict[str, Any] = {"vkg": vkg, "runs": runs, "question": question,
                           "query_runtime": str(choose_runtime(cfg.embedder)),
                           "target_ratio": TARGET_RATIO,
                           "target_served_ratio": TARGET_SERVED_RATIO, "commands": {}}
    for name, ss in samples.items():
        entry: dict[str, Any] = dict(_summary(ss))
        # each ask against the --help timed next to it (with the service running, for the
        # served ask: the machine is as loaded for both)
        helps = samples["help (serve running)"] if name == "ask (served)" else samples["help"]
        if not name.startswith("help"):
            entry["ratio_to_help"] = statistics.median(
                s.seconds / h.seconds for s, h in zip(ss, helps, strict=True))
        entry["samples"] = [asdict(s) for s in ss]
        out["commands"][name] = entry
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vkg", default="demo")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--question", default=QUESTION)
    ap.add_argument("--compare-st", action="store_true",
                    help="also time ask with the sentence-transformers runtime")
    ap.add_argument("--no-serve", action="store_true",
                    help="skip the ask answered by a running `navqa serve`")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    res = bench(args.vkg, max(1, args.runs), args.question, args.compare_st,
                serve=not args.no_serve)
    if args.json:
        print(json.dumps(res, indent=1))
        return
    print(f"start-up on {res['vkg']}, {res['runs']} runs (query-time encoder: "
          f"{res['query_runtime']})")
    print(f"{'command':<30} {'median s':>9} {'min s':>7} {'× help':>7} {'peak RSS MB':>12}")
    for name, e in res["commands"].items():
        ratio = f"{e['ratio_to_help']:.2f}" if "ratio_to_help" in e else "1"
        print(f"{name:<30} {e['median_s']:>9.2f} {e['min_s']:>7.2f} {ratio:>7} "
              f"{e['peak_rss_mb']:>12.0f}")
    ok = res["commands"]["ask"]["ratio_to_help"] <= TARGET_RATIO
    print(f"target: ask ≤ {TARGET_RATIO:g}× help — {'met' if ok else 'NOT met'}")
    if "ask (served)" in res["commands"]:
        ok = res["commands"]["ask (served)"]["ratio_to_help"] <= TARGET_SERVED_RATIO
        print(f"target: ask with navqa serve running ≤ {TARGET_SERVED_RATIO:g}× help — "
              f"{'met' if ok else 'NOT met'}")


if __name__ == "__main__":
    main()
