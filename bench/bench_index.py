"""Benchmark the offline stage on NPD: cold build time and peak memory, warm load time.

Usage::

    NAVQA_DATASETS_MIRROR=/path/to/mirror python bench/bench_index.py [--vkg npd] [--json]

Each measurement runs in its own Python process, so the peak resident set size
(``ru_maxrss``) of the build is not inflated by anything else, and the warm load starts
from a cold interpreter exactly like ``navqa ask`` would:

* **cold build**: load the embedding model, parse T and M, close the active ontology,
  build the class graph, describe and embed every active element, write the index;
* **warm load**: :func:`navqa.offline.artifacts.load_index` of that directory, with the
  input checksums verified (no parsing, no embedding model).

Targets: build ≤ 60 s, peak ≤ 2 GB, warm load ≤ 2 s.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

TARGETS = {"build_s": 60.0, "build_peak_mb": 2048.0, "load_s": 2.0}


def _peak_mb() -> float:
    """Peak resident set size of this process, in MiB (Linux reports KiB)."""
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / 1024 if sys.platform != "darwin" else kib / 1024 / 1024


def _child_build(vkg: str, out: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    from navqa.backends.embedder_st import SentenceTransformerEmbedder
    from navqa.config import load_config
    from navqa.offline.artifacts import build_index
    from navqa.runtime.datasets import fetch_dataset

    cfg = load_config().with_overrides(llm={"provider": "none"})
    ds = fetch_dataset(vkg, cfg)
    t_model = time.perf_counter()
    emb = SentenceTransformerEmbedder.from_config(cfg.embedder)
    model_s = time.perf_counter() - t_model
    t_build = time.perf_counter()
    catalog = ds.path("catalog") if ds.manifest.has("catalog") else None
    bundle = build_index(cfg, ontology_path=ds.path("ontology"), mapping_path=ds.path("mapping"),
                         catalog=catalog, out_dir=out, embedder=emb, name=vkg)
    build_s = time.perf_counter() - t_build
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "total_s": time.perf_counter() - t0,
        "cpu_s": ru.ru_utime + ru.ru_stime,
        "model_load_s": model_s,
        "build_s": build_s,
        "peak_mb": _peak_mb(),
        "elements": bundle.stats["index"]["elements"],
        "timings": bundle.stats["timings"],
        "embedder": bundle.manifest.embedder_model,
    }


def _child_load(out: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    from navqa.offline.artifacts import load_index

    t_import = time.perf_counter() - t0
    t = time.perf_counter()
    bundle = load_index(out)
    load_s = time.perf_counter() - t
    return {
        "import_s": t_import,
        "load_s": load_s,
        "peak_mb": _peak_mb(),
        "vectors": len(bundle.class_index) + len(bundle.property_index),
    }


def _run_child(*args: str) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, __file__, "--child", *args],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(f"benchmark child {' '.join(args)} failed ({proc.returncode})")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vkg", default="npd")
    ap.add_argument("--json", action="store_true", help="print the figures as JSON")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        what, *rest = args.child
        result = _child_build(rest[0], Path(rest[1])) if what == "build" else _child_load(
            Path(rest[0]))
        print(json.dumps(result))
        return

    with tempfile.TemporaryDirectory(prefix="navqa-bench-") as tmp:
        out = Path(tmp) / args.vkg
        build = _run_child("build", args.vkg, str(out))
        load = _run_child("load", str(out))
    figures = {
        "vkg": args.vkg,
        "cold_build_s": round(build["total_s"], 2),
        "cold_build_cpu_s": round(build["cpu_s"], 2),
        "load_average": round(os.getloadavg()[0], 2),
        "of_which_model_load_s": round(build["model_load_s"], 2),
        "of_which_index_build_s": round(build["build_s"], 2),
        "build_stage_timings_s": build["timings"],
        "build_peak_mb": round(build["peak_mb"], 1),
        "elements_embedded": build["elements"],
        "embedder": build["embedder"],
        "warm_load_s": round(load["load_s"], 3),
        "warm_import_s": round(load["import_s"], 3),
        "warm_peak_mb": round(load["peak_mb"], 1),
        "targets": TARGETS,
    }
    figures["meets_targets"] = (figures["cold_build_s"] <= TARGETS["build_s"]
                                and figures["build_peak_mb"] <= TARGETS["build_peak_mb"]
                                and figures["warm_load_s"] <= TARGETS["load_s"])
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    print(f"{args.vkg}: cold build {figures['cold_build_s']:.1f} s "
          f"(model load {figures['of_which_model_load_s']:.1f} s, index "
          f"{figures['of_which_index_build_s']:.1f} s), peak RSS "
          f"{figures['build_peak_mb']:.0f} MiB, {figures['elements_embedded']} elements "
          f"embedded with {figures['embedder']}")
    print(f"  CPU time {figures['cold_build_cpu_s']:.1f} s; load average "
          f"{figures['load_average']:.1f} on {os.cpu_count()} cores (the wall time grows "
          "with other jobs)")
    print("  stages: " + ", ".join(f"{k} {v:.2f}" for k, v in build["timings"].items()))
    print(f"  warm load {figures['warm_load_s']:.3f} s (imports {figures['warm_import_s']:.2f} s, "
          f"peak RSS {figures['warm_peak_mb']:.0f} MiB)")
    print(f"  targets: build ≤ {TARGETS['build_s']:.0f} s, peak ≤ {TARGETS['build_peak_mb']:.0f} "
          f"MiB, warm load ≤ {TARGETS['load_s']:.0f} s → "
          f"{'met' if figures['meets_targets'] else 'NOT met'}")


if __name__ == "__main__":
    main()
