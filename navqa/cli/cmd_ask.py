"""``navqa ask``: a question in, answers out — with every step on request."""

from __future__ import annotations

import dataclasses
import json
from enum import Enum, StrEnum
from typing import Any

import typer
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table

from navqa.cli.console import console, err_console, starting
from navqa.cli.render import result_json, to_table
from navqa.cli.state import state
from navqa.model.events import (
    AgentStep,
    Answer,
    Answered,
    AnswerTypePredicted,
    Event,
    Linked,
    MentionsExtracted,
    PropertiesJudged,
    QueryChecked,
    QueryExecuted,
    QueryRepaired,
    QuerySynthesized,
    SubgraphsReranked,
    SubgraphVerbalized,
    TypeStateUpdated,
    ValuesGrounded,
)
from navqa.runtime.vkg import serve_vkg


class Strategy(StrEnum):
    navqa = "navqa"
    agent = "agent"
    cot = "cot"
    sparqlgen = "sparqlgen"


class LlmChoice(StrEnum):
    none = "none"
    openai = "openai"
    config = "config"


def ask(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="The question, in natural language."),
    vkg: str = typer.Option("demo", "--vkg", help="Dataset to ask (see `navqa datasets list`)."),
    explain: bool = typer.Option(False, "--explain", help="Show every step that led there."),
    as_json: bool = typer.Option(False, "--json", help="Print the answer, SPARQL and events "
                                 "as JSON."),
    llm: LlmChoice = typer.Option(LlmChoice.config, "--llm", help="none = the deterministic "
                                  "offline backend; openai = the configured OpenAI-compatible "
                                  "server; config = whatever navqa.yaml says."),
    strategy: Strategy = typer.Option(Strategy.navqa, help="navqa (NaVQA pipeline) or agent "
                                      "(SAGA-style ReAct agent); cot/sparqlgen are baselines."),
    type_filter: bool = typer.Option(True, help="SAGA's type filter inside the expansion."),
    values: bool = typer.Option(True, help="Probe the endpoint for the stored form of names."),
    top_k: int | None = typer.Option(None, help="Candidate classes (default 5)."),
    max_depth: int | None = typer.Option(None, help="Expansion depth L_max (default 3)."),
) -> None:
    """Answer a question over a VKG: link it to the mapped ontology, grow and rank
    subgraphs, write SPARQL, check it for unmapped terms, and run it on Ontop.

    With no LLM configured (the default) every step runs its deterministic offline
    implementation. The VKG's PostgreSQL, Ontop endpoint and index are set up as needed.
    """
    cfg = state(ctx).config
    overrides: dict[str, Any] = {"type_filter": type_filter, "value_grounding": values,
                                 "top_k": top_k, "max_depth": max_depth}
    cfg = cfg.with_overrides(pipeline=overrides)
    if llm is not LlmChoice.config:
        cfg = cfg.with_overrides(llm={"provider": llm.value})
    from navqa.online.pipeline import Pipeline

    with starting(f"preparing {vkg}", serve_vkg, cfg, vkg) as running:
        pipe = Pipeline.for_vkg(cfg, running)
        if running.dataset.manifest.partial and not as_json:
            err_console.print(f"[yellow]partial data:[/] {running.dataset.manifest.partial_note}")
        answer: Answer | None = None
        explainer = Explainer(pipe.ctx.compact)
        for ev in pipe.stream(question, strategy=strategy.value):
            if explain and not as_json:
                explainer(ev)
            if isinstance(ev, Answered):
                answer = ev.answer
    assert answer is not None
    if as_json:
        print(json.dumps(answer_json(answer), indent=1, ensure_ascii=False, default=str))
        return
    if answer.sparql and not explain:
        console.print(Syntax(answer.sparql, "sparql", word_wrap=True))
    if answer.result is not None:
        console.print(to_table(answer.result, pipe.ctx.prefixes))
        if answer.empty:
            console.print("[yellow]The query ran and returned nothing.[/]")
    if answer.error:
        err_console.print(f"[bold red]no answer:[/] {answer.error}")
        raise typer.Exit(1)


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out = {f.name: _jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
        return out
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_jsonable(v) for v in value]
    if isinstance(value, Enum):
        return value.value
    return value


def event_json(ev: Event) -> dict[str, Any]:
    """One event as JSON (its type and fields)."""
    data = _jsonable(ev)
    data["type"] = type(ev).__name__
    data["stage"] = ev.stage
    return data


def answer_json(a: Answer) -> dict[str, Any]:
    """The answer with its SPARQL, result (SPARQL JSON), timings, LLM use and events."""
    return {
        "question": a.question,
        "strategy": a.strategy,
        "sparql": a.sparql,
        "result": result_json(a.result) if a.result is not None else None,
        "empty": a.empty,
        "error": a.error,
        "timings": a.timings,
        "llm": {"calls": a.llm_calls, "prompt_tokens": a.prompt_tokens,
                "completion_tokens": a.completion_tokens},
        "events": [event_json(e) for e in a.events],
    }


