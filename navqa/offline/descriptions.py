"""desc(e): a text per active element, for embedding (NaVQA §3.1, "Index Construction").

The deterministic description is built from facts only, in a fixed order, so the same
inputs always give the same text:

1. the kind and the words of the IRI's local name (camelCase split), with the CURIE;
2. the labels (English first, then untagged, then the others);
3. the comment (English preferred), cut to :data:`MAX_COMMENT` characters, then the
   element's other textual annotations (``Ontology`` ``notes``: whatever annotation
   property the ontology documents its terms with), prose first, cut to :data:`MAX_NOTES`;
4. for classes: the stated superclasses; for properties: domain and range (stated or
   inherited, plus what the class graph adds) and the super-properties;
5. the source columns of its mappings (``table.column``), at most :data:`MAX_COLUMNS`.

With an LLM, :func:`describe` also asks it for a short description from those same
facts (through the one :class:`~navqa.backends.protocols.LLM` seam; caching is the
backend's business). The LLM text is used for the index, the deterministic one is kept
next to it.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum

from navqa.backends.protocols import LLM
from navqa.errors import LLMResponseError
from navqa.model.active import ActiveOntology
from navqa.model.graph import ClassGraph
from navqa.model.iri import IRI, OWL_THING, compact, humanize, local_name
from navqa.model.llm import Message
from navqa.model.mapping import MappingSet, TermType
from navqa.model.ontology import EntityKind, LangString, Ontology

logger = logging.getLogger(__name__)

__all__ = [
    "Description",
    "ElementKind",
    "MAX_COLUMNS",
    "MAX_COMMENT",
    "MAX_NOTES",
    "describe",
    "describe_element",
    "indexed_elements",
    "mapping_columns",
]

MAX_COMMENT = 400
"""Characters of the comment kept in a description."""
MAX_NOTES = 400
"""Characters of the other annotations kept in a description."""
MAX_COLUMNS = 8
"""Source columns listed in a description."""
MAX_NAMES = 6
"""Classes or properties listed for one relation (superclasses, domains...)."""

ProgressFn = Callable[[str, int, int | None], None]
"""``progress(stage, done, total)``."""


class ElementKind(StrEnum):
    """What an indexed element is (decides which index it goes to)."""

    CLASS = "class"
    OBJECT_PROPERTY = "object_property"
    DATA_PROPERTY = "data_property"

    @property
    def is_property(self) -> bool:
        return self is not ElementKind.CLASS


@dataclass(frozen=True, slots=True)
class Description:
    """desc(e) for one element.

    Attributes:
        iri: The element.
        kind: Class, object property or data property.
        text: The text that is embedded (the LLM's when one wrote it, else ``base``).
        base: The deterministic description.
        by_llm: Whether ``text`` was written by an LLM.
    """

    iri: IRI
    kind: ElementKind
    text: str
    base: str
    by_llm: bool = False


def indexed_elements(active: ActiveOntology, mappings: MappingSet) -> dict[IRI, ElementKind]:
    """The elements that get a description and a vector, with their kind.

    Every active class, object property and data property, plus the mapped terms the
    ontology does not declare as such (``rdfs:label`` in a target, an imported class):
    those are classes when used in a class atom, object properties when some atom gives
    them an IRI object, data properties otherwise.
    """
    onto = active.ontology
    out: dict[IRI, ElementKind] = {}
    for iri in sorted(active.signature):
        kind = onto.kind(iri)
        if kind is EntityKind.CLASS:
            out[iri] = ElementKind.CLASS
        elif kind is EntityKind.OBJECT_PROPERTY:
            out[iri] = ElementKind.OBJECT_PROPERTY
        elif kind is EntityKind.DATA_PROPERTY:
            out[iri] = ElementKind.DATA_PROPERTY
    for _, atom in mappings.atoms():
        iri = atom.predicate
        if iri in out or iri not in active.signature:
            continue
        if atom.is_class:
            out[iri] = ElementKind.CLASS
        elif atom.object is not None and atom.object.term_type is TermType.IRI:
            out[iri] = ElementKind.OBJECT_PROPERTY
    for _, atom in mappings.atoms():
        iri = atom.predicate
        if iri not in out and iri in active.signature and not atom.is_class:
            out[iri] = ElementKind.DATA_PROPERTY
    return dict(sorted(out.items()))


def describe(
    active: ActiveOntology,
    mappings: MappingSet,
    graph: ClassGraph | None = None,
    *,
    llm: LLM | None = None,
    lang: str = "en",
    progress: ProgressFn | None = None,
) -> dict[IRI, Description]:
    """Describe every indexed element (:func:`indexed_elements`).

    Args:
        active: The active ontology.
        mappings: The mappings (source columns, kinds of undeclared terms).
        graph: The class graph; its edges add domains and ranges the ontology does not
            state (template typing).
        llm: When given, each element also gets an LLM-written description.
        lang: Preferred language of labels and comments.
        progress: Called as ``progress("describe", done, total)``.

    Returns:
        Element IRI → description, sorted by IRI.

    Raises:
        LLMError: the LLM failed (only with ``llm``).
    """
    kinds = indexed_elements(active, mappings)
    columns = mapping_columns(mappings)
    ends = _graph_ends(graph)
    out: dict[IRI, Description] = {}
    total = len(kinds)
    for n, (iri, kind) in enumerate(kinds.items(), 1):
        base = describe_element(
            active.ontology,
            iri,
            kind,
            columns=columns.get(iri, ()),
            graph_ends=ends.get(iri),
            lang=lang,
        )
        text, by_llm = base, False
        if llm is not None:
            text, by_llm = _llm_description(llm, iri, kind, base), True
        out[iri] = Description(iri=iri, kind=kind, text=text, base=base, by_llm=by_llm)
        if progress is not None:
            progress("describe", n, total)
    return out


def describe_element(
    ontology: Ontology,
    iri: IRI,
    kind: ElementKind,
    *,
    columns: Iterable[str] = (),
    graph_ends: tuple[frozenset[IRI], frozenset[IRI]] | None = None,
    lang: str = "en",
) -> str:
    """The deterministic description of one element (see the module docstring).

    Args:
        ontology: The full ontology (labels, comments, hierarchy).
        iri: The element.
        kind: Its kind.
        columns: ``table.column`` sources from the mappings.
        graph_ends: (sources, targets) of its class-graph edges, for properties.
        lang: Preferred language.

    Example:
        >>> from navqa.model.ontology import Ontology
        >>> describe_element(Ontology({}, {}, {}), "http://x/o#fieldOperator",
        ...                  ElementKind.OBJECT_PROPERTY)
        'Object property "field operator" (<http://x/o#fieldOperator>).'
    """
    prefixes = ontology.prefixes
    entity = ontology.entity(iri)
    words = humanize(iri) or local_name(iri)
    name = compact(iri, prefixes)
    parts = [f'{_KIND_TEXT[kind]} "{words}" ({name}).']

    labels = _ordered_texts(entity.labels if entity is not None else (), lang)
    labels = [x for x in labels if x.lower() != words.lower()]
    if labels:
        parts.append("Label: " + "; ".join(labels[:3]) + ".")
    comment = entity.comment(lang) if entity is not None else None
    if comment:
        parts.append(_sentence(_clip(" ".join(comment.split()), MAX_COMMENT)))
    notes = _notes_text(entity.notes if entity is not None else (), lang,
                        {x.lower() for x in (comment, *labels) if x})
    if notes:
        parts.append(_sentence(_clip(notes, MAX_NOTES)))

    if kind is ElementKind.CLASS:
        cls = ontology.classes.get(iri)
        if cls is not None and cls.parents:
            parts.append("Subclass of " + _names(ontology, cls.parents) + ".")
    else:
        prop = ontology.property(iri)
        domains = set(ontology.inherited_domains(iri))
        ranges = set(ontology.inherited_ranges(iri))
        if graph_ends is not None:
            domains |= graph_ends[0]
            ranges |= graph_ends[1]
        domains.discard(OWL_THING)
        ranges.discard(OWL_THING)
        if domains:
            parts.append("Domain: " + _names(ontology, domains) + ".")
        if ranges:
            parts.append("Range: " + _names(ontology, ranges) + ".")
        if prop is not None and prop.parents:
            parts.append("Sub-property of " + _names(ontology, prop.parents) + ".")
    cols = sorted(set(columns))
    if cols:
        more = f" and {len(cols) - MAX_COLUMNS} more" if len(cols) > MAX_COLUMNS else ""
        parts.append("Mapped from columns " + ", ".join(cols[:MAX_COLUMNS]) + more + ".")
    return " ".join(parts)


_KIND_TEXT = {
    ElementKind.CLASS: "Class",
    ElementKind.OBJECT_PROPERTY: "Object property",
    ElementKind.DATA_PROPERTY: "Data property",
}


def _ordered_texts(values: Iterable[LangString], lang: str) -> list[str]:
    """Distinct texts, ``lang`` first, then untagged, then the rest (each sorted)."""
    vals = list(values)
    rank = {lang: 0, None: 1}
    seen: set[str] = set()
    out: list[str] = []
    for v in sorted(vals, key=lambda v: (rank.get(v.lang, 2), v.lang or "", v.text)):
        t = " ".join(v.text.split())
        if t and t.lower() not in seen:
            seen.add(t.lower())
            out.append(t)
    return out


def _notes_text(values: Iterable[LangString], lang: str, known: set[str]) -> str:
    """The notes in one text: ``lang`` and untagged ones only when there are any, prose
    (several words) before single tokens, each once, none already said."""
    vals = list(values)
    if any(v.lang in (lang, None) for v in vals):
        vals = [v for v in vals if v.lang in (lang, None)]
    texts = [t for t in _ordered_texts(vals, lang) if t.lower() not in known]
    texts.sort(key=lambda t: " " not in t)  # stable: prose first
    return "; ".join(t.rstrip(".") for t in texts)


def _names(ontology: Ontology, iris: Iterable[IRI]) -> str:
    labels = sorted({ontology.label(i) for i in iris})
    more = f" and {len(labels) - MAX_NAMES} more" if len(labels) > MAX_NAMES else ""
    return ", ".join(labels[:MAX_NAMES]) + more


def _clip(text: str, n: int) -> str:
    if len(text) <= n:
        return text
    cut = text[:n].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?", "…")) else text + "."


def mapping_columns(mappings: MappingSet) -> dict[IRI, tuple[str, ...]]:
    """Per predicate: the ``table.column`` sources its atoms read.

    For a class: the subject's columns; for a property: the object's columns (the
    subject's when the object reads none). A term-map column is qualified with the
    table the SQL attributes it to (``MappingAssertion.columns``), else with the
    assertion's single table, else left bare.
    """
    out: dict[IRI, set[str]] = defaultdict(set)
    for a, atom in mappings.atoms():
        qualified: dict[str, str] = {}
        for ref in a.columns:
            table, _, col = ref.rpartition(".")
            qualified.setdefault(col.lower(), ref)
        single = a.tables[0] if len(a.tables) == 1 else None
        term = atom.subject if atom.is_class or atom.object is None else atom.object
        cols = term.columns or (atom.subject.columns if not atom.is_class else ())
        for c in cols:
            ref = qualified.get(c.lower()) or (f"{single}.{c}" if single else c)
            out[atom.predicate].add(ref)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def _graph_ends(graph: ClassGraph | None) -> Mapping[IRI, tuple[frozenset[IRI], frozenset[IRI]]]:
    if graph is None:
        return {}
    src: dict[IRI, set[IRI]] = defaultdict(set)
    dst: dict[IRI, set[IRI]] = defaultdict(set)
    for e in graph:
        src[e.prop].add(e.source)
        if not e.is_data:
            dst[e.prop].add(e.target)
    return {p: (frozenset(src[p]), frozenset(dst.get(p, ()))) for p in src}


_SYSTEM = (
    "You write one or two plain sentences describing an element of an OWL ontology that "
    "is populated from a relational database. Say what it denotes and, for a property, "
    "what it relates. Use only the facts given. No lists, no markdown, no preamble."
)


def _llm_description(llm: LLM, iri: IRI, kind: ElementKind, facts: str) -> str:
    resp = llm.call(
        [
            Message.system(_SYSTEM),
            Message.user(f"Element: <{iri}> ({_KIND_TEXT[kind].lower()})\nFacts: {facts}"),
        ],
        temperature=0.0,
        max_tokens=160,
    )
    text = " ".join(resp.text.split())
    if not text:
        raise LLMResponseError(f"the LLM returned an empty description for <{iri}>")
    return text
