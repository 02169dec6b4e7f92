"""Benchmark the online stage: time per stage (offline backend) and LLM calls per question.

Usage::

    NAVQA_DATASETS_MIRROR=/path/to/mirror .venv/bin/python bench/bench_online.py
        [--vkg npd] [--n 60] [--llm-vkg demo] [--json]

Measured (printed, never asserted; targets from the Online issue):

* **time per question by stage** with the deterministic offline backend, on the first
  ``--n`` questions of the VKG's question file. "Ontop time" — every request the pipeline
  sends to the endpoint (value probes and the final query) — is measured by the SPARQL
  client and excluded from ``navqa_s``; target: median ≤ 1 s;
* **LLM calls per question** on the ``--llm-vkg`` question file with the LLM path
  switched on and the scripted OpenAI-compatible server answering every prompt kind with
  a well-formed reply (through the real ``openai`` client); target: median ≤ 6.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from pathlib import Path
from typing import Any

TARGETS = {"navqa_median_s": 1.0, "llm_calls_median": 6}


def _questions(vkg: str, n: int) -> list[dict[str, Any]]:
    from navqa.runtime.datasets import load_manifest
    from navqa.runtime.paths import repo_root

    m = load_manifest(vkg)
    path = repo_root() / m.questions[0]
    rows = [json.loads(x) for x in Path(path).read_text(encoding="utf-8").splitlines()
            if x.strip()]
    return rows[:n]


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[int(p * (len(xs) - 1))] if xs else 0.0


def time_by_stage(vkg: str, n: int) -> dict[str, Any]:
    from navqa.config import load_config
    from navqa.online.pipeline import Pipeline
    from navqa.runtime.vkg import serve_vkg

    cfg = load_config().with_overrides(llm={"provider": "none"})
    with serve_vkg(cfg, vkg) as running:
        pipe = Pipeline.for_vkg(cfg, running)
        pipe.ask("warm-up question about anything")
        stats = pipe.endpoint.stats  # type: ignore[attr-defined]
        per_stage: dict[str, list[float]] = {}
        navqa_s, ontop_s = [], []
        for q in _questions(vkg, n):
            before = stats.seconds
            ans = pipe.ask(q["question"])
            endpoint = stats.seconds - before
            ontop_s.append(endpoint)
            navqa_s.append(max(0.0, ans.timings["total"] - endpoint))
            for stage, s in ans.timings.items():
                per_stage.setdefault(stage, []).append(s)
    return {
        "questions": len(navqa_s),
        "navqa_median_s": round(statistics.median(navqa_s), 3),
        "navqa_p90_s": round(_pct(navqa_s, 0.9), 3),
        "ontop_median_s": round(statistics.median(ontop_s), 3),
        "stage_median_s": {k: round(statistics.median(v), 4) for k, v in sorted(per_stage.items())},
    }


def _generic_reply(req: Any) -> str:
    """A well-formed answer for every prompt kind navqa sends."""
    text = req.all_text
    if "Extract the mentions" in text:
        q = req.last_user
        words = [w for w in re.findall(r"[A-Za-z]+", q) if len(w) > 3][:4]
        return json.dumps({"class_mentions": words[:2], "property_mentions": words[2:],
                           "value_mentions": [], "answer": {"label": words[0] if words else "",
                                                            "kind": "entity"}})
    if "exploring its schema" in text:
        nodes = []
        for block in req.last_user.split("class id ")[1:]:
            names = re.findall(r"\(([\w\-]+:[\w\-]+)\)", block)
            nodes.append({"node": block.split()[0], "selected": names[:2]})
        return json.dumps({"nodes": nodes})
    if "Documents:" in text:
        n = len(re.findall(r"^\[\d+\] ", req.last_user, re.M))
        return json.dumps({"scores": [1.0 / (i + 1) for i in range(n)]})
    if "Schema excerpt:" in text:
        m = re.search(r"root class (\S+)", req.last_user)
        cls = m.group(1) if m else "owl:Thing"
        prefixes = "\n".join(re.findall(r"^PREFIX .*$", req.last_user, re.M))
        return json.dumps({"sparql": f"{prefixes}\nSELECT ?x WHERE {{ ?x a {cls} }} LIMIT 5"})
    return json.dumps({})


def llm_calls(vkg: str, n: int) -> dict[str, Any]:
    from navqa.config import load_config
    from navqa.online.pipeline import Pipeline
    from navqa.runtime.vkg import serve_vkg
    from navqa.testing.scripted_llm import ScriptedLLMServer

    with ScriptedLLMServer(default=_generic_reply) as server:
        cfg = load_config().with_overrides(llm={
            "provider": "openai", "base_url": server.base_url, "model": "scripted",
            "api_key": "sk-bench", "cache": False, "max_retries": 0})
        with serve_vkg(cfg, vkg) as running:
            pipe = Pipeline.for_vkg(cfg, running)
            calls = [pipe.ask(q["question"]).llm_calls for q in _questions(vkg, n)]
    return {"questions": len(calls), "llm_calls_median": statistics.median(calls),
            "llm_calls_max": max(calls), "llm_calls_min": min(calls)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vkg", default="npd")
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--llm-vkg", default="demo")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    out = {"time_by_stage": {"vkg": args.vkg, **time_by_stage(args.vkg, args.n)},
           "llm_calls": {"vkg": args.llm_vkg, **llm_calls(args.llm_vkg, args.n)},
           "targets": TARGETS}
    if args.json:
        print(json.dumps(out, indent=1))
        return
    t, c = out["time_by_stage"], out["llm_calls"]
    print(f"online benchmark: {t['questions']} {args.vkg} questions, offline backend")
    print(f"  navqa time per question (Ontop excluded): median {t['navqa_median_s']} s, "
          f"p90 {t['navqa_p90_s']} s (target ≤ {TARGETS['navqa_median_s']} s)")
    print(f"  Ontop time per question: median {t['ontop_median_s']} s")
    for stage, s in t["stage_median_s"].items():
        print(f"    {stage:14} {s} s")
    print(f"LLM calls per question ({c['questions']} {args.llm_vkg} questions, scripted "
          f"server): median {c['llm_calls_median']}, min {c['llm_calls_min']}, "
          f"max {c['llm_calls_max']} (target ≤ {TARGETS['llm_calls_median']})")


if __name__ == "__main__":
    main()
