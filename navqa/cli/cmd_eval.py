"""``navqa eval``: evaluate a strategy on a question set, render and compare runs.

::

    navqa eval --vkg demo --strategy gold --out runs/demo-gold          # same as `eval run`
    navqa eval run --vkg npd --strategy navqa --llm openai --ablate no-aoc --out runs/npd-noaoc
    navqa eval report runs/npd-noaoc
    navqa eval compare runs/npd-navqa runs/npd-noaoc
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

import typer
from rich import box
from rich.console import Group
from rich.markdown import Markdown
from rich.markup import escape
from rich.table import Table

from navqa.cli.console import console, err_console, progress_bar, starting
from navqa.cli.state import state

app = typer.Typer(
    help=("Evaluate a strategy on a VKG's question set (F1, Acc, NR, EM, empty-result rate, "
          "outcomes by hops and features, grounding diagnostics), render and compare runs.\n\n"
          "`navqa eval --vkg NAME --strategy S --out DIR` is short for `navqa eval run ...`."),
    context_settings={"help_option_names": ["-h", "--help"]},
)

_STRATEGY_HELP = "navqa, agent, cot, sparqlgen, or gold (submits the gold query: a self-check)."
_ABLATE_HELP = ("Switch a component off (repeatable): no-aoc, no-ise, no-type-filter, "
                "no-type-state, no-answer-type, no-values.")

_VKG = typer.Option(None, "--vkg", help="Dataset to evaluate on (see `navqa datasets list`).")
_DATASET = typer.Option(None, "--dataset", dir_okay=False,
                        help="Question file (JSONL); default: the VKG manifest's `questions`.")
_STRATEGY = typer.Option("navqa", "--strategy", help=_STRATEGY_HELP)
_LLM = typer.Option(None, "--llm", help="none or openai (default: the configured provider).")
_ABLATE = typer.Option(None, "--ablate", help=_ABLATE_HELP)
_CONCURRENCY = typer.Option(1, "--concurrency", min=1, help="Questions answered at once.")
_RESUME = typer.Option(False, "--resume", help="Continue the run in --out, skipping done ids.")
_NO_CACHE = typer.Option(False, "--no-cache", help="Do not use the LLM call cache.")
_OUT = typer.Option(None, "--out", file_okay=False, help="Run directory to write.")
_ENDPOINT = typer.Option(None, "--endpoint",
                         help="Evaluate against this SPARQL endpoint URL (serving --vkg) "
                              "instead of starting one.")
_MAPPING = typer.Option(None, "--mapping", help="obda or r2rml (default: the manifest's).")
_RUN_DIR = typer.Argument(..., file_okay=False, exists=True,
                          help="A run directory written by `navqa eval run`.")
_RUN_A = typer.Argument(..., file_okay=False, exists=True, help="First run.")
_RUN_B = typer.Argument(..., file_okay=False, exists=True, help="Second run.")
_COMPARE_OUT = typer.Option(None, "--out", dir_okay=False,
                            help="Also write the comparison to this Markdown file.")


def _ablations(values: list[str] | None) -> list[str]:
    from navqa.evaluation.runner import ABLATIONS

    out: list[str] = []
    for v in values or []:
        for name in (x.strip() for x in v.split(",")):
            if not name:
                continue
            if name not in ABLATIONS:
                raise typer.BadParameter(f"unknown ablation {name!r}; known: "
                                         f"{', '.join(ABLATIONS)}", param_hint="--ablate")
            if name not in out:
                out.append(name)
    return out


def summary_table(s: dict[str, Any]) -> Group:
    """The headline numbers of a run summary: metrics (%) and outcome counts, by hops."""

    def pct(x: float | None) -> str:
        return "–" if x is None else f"{100 * x:.1f}"

    from navqa.evaluation.outcomes import OUTCOMES
    from navqa.evaluation.shape import HOP_BUCKETS

    abl = "+".join(s.get("ablations") or [])
    groups = [("all", s)] + [(b, s["by_hops"][b]) for b in HOP_BUCKETS]
    metrics = Table(title=f"{s.get('strategy')}{' ' + abl if abl else ''} on {s.get('vkg')} "
                          "(%)", box=box.SIMPLE_HEAD)
    for col in ("hops", "n", "F1", "Acc", "NR", "EM", "empty"):
        metrics.add_column(col, justify="left" if col == "hops" else "right", no_wrap=True)
    for name, g in groups:
        metrics.add_row(name, str(g["n"]), pct(g["f1"]), pct(g["acc"]), pct(g["nr"]),
                        pct(g["em"]), pct(g["empty_rate"]))
    outcomes = Table(title="outcomes (questions)", box=box.SIMPLE_HEAD)
    outcomes.add_column("hops", no_wrap=True)
    for o in OUTCOMES:
        outcomes.add_column(o.value.replace("-", "\n", 1), justify="right", no_wrap=True)
    for name, g in groups:
        outcomes.add_row(name, *(str(g["outcomes"].get(o.value, 0)) for o in OUTCOMES))
    return Group(metrics, outcomes)


def _run(ctx: typer.Context, *, vkg: str | None, dataset: Path | None, strategy: str,
         llm: str | None, ablate: list[str] | None, concurrency: int, resume: bool,
         no_cache: bool, out: Path | None, endpoint: str | None, mapping: str | None) -> None:
    from navqa.evaluation.dataset import default_question_files, load_questions
    from navqa.evaluation.runner import STRATEGIES, run_eval
    from navqa.runtime.datasets import fetch_dataset
    from navqa.runtime.vkg import serve_vkg

    if vkg is None:
        raise typer.BadParameter("missing --vkg", param_hint="--vkg")
    if out is None:
        raise typer.BadParameter("missing --out", param_hint="--out")
    if strategy not in STRATEGIES:
        raise typer.BadParameter(f"unknown strategy {strategy!r}; known: "
                                 f"{', '.join(STRATEGIES)}", param_hint="--strategy")
    if llm is not None and llm not in ("none", "openai"):
        raise typer.BadParameter("use none or openai", param_hint="--llm")
    ablations = _ablations(ablate)
    cfg = state(ctx).config
    files = [dataset] if dataset is not None else default_question_files(vkg)
    questions = load_questions(*files)  # a bad file fails before anything starts

    with contextlib.ExitStack() as stack:
        bar = stack.enter_context(progress_bar())
        task = bar.add_task(f"{strategy} on {vkg}", total=len(questions), visible=False)

        def progress(done: int, total: int, record: dict[str, Any] | None) -> None:
            desc = f"{strategy} on {vkg}"
            if record is not None:
                desc += f"  [dim]{escape(record['id'])}: {record['outcome']}[/]"
            bar.update(task, completed=done, total=total, description=desc, visible=True)

        kwargs: dict[str, Any] = dict(
            questions=questions, out_dir=out, strategy=strategy, ablations=ablations, llm=llm,
            cache=not no_cache, concurrency=concurrency, resume=resume, progress=progress)
        try:
            if endpoint:
                ds = fetch_dataset(vkg, cfg)
                summary = run_eval(cfg, endpoint_url=endpoint, dataset=ds, **kwargs)
            else:
                running = stack.enter_context(
                    starting(f"starting {vkg}", serve_vkg, cfg, vkg, mapping=mapping))
                summary = run_eval(cfg, vkg=running, **kwargs)
        except KeyboardInterrupt:
            err_console.print(f"[yellow]interrupted[/]: finished questions are kept in "
                              f"{escape(str(out))}; continue with --resume")
            raise
    console.print(summary_table(summary))
    console.print(f"report: {out / 'report.md'}")


@app.callback(invoke_without_command=True)
def main(
    ctx: typer.Context,
    vkg: str | None = _VKG,
    dataset: Path | None = _DATASET,
    strategy: str = _STRATEGY,
    llm: str | None = _LLM,
    ablate: list[str] | None = _ABLATE,
    concurrency: int = _CONCURRENCY,
    resume: bool = _RESUME,
    no_cache: bool = _NO_CACHE,
    out: Path | None = _OUT,
    endpoint: str | None = _ENDPOINT,
    mapping: str | None = _MAPPING,
) -> None:
    """Evaluate (the options given here run `navqa eval run`)."""
    if ctx.invoked_subcommand is not None:
        if vkg is not None or out is not None or dataset is not None:
            raise typer.BadParameter("give run options after `run`, not before a subcommand")
        return
    if vkg is None and out is None:
        console.print(ctx.get_help())
        raise typer.Exit(0)
    _run(ctx, vkg=vkg, dataset=dataset, strategy=strategy, llm=llm, ablate=ablate,
         concurrency=concurrency, resume=resume, no_cache=no_cache, out=out,
         endpoint=endpoint, mapping=mapping)


@app.command("run")
def run(
    ctx: typer.Context,
    vkg: str | None = _VKG,
    dataset: Path | None = _DATASET,
    strategy: str = _STRATEGY,
    llm: str | None = _LLM,
    ablate: list[str] | None = _ABLATE,
    concurrency: int = _CONCURRENCY,
    resume: bool = _RESUME,
    no_cache: bool = _NO_CACHE,
    out: Path | None = _OUT,
    endpoint: str | None = _ENDPOINT,
    mapping: str | None = _MAPPING,
) -> None:
    """Answer every question with a strategy and score it (writes results, summary, report)."""
    _run(ctx, vkg=vkg, dataset=dataset, strategy=strategy, llm=llm, ablate=ablate,
         concurrency=concurrency, resume=resume, no_cache=no_cache, out=out,
         endpoint=endpoint, mapping=mapping)


@app.command("report")
def report(
    run_dir: Path = _RUN_DIR,
) -> None:
    """Render a run: report.md, outcomes_by_hops.png, f1_by_feature.png."""
    from navqa.evaluation.report import load_run, render_report

    path = render_report(run_dir)
    summary, _records = load_run(run_dir)
    console.print(summary_table(summary))
    console.print(f"report: {path}")


@app.command("compare")
def compare(
    run_a: Path = _RUN_A,
    run_b: Path = _RUN_B,
    out: Path | None = _COMPARE_OUT,
) -> None:
    """Put two runs side by side: metrics, outcomes, per-question differences."""
    from navqa.evaluation.report import compare_runs

    text = compare_runs(run_a, run_b)
    if out is not None:
        out.write_text(text, encoding="utf-8")
    console.print(Markdown(text))


__all__ = ["app", "summary_table"]
