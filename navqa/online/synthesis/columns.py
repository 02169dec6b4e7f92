"""Answer columns of the offline synthesizer: which data property an asked column may be.

Helpers of :class:`~navqa.online.synthesis.offline.OfflineSynthesizer` for projection lists
("the scientific and common names of …", "…, with their description when there is one")
and for an attribute asked of a named entity ("What is the short name of X?"):

* a **name-like property** (a name, label, title, code or identifier) is the entity's own
  name, so it is no further column — unless the column phrase itself names a kind of name
  or code ("common names", "short name", "identifier"): then it competes on similarity
  like any other property;
* an asked attribute may be of **any literal datatype** (a WKT geometry, a URI-valued
  page), not only numbers, dates and strings;
* a **coordinated attribute** ("what are the depth and age of X") is its first column; the
  others follow it; with a bare name word among them ("the name and status of X") the
  answer is the entity's name with the further columns.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from navqa.model.iri import IRI, local_name
from navqa.online.context import SchemaContext
from navqa.online.reading.asked_columns import names_the_entity, projections
from navqa.online.reading.lexicon import Phenomenon, words

_NAMING = {w for p in (Phenomenon.NAME_PROPERTY, Phenomenon.CODE_PROPERTY) for w in words(p)}
_NAMING |= {w + "s" for w in _NAMING}
_STOP = words(Phenomenon.STOPWORD)
_LEXICAL = 0.3
"""Weight of the word overlap between a column phrase and a property's name."""
_COORDINATED = re.compile(r",|\band\b|\bas\s+well\s+as\b", re.I)


def names_a_name(phrase: str) -> bool:
    """Whether the column phrase names a kind of name or code ("short name", "FlyBase
    identifier", "common names").

    Example:
        >>> names_a_name("short name"), names_a_name("depth")
        (True, False)
    """
    return any(t in _NAMING for t in re.findall(r"[a-zà-ÿ][\w\-]*", phrase.lower()))


_START = words(Phenomenon.VALIDITY_START)
_END = words(Phenomenon.VALIDITY_END)


def _tokens(text: str) -> list[str]:
    """Content words; a word for the start or the end of an interval stands for all of its
    kind ("from when" asks for ``dateOperatorFrom``, "when did it start" too)."""
    spaced = re.sub(r"(?<=[a-z])(?=[A-Z])|[_\-]", " ", text)
    out = []
    for t in re.findall(r"[a-zà-ÿ]+", spaced.lower()):
        if t in _START:
            out.append(START_SIDE)
        elif t in _END:
            out.append(END_SIDE)
        elif t not in _STOP or t in _NAMING:
            out.append(t)
    return out


def _same_word(a: str, b: str) -> bool:
    """Equal up to a plural, or sharing a stem of six letters ("described", "description")."""
    a, b = a.removesuffix("s"), b.removesuffix("s")
    return a == b or (len(a) >= 6 and len(b) >= 6 and a[:6] == b[:6])


def word_overlap(phrase: str, names: str) -> float:
    """The share of the phrase's content words found among ``names`` (a property's local
    name and label, camelCase split).

    Example:
        >>> word_overlap("scientific names", "scientificName scientific name")
        1.0
        >>> word_overlap("oil rates", "DSTGasProducedRate")
        0.5
        >>> word_overlap("date start", "dateStatusFrom"), word_overlap("date start", "dateStatusTo")
        (1.0, 0.5)
    """
    ws = _tokens(phrase)
    have = _tokens(names)
    if not ws or not have:
        return 0.0
    return sum(any(_same_word(w, h) for h in have) for w in ws) / len(ws)


START_SIDE = "(start)"
END_SIDE = "(end)"


def interval_sides(text: str) -> frozenset[str]:
    """The sides of an interval (``START_SIDE``, ``END_SIDE``) that the text's words name.

    Example:
        >>> sorted(interval_sides("start at the")), sorted(interval_sides("pipelineToFacility"))
        (['(start)'], ['(end)'])
    """
    return frozenset(t for t in _tokens(text) if t in (START_SIDE, END_SIDE))


def names_class_only(phrase: str, class_label: str, prop_names: str) -> bool:
    """Whether the column phrase names every word of a class's label and shares no other
    word with a data property's names: "the field they belong to" names the class
    *field*, and ``dateIncludedInField`` matches it only through that word, so the phrase
    asks for the linked field, not for the date.

    Example:
        >>> names_class_only("field belong", "field", "dateIncludedInField date included in field")
        True
        >>> names_class_only("date included field", "field",
        ...                  "dateIncludedInField date included in field")
        False
        >>> names_class_only("status", "field status", "status")
        False
    """
    ws = _tokens(phrase)
    label = _tokens(class_label)
    if not ws or not label or not all(any(_same_word(w, t) for w in ws) for t in label):
        return False
    have = _tokens(prop_names)
    shared = [w for w in ws if any(_same_word(w, h) for h in have)]
    return all(any(_same_word(w, t) for t in label) for w in shared)


def column_score(ctx: SchemaContext, phrase: str, prop: IRI, similarity: float,
                 name_props: Collection[IRI]) -> float:
    """The score of ``prop`` as the column ``phrase`` asks for (``-1``: never): the
    embedding similarity, raised by the share of the phrase's words the property's name
    and label carry ("common names": ``commonName``; "oil rates": ``DSTOilProducedRate``).
    """
    if prop in name_props and (names_the_entity(phrase) or not names_a_name(phrase)):
        return -1.0
    return similarity + _LEXICAL * word_overlap(phrase, f"{local_name(prop)} {ctx.label(prop)}")


def literal_kinds(ctx: SchemaContext) -> frozenset[IRI]:
    """Every datatype a data property of the VKG has: an asked attribute may be any."""
    out: set[IRI] = set()
    for prop in ctx.prop_ids:
        if ctx.is_data_property(prop):
            dt = ctx.datatype(prop)
            if dt is not None:
                out.add(dt)
    return frozenset(out)


def attribute_phrase(question: str, phrase: str) -> str | None:
    """The column an attribute question asks first ("the depth and age of X": "depth");
    ``None`` when a conjunct is the entity's own name ("the name and status of X"), whose
    answer is the name with the further columns.

    Example:
        >>> attribute_phrase("What are the depth and age of X?", "depth and age")
        'depth'
        >>> attribute_phrase("What are the name and status of X?", "name and status") is None
        True
        >>> attribute_phrase("What is the depth of X?", "depth")
        'depth'
    """
    if not _COORDINATED.search(phrase):
        return phrase
    if any(names_the_entity(p) for p in _COORDINATED.split(phrase) if p.strip()):
        return None
    cols = projections(question)
    return cols[0] if cols else phrase


def columns_after_attribute(question: str, phrase: str | None,
                            columns: tuple[str, ...]) -> tuple[str, ...]:
    """The further columns of an attribute question: all asked columns but the attribute's
    own (the first, when the attribute phrase is coordinated).

    Example:
        >>> columns_after_attribute("What are the depth and age of X?", "depth and age",
        ...                         ("depth", "age"))
        ('age',)
        >>> columns_after_attribute("What is the depth of X, along with its age?", "depth",
        ...                         ("age",))
        ('age',)
    """
    if phrase is not None and _COORDINATED.search(phrase):
        return columns[1:]
    return columns
