"""PNG figures of a run summary, drawn with matplotlib's Agg canvas (no GUI, no pyplot state).

* ``outcomes_by_hops.png``: for each hop bucket, a stacked bar of the outcome shares (%)
  with the number of questions on top.
* ``f1_by_feature.png``: F1 and Acc (%) for each feature present in the run.
* ``linking_recall_at_k.png``: the linking recall@k curves (classes, properties), when
  the run has linking events.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from navqa.evaluation.outcomes import OUTCOMES
from navqa.evaluation.shape import HOP_BUCKETS

__all__ = ["OUTCOME_COLOURS", "plot_f1_by_feature", "plot_outcomes_by_hops",
           "plot_recall_at_k"]

OUTCOME_COLOURS = {
    "non-empty": "#4c9a2a",
    "silent-failure": "#e1a100",
    "syntax-error": "#c0392b",
    "execution-error": "#8e44ad",
    "timeout": "#7f8c8d",
    "no-query": "#34495e",
}


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=100)
    FigureCanvasAgg(fig)
    return fig


def plot_outcomes_by_hops(summary: dict[str, Any], path: Path) -> Path:
    """Stacked bars of outcome shares per hop bucket; returns ``path``."""
    fig = _figure(6.4, 4.2)
    ax = fig.add_subplot(1, 1, 1)
    buckets = list(HOP_BUCKETS)
    groups = [summary["by_hops"].get(b, {"n": 0, "outcomes": {}}) for b in buckets]
    bottoms = [0.0] * len(buckets)
    for outcome in OUTCOMES:
        shares = [100.0 * g["outcomes"].get(outcome.value, 0) / g["n"] if g["n"] else 0.0
                  for g in groups]
        if not any(shares):
            continue
        ax.bar(buckets, shares, bottom=bottoms, label=outcome.value,
               color=OUTCOME_COLOURS[outcome.value], edgecolor="white", linewidth=0.5)
        bottoms = [b + s for b, s in zip(bottoms, shares, strict=True)]
    for i, g in enumerate(groups):
        ax.text(i, 101, f"n={g['n']}", ha="center", va="bottom", fontsize=8)
    ax.set_ylim(0, 110)
    ax.set_xlabel("hops (object-property joins in the gold query)")
    ax.set_ylabel("questions (%)")
    ax.set_title(f"Outcomes by hops — {summary.get('strategy', '')} on {summary.get('vkg', '')}")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    fig.tight_layout()
    fig.savefig(path, format="png")
    return path


def plot_f1_by_feature(summary: dict[str, Any], path: Path) -> Path:
    """Grouped bars of F1 and Acc per query feature (features with questions only)."""
    items = [(name, g) for name, g in summary["by_feature"].items() if g["n"]]
    fig = _figure(max(5.0, 0.9 * len(items) + 2.0), 4.2)
    ax = fig.add_subplot(1, 1, 1)
    xs = list(range(len(items)))
    width = 0.38
    f1 = [100.0 * (g["f1"] or 0.0) for _n, g in items]
    acc = [100.0 * (g["acc"] or 0.0) for _n, g in items]
    ax.bar([x - width / 2 for x in xs], f1, width, label="F1", color="#2c7fb8")
    ax.bar([x + width / 2 for x in xs], acc, width, label="Acc", color="#a6bddb")
    for x, (_name, g) in zip(xs, items, strict=True):
        ax.text(x, 101, f"n={g['n']}", ha="center", va="bottom", fontsize=8)
    ax.set_xticks(xs)
    ax.set_xticklabels([name for name, _g in items], rotation=30, ha="right")
    ax.set_ylim(0, 110)
    ax.set_ylabel("%")
    ax.set_title(f"F1 by feature — {summary.get('strategy', '')} on {summary.get('vkg', '')}")
    ax.legend(fontsize=8, frameon=False)
    fig.tight_layout()
    fig.savefig(path, format="png")
    return path


def plot_recall_at_k(summary: dict[str, Any], path: Path) -> Path | None:
    """Lines of the linking recall@k (%) for classes and properties; ``None`` (nothing
    written) when the run has no curve."""
    curves = (summary.get("grounding") or {}).get("recall_at_k") or {}
    items = [(name, c) for name, c in curves.items() if c.get("n") and c.get("k")]
    if not items:
        return None
    fig = _figure(6.4, 4.2)
    ax = fig.add_subplot(1, 1, 1)
    colours = {"classes": "#2c7fb8", "properties": "#e1a100"}
    for name, c in items:
        ys = [100.0 * (y or 0.0) for y in c["recall"]]
        ax.plot(c["k"], ys, marker="o", label=f"{name} (n={c['n']})",
                color=colours.get(name, "#34495e"))
    ax.set_ylim(0, 105)
    ax.set_xlabel("k (top-k of the linking)")
    ax.set_ylabel("questions with all gold terms in the top-k (%)")
    ax.set_title(f"Linking recall@k — {summary.get('strategy', '')} on "
                 f"{summary.get('vkg', '')}")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, frameon=False, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, format="png")
    return path
