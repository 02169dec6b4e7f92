"""Markdown reports of a run, and of two runs side by side.

:func:`render_report` writes ``report.md`` (with ``outcomes_by_hops.png`` and
``f1_by_feature.png``) into the run directory; :func:`compare_runs` returns a Markdown
comparison of two run directories (metrics, outcomes, per-question differences).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from navqa.errors import EvaluationError
from navqa.evaluation.outcomes import OUTCOMES
from navqa.evaluation.plots import plot_f1_by_feature, plot_outcomes_by_hops
from navqa.evaluation.runner import (
    RESULTS_FILE,
    RUN_FILE,
    SUMMARY_FILE,
    finish_run,
    read_results,
)
from navqa.evaluation.shape import HOP_BUCKETS

__all__ = ["FIGURES", "REPORT_FILE", "compare_runs", "load_run", "render_report"]

REPORT_FILE = "report.md"
FIGURES = ("outcomes_by_hops.png", "f1_by_feature.png")


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100.0 * x:.1f}"


def _sec(x: float | None) -> str:
    return "–" if x is None else f"{x:.3f}"


def _table(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> list[str]:
    def esc(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    out = ["| " + " | ".join(esc(h) for h in header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(esc(c) for c in row) + " |" for row in rows]
    return out


def load_run(run_dir: Path | str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The summary and records of a run directory (the summary is recomputed if missing).

    Raises:
        EvaluationError: not a run directory.
    """
    run = Path(run_dir)
    if not (run / RESULTS_FILE).is_file():
        raise EvaluationError(f"{run} is not a run directory (no {RESULTS_FILE})")
    path = run / SUMMARY_FILE
    if path.is_file():
        try:
            summary = json.loads(path.read_text(encoding="utf-8"))
        except ValueError as e:
            raise EvaluationError(f"{path} is not valid JSON") from e
    else:
        summary = finish_run(run, report=False)
    records = read_results(run)
    try:
        order = json.loads((run / RUN_FILE).read_text(encoding="utf-8")).get("question_ids")
    except (OSError, ValueError):
        order = None
    if order:
        by_id = {r["id"]: r for r in records}
        records = [by_id[i] for i in order if i in by_id]
    return summary, records


def _metrics_rows(s: dict[str, Any]) -> list[list[str]]:
    return [[_pct(s["f1"]), _pct(s["acc"]), _pct(s["nr"]), _pct(s["em"]),
             _pct(s["empty_rate"]), _pct(s.get("precision")), _pct(s.get("recall")),
             str(s["n"])]]


