"""Measure dataset load times and Ontop cold-start times (Bgee, ATKIS; NPD on request).

Usage::

    NAVQA_DATASETS_MIRROR=/path/to/mirror python bench/bench_datasets.py [bgee atkis npd]
        [--repeat 3] [--json]

For each dataset it prints:

* **fetch**: copying/verifying its files into the cache (mostly a no-op once cached);
* **load**: a forced, from-scratch load into PostgreSQL (``ensure_loaded(force=True)``), with
  the time of every load step (for ATKIS: the rewritten restore script, then addtables.sql);
* **Ontop cold start**: JVM launch until the endpoint answers ``SELECT * {}`` (``--repeat``
  fresh JVMs, each started and stopped), Ontop's own initialisation time from its log, the
  first real query's latency, and the JVM's peak resident memory.

It uses the PostgreSQL of the configuration (``NAVQA_PG_DSN`` or the private cluster named by
``NAVQA_PG_CLUSTER``) and the Ontop jars of ``navqa setup``. It prints figures; it is not a test.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import time
from typing import Any

from navqa.backends.sparql_http import HttpSparqlEndpoint
from navqa.config import load_config
from navqa.runtime.datasets import fetch_dataset
from navqa.runtime.loader import ensure_loaded
from navqa.runtime.ontop_setup import ensure_ontop
from navqa.runtime.postgres import PgConnection, postgres
from navqa.runtime.vkg import start_vkg

FIRST_QUERY = {
    "bgee": "SELECT (COUNT(*) AS ?n) WHERE { ?g a <http://purl.org/net/orth#Gene> }",
    "atkis": "SELECT (COUNT(*) AS ?n) WHERE { "
             "?a a <http://example.org/ontologies/atkis#AirTraffic> }",
    "npd": "SELECT (COUNT(*) AS ?n) WHERE { ?f a <http://sws.ifi.uio.no/vocab/npd-v2#Field> }",
}


def _init_ms(log: str) -> float | None:
    m = re.search(r"navqa-ontop: READY .*init_ms=(\d+)", log)
    return float(m.group(1)) if m else None


def bench_dataset(name: str, pg: PgConnection, repeat: int) -> dict[str, Any]:
    cfg = load_config()
    t0 = time.perf_counter()
    ds = fetch_dataset(name, cfg)
    fetch_s = time.perf_counter() - t0
    report = ensure_loaded(pg, ds, force=True)
    rows = 0
    with pg.connect(ds.manifest.database) as c:
        tables = [t for (t,) in c.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public' "
            "AND tablename <> 'spatial_ref_sys'").fetchall()]
        for t in tables:
            rows += c.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0]
    install = ensure_ontop(cfg)
    starts: list[float] = []
    inits: list[float] = []
    first: list[float] = []
    peaks: list[float] = []
    for _ in range(repeat):
        running = start_vkg(cfg, ds, pg, install, dev=False)
        assert running.ontop is not None
        try:
            starts.append(running.ontop_start_s or float("nan"))
            init = _init_ms(running.ontop.log_path.read_text(errors="replace"))
            if init is not None:
                inits.append(init / 1000)
            ep = HttpSparqlEndpoint(running.url, timeout=600)
            t1 = time.perf_counter()
            ep.select(FIRST_QUERY.get(name, "SELECT * WHERE { ?s ?p ?o } LIMIT 1"))
            first.append(time.perf_counter() - t1)
            peak = running.ontop.peak_rss_mb()
            if peak is not None:
                peaks.append(peak)
        finally:
            running.ontop.stop()
    return {
        "dataset": name,
        "partial": ds.manifest.partial,
        "fetch_s": round(fetch_s, 2),
        "load_s": round(report.seconds, 2),
        "load_steps": [(f, round(s, 2)) for f, s in report.steps],
        "tables": len(tables),
        "rows": rows,
        "ontop_start_s": [round(x, 2) for x in starts],
        "ontop_start_median_s": round(statistics.median(starts), 2),
        "ontop_init_s": [round(x, 2) for x in inits],
        "first_query_s": [round(x, 3) for x in first],
        "jvm_peak_rss_mb": round(max(peaks), 0) if peaks else None,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("datasets", nargs="*", default=["bgee", "atkis"])
    ap.add_argument("--repeat", type=int, default=3, help="Ontop cold starts per dataset")
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = ap.parse_args(argv)
    cfg = load_config()
    results = []
    with postgres(cfg) as pg:
        for name in args.datasets:
            results.append(bench_dataset(name, pg, args.repeat))
    if args.json:
        print(json.dumps(results, indent=1))
        return 0
    for r in results:
        tag = " (partial data)" if r["partial"] else ""
        print(f"{r['dataset']}{tag}: {r['tables']} tables, {r['rows']:,} rows "
              "(PostGIS's spatial_ref_sys excluded)")
        print(f"  fetch {r['fetch_s']} s; load {r['load_s']} s = "
              + ", ".join(f"{f} {s} s" for f, s in r["load_steps"]))
        print(f"  Ontop cold start {r['ontop_start_s']} s (median {r['ontop_start_median_s']} s), "
              f"Ontop init {r['ontop_init_s']} s, first query {r['first_query_s']} s, "
              f"JVM peak {r['jvm_peak_rss_mb']} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
