"""Code lists: the coded values of a VKG that a question names as a kind of thing.

A relational schema keeps many enumerations in lookup tables ("building function",
"structure function", "usage"), and a VKG maps each table to a class whose instances carry
only a label (often one per language) and are pointed to by the features that have the
code: ``:Building/p/1 :structureFunction :StructureFunction/51002/1220``, whose label is
"Lighthouse"@en. A question says "lighthouses" or "museums", not "buildings whose
structure function is Lighthouse": the code's label is the noun.

Which classes are code lists comes from the mappings alone (:func:`code_list_classes`);
their labels from one bounded query per class, kept for the pipeline's lifetime; which
classes have instances with a matched code from one more bounded probe per code
(:meth:`CodeLists.match`), its subjects typed by the mappings' IRI templates.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from dataclasses import dataclass
from functools import cached_property

from navqa.backends.protocols import SparqlEndpoint
from navqa.model.events import ValueMention
from navqa.model.iri import IRI, RDFS_COMMENT, RDFS_LABEL, SKOS, humanize
from navqa.model.terms import IRITerm, LiteralTerm, escape_string
from navqa.online.context import SchemaContext, singular
from navqa.online.values import GroundedValue

__all__ = ["CodeLists", "CodeMatch", "code_list_classes"]

LABEL_PROPERTIES = frozenset({RDFS_LABEL, RDFS_COMMENT, SKOS + "prefLabel",
                              SKOS + "altLabel", SKOS + "definition"})
"""What an instance of a code list may carry besides its type: labels and descriptions."""
MAX_LABELS = 2000
"""A class with more labels than this is a set of things, not a list of codes."""
OWNER_LIMIT = 200
"""Subjects the owner probe of one code looks at."""
MIN_LETTERS = 5
"""A label (or a comma-separated part of one) shorter than this is too weak to match."""
_WORD = re.compile(r"[A-Za-zÀ-ÿ]+")


@dataclass(frozen=True)
class CodeMatch:
    """A code-list label the question spells out.

    Attributes:
        grounding: The label on its code-list class (``prop`` is the label property,
            ``lang`` its language tag): the constraint the synthesizer joins.
        start / end: Where the question spells it.
        owners: The classes whose instances have the code (most instances first, from the
            probe); empty when none has it.
    """

    grounding: GroundedValue
    start: int
    end: int
    owners: tuple[IRI, ...] = ()


def code_list_classes(ctx: SchemaContext) -> list[IRI]:
    """Mapped classes that are code lists: their instances carry only labels and
    descriptions (no other data property, no outgoing object property), and other mapped
    classes point to them."""
    out: list[IRI] = []
    for c in sorted(ctx.classes):
        ns = ctx.neighbours(c)
        data = {n.edge.prop for n in ns if n.edge.is_data and n.direction == "out"}
        if RDFS_LABEL not in data or not data <= LABEL_PROPERTIES:
            continue
        if any(not n.edge.is_data and n.direction == "out" for n in ns):
            continue
        if any(not n.edge.is_data and n.direction == "in" and n.edge.source != c for n in ns):
            out.append(c)
    return out


def _tokens(text: str) -> list[tuple[str, int, int]]:
    return [(singular(m.group().lower()), m.start(), m.end()) for m in _WORD.finditer(text)]


def _parts(label: str) -> list[str]:
    """The label and, for a list of synonyms ("Transmission tower, radio tower"), each."""
    parts = [p.strip() for p in label.split(",")]
    return list(dict.fromkeys([label.strip(), *(p for p in parts if p)]))


class CodeLists:
    """The code lists of a VKG and their labels, fetched once per class when first needed
    and kept for the pipeline's lifetime (read-only afterwards; concurrent questions may
    fetch a class twice, never see half of it). Nothing is computed before the first
    question: building the pipeline stays as fast as without code lists."""

    def __init__(self, ctx: SchemaContext, endpoint: SparqlEndpoint, *,
                 timeout: float = 30.0, language: str = "en") -> None:
        self.ctx = ctx
        self.endpoint = endpoint
        self.timeout = timeout
        self.language = language
        self._labels: dict[IRI, list[tuple[str, str | None]]] = {}
        self._lock = threading.Lock()

    @cached_property
    def classes(self) -> list[IRI]:
        """The VKG's code lists (:func:`code_list_classes`)."""
        return code_list_classes(self.ctx)

    @cached_property
    def _class_names(self) -> set[tuple[str, ...]]:
        """Every class's label and local name, as singular words."""
        names = [*(self.ctx.label(c) for c in self.ctx.classes),
                 *(humanize(c) for c in self.ctx.classes)]
        return {tuple(t for t, _, _ in _tokens(n)) for n in names}

    def labels(self, cls: IRI) -> list[tuple[str, str | None]]:
        """``(label, language)`` of every code of ``cls``; none when it has more than
        :data:`MAX_LABELS` labels (one bounded query, the first time)."""
        with self._lock:
            cached = self._labels.get(cls)
        if cached is not None:
            return cached
        q = (f"SELECT ?l WHERE {{ ?c a <{cls}> ; <{RDFS_LABEL}> ?l . }} "
             f"LIMIT {MAX_LABELS + 1}")
        rows = self.endpoint.select(q, timeout=self.timeout).rows
        out = [(v.value, v.lang) for (v,) in rows if isinstance(v, LiteralTerm)]
        out = out if len(out) <= MAX_LABELS else []
        with self._lock:
            self._labels[cls] = out
        return out

    def _owners(self, cls: IRI, label: str, lang: str | None) -> tuple[IRI, ...]:
        """The classes whose instances point to a code of ``cls`` labelled ``label``."""
        props = sorted({n.edge.prop for n in self.ctx.neighbours(cls)
                        if not n.edge.is_data and n.direction == "in"})
        if not props:
            return ()
        tag = f"@{lang}" if lang else ""
        branches = " UNION ".join(f"{{ ?s <{p}> ?c }}" for p in props)
        q = (f'SELECT DISTINCT ?s WHERE {{ ?c a <{cls}> ; <{RDFS_LABEL}> '
             f'"{escape_string(label)}"{tag} . {branches} }} LIMIT {OWNER_LIMIT}')
        counts: Counter[IRI] = Counter()
        for (s,) in self.endpoint.select(q, timeout=self.timeout).rows:
            if isinstance(s, IRITerm):
                for c in self.ctx.most_specific(self.ctx.classes_of_iri(s.value)):
                    counts[c] += 1
        return tuple(c for c, _ in counts.most_common())

    def match(self, question: str, taken: list[tuple[int, int]]) -> tuple[list[CodeMatch], int]:
        """The code labels the question spells out (word for word, plurals allowed),
        outside the spans in ``taken`` (names already grounded, quoted strings), and the
        classes that have them; returns the matches and the number of probes.

        A label in the question's language (``language``) or without a language tag
        matches, or one of its comma-separated synonyms does; one of fewer than
        :data:`MIN_LETTERS` letters, or one that is a class's name (a class is the class,
        not a code), does not. A longer match wins over one inside it; one match per
        code-list class and label, on the most specific code list that has it.
        """
        if not self.classes:
            return [], 0
        words = _tokens(question)
        seq = [w for w, _, _ in words]
        probes = 0
        hits: list[tuple[int, int, IRI, str, str | None]] = []
        for cls in self.classes:
            cached = cls in self._labels
            labels = self.labels(cls)
            probes += 0 if cached else 1
            seen: set[str] = set()
            for label, lang in labels:
                key = label.lower()
                if key in seen or (lang and lang.split("-")[0].lower() != self.language):
                    continue
                for part in _parts(label):
                    toks = tuple(t for t, _, _ in _tokens(part))
                    if not toks or sum(len(t) for t in toks) < MIN_LETTERS \
                            or toks in self._class_names:
                        continue
                    for i in range(len(seq) - len(toks) + 1):
                        if tuple(seq[i:i + len(toks)]) == toks:
                            seen.add(key)
                            hits.append((words[i][1], words[i + len(toks) - 1][2], cls, label,
                                         lang))
                            break
                    if key in seen:
                        break
        # a label on a code list and on its superclass (typed on both): the code list's
        sup = self.ctx.ontology.superclasses
        hits = [h for h in hits if not any(
            o is not h and o[:2] == h[:2] and o[3] == h[3] and h[2] in sup(o[2]) - {o[2]}
            for o in hits)]
        # a longer phrase wins over one inside it; spans already named are left alone
        hits.sort(key=lambda h: (-(h[1] - h[0]), h[0]))
        kept: list[tuple[int, int, IRI, str, str | None]] = []
        for h in hits:
            start, end = h[0], h[1]
            clash = [k for k in kept if not (end <= k[0] or start >= k[1])]
            if any(not (end <= a or start >= b) for a, b in taken):
                continue
            if clash and any((k[0], k[1]) != (start, end) for k in clash):
                continue
            kept.append(h)
        out: list[CodeMatch] = []
        for start, end, cls, label, lang in sorted(kept, key=lambda h: h[0]):
            probes += 1
            owners = self._owners(cls, label, lang)
            mention = ValueMention(question[start:end], "string")
            g = GroundedValue(mention, RDFS_LABEL, label, "", (cls,), True, lang=lang,
                              code=True)
            out.append(CodeMatch(g, start, end, owners))
        return out, probes
