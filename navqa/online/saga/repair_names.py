"""The empty-answer repair that tries the other entities a name could mean.

Value grounding takes an exact (case-insensitive) match of a mention first: "Statoil"
becomes the company whose short name is ``STATOIL``. When the whole query is empty with
that entity, the question may have meant another one whose name holds the mention as a
word ("Statoil Petroleum AS" operates the pipelines; the entity named ``STATOIL`` none).
This repair asks the data, in one bounded probe, for exactly those names:

* an **anchor** is a triple pattern ``?x :p "Name"`` of the query whose predicate is a
  name-like property and whose literal has a word of three letters or more;
* the probe is the query's own WHERE clause with that pattern replaced by
  ``?x :q ?alt`` over the name-like properties ``?x`` may have (one ``UNION`` branch
  each) and ``FILTER(CONTAINS(LCASE(STR(?alt)), "name"))``, so every value it returns
  gives the whole query rows;
* values that hold the literal as whole words, other than the literal itself, are the
  candidates, the shortest first (the same preference value grounding has for substring
  matches); at most :data:`MAX_RENAMINGS` of them become repairs.

The analysis reads the query with :class:`~navqa.online.saga.sparql_text.QueryText`; the
probe goes through the ``select`` callable the caller gives (bounded, ``None`` when it
failed).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass

from navqa.model.iri import IRI
from navqa.model.terms import IRITerm, LiteralTerm, SelectResult, escape_string
from navqa.online.saga.repair_optional import layout
from navqa.online.saga.sparql_text import QueryText, TriplePattern, literal_text

__all__ = ["MAX_RENAMINGS", "PROBE_LIMIT", "Renaming", "name_anchors", "renamings"]

MAX_RENAMINGS = 2
"""At most this many other names of one anchor become repairs."""

PROBE_LIMIT = 50
"""Rows the probe of one anchor reads."""

_WORD = re.compile(r"[^\W\d_]{3,}")


@dataclass(frozen=True)
class Renaming:
    """The query with one anchor's name replaced by another stored name, and why."""

    sparql: str
    anchor: str
    stored: str
    prop: IRI
    reason: str


def name_anchors(qt: QueryText, name_properties: Collection[IRI]) -> list[TriplePattern]:
    """The query's ``?x :name "Name"`` patterns (see the module docstring)."""
    out = []
    for tp in qt.triples:
        prop = qt.iri(tp.p)
        lit = qt.literal(tp.o)
        if not tp.s.is_var or prop is None or prop not in name_properties or lit is None:
            continue
        if lit[1] is not None or not _WORD.search(lit[0]):
            continue
        out.append(tp)
    return out


def probe_query(qt: QueryText, tp: TriplePattern, props: Collection[IRI], text: str
                ) -> str | None:
    """``SELECT DISTINCT ?alt ?altp`` over the query's WHERE clause with ``tp`` replaced
    by the name-like properties of its subject whose value contains ``text``."""
    lay = layout(qt)
    if lay is None or not props:
        return None
    var = tp.s.text
    branches = " UNION ".join(f"{{ {var} <{p}> ?navqaAlt . BIND(<{p}> AS ?navqaAltP) }}"
                              for p in sorted(props))
    cond = f'FILTER(CONTAINS(LCASE(STR(?navqaAlt)), "{escape_string(text.lower())}"))'
    cut = qt.remove_triple(tp)
    if cut is None:
        return None
    q2 = QueryText.parse(cut)
    lay2 = layout(q2)
    if lay2 is None:
        return None
    body = q2.insert_in_group(lay2.main, f"{branches} {cond} .")
    q3 = QueryText.parse(body)
    lay3 = layout(q3)
    if lay3 is None:
        return None
    close = q3.groups[lay3.main]
    return (f"{q3.text[:lay3.select_start]}SELECT DISTINCT ?navqaAlt ?navqaAltP "
            f"{q3.text[lay3.main:close + 1]} LIMIT {PROBE_LIMIT}")


def _holds_words(stored: str, text: str) -> bool:
    """Whether ``stored`` holds ``text`` as whole words, ignoring case."""
    return re.search(rf"(?<!\w){re.escape(text.lower())}(?!\w)", stored.lower()) is not None


def renamings(qt: QueryText, name_properties: Callable[[str], Collection[IRI]],
              select: Callable[[str], SelectResult | None]) -> Iterator[Renaming]:
    """Repairs that give an anchor another stored name the whole query has rows with.

    ``name_properties(var)`` are the name-like properties the variable may have;
    ``select`` runs one bounded probe.
    """
    all_names: set[IRI] = set()
    for tp in qt.triples:
        if tp.s.is_var:
            all_names |= set(name_properties(tp.s.text))
    for tp in name_anchors(qt, all_names):
        lit = qt.literal(tp.o)
        assert lit is not None
        text = lit[0]
        query = probe_query(qt, tp, name_properties(tp.s.text), text)
        if query is None:
            continue
        res = select(query)
        if res is None:
            continue
        found: dict[str, IRI] = {}
        for row in res.rows:
            if len(row) < 2 or not isinstance(row[0], LiteralTerm) or \
                    not isinstance(row[1], IRITerm):
                continue
            value = row[0].value
            if value.lower() == text.lower() or not _holds_words(value, text):
                continue
            found.setdefault(value, row[1].value)
        for value in sorted(found, key=lambda v: (len(v), v))[:MAX_RENAMINGS]:
            prop = found[value]
            p_text = qt.term_text(prop)
            new = qt.splice([(tp.p.start, tp.p.end, p_text),
                             (tp.o.start, tp.o.end, literal_text(value, None))])
            yield Renaming(new, tp.s.text, value, prop,
                           f"no answer with {text!r}; the data has answers for "
                           f"{value!r}, a name holding it")
