"""``navqa ask``: a question in, answers out — with every step on request."""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

import typer
from rich.markup import escape
from rich.panel import Panel
from rich.syntax import Syntax
from rich.table import Table
from rich.text import Text

from navqa.cli.console import console, err_console, starting
from navqa.cli.inputs import endpoint_url
from navqa.cli.render import confidence_lines, to_table
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
from navqa.model.events import (
    AgentStep,
    Answer,
    Answered,
    AnswerTypePredicted,
    CheaperQueryTried,
    Event,
    Linked,
    MentionsExtracted,
    PropertiesJudged,
    QueryChecked,
    QueryCostChecked,
    QueryExecuted,
    QueryRepaired,
    QuerySynthesized,
    SubgraphsReranked,
    SubgraphVerbalized,
    TypeStateUpdated,
    UngroundedWhy,
    ValuesGrounded,
)
from navqa.model.events_json import answer_json, event_json
from navqa.runtime.serve import serve_source

__all__ = ["answer_json", "ask", "event_json"]


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
    vkg: VkgOpt = None,
    ontology: OntologyOpt = None,
    mapping: MappingOpt = None,
    properties: PropertiesOpt = None,
    catalog: CatalogOpt = None,
    lenses: LensesOpt = None,
    endpoint: EndpointOpt = None,
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
    if not question.strip():
        raise typer.BadParameter("the question is empty", param_hint="QUESTION")
    if top_k is not None and top_k < 1:
        raise typer.BadParameter(f"{top_k} is not a positive number", param_hint="--top-k")
    if max_depth is not None and max_depth < 0:
        raise typer.BadParameter(f"{max_depth} is negative", param_hint="--max-depth")
    if endpoint is not None:
        endpoint_url(endpoint)
    chosen = resolve(ctx, vkg, ontology, mapping, properties, catalog, lenses, endpoint)
    cfg = chosen.config
    if not explain and type_filter and values and top_k is None and max_depth is None:
        from navqa.cli.cmd_serve import ask_running_service  # a `navqa serve` of this VKG

        if ask_running_service(chosen.source, cfg, question, strategy=strategy.value,
                               llm=None if llm is LlmChoice.config else llm.value,
                               as_json=as_json):
            return
    overrides: dict[str, Any] = {"type_filter": type_filter, "value_grounding": values,
                                 "top_k": top_k, "max_depth": max_depth}
    cfg = cfg.with_overrides(pipeline=overrides)
    if llm is not LlmChoice.config:
        cfg = cfg.with_overrides(llm={"provider": llm.value})
    from navqa.backends.embedder_factory import make_embedder
    from navqa.backends.llm_factory import make_llm
    from navqa.backends.sparql_http import HttpSparqlEndpoint
    from navqa.offline.artifacts import ensure_index
    from navqa.online.pipeline import Pipeline

    source = chosen.source
    with starting(f"preparing {source.name}", serve_source, cfg, source, dev=True) as running:
        emb = make_embedder(cfg.embedder)  # numpy at query time: no torch import
        backend = make_llm(cfg)
        bundle = ensure_index(cfg, source, embedder=emb, llm=backend)
        pipe = Pipeline.from_index(
            bundle,
            endpoint=HttpSparqlEndpoint(running.url, timeout=cfg.runtime.query_timeout_s),
            config=cfg, embedder=emb, llm=backend)
        from navqa.cli.cost import guard_for

        pipe.cost_guard = guard_for(running, mappings=bundle.mappings, max_cost=None,
                                    timeout_s=cfg.runtime.query_timeout_s, config=cfg)
        if running.partial_note and not as_json:
            err_console.print(f"[yellow]partial data:[/] {escape(running.partial_note)}")
        answer: Answer | None = None
        explainer = Explainer(pipe.ctx.compact)
        for ev in pipe.stream(question, strategy=strategy.value):
            if explain and not as_json:
                explainer(ev)
            if isinstance(ev, QueryCostChecked) and ev.verdict == "costly" and not as_json:
                err_console.print(f"[yellow]warning[/]: \\[costly-query] {escape(ev.summary)}")
                err_console.print(f"    suggestion: {escape(ev.suggestion or '')}")
            if isinstance(ev, CheaperQueryTried) and not as_json:
                err_console.print(f"    {'[green]' if ev.kept_cheaper else '[yellow]'}"
                                  f"cost guard[/]: {escape(ev.summary)}")
            if isinstance(ev, Answered):
                answer = ev.answer
    assert answer is not None
    if as_json:
        print(json.dumps(answer_json(answer), indent=1, ensure_ascii=False, default=str))
        if answer.error:
            raise typer.Exit(1)  # the JSON says why; the exit code says it failed
        return
    if answer.sparql and not explain:
        console.print(Syntax(answer.sparql, "sparql", word_wrap=True))
    if answer.result is not None:
        console.print(to_table(answer.result, pipe.ctx.prefixes))
        if answer.empty:
            console.print("[yellow]The query ran and returned nothing.[/]")
    if explain:
        console.rule("[bold]8. confidence[/] (what it could not place, what else it considered)")
    for line in confidence_lines(answer.confidence, answer.unplaced, answer.alternatives,
                                 pipe.ctx.compact):
        console.print(line)
    if answer.error:
        err_console.print(f"[bold red]no answer:[/] {escape(answer.error)}", soft_wrap=True)
        raise typer.Exit(1)


