"""Benchmark ``navqa index`` on a large ontology (a stand-in for UBERON, GO or a taxonomy).

Usage::

    python bench/bench_large_ontology.py [--classes 474000] [--keep DIR] [--json]

It *generates* the ontology deterministically: the demo VKG's ontology (so that the demo
mapping's terms are declared and the active ontology stays small) followed by a taxonomy
of ``--classes`` labelled ``owl:Class``es (``rdfs:label``, ``rdfs:subClassOf`` to a parent in
a tree of fan-out 8, and on every 200th class an ``rdfs:comment`` and an
``oboInOwl:hasExactSynonym``): about 1.42 M triples with the default 474,000 classes.

Then, each in its own Python process (so that the peak resident set size is its own):

* **baseline**: a plain rdflib parse of the file into a ``Graph`` (what indexing used to
  start with);
* **index**: ``navqa index -t FILE -m demo.obda --out DIR --stats --json`` (parse, owlready2
  cross-check, closure, class graph, descriptions, embeddings, write).

It prints the wall time and peak memory of both, and the index's figures as ratios against
the baseline measured in the same run (wall and CPU seconds: on a shared machine the CPU
ratio is the steadier one). Targets: index ≤ 60 s and ≤ 1.5 GB peak. It prints figures; it
is not a test.

The index uses the configured embedder through ``make_embedder``: the real
all-MiniLM-L6-v2 weights on the numpy runtime (no torch; sentence-transformers cost about
11 s of CPU and 880 MB of the peak whatever the ontology). It embeds only the indexed
elements (the demo mapping's active ontology, 52 descriptions), not the 474,000 taxonomy
labels, so embedding itself is small.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEMO_ONTOLOGY = ROOT / "ontologies" / "demo.ttl"
DEMO_MAPPING = ROOT / "mappings" / "demo.obda"
TARGETS = {"index_s": 60.0, "index_peak_mb": 1536.0}
_SYLLABLES = ("ba", "cor", "den", "fa", "gil", "hu", "ka", "lor", "mi", "nus", "or", "pe",
              "qui", "ra", "sel", "ti", "ur", "ves", "xa", "zon")


def generate_taxonomy(out: Path, classes: int = 474_000, *, seed: int = 7) -> int:
    """Write the demo ontology plus a labelled taxonomy of ``classes`` classes to ``out``.

    Returns the number of triples written by the taxonomy part (the demo ontology's come on
    top). The same arguments always give the same file.
    """
    rng = random.Random(seed)

    def word() -> str:
        return "".join(rng.choice(_SYLLABLES) for _ in range(rng.randint(2, 4)))

    triples = 1
    with out.open("w", encoding="utf-8") as f:
        f.write(DEMO_ONTOLOGY.read_text(encoding="utf-8"))
        f.write("\n@prefix tax: <http://example.org/navqa/taxon#> .\n"
                "@prefix oio: <http://www.geneontology.org/formats/oboInOwl#> .\n"
                "oio:hasExactSynonym a owl:AnnotationProperty .\n")
        for i in range(classes):
            name = f"{word()} {word()}"
            lines = [f'tax:T{i} a owl:Class ;\n    rdfs:label "{name}"@en']
            triples += 2
            if i:
                lines.append(f"    rdfs:subClassOf tax:T{(i - 1) // 8}")
                triples += 1
            if i % 200 == 0:
                lines.append(f'    rdfs:comment "A taxon of the {word()} group, {i}."@en')
                lines.append(f'    oio:hasExactSynonym "{word()} {name}"')
                triples += 2
            f.write(" ;\n".join(lines) + " .\n")
    return triples


def _peak_mb() -> float:
    kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kib / 1024 if sys.platform != "darwin" else kib / 1024 / 1024


def _child_baseline(path: Path) -> dict[str, Any]:
    t0 = time.perf_counter()
    from rdflib import Graph

    g = Graph()
    g.parse(path, format="turtle")
    return {"triples": len(g), "s": time.perf_counter() - t0, "peak_mb": _peak_mb()}


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def _run_child(args: list[str]) -> dict[str, Any]:
    cpu = _children_cpu()
    out = subprocess.run([sys.executable, __file__, *args], check=True,
                         capture_output=True, text=True)
    return {**json.loads(out.stdout.strip().splitlines()[-1]), "cpu_s": _children_cpu() - cpu}


def _run_index(path: Path, out_dir: Path) -> dict[str, Any]:
    navqa = Path(sys.executable).with_name("navqa")
    cmd = [str(navqa), "index", "-t", str(path), "-m", str(DEMO_MAPPING), "--out",
           str(out_dir), "--force", "--no-llm", "--stats", "--json"]
    t0, cpu = time.perf_counter(), _children_cpu()
    proc = subprocess.run(cmd, check=True, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    figures = json.loads(proc.stdout)
    stats = figures.get("stats", figures)  # ``--json`` nests the figures under "stats"
    return {"s": wall, "cpu_s": _children_cpu() - cpu, "peak_mb": peak_mb, "figures": stats}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--classes", type=int, default=474_000)
    ap.add_argument("--keep", type=Path, help="Write the generated ontology here and keep it.")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--_baseline", type=Path, help=argparse.SUPPRESS)
    ns = ap.parse_args()
    if ns._baseline is not None:
        print(json.dumps(_child_baseline(ns._baseline)))
        return
    with tempfile.TemporaryDirectory(prefix="navqa-bench-large-") as tmp:
        path = ns.keep if ns.keep is not None else Path(tmp) / "large.ttl"
        if not path.is_file():
            generate_taxonomy(path, ns.classes)
        # the index first: RUSAGE_CHILDREN is the peak of all children waited for so far
        index = _run_index(path, Path(tmp) / "index")
        baseline = _run_child(["--_baseline", str(path)])
    onto = index["figures"].get("ontology", {})
    result = {
        "classes": onto.get("classes"),
        "triples": baseline["triples"],
        "baseline_rdflib_parse_s": round(baseline["s"], 1),
        "baseline_rdflib_cpu_s": round(baseline["cpu_s"], 1),
        "baseline_rdflib_peak_mb": round(baseline["peak_mb"]),
        "index_s": round(index["s"], 1),
        "index_cpu_s": round(index["cpu_s"], 1),
        "index_peak_mb": round(index["peak_mb"]),
        "index_time_ratio": round(index["s"] / baseline["s"], 2),
        "index_cpu_ratio": round(index["cpu_s"] / baseline["cpu_s"], 2),
        "index_memory_ratio": round(index["peak_mb"] / baseline["peak_mb"], 2),
        "timings": index["figures"].get("timings"),
        "targets": TARGETS,
    }
    if ns.json:
        print(json.dumps(result, indent=2))
        return
    for k, v in result.items():
        print(f"{k:28} {v}")


if __name__ == "__main__":
    main()
