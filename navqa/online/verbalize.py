"""Graph verbalisation (NaVQA §3.2, step 3) and SAGA's compact listings.

A subgraph becomes a short linear text: one line per class with its label, one line per
object-property edge ``subject —property→ object`` and one per data property with its
datatype, all with prefixed names so an LLM can copy them into SPARQL.
"""

from __future__ import annotations

import re

from navqa.model.events import Candidate
from navqa.model.graph import Edge
from navqa.model.iri import IRI, local_name
from navqa.online.context import SchemaContext
from navqa.online.expansion import UNKNOWN, Subgraph

_TOKEN = re.compile(r"\w+|[^\w\s]")
"""The tokenizer of the context budget and of the grounding diagnostics (evaluation)."""


def token_count(text: str) -> int:
    """Tokens as the grounding diagnostics count them: word runs and other characters."""
    return len(_TOKEN.findall(text))


def verbalize(ctx: SchemaContext, sub: Subgraph, *, context: bool = True) -> str:
    """The subgraph as text (deterministic order); ``context=False`` leaves out what
    :func:`~navqa.online.expansion.complete` added."""
    c = ctx.compact
    lines = [f"root class {c(sub.root)} ({ctx.label(sub.root)})"]
    nodes = sub.classes if context else sub.nodes
    for node in sorted(nodes - {sub.root}):
        lines.append(class_line(ctx, node))
    extra = [e for e in sub.context if not e.is_data] if context else []
    for e in sorted([*sub.edges, *extra], key=lambda e: e.triple):
        lines.append(edge_line(ctx, e))
    extra = [e for e in sub.context if e.is_data] if context else []
    for e in sorted([*sub.data, *extra], key=lambda e: e.triple):
        lines.append(edge_line(ctx, e))
    return "\n".join(lines)


def class_line(ctx: SchemaContext, node: IRI) -> str:
    return f"class {ctx.compact(node)} ({ctx.label(node)})"


def edge_line(ctx: SchemaContext, e: Edge) -> str:
    c = ctx.compact
    line = f"{c(e.source)} —{c(e.prop)} ({ctx.label(e.prop)})→ {_end(ctx, e.target)}"
    return line + " (literal)" if e.is_data else line


def edge_cost(ctx: SchemaContext, sub: Subgraph, e: Edge) -> int:
    """Tokens that verbalizing ``e`` adds to ``sub`` (its line, and a line per new class)."""
    n = token_count(edge_line(ctx, e))
    for cls in (e.source, *(() if e.is_data else (e.target,))):
        if cls != UNKNOWN and cls not in sub.classes:
            n += token_count(class_line(ctx, cls))
    return n


def _end(ctx: SchemaContext, iri: IRI) -> str:
    return "unknown" if iri == UNKNOWN else ctx.compact(iri)


def compact_listing(ctx: SchemaContext, node: IRI, c: Candidate) -> str:
    """SAGA's CompactFormat: ``label (prefix:local): description [domain: … | range: …]``.

    Seen from ``node``: an outgoing candidate has the node as domain; an incoming one
    (traversed backwards) has it as range.
    """
    desc = ctx.bundle.descriptions.get(c.prop)
    prop = ctx.ontology.property(c.prop)
    comment = prop.comment() if prop is not None else None
    text = (comment or (desc.base if desc else local_name(c.prop))).strip().replace("\n", " ")
    if len(text) > 140:
        text = text[:137] + "…"
    if c.direction == "out":
        dom, rng, arrow = ctx.compact(node), _end(ctx, c.neighbour), ""
    else:
        dom, rng, arrow = _end(ctx, c.neighbour), ctx.compact(node), " (inverse)"
    return f"{ctx.label(c.prop)} ({ctx.compact(c.prop)}){arrow}: {text} [domain: {dom} | " \
           f"range: {rng}]"
