"""The papers' baselines, as strategies of the same pipeline (for ``navqa eval``).

* ``cot`` — CoT-SPARQL (Zahera et al., 2024): the LLM reasons step by step with the
  **whole ontology** in the prompt (the whole *active* ontology when the configuration
  keeps ``use_active_ontology``; NaVQA's "w/o AOC+ISE" row is the whole ontology).
* ``sparqlgen`` — SPARQLGEN (Kovriguina et al., 2023): the elements retrieved for the
  question (linking over the whole ontology) plus **one example** question/query pair.

Both run the query they produce as is — only syntax and read-only form are checked — so
their silent failures are measured, not prevented. Without an LLM they fall back to the
deterministic synthesizer over the whole ontology with no subgraph expansion (NaVQA
w/o AOC and w/o ISE); ``sparqlgen`` keeps value grounding, ``cot`` does not.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import TYPE_CHECKING

from pydantic import BaseModel

from navqa.model.events import ErrorKind, Event, QueryChecked, QuerySynthesized
from navqa.model.llm import Message
from navqa.online.check import check_query
from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.strategies import registry

if TYPE_CHECKING:
    from navqa.online.state import AskState
    from navqa.online.strategies import Stages

EXAMPLE_QUESTION = "Which stations in the city of Dunmere have step-free access?"
EXAMPLE_SPARQL = """PREFIX rail: <http://example.org/navqa/rail#>
SELECT ?name WHERE {
  ?station a rail:Station ; rail:name ?name ; rail:stepFreeAccess true ;
           rail:locatedInCity ?city .
  ?city rail:name "Dunmere" .
}"""


class _CotAnswer(BaseModel):
    reasoning: str = ""
    sparql: str


def _ontology_listing(ctx: SchemaContext, *, active_only: bool) -> str:
    onto = ctx.ontology
    lines = []
    for iri in sorted(onto.classes):
        if active_only and not ctx.active.is_active(iri):
            continue
        parents = ", ".join(ctx.compact(p) for p in sorted(onto.classes[iri].parents))
        lines.append(f"class {ctx.compact(iri)} ({onto.label(iri)})"
                     + (f" subClassOf {parents}" if parents else ""))
    for iri, p in sorted(onto.properties.items()):
        if active_only and not ctx.active.is_active(iri):
            continue
        dom = ", ".join(ctx.compact(d) for d in sorted(p.domains)) or "?"
        rng = ", ".join(ctx.compact(r) for r in sorted(p.ranges)) or "?"
        lines.append(f"property {ctx.compact(iri)} ({onto.label(iri)}) domain {dom} range {rng}")
    return "\n".join(lines)


def _prefixes(ctx: SchemaContext) -> str:
    return "\n".join(f"PREFIX {p}: <{ns}>" for p, ns in sorted(ctx.prefixes.items()))


COT_PROMPT = """Translate the question into one SPARQL 1.1 query over this ontology.
Think step by step: identify the classes, the properties and the values, then write the
query. Project entity names for "which/what" questions, a COUNT for "how many", ASK for
yes/no questions.

{prefixes}

Ontology:
{ontology}

Question: {question}
Return JSON {{"reasoning": "...", "sparql": "..."}}."""

SPARQLGEN_PROMPT = """Write one SPARQL 1.1 query answering the question, using the
retrieved ontology elements. Example:
Question: {example_q}
SPARQL:
{example_sparql}

{prefixes}

Retrieved ontology elements:
{elements}

Question: {question}
Return JSON {{"reasoning": "...", "sparql": "..."}}."""


def run_baseline(pipe: Stages, st: AskState, name: str) -> Iterator[Event]:
    """Answer ``st.question`` with baseline ``name`` (``cot`` or ``sparqlgen``)."""
    full = pipe.full_context()
    yield from pipe.extract(st)
    assert st.linking is not None and st.mentions is not None
    if name == "sparqlgen":
        yield from pipe.ground(st)
    t = time.perf_counter()
    if pipe.llm is not None:
        if name == "cot":
            prompt = COT_PROMPT.format(
                prefixes=_prefixes(full), question=st.question,
                ontology=_ontology_listing(full,
                                           active_only=pipe.config.pipeline.use_active_ontology))
        else:
            from navqa.online.linking import link

            lk = link(full, st.question, st.mentions, k=pipe.config.pipeline.top_k,
                      k_props=pipe.config.pipeline.property_top_k)
            elements = "\n".join(f"{full.compact(x.iri)} ({x.label})"
                                 for x in [*lk.classes, *lk.properties])
            values = "\n".join(f"value {g.sparql()} of {full.compact(g.prop)}"
                               for g in st.groundings)
            prompt = SPARQLGEN_PROMPT.format(
                example_q=EXAMPLE_QUESTION, example_sparql=EXAMPLE_SPARQL,
                prefixes=_prefixes(full), question=st.question,
                elements=elements + ("\n" + values if values else ""))
        resp = pipe.llm.call([Message.user(prompt)], schema=_CotAnswer)
        sparql = resp.parsed.sparql
        method = "llm"
    else:
        from navqa.online.linking import link
        from navqa.online.synthesis.offline import OfflineSynthesizer

        disabled = pipe.config.pipeline.disabled_rules
        lk = link(full, st.question, st.mentions, k=pipe.config.pipeline.top_k,
                  k_props=pipe.config.pipeline.property_top_k)
        root = lk.classes[0].iri
        sparql, _ = OfflineSynthesizer(full, disabled=disabled,
                                       entity_answer=pipe.config.pipeline.entity_answer)(
            st.question, st.mentions, lk, st.groundings, Subgraph(root=root, nodes={root}))
        method = "offline"
    yield QuerySynthesized(sparql=sparql, method=method,  # type: ignore[arg-type]
                           seconds=time.perf_counter() - t)
    t = time.perf_counter()
    res = check_query(full, sparql, enforce_active=False, alternatives=False)
    st.sparql = res.sparql
    st.check = res
    yield QueryChecked(sparql=res.sparql, ok=res.ok, issues=tuple(res.issues),
                       unmapped_terms=tuple(res.unmapped + res.unknown), repaired=res.repaired,
                       seconds=time.perf_counter() - t)
    if not res.ok:
        st.error = "refused: " + "; ".join(res.issues)
        st.error_kind = ErrorKind.SPARQL_SYNTAX
        return
    yield from pipe.execute(st)


def run_cot(pipe: Stages, st: AskState) -> Iterator[Event]:
    """The ``cot`` strategy (CoT-SPARQL)."""
    return run_baseline(pipe, st, "cot")


def run_sparqlgen(pipe: Stages, st: AskState) -> Iterator[Event]:
    """The ``sparqlgen`` strategy (SPARQLGEN)."""
    return run_baseline(pipe, st, "sparqlgen")


registry.register("cot", run_cot)
registry.register("sparqlgen", run_sparqlgen)
