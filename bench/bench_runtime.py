"""Benchmark the runtime on NPD: database load, Ontop cold start, query latency, JVM memory.

Usage::

    NAVQA_DATASETS_MIRROR=/path/to/mirror .venv/bin/python bench/bench_runtime.py [--vkg npd]
        [--queries 60] [--starts 2] [--json]

Measured (printed, never asserted; targets from the Foundation issue):

* **load**: a fresh load of the dataset into a scratch database of navqa's private
  cluster (schema → data → constraints, then ANALYZE), per step; target ≤ 10 s for NPD;
* **cold start**: JVM launch → ``navqa-ontop: READY`` + a successful ``SELECT * {}``
  probe, on the default mapping; target ≤ 60 s;
* **latency**: median and p90 over the gold queries of the VKG's question file (after
  one warm-up pass), measured client-side;
* **JVM peak memory**: ``VmHWM`` of the Ontop process after the queries.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

TARGETS = {"load_s": 10.0, "cold_start_s": 60.0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vkg", default="npd")
    ap.add_argument("--queries", type=int, default=60, help="gold queries to time")
    ap.add_argument("--starts", type=int, default=2, help="cold starts to time")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()

    from navqa.backends.sparql_http import HttpSparqlEndpoint
    from navqa.config import load_config
    from navqa.runtime.datasets import fetch_dataset
    from navqa.runtime.loader import ensure_loaded
    from navqa.runtime.ontop_setup import ensure_ontop
    from navqa.runtime.postgres import postgres
    from navqa.runtime.vkg import start_vkg

    cfg = load_config()
    ds = fetch_dataset(args.vkg, cfg)
    install = ensure_ontop(cfg)
    out: dict[str, object] = {"vkg": args.vkg, "targets": TARGETS}
    with postgres(cfg) as pg:
        scratch = f"{ds.manifest.database}_bench"
        report = ensure_loaded(pg, ds, force=True, database=scratch)
        out["load_s"] = round(report.seconds, 2)
        out["load_steps_s"] = {f: round(s, 2) for f, s in report.steps}
        with pg.connect("postgres", autocommit=True) as c:
            c.execute(f'DROP DATABASE IF EXISTS "{scratch}"')
        starts = []
        for _ in range(args.starts):
            running = start_vkg(cfg, ds, pg, install)
            assert running.ontop is not None
            starts.append(round(running.ontop_start_s or 0.0, 2))
            if len(starts) < args.starts:
                running.ontop.stop()
        out["cold_start_s"] = starts
        assert running.ontop is not None
        try:
            qfile = Path(ds.manifest.questions[0]) if ds.manifest.questions else None
            from navqa.runtime.paths import repo_root

            queries = []
            if qfile is not None:
                for line in (repo_root() / qfile).read_text(encoding="utf-8").splitlines():
                    if line.strip():
                        queries.append(json.loads(line)["sparql"])
            queries = queries[: args.queries]
            ep = HttpSparqlEndpoint(running.url, timeout=300)
            for q in queries:  # warm-up pass
                ep.query(q)
            times = []
            for q in queries:
                t0 = time.perf_counter()
                ep.query(q)
                times.append(time.perf_counter() - t0)
            if times:
                times.sort()
                out["queries"] = len(times)
                out["latency_median_ms"] = round(statistics.median(times) * 1000, 1)
                out["latency_p90_ms"] = round(times[int(0.9 * (len(times) - 1))] * 1000, 1)
                out["latency_max_ms"] = round(times[-1] * 1000, 1)
            out["jvm_peak_mb"] = round(running.ontop.peak_rss_mb() or 0.0, 1)
        finally:
            running.ontop.stop()
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"runtime benchmark on {args.vkg}")
    for k, v in out.items():
        if k not in ("vkg", "targets"):
            print(f"  {k:22} {v}")
    print(f"  targets: load ≤ {TARGETS['load_s']} s, cold start ≤ {TARGETS['cold_start_s']} s")


if __name__ == "__main__":
    main()
