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
from navqa.evaluation.plots import plot_f1_by_feature, plot_outcomes_by_hops, plot_recall_at_k
from navqa.evaluation.projection import ProjectionVerdict
from navqa.evaluation.rundir import (
    RESULTS_FILE,
    RUN_FILE,
    SUMMARY_FILE,
    read_results,
    summarize_run,
)
from navqa.evaluation.shape import HOP_BUCKETS

__all__ = ["FIGURES", "RECALL_FIGURE", "REPORT_FILE", "compare_runs", "load_run",
           "render_report"]

REPORT_FILE = "report.md"
FIGURES = ("outcomes_by_hops.png", "f1_by_feature.png")
RECALL_FIGURE = "linking_recall_at_k.png"
"""Written only when the run has linking events (a recall@k curve)."""

_RECALL_AT = (1, 3, 5, 10, 12, 20, 50)
"""The k shown in the report's recall@k table (those up to K)."""


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
        summary = summarize_run(run)
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


def _coverage_lines(s: dict[str, Any]) -> list[str]:
    g = s["grounding"]
    curves = g.get("recall_at_k")
    if not curves:
        return []
    lines = ["", "### Linking recall@k", "",
             "Share of questions whose gold classes (properties) are *all* in the linked "
             "top-k, over the questions that have some.", ""]
    if any(c.get("n") for c in curves.values()):
        lines += [f"![Linking recall@k]({RECALL_FIGURE})", ""]
    rows = []
    for name, c in curves.items():
        ks = [k for k in c["k"] if k in _RECALL_AT or k == c["k"][-1]]
        rows.append([name, c["n"], c["k"][-1] if c["k"] else "–",
                     "; ".join(f"@{k} {_pct(c['recall'][k - 1])}" for k in ks) or "–"])
    lines += _table(["terms", "questions", "K", "recall@k (%)"], rows)
    t = g.get("context_tokens") or {}
    full = [(label, g.get(key) or {}) for label, key in (
        ("classes", "subgraph_all_classes"), ("properties", "subgraph_all_properties"),
        ("classes and properties", "subgraph_all"))]
    lines += ["", "### Chosen subgraph holds all gold terms", ""]
    lines += _table(["gold terms", "% of questions", "questions"],
                    [[label, _pct(v.get("rate")), v.get("n", 0)] for label, v in full])
    lines += ["", f"- verbalized chosen subgraph: median {t.get('median', '–')} tokens, "
              f"p90 {t.get('p90', '–')} ({t.get('n', 0)} questions; tokenizer "
              f"`{t.get('tokenizer', '?')}`)"]
    return lines


def _projection_lines(s: dict[str, Any], records: Sequence[dict[str, Any]]) -> list[str]:
    p = s.get("projection")
    if not p or not p.get("n"):
        return []
    lines = ["", "## Projection", "",
             "Does the predicted answer's column match a gold column by its values "
             "(`docs/evaluation.md`, \"Projection diagnostic\")? Beside F1/Acc, not "
             "instead of them.", ""]
    n = p["n"] or 1
    lines += _table(["verdict", "n", "%"],
                    [[v.value, p.get(v.value, 0), f"{100.0 * p.get(v.value, 0) / n:.1f}"]
                     for v in ProjectionVerdict])
    lines += ["", f"- right projection among answers judged: "
              f"{_pct(p.get('right_projection_rate'))} %",
              f"- asked-column recall (gold answer columns a predicted column matches): "
              f"{_pct(p.get('asked_column_recall'))} % of {p.get('gold_columns', 0)}"]
    wrong = [r["id"] for r in records if (r.get("projection") or {}).get("verdict")
             == ProjectionVerdict.WRONG_PROJECTION]
    if wrong:
        lines.append(f"- wrong projection: {', '.join(wrong[:40])}"
                     f"{' …' if len(wrong) > 40 else ''}")
    return lines


def render_report(run_dir: Path | str) -> Path:
    """Write ``report.md`` and the figures into ``run_dir``; returns the report's path."""
    run = Path(run_dir)
    s, records = load_run(run)
    plot_outcomes_by_hops(s, run / FIGURES[0])
    plot_f1_by_feature(s, run / FIGURES[1])
    plot_recall_at_k(s, run / RECALL_FIGURE)

    abl = ", ".join(s.get("ablations") or []) or "none"
    llm = s.get("llm_provider", "none")
    if s.get("llm_model"):
        llm += f" ({s['llm_model']})"
    lines = [
        f"# Evaluation: `{s.get('strategy')}` on `{s.get('vkg')}`",
        "",
        f"- questions: {', '.join(s.get('questions') or []) or '–'} "
        f"(split `{s.get('split', 'custom')}`; {s['n']} of {s.get('n_questions', s['n'])} "
        f"answered{'' if s.get('complete', True) else ', incomplete run'})",
        f"- ablations: {abl}",
        f"- entity answers: {s.get('entity_answer', 'label')}",
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
    ]
    lines += _coverage_lines(s)
    lines += _projection_lines(s, records)
    lines += [
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
    for g in s.get("gold_errors", []):
        lines.append(f"- `{g['id']}`: left out of the metrics, its gold query failed: "
                     f"{(g.get('error') or '').removeprefix('gold query failed: ')[:300]}")
    gold_failed = {g["id"] for g in s.get("gold_errors", [])}
    unanswered = [i for i in s.get("pending", []) if i not in gold_failed]
    if unanswered:
        lines.append(f"- not answered ({len(unanswered)}; `--resume` runs them): "
                     f"{', '.join(unanswered[:20])}{' …' if len(unanswered) > 20 else ''}")
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
          _f1(r), "–" if "acc" not in r else "✓" if r["acc"] else "✗",
          (r.get("error") or "")[:120]]
         for r in records])
    path = run / REPORT_FILE
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _f1(r: dict[str, Any]) -> str:
    return f"{r['f1']:.2f}" if r.get("f1") is not None else "–"


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
    lines = [f"# {la} vs {lb}", "", f"VKG `{sa.get('vkg')}`, split "
             f"`{sa.get('split', 'custom')}` vs `{sb.get('split', 'custom')}`.", "",
             "## Metrics (%)", ""]
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
                              _f1(x) if x else "–", _f1(y) if y else "–"])
            continue
        if (x["outcome"] != y["outcome"] or abs(x.get("f1", 0.0) - y.get("f1", 0.0)) > 1e-9
                or x.get("acc") != y.get("acc")):
            diff_rows.append([qid, x["outcome"], y["outcome"], _f1(x), _f1(y)])
    lines += ["", f"## Per-question differences ({len(diff_rows)})", ""]
    if diff_rows:
        lines += _table(["id", f"outcome {la}", f"outcome {lb}", "F1 A", "F1 B"], diff_rows)
    else:
        lines.append("The runs agree on every question.")
    return "\n".join(lines) + "\n"
