"""The empty-answer repair that makes a projected-only column ``OPTIONAL``.

The synthesizer makes every projected column required: ``?x :depth ?d`` stands in the
WHERE clause as a plain triple pattern. When no answer has that value (or the column's
property is a poor choice), the whole answer is empty although the entities exist. This
repair moves such columns into ``OPTIONAL { … }``:

* a **column** is a triple pattern ``?node :p ?col`` of the query's main group whose
  predicate is a data property and whose object ``?col`` occurs in the query only there
  and bare in the SELECT clause — not in a FILTER, BIND, ORDER BY, GROUP BY/HAVING,
  another triple pattern, a MINUS, a sub-query or an expression of the projection;
* when ``?node`` exists only to reach the column (``?x :p ?y . ?y :name ?yname`` with
  ``?y`` used nowhere else but, perhaps, in ``?y a C``), the whole chain, up to
  :data:`MAX_CHAIN` edges, is one column and goes into one OPTIONAL;
* the answer's name column (a name-like property of the answer node) stays required, and
  so does at least one projected column (the first, when all would qualify);
* every column qualifying is relaxed at once, and only when a bounded ``ASK`` of the
  relaxed WHERE clause says it has solutions.

The analysis reads the query with :class:`~navqa.online.saga.sparql_text.QueryText`
(triple patterns and their spans) and its tokens; nothing here parses SPARQL anew.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from navqa.model.iri import IRI, RDF_TYPE
from navqa.online.saga.sparql_text import QueryText, Token, TriplePattern, tokenize

__all__ = ["MAX_CHAIN", "MAX_COLUMN_PROBES", "OptionalColumn", "Relaxation",
           "QueryLayout", "answer_node", "ask_text", "layout", "make_optional",
           "optional_columns", "relax_columns", "without_columns"]

MAX_CHAIN = 3
"""At most this many object-property edges lead from the kept query to a column."""

MAX_COLUMN_PROBES = 4
"""With several columns, at most this many further ASKs tell which one is always missing."""


@dataclass(frozen=True)
class OptionalColumn:
    """A projected column and the triple patterns that only exist to bind it.

    ``triples`` are written from the kept part of the query outwards; the last binds
    ``column``.
    """

    column: str
    triples: tuple[TriplePattern, ...]


@dataclass(frozen=True)
class Relaxation:
    """The query with its columns made OPTIONAL, and why."""

    sparql: str
    columns: tuple[OptionalColumn, ...]
    reason: str


@dataclass(frozen=True)
class QueryLayout:
    """Where a SELECT query's parts are: its projection, main group and variable uses.

    ``projected`` lists the variables written bare in the SELECT clause, in order;
    ``star`` says the clause is ``SELECT *``; ``main`` is the offset of the WHERE
    clause's ``{`` (a key of :attr:`QueryText.groups`); ``select_start`` that of the
    ``SELECT`` keyword. ``other_uses`` counts, per variable, its occurrences outside
    every triple pattern's subject/object and outside the bare projection.
    """

    projected: tuple[str, ...]
    star: bool
    main: int
    select_start: int
    other_uses: dict[str, int]


def layout(qt: QueryText) -> QueryLayout | None:
    """The layout of a SELECT query, ``None`` for another form or what cannot be read."""
    try:
        toks = tokenize(qt.text)
    except ValueError:
        return None
    sel = _top_select(toks)
    if sel is None:
        return None
    projected: list[str] = []
    bare: set[int] = set()
    star = False
    depth = 0
    j = sel + 1
    while j < len(toks):
        tok = toks[j]
        if depth == 0 and (tok.text == "{" or (tok.kind == "word" and
                                               tok.text.upper() == "WHERE")):
            break
        if tok.text == "(":
            depth += 1
        elif tok.text == ")":
            depth -= 1
        elif depth == 0 and tok.kind == "var":
            projected.append(tok.text)
            bare.add(tok.start)
        elif depth == 0 and tok.text == "*":
            star = True
        j += 1
    main = next((t.start for t in toks[j:] if t.text == "{"), None)
    if main is None or main not in qt.groups:
        return None
    in_triples = {t.start for tp in qt.triples for t in (tp.s, tp.o) if t.is_var}
    other: dict[str, int] = {}
    for tok in toks:
        if tok.kind == "var" and tok.start not in in_triples and tok.start not in bare:
            other[tok.text] = other.get(tok.text, 0) + 1
    return QueryLayout(tuple(projected), star, main, toks[sel].start, other)


def _top_select(toks: Sequence[Token]) -> int | None:
    """The index of the outermost SELECT keyword (not a sub-query's)."""
    depth = 0
    for i, tok in enumerate(toks):
        if tok.text == "{":
            depth += 1
        elif tok.text == "}":
            depth -= 1
        elif depth == 0 and tok.kind == "word":
            up = tok.text.upper()
            if up == "SELECT":
                return i
            if up in ("ASK", "CONSTRUCT", "DESCRIBE"):
                return None
    return None


def _is_type(qt: QueryText, tp: TriplePattern) -> bool:
    return tp.p.kind == "a" or qt.iri(tp.p) == RDF_TYPE


def answer_node(qt: QueryText, main: int) -> str | None:
    """The answer's node: the first variable of the main group typed with ``a``, else the
    first subject variable."""
    for tp in qt.triples:
        if tp.group == main and _is_type(qt, tp) and tp.s.is_var:
            return tp.s.text
    return next((tp.s.text for tp in qt.triples if tp.group == main and tp.s.is_var), None)


def optional_columns(qt: QueryText, is_data_property: Callable[[IRI], bool],
                     name_properties: Collection[IRI]) -> list[OptionalColumn]:
    """The projected-only columns that may become OPTIONAL (see the module docstring).

    Args:
        qt: The query.
        is_data_property: Whether a predicate is a data property.
        name_properties: The properties naming things (the answer's name column stays).
    """
    lay = layout(qt)
    if lay is None or lay.star or len(lay.projected) < 2:
        return []
    target = answer_node(qt, lay.main)
    projected = set(lay.projected)
    out: list[OptionalColumn] = []
    for col in lay.projected:
        if lay.other_uses.get(col, 0) or lay.projected.count(col) > 1:
            continue
        binding = [tp for tp in qt.triples if col in (tp.s.text, tp.o.text)]
        if len(binding) != 1:
            continue
        tp = binding[0]
        prop = qt.iri(tp.p)
        if tp.group != lay.main or tp.o.text != col or not tp.s.is_var or prop is None or \
                tp.p.kind == "path" or _is_type(qt, tp) or not is_data_property(prop):
            continue
        if tp.s.text == target and prop in name_properties:
            continue  # the answer's name
        out.append(OptionalColumn(col, _chain(qt, tp, lay, target, projected)))
    if len(out) == len(lay.projected):
        out = out[1:]  # keep one column required: the first
    return out


def _chain(qt: QueryText, last: TriplePattern, lay: QueryLayout, target: str | None,
           projected: set[str]) -> tuple[TriplePattern, ...]:
    """``last`` and the patterns leading to it that only exist to reach it."""
    chain: list[TriplePattern] = [last]
    came_by = last
    node = last.s.text
    for _ in range(MAX_CHAIN):
        if node == target or node in projected or lay.other_uses.get(node, 0):
            break
        mentions = [tp for tp in qt.triples if node in (tp.s.text, tp.o.text)]
        if any(tp.group != lay.main or tp.p.kind == "path" for tp in mentions):
            break
        types = [tp for tp in mentions if _is_type(qt, tp) and tp.s.text == node]
        edges = [tp for tp in mentions if tp is not came_by and tp not in types]
        if len(edges) != 1 or len(mentions) != len(types) + 2:
            break
        edge = edges[0]
        if not (edge.s.is_var and edge.o.is_var) or qt.iri(edge.p) is None or \
                edge.s.text == edge.o.text:
            break
        chain.extend(types)
        chain.append(edge)
        came_by = edge
        node = edge.o.text if edge.s.text == node else edge.s.text
    return tuple(reversed(chain))


def make_optional(qt: QueryText, columns: Sequence[OptionalColumn]) -> str | None:
    """The query with each column's patterns moved into an OPTIONAL at the end of the main
    group; ``None`` when a pattern cannot be cut out cleanly."""
    text = without_columns(qt, columns)
    if text is None:
        return None
    q2 = QueryText.parse(text)
    lay = layout(q2)
    if lay is None:
        return None
    blocks = "  ".join(
        "OPTIONAL { " + " ".join(f"{tp.s.text} {tp.p.text} {tp.o.text} ." for tp in col.triples)
        + " }\n" for col in columns)
    return q2.insert_in_group(lay.main, blocks.rstrip("\n"))


def without_columns(qt: QueryText, columns: Sequence[OptionalColumn]) -> str | None:
    """The query without the columns' patterns (``None``: one cannot be cut out cleanly).

    Its WHERE clause has solutions exactly when the relaxed query has: the columns'
    variables occur nowhere else, so their OPTIONALs neither add nor remove rows.
    """
    text = qt.text
    for col in columns:
        for tp in col.triples:
            q2 = QueryText.parse(text)
            match = next((x for x in q2.triples if (x.s.text, x.p.text, x.o.text) ==
                          (tp.s.text, tp.p.text, tp.o.text)), None)
            cut = q2.remove_triple(match) if match is not None else None
            if cut is None:
                return None
            text = cut
    return text


def ask_text(qt: QueryText) -> str | None:
    """An ``ASK`` of the query's WHERE clause (prologue kept, modifiers dropped)."""
    lay = layout(qt)
    if lay is None:
        return None
    close = qt.groups[lay.main]
    return f"{qt.text[:lay.select_start]}ASK {qt.text[lay.main:close + 1]}"


def relax_columns(qt: QueryText, is_data_property: Callable[[IRI], bool],
                  name_properties: Collection[IRI], ask: Callable[[str], bool | None]
                  ) -> Relaxation | None:
    """The relaxed query when some column qualifies and the relaxed WHERE has solutions.

    ``ask`` runs one bounded ASK (``None``: it failed). With one column the original's
    emptiness says it is missing for every answer; with several, one more ASK per column
    (all others OPTIONAL) says which ones are.
    """
    cols = optional_columns(qt, is_data_property, name_properties)
    if not cols:
        return None
    relaxed = make_optional(qt, cols)
    kept = without_columns(qt, cols)
    if relaxed is None or kept is None:
        return None
    probe = ask_text(QueryText.parse(kept))
    if probe is None or not ask(probe):
        return None
    names = [c.column for c in cols]
    if len(cols) == 1:
        reason = f"column {names[0]} is missing for every answer: made OPTIONAL"
    else:
        always: list[str] = []
        for c in cols[:MAX_COLUMN_PROBES]:
            only = without_columns(qt, [x for x in cols if x is not c])
            q = ask_text(QueryText.parse(only)) if only is not None else None
            if q is not None and ask(q) is False:
                always.append(c.column)
        some = [n for n in names if n not in always]
        parts = []
        if always:
            parts.append(f"{_plural('column', always)} missing for every answer")
        if some:
            parts.append(f"{_plural('column', some)} missing for some")
        reason = "; ".join(parts) + ": made OPTIONAL"
    chains = [c for c in cols if len(c.triples) > 1]
    if chains:
        reason += " (with the join" + ("s" if len(chains) > 1 else "") + " reaching " + \
                  ", ".join(c.column for c in chains) + ")"
    return Relaxation(relaxed, tuple(cols), reason)


def _plural(noun: str, names: Sequence[str]) -> str:
    return f"{noun} {names[0]} is" if len(names) == 1 else \
        f"{noun}s {', '.join(names)} are"