def render_report(run_dir: Path | str) -> Path:
    """Write ``report.md`` and the figures into ``run_dir``; returns the report's path."""
    run = Path(run_dir)
    s, records = load_run(run)
    plot_outcomes_by_hops(s, run / FIGURES[0])
    plot_f1_by_feature(s, run / FIGURES[1])

    abl = ", ".join(s.get("ablations") or []) or "none"
    llm = s.get("llm_provider", "none")
    if s.get("llm_model"):
        llm += f" ({s['llm_model']})"
    lines = [
        f"# Evaluation: `{s.get('strategy')}` on `{s.get('vkg')}`",
        "",
        f"- questions: {', '.join(s.get('questions') or []) or '–'} "
        f"({s['n']} of {s.get('n_questions', s['n'])} answered"
        f"{'' if s.get('complete', True) else ', incomplete run'})",
        f"- ablations: {abl}",
        f"- LLM: {llm}; call cache {'on' if s.get('llm_cache', True) else 'off'}",
        f"- navqa {s.get('navqa_version', '?')}; started {s.get('started_at', '?')}, "
        f"finished {s.get('finished_at', '?')}",
        "",
        "## Metrics (%)",
        "",
        "F1, Acc and NR as in NaVQA §4.2 (bag semantics); EM and the empty-result rate as "
        "in SAGA. See `docs/evaluation.md`.",
        "",
    ]
    lines += _table(["F1", "Acc", "NR", "EM", "empty", "P", "R", "n"], _metrics_rows(s))
    lines += ["", "## Outcomes", ""]
    n = s["n"] or 1
    lines += _table(["outcome", "n", "%"],
                    [[o.value, s["outcomes"].get(o.value, 0),
                      f"{100.0 * s['outcomes'].get(o.value, 0) / n:.1f}"] for o in OUTCOMES])
    lines += ["", "## By hops", "", f"![Outcomes by hops]({FIGURES[0]})", ""]
    rows = []
    for b in HOP_BUCKETS:
        g = s["by_hops"][b]
        rows.append([b, g["n"], _pct(g["f1"]), _pct(g["acc"]), _pct(g["nr"]), _pct(g["em"])]
                    + [g["outcomes"].get(o.value, 0) for o in OUTCOMES])
    lines += _table(["hops", "n", "F1", "Acc", "NR", "EM"] + [o.value for o in OUTCOMES], rows)
    lines += ["", "## By feature", "", f"![F1 by feature]({FIGURES[1]})", ""]
    lines += _table(["feature", "n", "F1", "Acc", "NR", "EM", "empty"],
                    [[name, g["n"], _pct(g["f1"]), _pct(g["acc"]), _pct(g["nr"]),
                      _pct(g["em"]), _pct(g["empty_rate"])]
                     for name, g in s["by_feature"].items() if g["n"]])
    g = s["grounding"]
    lines += ["", "## Grounding", ""]
    lines += _table(
        ["recall of gold terms", "%", "questions"],
        [["classes in linked top-k", _pct(g["linked_class_recall"]), g["linked_class_recall_n"]],
         ["properties in linked top-k", _pct(g["linked_property_recall"]),
          g["linked_property_recall_n"]],
         ["classes in chosen subgraph", _pct(g["subgraph_class_recall"]),
          g["subgraph_class_recall_n"]],
         ["properties in chosen subgraph", _pct(g["subgraph_property_recall"]),
          g["subgraph_property_recall_n"]],
         ["properties in type-filtered listings", _pct(g["listing_property_recall"]),
          g["listing_property_recall_n"]]])
    sub = g.get("subgraph_edges_mean")
    lines += [
        "",
        f"- chosen subgraph size: mean {sub:.1f} edges" if sub is not None
        else "- chosen subgraph size: –",
        f"- filter reduction ratio (shown ÷ available): {_pct(s['reduction'])} % over "
        f"{g['lookups']} lookups ({g['shown']} of {g['available']} properties shown)",
        f"- gold-property retention: {_pct(s['retention'])} % "
        f"({g['gold_pairs_filtered_out']} of {g['gold_pairs_examined']} examined gold "
        f"(class, property) pairs filtered out)",
        "",
        "## Latency (s)",
        "",
    ]
    lines += _table(["stage", "median", "p90", "n"],
                    [[stage, _sec(v["median"]), _sec(v["p90"]), v["n"]]
                     for stage, v in s["latency"].items()])
    llm_s = s["llm"]
    lines += ["", "## LLM", "",
              f"- calls: {llm_s['calls']}; tokens: {llm_s['tokens']} "
              f"(prompt {llm_s['prompt_tokens']}, completion {llm_s['completion_tokens']})",
              "", "## Question-file checks", ""]
    if s.get("gold_empty"):
        lines.append(f"- gold answers that are empty: {', '.join(s['gold_empty'])}")
    for d in s.get("hops_disagreements", []):
        lines.append(f"- `{d['id']}`: file says {d['file']} hops, the gold query has "
                     f"{d['computed']}")
    for d in s.get("feature_disagreements", []):
        lines.append(f"- `{d['id']}`: file features {sorted(d['file'])}, detected "
                     f"{sorted(d['computed'])}")
    if lines[-1] == "":
        lines.append("- none: hops and features agree with the gold queries, "
                     "no gold answer is empty")
    lines += ["", "## Questions", ""]
    lines += _table(
        ["id", "hops", "features", "outcome", "F1", "Acc", "error"],
        [[r["id"], r["hop_bucket"], ",".join(r["features"]) or "–", r["outcome"],
          f"{r['f1']:.2f}", "✓" if r["acc"] else "✗", (r.get("error") or "")[:120]]
         for r in records])
    path = run / REPORT_FILE
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _label(s: dict[str, Any], run: Path) -> str:
    abl = "+".join(s.get("ablations") or [])
    return f"{run.name} ({s.get('strategy')}{' ' + abl if abl else ''})"


