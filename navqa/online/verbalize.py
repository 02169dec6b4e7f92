"""Graph verbalisation (NaVQA §3.2, step 3) and SAGA's compact listings.

A subgraph becomes a short linear text: one line per class with its label, one line per
object-property edge ``subject —property→ object`` and one per data property with its
datatype, all with prefixed names so an LLM can copy them into SPARQL.
"""

from __future__ import annotations

from navqa.model.events import Candidate
from navqa.model.iri import IRI, local_name
from navqa.online.context import SchemaContext
from navqa.online.expansion import UNKNOWN, Subgraph


def verbalize(ctx: SchemaContext, sub: Subgraph) -> str:
    """The subgraph as text (deterministic order)."""
    c = ctx.compact
    lines = [f"root class {c(sub.root)} ({ctx.label(sub.root)})"]
    for node in sorted(sub.nodes - {sub.root}):
        lines.append(f"class {c(node)} ({ctx.label(node)})")
    for e in sorted(sub.edges, key=lambda e: e.triple):
        lines.append(f"{c(e.source)} —{c(e.prop)} ({ctx.label(e.prop)})→ {_end(ctx, e.target)}")
    for e in sorted(sub.data, key=lambda e: e.triple):
        lines.append(f"{c(e.source)} —{c(e.prop)} ({ctx.label(e.prop)})→ "
                     f"{_end(ctx, e.target)} (literal)")
    return "\n".join(lines)


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
