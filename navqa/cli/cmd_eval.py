"""``navqa eval``: evaluate a strategy on a question set, render and compare runs.

::

    navqa eval --vkg demo --strategy gold --out runs/demo-gold          # same as `eval run`
    navqa eval --vkg npd --split validation --strategy navqa --out runs/npd-val   # keep/drop rules
    navqa eval --vkg npd --split test --strategy navqa --out runs/npd-test   # report only
    navqa eval -t my.owl -m my.obda -p my.properties --dataset my-questions.jsonl --out runs/mine
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
from navqa.cli.inputs import (
    endpoint_url,
    existing_file,
    mapping_choice,
    writable_dir,
    writable_file,
)
from navqa.cli.vkg_options import (
    CatalogOpt,
    EndpointOpt,
    LensesOpt,
    MappingOpt,
    OntologyOpt,
    PropertiesOpt,
    VkgOpt,
    resolve,
)
from navqa.errors import EvaluationError, InputError
from navqa.model.rules import GrammarRule

app = typer.Typer(
    help=("Evaluate a strategy on a VKG's question set (F1, Acc, NR, EM, empty-result rate, "
          "outcomes by hops and features, grounding diagnostics), render and compare runs.\n\n"
          "`navqa eval --vkg NAME --strategy S --out DIR` is short for `navqa eval run ...`."),
    context_settings={"help_option_names": ["-h", "--help"]},
)

_STRATEGY_HELP = "navqa, agent, cot, sparqlgen, or gold (submits the gold query: a self-check)."
_ABLATE_HELP = ("Switch a component off (repeatable): no-aoc, no-ise, no-type-filter, "
                "no-type-state, no-answer-type, no-values; or one grammar rule of the offline "
                "pipeline: no-rule-NAME, NAME one of "
                + ", ".join(r.value for r in GrammarRule) + " (docs/evaluation.md, "
                "\"Ablations\").")

_DATASET = typer.Option(None, "--dataset", dir_okay=False,
                        help="Question file (JSONL); recorded as split `custom`.")
_SPLIT = typer.Option(None, "--split",
                      help="dev (the manifest's questions, the default: rules are written "
                           "on it), validation (datasets/<vkg>/questions-validation.jsonl: "
                           "rules are kept or dropped by it), test "
                           "(datasets/<vkg>/questions-test.jsonl: frozen, report only), "
                           "dev-blind and validation-blind (questions-dev-blind.jsonl and "
                           "questions-validation-blind.jsonl: written blind like test, rules "
                           "are written on the first and kept or dropped by the second).")
_ENTITY_ANSWER = typer.Option(
    None, "--entity-answer",
    help="How an entity answer is projected: entity (its IRI and its label, the default) or "
         "label (the label alone, NaVQA's convention). Default for --split: the convention "
         "the VKG's manifest records for that split ([answers]); otherwise entity.")
_STRICT = typer.Option(False, "--strict",
                       help="Stop before answering anything when a gold query fails "
                            "(default: mark that question gold-error and go on).")
_STRATEGY = typer.Option("navqa", "--strategy", help=_STRATEGY_HELP)
_LLM = typer.Option(None, "--llm", help="none or openai (default: the configured provider).")
_ABLATE = typer.Option(None, "--ablate", help=_ABLATE_HELP)
_CONCURRENCY = typer.Option(1, "--concurrency", min=1, help="Questions answered at once.")
_RESUME = typer.Option(False, "--resume", help="Continue the run in --out, skipping done ids.")
_NO_CACHE = typer.Option(False, "--no-cache", help="Do not use the LLM call cache.")
_OUT = typer.Option(None, "--out", file_okay=False, help="Run directory to write.")
_RUN_DIR = typer.Argument(..., file_okay=False, exists=True,
                          help="A run directory written by `navqa eval run`.")
_RUN_A = typer.Argument(..., file_okay=False, exists=True, help="First run.")
_RUN_B = typer.Argument(..., file_okay=False, exists=True, help="Second run.")
_COMPARE_OUT = typer.Option(None, "--out", dir_okay=False,
                            help="Also write the comparison to this Markdown file.")


def _ablations(values: list[str] | None) -> list[str]:
    from navqa.evaluation.runner import ablation_names

    known = ablation_names()
    out: list[str] = []
    for v in values or []:
        for name in (x.strip() for x in v.split(",")):
            if not name:
                continue
            if name not in known:
                raise typer.BadParameter(f"unknown ablation {name!r}; known: "
                                         f"{', '.join(known)}", param_hint="--ablate")
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
                          f"({s.get('split', 'custom')} split, %)", box=box.SIMPLE_HEAD)
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
    return Group(metrics, outcomes, *_diagnostics_tables(s, pct))


def _diagnostics_tables(s: dict[str, Any], pct: Any) -> list[Table]:
    """Grounding coverage (recall@k, chosen subgraph, tokens) and the projection counts."""
    tables = []
    g = s.get("grounding") or {}
    curves = g.get("recall_at_k") or {}
    if any(c.get("n") for c in curves.values()):
        cov = Table(title="grounding: questions with all gold terms (%)", box=box.SIMPLE_HEAD)
        for col in ("terms", "n", "@1", "@3", "@K", "K", "subgraph"):
            cov.add_column(col, justify="left" if col == "terms" else "right", no_wrap=True)
        for name, key in (("classes", "subgraph_all_classes"),
                          ("properties", "subgraph_all_properties")):
            c = curves.get(name) or {"n": 0, "k": [], "recall": []}
            rec = c["recall"]
            cov.add_row(name, str(c["n"]), pct(rec[0] if rec else None),
                        pct(rec[2] if len(rec) > 2 else None), pct(rec[-1] if rec else None),
                        str(len(rec)), pct((g.get(key) or {}).get("rate")))
        t = g.get("context_tokens") or {}
        cov.caption = (f"verbalized chosen subgraph: median {t.get('median', '–')} tokens, "
                       f"p90 {t.get('p90', '–')}")
        tables.append(cov)
    p = s.get("projection")
    if p and p.get("n"):
        from navqa.evaluation.projection import ProjectionVerdict

        proj = Table(title="projection (questions)", box=box.SIMPLE_HEAD)
        for v in ProjectionVerdict:
            proj.add_column(v.value.replace("-", "\n", 1), justify="right", no_wrap=True)
        proj.add_row(*(str(p.get(v.value, 0)) for v in ProjectionVerdict))
        proj.caption = (f"right projection {pct(p.get('right_projection_rate'))} % of answers "
                        f"judged; asked-column recall {pct(p.get('asked_column_recall'))} % "
                        f"of {p.get('gold_columns', 0)} gold columns")
        tables.append(proj)
    return tables


def _run(ctx: typer.Context, *, vkg: str | None, dataset: Path | None, split: str | None,
         strategy: str, llm: str | None, ablate: list[str] | None, concurrency: int,
         resume: bool, no_cache: bool, out: Path | None, endpoint: str | None,
         mapping: Path | None, strict: bool, ontology: Path | None = None,
         properties: Path | None = None, catalog: Path | None = None,
         lenses: Path | None = None, entity_answer: str | None = None) -> None:
    from navqa.evaluation.dataset import (
        SPLITS,
        Split,
        default_question_files,
        load_questions,
        load_split,
        split_convention,
    )
    from navqa.evaluation.runner import STRATEGIES, run_eval
    from navqa.model.answers import EntityAnswer
    from navqa.model.vkg_source import VkgKind
    from navqa.runtime.datasets import fetch_dataset
    from navqa.runtime.serve import serve_source
    from navqa.runtime.vkg import serve_vkg

    if out is None:
        raise typer.BadParameter("missing --out", param_hint="--out")
    if strategy not in STRATEGIES:
        raise typer.BadParameter(f"unknown strategy {strategy!r}; known: "
                                 f"{', '.join(STRATEGIES)}", param_hint="--strategy")
    if llm is not None and llm not in ("none", "openai"):
        raise typer.BadParameter("use none or openai", param_hint="--llm")
    if split is not None and split not in SPLITS:
        raise typer.BadParameter("use " + ", ".join(SPLITS), param_hint="--split")
    if split is not None and dataset is not None:
        raise typer.BadParameter("give --split or --dataset, not both", param_hint="--split")
    if entity_answer is not None and entity_answer not in tuple(EntityAnswer):
        raise typer.BadParameter("use entity or label", param_hint="--entity-answer")
    if endpoint:
        endpoint_url(endpoint)
    if dataset is not None:
        existing_file(dataset, "--dataset")
    writable_dir(out, "--out")
    ablations = _ablations(ablate)
    if vkg is not None and mapping is not None and not mapping.exists():
        mapping_choice(str(mapping))  # --vkg NAME --mapping obda|r2rml
    if vkg is None and ontology is None and mapping is None:
        from navqa.runtime.project import find_project

        if find_project() is None:  # eval never falls back to the demo silently
            raise typer.BadParameter("missing --vkg NAME (or -t/-m/-p FILE, or a navqa.toml)",
                                     param_hint="--vkg")
    given = None
    if dataset is not None:  # a bad file fails before anything is fetched or started
        try:
            given = load_questions(dataset)
        except EvaluationError as e:
            raise InputError(e.message, hint=e.hint) from e  # the user's file: exit 2
    chosen = resolve(ctx, vkg, ontology, mapping, properties, catalog, lenses, endpoint)
    source, cfg = chosen.source, chosen.config
    bundled = source.kind is VkgKind.bundled
    vkg = source.name
    files: tuple[Path, ...] = (dataset,) if dataset is not None else source.question_files
    if not bundled and split is not None:
        raise typer.BadParameter("--split is for the bundled VKGs; give --dataset FILE",
                                 param_hint="--split")
    if not bundled and not files:
        where = f" (questions = [] in {source.project_file})" if source.project_file else ""
        raise typer.BadParameter(f"no question file for {vkg}{where}; give --dataset FILE",
                                 param_hint="--dataset")
    if bundled and dataset is None:
        try:
            default_question_files(vkg, split or Split.DEV)
        except EvaluationError as e:
            raise InputError(e.message, hint=e.hint) from e  # --split has no file: exit 2
    # a bad file fails before anything starts
    try:
        questions = given or (load_questions(*files) if files
                              else load_split(vkg, split or Split.DEV))
    except EvaluationError as e:
        if not files:
            raise
        raise InputError(e.message, hint=e.hint) from e  # the user's file: exit 2
    for path, line, note in questions.warnings:
        err_console.print(f"[yellow]warning[/]: {escape(str(path))}:{line}: {escape(note)}")
    convention = EntityAnswer(entity_answer) if entity_answer is not None else (
        split_convention(vkg, split or Split.DEV) if bundled and not files else None)
    if convention is not None:
        cfg = cfg.with_overrides(pipeline={"entity_answer": convention.value})

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
            cache=not no_cache, concurrency=concurrency, resume=resume, progress=progress,
            strict=strict)
        try:
            if not bundled:  # the user's own VKG, or their endpoint
                served = stack.enter_context(
                    starting(f"starting {vkg}", serve_source, cfg, source))
                summary = run_eval(cfg, served=served, **kwargs)
            elif source.endpoint:
                ds = fetch_dataset(vkg, cfg)
                summary = run_eval(cfg, endpoint_url=source.endpoint, dataset=ds, **kwargs)
            else:
                running = stack.enter_context(starting(
                    f"starting {vkg}", serve_vkg, cfg, vkg, mapping=source.mapping_choice,
                    dev=True))
                summary = run_eval(cfg, vkg=running, **kwargs)
        except KeyboardInterrupt:
            err_console.print(f"[yellow]interrupted[/]: finished questions are kept in "
                              f"{escape(str(out))}; continue with --resume")
            raise
    console.print(summary_table(summary))
    for g in summary.get("gold_errors", []):
        err_console.print(f"[yellow]gold-error[/] {escape(g['id'])}: left out of the metrics "
                          f"(see the report)")
    if not summary.get("complete", True):
        err_console.print(f"[yellow]incomplete[/]: {len(summary.get('pending', []))} "
                          "question(s) not done; `--resume` tries them again")
    console.print(f"report: {escape(str(out / 'report.md'))}")


@app.callback(invoke_without_command=True)
def main(
    ctx: typer.Context,
    vkg: VkgOpt = None,
    dataset: Path | None = _DATASET,
    split: str | None = _SPLIT,
    strategy: str = _STRATEGY,
    llm: str | None = _LLM,
    ablate: list[str] | None = _ABLATE,
    concurrency: int = _CONCURRENCY,
    resume: bool = _RESUME,
    no_cache: bool = _NO_CACHE,
    out: Path | None = _OUT,
    endpoint: EndpointOpt = None,
    mapping: MappingOpt = None,
    strict: bool = _STRICT,
    ontology: OntologyOpt = None,
    properties: PropertiesOpt = None,
    catalog: CatalogOpt = None,
    lenses: LensesOpt = None,
    entity_answer: str | None = _ENTITY_ANSWER,
) -> None:
    """Evaluate (the options given here run `navqa eval run`)."""
    if ctx.invoked_subcommand is not None:
        if vkg is not None or out is not None or dataset is not None:
            raise typer.BadParameter("give run options after `run`, not before a subcommand")
        return
    if vkg is None and out is None and ontology is None:
        console.print(ctx.get_help())
        raise typer.Exit(0)
    _run(ctx, vkg=vkg, dataset=dataset, split=split, strategy=strategy, llm=llm,
         ablate=ablate, concurrency=concurrency, resume=resume, no_cache=no_cache, out=out,
         endpoint=endpoint, mapping=mapping, strict=strict, ontology=ontology,
         properties=properties, catalog=catalog, lenses=lenses, entity_answer=entity_answer)


@app.command("run")
def run(
    ctx: typer.Context,
    vkg: VkgOpt = None,
    dataset: Path | None = _DATASET,
    split: str | None = _SPLIT,
    strategy: str = _STRATEGY,
    llm: str | None = _LLM,
    ablate: list[str] | None = _ABLATE,
    concurrency: int = _CONCURRENCY,
    resume: bool = _RESUME,
    no_cache: bool = _NO_CACHE,
    out: Path | None = _OUT,
    endpoint: EndpointOpt = None,
    mapping: MappingOpt = None,
    strict: bool = _STRICT,
    ontology: OntologyOpt = None,
    properties: PropertiesOpt = None,
    catalog: CatalogOpt = None,
    lenses: LensesOpt = None,
    entity_answer: str | None = _ENTITY_ANSWER,
) -> None:
    """Answer every question with a strategy and score it (writes results, summary, report)."""
    _run(ctx, vkg=vkg, dataset=dataset, split=split, strategy=strategy, llm=llm,
         ablate=ablate, concurrency=concurrency, resume=resume, no_cache=no_cache, out=out,
         endpoint=endpoint, mapping=mapping, strict=strict, ontology=ontology,
         properties=properties, catalog=catalog, lenses=lenses, entity_answer=entity_answer)


def _run_dir(path: Path, param_hint: str) -> None:
    """A usage error unless ``path`` looks like a run directory (it has results.jsonl)."""
    if not (path / "results.jsonl").is_file():
        raise typer.BadParameter(f"{path} is not a run directory (no results.jsonl)",
                                 param_hint=param_hint)


@app.command("report")
def report(
    run_dir: Path = _RUN_DIR,
) -> None:
    """Render a run: report.md, outcomes_by_hops.png, f1_by_feature.png."""
    from navqa.evaluation.report import load_run, render_report

    _run_dir(run_dir, "RUN_DIR")
    path = render_report(run_dir)
    summary, _records = load_run(run_dir)
    console.print(summary_table(summary))
    console.print(f"report: {escape(str(path))}")


@app.command("compare")
def compare(
    run_a: Path = _RUN_A,
    run_b: Path = _RUN_B,
    out: Path | None = _COMPARE_OUT,
) -> None:
    """Put two runs side by side: metrics, outcomes, per-question differences."""
    from navqa.evaluation.report import compare_runs

    _run_dir(run_a, "RUN_A")
    _run_dir(run_b, "RUN_B")
    if out is not None:
        writable_file(out, "--out")
    text = compare_runs(run_a, run_b)
    if out is not None:
        out.write_text(text, encoding="utf-8")
    console.print(Markdown(text))


__all__ = ["app", "summary_table"]