def _delta(a: float | None, b: float | None, scale: float = 100.0) -> str:
    if a is None or b is None:
        return "–"
    return f"{scale * (b - a):+.1f}"


def compare_runs(run_a: Path | str, run_b: Path | str) -> str:
    """Two runs side by side, as Markdown: metrics, outcomes, per-question differences.

    Raises:
        EvaluationError: a directory is not a run, or the runs are on different VKGs.
    """
    a_dir, b_dir = Path(run_a), Path(run_b)
    sa, ra = load_run(a_dir)
    sb, rb = load_run(b_dir)
    if sa.get("vkg") != sb.get("vkg"):
        raise EvaluationError(f"the runs are on different VKGs ({sa.get('vkg')} and "
                              f"{sb.get('vkg')})")
    la, lb = _label(sa, a_dir), _label(sb, b_dir)
    lines = [f"# {la} vs {lb}", "", f"VKG `{sa.get('vkg')}`.", "", "## Metrics (%)", ""]
    rows = [[name, _pct(sa.get(key)), _pct(sb.get(key)), _delta(sa.get(key), sb.get(key))]
            for name, key in (("F1", "f1"), ("Acc", "acc"), ("NR", "nr"), ("EM", "em"),
                              ("empty rate", "empty_rate"), ("retention", "retention"),
                              ("reduction", "reduction"))]
    rows.append(["questions", sa["n"], sb["n"], f"{sb['n'] - sa['n']:+d}"])
    ta, tb = sa["latency"]["total"]["median"], sb["latency"]["total"]["median"]
    rows.append(["median latency (s)", _sec(ta), _sec(tb), _delta(ta, tb, 1.0)])
    rows.append(["LLM calls", sa["llm"]["calls"], sb["llm"]["calls"],
                 f"{sb['llm']['calls'] - sa['llm']['calls']:+d}"])
    lines += _table(["", la, lb, "Δ"], rows)
    lines += ["", "## Outcomes", ""]
    lines += _table(["outcome", la, lb, "Δ"],
                    [[o.value, sa["outcomes"].get(o.value, 0), sb["outcomes"].get(o.value, 0),
                      f"{sb['outcomes'].get(o.value, 0) - sa['outcomes'].get(o.value, 0):+d}"]
                     for o in OUTCOMES])
    lines += ["", "## F1 by hops (%)", ""]
    lines += _table(["hops", la, lb, "Δ"],
                    [[b, _pct(sa["by_hops"][b]["f1"]), _pct(sb["by_hops"][b]["f1"]),
                      _delta(sa["by_hops"][b]["f1"], sb["by_hops"][b]["f1"])]
                     for b in HOP_BUCKETS])
    a_by = {r["id"]: r for r in ra}
    b_by = {r["id"]: r for r in rb}
    diff_rows = []
    for qid in list(a_by) + [i for i in b_by if i not in a_by]:
        x, y = a_by.get(qid), b_by.get(qid)
        if x is None or y is None:
            diff_rows.append([qid, x["outcome"] if x else "(missing)",
                              y["outcome"] if y else "(missing)",
                              f"{x['f1']:.2f}" if x else "–", f"{y['f1']:.2f}" if y else "–"])
            continue
        if (x["outcome"] != y["outcome"] or abs(x["f1"] - y["f1"]) > 1e-9
                or x["acc"] != y["acc"]):
            diff_rows.append([qid, x["outcome"], y["outcome"], f"{x['f1']:.2f}",
                              f"{y['f1']:.2f}"])
    lines += ["", f"## Per-question differences ({len(diff_rows)})", ""]
    if diff_rows:
        lines += _table(["id", f"outcome {la}", f"outcome {lb}", "F1 A", "F1 B"], diff_rows)
    else:
        lines.append("The runs agree on every question.")
    return "\n".join(lines) + "\n"