class Explainer:
    """Prints the event stream for ``--explain`` (only the chosen subgraph in full)."""

    def __init__(self, compact: Any) -> None:
        self.compact = compact
        self.subgraphs: dict[str, str] = {}
        self.judged: list[PropertiesJudged] = []

    def __call__(self, ev: Event) -> None:
        compact = self.compact
        if isinstance(ev, MentionsExtracted):
            m = ev.mentions
            vals = ", ".join(
                f"{v.text!r} ({v.kind}{'' if v.comparator == '=' else ' ' + v.comparator})"
                for v in m.values) or "none"
            console.rule(f"[bold]1. mentions[/] ({ev.method})")
            console.print(f"phrases: {', '.join(m.classes[:12]) or 'none'}")
            console.print(f"values: {vals}")
            cues = [k for k, v in (("how many", m.cues.how_many), ("yes/no", m.cues.yes_no)) if v]
            if m.cues.superlative:
                cues.append(f"superlative {m.cues.superlative_word!r}")
            console.print(f"cues: wh={m.cues.wh!r} {' '.join(cues)}")
        elif isinstance(ev, Linked):
            console.rule("[bold]2. linking[/] (top-k classes and properties, S(e, W))")
            t = Table("class", "score", "property", "score", box=None)
            for i in range(max(len(ev.classes), min(6, len(ev.properties)))):
                c = ev.classes[i] if i < len(ev.classes) else None
                p = ev.properties[i] if i < len(ev.properties) else None
                t.add_row(compact(c.iri) if c else "", f"{c.score:.2f}" if c else "",
                          compact(p.iri) if p else "", f"{p.score:.2f}" if p else "")
            console.print(t)
        elif isinstance(ev, AnswerTypePredicted):
            cls = compact(ev.cls) if ev.cls else "—"
            console.print(f"answer type: {ev.kind.value}, class {cls} ({ev.method})")
        elif isinstance(ev, ValuesGrounded):
            console.rule("[bold]3. values[/] (stored forms found in the data)")
            if not ev.enabled:
                console.print("value grounding switched off")
            for g in ev.groundings:
                owners = " or ".join(compact(c) for c in (g.classes or (g.cls,)) if c) or "?"
                console.print(f"{g.mention!r} → {compact(g.prop) if g.prop else '?'} = "
                              f"{g.stored!r} on {owners}")
            if ev.enabled and not ev.groundings:
                console.print("no value found in the data")
        elif isinstance(ev, PropertiesJudged):
            self.judged.append(ev)  # printed after the rerank, for the chosen class only
        elif isinstance(ev, SubgraphVerbalized):
            self.subgraphs[ev.root] = ev.text
        elif isinstance(ev, SubgraphsReranked):
            self._expansion(ev.chosen)
            console.rule(f"[bold]5. rerank[/] ({ev.method})")
            for s in ev.scores:
                mark = "→" if s.iri == ev.chosen else " "
                console.print(f"{mark} {compact(s.iri)} {s.score:.3f}")
            if ev.chosen in self.subgraphs:
                console.print(Panel(self.subgraphs[ev.chosen],
                                    title=f"chosen subgraph: {compact(ev.chosen)}", expand=False))
        elif isinstance(ev, QuerySynthesized):
            console.rule(f"[bold]6. SPARQL[/] ({ev.method})")
            console.print(Syntax(ev.sparql, "sparql", word_wrap=True))
        elif isinstance(ev, QueryChecked):
            status = "[green]ok[/]" if ev.ok else "[red]refused[/]"
            console.print(f"check: {status}" + ("; " + "; ".join(ev.issues) if ev.issues else ""))
        elif isinstance(ev, QueryExecuted):
            console.rule("[bold]7. execution[/]")
            console.print(f"{ev.rows} row(s) in {ev.seconds:.2f}s" +
                          (" — [yellow]empty[/]" if ev.empty else ""))
        elif isinstance(ev, QueryRepaired):
            console.print(f"[yellow]repair {ev.attempt}[/] ({ev.method}): {ev.reason}")
            console.print(Syntax(ev.after, "sparql", word_wrap=True))
        elif isinstance(ev, AgentStep):
            console.print(f"[cyan]step {ev.step}[/] {ev.action}({ev.argument[:80]}) → "
                          f"{ev.observation[:160]}")
        elif isinstance(ev, TypeStateUpdated):
            console.print(f"  [dim]type state: {ev.entity} ∈ "
                          f"{', '.join(compact(t) for t in ev.types)} ({ev.source})[/]")

    def _expansion(self, chosen: str) -> None:
        compact = self.compact
        console.rule("[bold]4. expansion[/] (one judge decision per node)")
        mine = [j for j in self.judged if j.root == chosen]
        others = {j.root for j in self.judged} - {chosen}
        for j in mine:
            sel = ", ".join(compact(p) for p in j.selected) or "—"
            filt = (f", {len(j.filtered_out)} removed by the type filter"
                    if j.filtered_out else "")
            console.print(f"  depth {j.depth} at {compact(j.node)}: "
                          f"{len(j.candidates)}/{j.available} shown{filt}; keep {sel} "
                          f"({j.method})")
        if others:
            n = sum(1 for j in self.judged if j.root != chosen)
            console.print(f"  [dim]({len(others)} other candidate classes: {n} nodes judged; "
                          f"--json shows every decision)[/]")