class Explainer:
    """Prints the event stream for ``--explain`` (only the chosen subgraph in full)."""

    def __init__(self, compact: Any) -> None:
        self.compact = compact
        self.subgraphs: dict[str, str] = {}
        self.judged: list[PropertiesJudged] = []

    def __call__(self, ev: Event) -> None:
        # Question text, data values and IRIs are never rich markup: everything
        # interpolated below goes through ``escape`` (``[/x]`` must print, not crash).
        def compact(iri: str) -> str:
            return escape(self.compact(iri))

        if isinstance(ev, MentionsExtracted):
            m = ev.mentions
            vals = ", ".join(
                f"{v.text!r} ({v.kind}{'' if v.comparator == '=' else ' ' + v.comparator}"
                f"{'' if v.match == 'exact' else ' ' + v.match.value})"
                for v in m.values) or "none"
            console.rule(f"[bold]1. mentions[/] ({escape(ev.method)})")
            console.print(f"phrases: {escape(', '.join(m.classes[:12]) or 'none')}")
            console.print(f"values: {escape(vals)}")
            cues = [k for k, v in (("how many", m.cues.how_many), ("yes/no", m.cues.yes_no)) if v]
            if m.cues.superlative:
                cues.append(f"superlative {m.cues.superlative_word!r}")
            console.print(escape(f"cues: wh={m.cues.wh!r} {' '.join(cues)}"))
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
            console.print(f"answer type: {escape(ev.kind.value)}, class {cls} "
                          f"({escape(ev.method)})")
        elif isinstance(ev, ValuesGrounded):
            console.rule("[bold]3. values[/] (stored forms found in the data)")
            if not ev.enabled:
                console.print("value grounding switched off")
            for g in ev.groundings:
                owners = " or ".join(compact(c) for c in (g.classes or (g.cls,)) if c) or "?"
                console.print(f"{escape(repr(g.mention))} → "
                              f"{compact(g.prop) if g.prop else '?'} = "
                              f"{escape(repr(g.stored))} on {owners}")
            for u in ev.ungrounded:
                if u.why is UngroundedWhy.PROBE_FAILED:
                    console.print(f"{escape(repr(u.mention))} not looked up: its probe failed "
                                  "(not used as a constraint)")
                    continue
                console.print(f"{escape(repr(u.mention))} not found in the data; nearest: "
                              f"{escape(', '.join(repr(v) for v in u.nearest) or 'none')}"
                              + ("" if u.kept else " (not used as a constraint)"))
            for f in ev.failures:
                console.print(f"[yellow]the {escape(f.probe.value)} probe"
                              + (f" for {escape(repr(f.mention))}" if f.mention else "")
                              + f" failed, went on without it:[/] {escape(f.error)}")
            if ev.enabled and not ev.groundings and not ev.ungrounded:
                console.print("no value found in the data")
        elif isinstance(ev, PropertiesJudged):
            self.judged.append(ev)  # printed after the rerank, for the chosen class only
        elif isinstance(ev, SubgraphVerbalized):
            self.subgraphs[ev.root] = ev.text
        elif isinstance(ev, SubgraphsReranked):
            self._expansion(ev.chosen)
            console.rule(f"[bold]5. rerank[/] ({escape(ev.method)})")
            for s in ev.scores:
                mark = "→" if s.iri == ev.chosen else " "
                console.print(f"{mark} {compact(s.iri)} {s.score:.3f}")
            for iri in ev.passed_over:
                console.print(f"  passed over {compact(iri)}: its query only restates a value "
                              "of the question (restated-value)")
            if ev.chosen in self.subgraphs:
                console.print(Panel(Text(self.subgraphs[ev.chosen]),
                                    title=f"chosen subgraph: {compact(ev.chosen)}", expand=False))
        elif isinstance(ev, QuerySynthesized):
            console.rule(f"[bold]6. SPARQL[/] ({escape(ev.method)})")
            console.print(Syntax(ev.sparql, "sparql", word_wrap=True))
        elif isinstance(ev, QueryChecked):
            status = "[green]ok[/]" if ev.ok else "[red]refused[/]"
            console.print(f"check: {status}" +
                          ("; " + escape("; ".join(ev.issues)) if ev.issues else ""))
        elif isinstance(ev, QueryExecuted):
            console.rule("[bold]7. execution[/]")
            console.print(f"{ev.rows} row(s) in {ev.seconds:.2f}s" +
                          (" — [yellow]empty[/]" if ev.empty else ""))
        elif isinstance(ev, QueryRepaired):
            console.print(f"[yellow]repair {ev.attempt}[/] ({escape(ev.method)}): "
                          f"{escape(ev.reason)}")
            console.print(Syntax(ev.after, "sparql", word_wrap=True))
        elif isinstance(ev, AgentStep):
            console.print(f"[cyan]step {ev.step}[/] {escape(ev.action)}"
                          f"({escape(ev.argument[:80])}) → {escape(ev.observation[:160])}")
        elif isinstance(ev, TypeStateUpdated):
            console.print(f"  [dim]type state: {escape(ev.entity)} ∈ "
                          f"{', '.join(compact(t) for t in ev.types)} "
                          f"({escape(ev.source)})[/]")

    def _expansion(self, chosen: str) -> None:
        def compact(iri: str) -> str:
            return escape(self.compact(iri))

        console.rule("[bold]4. expansion[/] (one judge decision per node)")
        mine = [j for j in self.judged if j.root == chosen]
        others = {j.root for j in self.judged} - {chosen}
        for j in mine:
            sel = ", ".join(compact(p) for p in j.selected) or "—"
            filt = (f", {len(j.filtered_out)} removed by the type filter"
                    if j.filtered_out else "")
            console.print(f"  depth {j.depth} at {compact(j.node)}: "
                          f"{len(j.candidates)}/{j.available} shown{filt}; keep {sel} "
                          f"({escape(j.method)})")
        if others:
            n = sum(1 for j in self.judged if j.root != chosen)
            console.print(f"  [dim]({len(others)} other candidate classes: {n} nodes judged; "
                          f"--json shows every decision)[/]")
