"""IRIs, prefixes and the text derived from them (local names, split camelCase)."""

from __future__ import annotations

import re
from collections.abc import Mapping

IRI = str
"""An absolute IRI, as a plain string (``http://example.org/onto#Wellbore``)."""

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
OWL = "http://www.w3.org/2002/07/owl#"
XSD = "http://www.w3.org/2001/XMLSchema#"
SKOS = "http://www.w3.org/2004/02/skos/core#"
RDF_TYPE = RDF + "type"
RDFS_LABEL = RDFS + "label"
RDFS_COMMENT = RDFS + "comment"
OWL_THING = OWL + "Thing"

WELL_KNOWN_PREFIXES: dict[str, str] = {
    "rdf": RDF,
    "rdfs": RDFS,
    "owl": OWL,
    "xsd": XSD,
    "skos": SKOS,
}

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def local_name(iri: IRI) -> str:
    """The part of ``iri`` after its last ``#``, ``/`` or ``:``.

    Example:
        >>> local_name("http://sws.ifi.uio.no/vocab/npd-v2#Wellbore")
        'Wellbore'
    """
    for sep in ("#", "/", ":"):
        if sep in iri:
            tail = iri.rsplit(sep, 1)[1]
            if tail:
                return tail
    return iri


def namespace(iri: IRI) -> str:
    """The part of ``iri`` up to and including its last ``#`` or ``/``."""
    name = local_name(iri)
    return iri[: len(iri) - len(name)]


def split_words(name: str) -> list[str]:
    """Split a camelCase / snake_case / kebab-case identifier into lower-case words.

    Example:
        >>> split_words("wellboreCompletionDate")
        ['wellbore', 'completion', 'date']
        >>> split_words("NPDIDWellbore")
        ['npdid', 'wellbore']
    """
    words: list[str] = []
    for chunk in re.split(r"[_\-\s.]+", name):
        words.extend(m.group(0).lower() for m in _CAMEL.finditer(chunk))
    return words


def humanize(iri: IRI) -> str:
    """A readable phrase from an IRI's local name.

    Example:
        >>> humanize("http://ex.org/v#currentFieldOperator")
        'current field operator'
    """
    return " ".join(split_words(local_name(iri)))


def compact(iri: IRI, prefixes: Mapping[str, str]) -> str:
    """Write ``iri`` as ``prefix:local`` when a prefix covers it, else as ``<iri>``.

    The longest matching namespace wins; the local part must be a valid PN_LOCAL-ish token.
    """
    best: tuple[int, str] | None = None
    for prefix, ns in prefixes.items():
        if ns and iri.startswith(ns):
            rest = iri[len(ns) :]
            local_ok = re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_\-.]*", rest or "_") is not None
            if local_ok and not rest.endswith(".") and (best is None or len(ns) > best[0]):
                best = (len(ns), f"{prefix}:{rest}")
    return best[1] if best else f"<{iri}>"


def expand(curie: str, prefixes: Mapping[str, str]) -> IRI:
    """Expand ``prefix:local`` (or ``<iri>``) to a full IRI.

    Raises:
        KeyError: when the prefix is not declared.
    """
    if curie.startswith("<") and curie.endswith(">"):
        return curie[1:-1]
    prefix, _, rest = curie.partition(":")
    return prefixes[prefix] + rest
