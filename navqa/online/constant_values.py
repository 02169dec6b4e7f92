"""Constant IRIs of the mappings: values a question names that no literal holds.

A mapping may state a fixed IRI as a property's object, one assertion per stored code:

    target  npd:facility/{id} npdv:registeredInCountry <http://dbpedia.org/resource/The_Bahamas> .
    source  SELECT "id" FROM "facility_moveable" WHERE "fclNationName"='Bahamas'

No literal in the VKG says "Bahamas", so the value probes (:mod:`navqa.online.values`)
cannot find "registered in the Bahamas"; the mapping can. Each such object is a
:class:`ConstantObject` with the names it goes by: its IRI's last segment as words
("The Bahamas") and the string the source SQL compares a column with ('Bahamas'). A
question's value that spells one of them (case, spacing and a leading article aside)
grounds to the IRI itself (:func:`match_constants`), on the classes the subject template
types. Nothing here reads the data.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from urllib.parse import unquote

from navqa.model.iri import IRI
from navqa.model.mapping import MappingSet, TermKind, TermType
from navqa.model.template import IriTemplate

__all__ = ["ConstantObject", "constant_objects", "match_constants", "spoken_names"]

_SQL_STRING = re.compile(r"=\s*'((?:[^']|'')+)'")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+")
_SPACES = re.compile(r"[\s_]+")


@dataclass(frozen=True)
class ConstantObject:
    """A fixed IRI some mapping states as the object of ``prop``.

    Attributes:
        prop: The object property.
        iri: The constant IRI.
        classes: The mapped classes whose subject templates the assertion's subject
            unifies with (most specific first as given by the caller).
        names: How the IRI may be spelled: its last segment as words and the strings its
            source SQL compares columns with, normalised by :func:`_normal`.
    """

    prop: IRI
    iri: str
    classes: tuple[IRI, ...]
    names: frozenset[str]


def _normal(text: str) -> str:
    return _ARTICLE.sub("", _SPACES.sub(" ", text).strip().casefold())


def spoken_names(iri: str, source: str = "") -> frozenset[str]:
    """The normalised names of a constant IRI: its last path segment (or fragment) with
    underscores as spaces, percent-decoded, and every string the SQL compares with when
    there is exactly one (a code the assertion selects on)."""
    tail = re.split(r"[/#]", iri.rstrip("/#"))[-1]
    names = {_normal(unquote(tail))}
    strings = _SQL_STRING.findall(source)
    if len(strings) == 1:
        names.add(_normal(strings[0].replace("''", "'")))
    return frozenset(n for n in names if n)


def constant_objects(mappings: MappingSet,
                     classes_of: Callable[[IriTemplate], Iterable[IRI]]
                     ) -> tuple[ConstantObject, ...]:
    """Every constant IRI object of ``mappings``, one entry per (property, IRI), the
    subject classes from ``classes_of`` (a subject template → the mapped classes whose
    templates unify with it); the names of all assertions stating it are merged."""
    merged: dict[tuple[IRI, str], tuple[set[IRI], set[str]]] = {}
    for assertion, atom in mappings.atoms():
        obj = atom.object
        if atom.is_class or obj is None or obj.kind is not TermKind.CONSTANT \
                or obj.term_type is not TermType.IRI:
            continue
        tpl = atom.subject.template
        classes, names = merged.setdefault((atom.predicate, obj.value), (set(), set()))
        if tpl is not None:
            classes.update(classes_of(tpl))
        names.update(spoken_names(obj.value, assertion.source))
    return tuple(ConstantObject(p, iri, tuple(sorted(cs)), frozenset(ns))
                 for (p, iri), (cs, ns) in sorted(merged.items()))


def match_constants(objects: Iterable[ConstantObject], text: str) -> list[ConstantObject]:
    """The constant objects one of whose names the value ``text`` spells exactly (case,
    spacing, underscores and a leading article aside)."""
    want = _normal(text)
    if not want:
        return []
    return [o for o in objects if want in o.names]
