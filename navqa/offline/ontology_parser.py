"""Read an OWL ontology file (any RDF syntax) into an :class:`~navqa.model.ontology.Ontology`.

The parser works on the raw RDF triples, without a reasoner: it reports what the file
*states*, which is what the closure and the descriptions build on. Files are read with
pyoxigraph into an rdflib :class:`~rdflib.Graph` on a :class:`LeanStore` (a predicate-indexed
store: large ontologies parse several times faster and in a fraction of rdflib's memory);
a file pyoxigraph rejects is read with rdflib's parsers as before.
``reader=RdfReader.RDFLIB`` reads everything with rdflib (the same triples, model and counts).

Syntax is chosen by content, never by extension (Bgee's ``.owl`` file is Turtle): a leading
``<?xml`` or ``<rdf:RDF`` means RDF/XML, a leading ``@prefix``/``PREFIX``/``@base`` means
Turtle, otherwise Turtle, RDF/XML, N3 and N-Triples are tried in that order.

Tolerated defect: a Turtle ``"..."``/``'...'`` literal that spans several lines (forbidden
by Turtle, accepted by the OWL API; ``atkis2.ttl`` line 413 has one). When the strict parse
fails and the text has such a literal, the raw newlines inside it are re-escaped as ``\\n``
and the parse is retried once; a warning is logged. Anything else malformed raises
:class:`~navqa.errors.OntologyParseError` with the file and, when rdflib reports it, the line.

Counting rules (what ``len(ontology.classes)`` etc. mean):

* **classes**: IRIs (no blank nodes) with ``rdf:type owl:Class`` or ``rdf:type rdfs:Class``,
  except ``owl:Thing`` and ``owl:Nothing``. Classes that are only *used* (in
  ``rdfs:subClassOf``, domains, restrictions...) without a declaration are not counted.
* **object properties**: IRIs typed ``owl:ObjectProperty``.
* **data properties**: IRIs typed ``owl:DatatypeProperty``.
* **annotation properties**: IRIs typed ``owl:AnnotationProperty``.
* **triple_count**: ``len()`` of the rdflib graph the entities were read from, i.e. the
  distinct triples of the main file, plus those of every followed import when
  ``follow_imports=True`` (all files are loaded into one graph).

With these rules NPD's ``npd-v2-ql.owl`` gives 342 / 142 / 238 and 13,448 triples, Bgee's
``bgee_v14_genex.owl`` 32 / 23 / 6 (882 triples) and ATKIS's ``atkis2.ttl`` 108 / 33 / 38
(662 triples) for the main file alone.

Imports are followed only with ``follow_imports=True``, through an OASIS XML catalog
(Protégé's ``catalog-v001.xml``: ``<uri name=... uri=...>`` entries, resolved relative to the
catalog file and any ``xml:base``; the first matching entry wins) or ``file:`` IRIs. The
network is never touched: an import the catalog does not resolve is recorded in
``Ontology.skipped_imports`` and not loaded.
"""

from __future__ import annotations

import enum
import io
import logging
import re
import uuid
import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

import pyoxigraph
from rdflib import BNode, Graph, Literal, URIRef
from rdflib.collection import Collection
from rdflib.namespace import DC, DCTERMS, OWL, RDF, RDFS, SKOS
from rdflib.plugins.stores.memory import SimpleMemory
from rdflib.term import Node

from navqa.errors import OntologyParseError
from navqa.model.iri import XSD
from navqa.model.ontology import EntityKind, LangString, OntClass, Ontology, OntProperty

logger = logging.getLogger(__name__)

__all__ = [
    "LeanStore",
    "OntologyGraph",
    "RdfReader",
    "lean_graph",
    "is_blank",
    "is_iri",
    "ontology_from_graph",
    "parse_ontology",
    "read_catalog",
    "read_ontology_graph",
    "sniff_rdf_format",
]

_LABEL_PREDICATES = (RDFS.label, SKOS.prefLabel)
_COMMENT_PREDICATES = (RDFS.comment, SKOS.definition, DC.description, DCTERMS.description)
_EXCLUDED_CLASSES = frozenset({OWL.Thing, OWL.Nothing})
_SUPERCLASS_PREDICATES = (RDFS.subClassOf, OWL.equivalentClass)
_NONE: frozenset[str] = frozenset()
_XSD = XSD
_BUILTIN_DATATYPES = frozenset(
    {RDFS.Literal, RDF.PlainLiteral, RDF.langString, RDF.XMLLiteral, RDF.HTML, OWL.rational}
)
_CATALOG_NS = "{urn:oasis:names:tc:entity:xmlns:xml:catalog}"
_XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
_FALLBACK_FORMATS = ("turtle", "xml", "n3", "nt")


def parse_ontology(
    path: Path,
    *,
    catalog: Path | None = None,
    follow_imports: bool = False,
) -> Ontology:
    """Parse an ontology file into typed classes and properties.

    Args:
        path: The ontology file (RDF/XML, Turtle, N3 or N-Triples; sniffed from content).
        catalog: An OASIS XML catalog mapping import IRIs to local files. Used only when
            ``follow_imports`` is true; it is still read (and validated) otherwise.
        follow_imports: Load ``owl:imports`` (transitively) that the catalog resolves, or
            that are ``file:`` IRIs, and merge them into the result.

    Returns:
        The ontology. ``imports`` lists the import IRIs that were loaded,
        ``skipped_imports`` those declared but not loaded.

    Raises:
        OntologyParseError: The file (or a followed import, or the catalog) is missing
            or malformed.

    Example:
        >>> onto = parse_ontology(Path("npd-v2-ql.owl"))  # doctest: +SKIP
        >>> len(onto.classes), onto.triple_count  # doctest: +SKIP
        (342, 13448)
    """
    onto = ontology_from_graph(
        read_ontology_graph(path, catalog=catalog, follow_imports=follow_imports)
    )
    if not onto.classes and not onto.object_properties and not onto.data_properties:
        raise OntologyParseError(
            "the ontology declares no class and no property: there is nothing to map or ask "
            "about", path=path, hint="check that this is the ontology file")
    return onto


@dataclass(frozen=True, slots=True)
class OntologyGraph:
    """An ontology file (and the imports that were followed) as one rdflib graph."""

    path: Path
    graph: Graph
    ontology_iri: str | None
    imports: tuple[str, ...]
    skipped_imports: tuple[str, ...]


class RdfReader(enum.Enum):
    """How :func:`read_ontology_graph` reads RDF files."""

    PYOXIGRAPH = "pyoxigraph"
    """pyoxigraph's parsers into a :class:`LeanStore` graph; rdflib's parsers for a file
    pyoxigraph rejects (they tolerate more, and name the line of an error). The default."""
    RDFLIB = "rdflib"
    """rdflib's parsers into rdflib's default ``Memory`` store (the reference reading)."""


def read_ontology_graph(
    path: Path,
    *,
    catalog: Path | None = None,
    follow_imports: bool = False,
    reader: RdfReader = RdfReader.PYOXIGRAPH,
) -> OntologyGraph:
    """Read an ontology file, and optionally its imports, into one rdflib graph.

    The syntax is sniffed from content; imports resolve through ``catalog`` or ``file:``
    IRIs only (never the network). Arguments and errors as for :func:`parse_ontology`,
    which is ``ontology_from_graph(read_ontology_graph(...))``; callers that also need the
    raw triples (the closure's Ta counts) read the file once through this. ``reader``
    chooses the parsers and the store (:class:`RdfReader`); both give the same triples.
    """
    path = Path(path)
    entries = read_catalog(catalog) if catalog is not None else {}
    fast = reader is RdfReader.PYOXIGRAPH
    graph = _load(path, fast=fast)
    ontology_iri = _ontology_iri(graph)

    followed: list[str] = []
    skipped: list[str] = []
    pending = [str(o) for o in _imports_of(graph)]
    seen: set[str] = set()
    while pending:
        iri = pending.pop(0)
        if iri in seen:
            continue
        seen.add(iri)
        local = _resolve_import(iri, entries) if follow_imports else None
        if local is None:
            skipped.append(iri)
            continue
        sub = _load(local, fast=fast)
        _merge(graph, sub)
        followed.append(iri)
        pending.extend(str(o) for o in _imports_of(sub))
    return OntologyGraph(path, graph, ontology_iri, tuple(followed), tuple(skipped))


def ontology_from_graph(og: OntologyGraph) -> Ontology:
    """The typed :class:`Ontology` of a graph read by :func:`read_ontology_graph`."""
    return _build(og.graph, og.path, og.ontology_iri, og.imports, og.skipped_imports)


def sniff_rdf_format(text: str) -> str | None:
    """Guess the rdflib format name of an RDF document from its first significant line.

    Returns ``"xml"`` for RDF/XML, ``"turtle"`` for Turtle with a prefix or base
    directive, and ``None`` when the content does not say (the caller then tries several).

    Example:
        >>> sniff_rdf_format('<?xml version="1.0"?><rdf:RDF/>')
        'xml'
        >>> sniff_rdf_format("# comment\\n@prefix : <http://x/> .")
        'turtle'
    """
    for raw in text.lstrip("\ufeff").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith(("<?xml", "<rdf:RDF", "<!DOCTYPE rdf:RDF", "<!--")):
            return "xml"
        if re.match(r"(@prefix|@base|PREFIX|BASE)\b", line, re.IGNORECASE):
            return "turtle"
        return None
    return None


def read_catalog(catalog: Path) -> dict[str, Path]:
    """Read an OASIS XML catalog into ``{import IRI: local file}``.

    ``<uri name=... uri=...>`` entries are resolved against the catalog's directory and any
    ``xml:base`` on enclosing elements. When an IRI is listed twice, the first entry wins
    (OASIS catalog semantics).

    Raises:
        OntologyParseError: The catalog is missing or is not well-formed XML.
    """
    catalog = Path(catalog)
    try:
        tree = ET.parse(catalog)
    except FileNotFoundError as e:
        raise OntologyParseError("XML catalog not found", path=catalog) from e
    except ET.ParseError as e:
        raise OntologyParseError(
            f"malformed XML catalog: {e}", path=catalog, line=e.position[0]
        ) from e
    entries: dict[str, Path] = {}
    for name, uri in _catalog_uris(tree.getroot(), catalog.parent):
        entries.setdefault(name, uri)
    return entries


# -- a lean in-memory store -----------------------------------------------------------------


_NAMESPACE_TERMS: dict[str, URIRef] = {
    str(t): t
    for ns in (RDF, RDFS, OWL, SKOS, DC, DCTERMS)
    for t in (getattr(ns, name) for name in getattr(ns, "__annotations__", {}))
    if isinstance(t, URIRef)
}


class LeanStore(SimpleMemory):
    """An rdflib store indexed by predicate only: a fraction of rdflib's memory per triple.

    ``Memory`` keeps three nested indices and a context table (about 1 KB a triple); this
    keeps ``{predicate: {subject: [objects]}}`` and builds ``{object: [subjects]}`` for a
    predicate on the first query that needs it. Any pattern is answered; those with a
    predicate (all that navqa asks) are dictionary look-ups. No contexts, no removal.
    """

    _SMALL = 16  # an object list longer than this gets a set for the duplicate check

    def __init__(self) -> None:
        super().__init__()
        self._by_p: dict[Node, dict[Node, list[Node]]] = {}
        self._rev: dict[Node, dict[Node, list[Node]]] = {}
        self._big: dict[tuple[Node, Node], set[Node]] = {}
        self._n = 0
        # IRI -> the one URIRef the store holds for it. Seeded with rdflib's namespace
        # constants (``RDFS.label`` is one object), so that look-ups with them, and with
        # :meth:`node`, hit by identity instead of calling rdflib's Python ``__eq__``.
        self.iris: dict[str, URIRef] = dict(_NAMESPACE_TERMS)

    def node(self, iri: str) -> URIRef:
        """The store's own :class:`URIRef` for ``iri`` (a new one if it holds none)."""
        t = self.iris.get(iri)
        return t if t is not None else URIRef(iri)

    def add_triple(self, s: Node, p: Node, o: Node) -> None:
        """Add one triple (a duplicate is ignored)."""
        by_s = self._by_p.get(p)
        if by_s is None:
            by_s = self._by_p[p] = {}
        objs = by_s.get(s)
        if objs is None:
            by_s[s] = [o]
        elif len(objs) < self._SMALL:
            if o in objs:
                return
            objs.append(o)
        else:
            seen = self._big.get((p, s))
            if seen is None:
                seen = self._big[(p, s)] = set(objs)
            if o in seen:
                return
            seen.add(o)
            objs.append(o)
        self._n += 1
        if self._rev:
            self._rev.pop(p, None)

    def add(self, triple: Any, context: Any = None, quoted: bool = False) -> None:
        self.add_triple(*triple)

    def addN(self, quads: Iterable[Any]) -> None:  # noqa: N802 - rdflib's name
        for s, p, o, _ in quads:
            self.add_triple(s, p, o)

    def remove(self, triple: Any, context: Any = None) -> None:
        raise NotImplementedError("LeanStore is add-only")

    def by_predicate(self) -> Mapping[Node, Mapping[Node, list[Node]]]:
        """Every triple as ``{predicate: {subject: [objects]}}`` (the store's own index:
        read it, do not change it)."""
        return self._by_p

    def objects_of(self, s: Node, p: Node) -> list[Node]:
        """The objects of ``(s, p, ?)`` (a look-up, no rdflib call chain)."""
        by_s = self._by_p.get(p)
        return by_s.get(s, []) if by_s is not None else []

    def subjects_of(self, p: Node, o: Node) -> list[Node]:
        """The subjects of ``(?, p, o)``."""
        return self._reverse(p).get(o, [])

    def _reverse(self, p: Node) -> dict[Node, list[Node]]:
        rev = self._rev.get(p)
        if rev is None:
            rev = {}
            for s, objs in self._by_p.get(p, {}).items():
                for o in objs:
                    rev.setdefault(o, []).append(s)
            self._rev[p] = rev
        return rev

    def triples(self, triple_pattern: Any, context: Any = None) -> Iterator[Any]:
        s, p, o = triple_pattern
        preds = [p] if p is not None else list(self._by_p)
        for pp in preds:
            by_s = self._by_p.get(pp)
            if not by_s:
                continue
            if s is not None:
                objs = by_s.get(s, ())
                if o is None:
                    for x in objs:
                        yield (s, pp, x), ()
                elif o in objs:
                    yield (s, pp, o), ()
            elif o is not None:
                for x in self._reverse(pp).get(o, ()):
                    yield (x, pp, o), ()
            else:
                for ss, objs in by_s.items():
                    for x in objs:
                        yield (ss, pp, x), ()

    def all_triples(self) -> Iterator[tuple[Node, Node, Node]]:
        """Every triple, as plain tuples (no rdflib call chain)."""
        for p, by_s in self._by_p.items():
            for s, objs in by_s.items():
                for o in objs:
                    yield s, p, o

    def __len__(self, context: Any = None) -> int:
        return self._n


def lean_graph() -> Graph:
    """An empty rdflib :class:`Graph` on a :class:`LeanStore` (no namespaces bound)."""
    return Graph(store=LeanStore(), bind_namespaces="none")


# -- loading ------------------------------------------------------------------------------


def _load(path: Path, *, fast: bool) -> Graph:
    """Parse ``path`` into a new graph, choosing the syntax by content."""
    try:
        data = path.read_bytes()
    except FileNotFoundError as e:
        raise OntologyParseError("ontology file not found", path=path) from e
    except OSError as e:
        raise OntologyParseError(f"cannot read ontology file: {e}", path=path) from e
    sniffed = _sniff_bytes(data)
    formats = (sniffed,) if sniffed else _FALLBACK_FORMATS
    if fast:
        graph = _load_fast(data, formats, path)
        if graph is not None:
            return graph
    text = data.decode("utf-8", errors="replace")  # only rdflib's parsers need the text
    errors: list[Exception] = []
    for fmt in formats:
        try:
            part = _parse_as(data, text, fmt, path)
        except Exception as e:  # noqa: BLE001 - rdflib raises many unrelated types
            errors.append(e)
            continue
        if not fast:
            return part
        graph = lean_graph()
        _merge(graph, part)
        return graph
    raise OntologyParseError(
        f"not valid RDF ({', '.join(formats)} tried): {_one_line(errors[0])}",
        path=path,
        line=_error_line(errors[0]),
    ) from errors[0]


_OX_FORMATS = {
    "turtle": pyoxigraph.RdfFormat.TURTLE,
    "xml": pyoxigraph.RdfFormat.RDF_XML,
    "n3": pyoxigraph.RdfFormat.N3,
    "nt": pyoxigraph.RdfFormat.N_TRIPLES,
}
_XSD_STRING = _XSD + "string"
_PREFIX_DECL = re.compile(rb"(?:^|[\s.])@?prefix\s+([^\s:]*):", re.IGNORECASE)


def _load_fast(data: bytes, formats: Iterable[str], path: Path) -> Graph | None:
    """Parse with pyoxigraph (Rust: several times faster and leaner than rdflib's parsers).

    The triples go into a :func:`lean_graph` as the rdflib terms rdflib's own parser would give
    (plain literals without ``xsd:string``, fresh blank nodes per file, equal terms shared).
    Returns ``None`` when pyoxigraph cannot read the file in any of ``formats``; the caller
    then uses rdflib's parsers, which tolerate more and report the error line.
    """
    base = path.resolve().as_uri()
    for fmt in formats:
        ox_format = _OX_FORMATS.get(fmt)
        if ox_format is None:
            continue
        part = lean_graph()
        try:
            parser = pyoxigraph.parse(input=data, format=ox_format, base_iri=base)
            _add_ox_triples(part, parser)
        except (SyntaxError, ValueError):
            continue
        # bound as rdflib's parsers bind them: Turtle/N3 in declaration order, the last
        # prefix of a namespace winning; RDF/XML in document order, the first one winning
        if fmt == "xml":
            for prefix, ns in _xmlns_prefixes(data):
                part.bind(prefix, URIRef(ns), override=False)
        else:
            declared = dict(parser.prefixes)
            for raw in _PREFIX_DECL.findall(data):
                name = raw.decode("utf-8", errors="replace")
                iri = declared.get(name)
                if iri is not None:
                    part.bind(name, URIRef(iri))
        return part
    return None


_HEAD = 1 << 16


def _sniff_bytes(data: bytes) -> str | None:
    """:func:`sniff_rdf_format` of the document, decoding only its head when that says."""
    head = sniff_rdf_format(data[:_HEAD].decode("utf-8", errors="replace"))
    if head is not None or len(data) <= _HEAD:
        return head
    return sniff_rdf_format(data.decode("utf-8", errors="replace"))


_new_str = str.__new__


def _plain_literal(value: str, lang: str | None) -> Literal:
    """``Literal(value, lang=lang)`` without its lexical checks (pyoxigraph made them)."""
    lit = _new_str(Literal, value)
    lit._language = lang
    lit._datatype = None
    lit._value = value
    lit._ill_typed = None
    return lit


def _plain_literal_is_exact() -> bool:
    """Whether :func:`_plain_literal` builds what rdflib's constructor builds (it sets
    rdflib's private slots: checked once, so another rdflib version falls back safely)."""
    try:
        for value, lang in (("a b", "en"), ("a b", None), ("x", "de-CH")):
            ref, fast = Literal(value, lang=lang), _plain_literal(value, lang)
            if (ref != fast or hash(ref) != hash(fast) or ref.value != fast.value
                    or ref.language != fast.language or ref.datatype is not None
                    or ref.ill_typed != fast.ill_typed or ref.n3() != fast.n3()):
                return False
    except (AttributeError, TypeError):
        return False
    return True


_FAST_LITERALS = _plain_literal_is_exact()


def _add_ox_triples(graph: Graph, quads: Iterable[pyoxigraph.Quad]) -> None:
    store = graph.store
    assert isinstance(store, LeanStore)
    # IRIs and blank nodes are shared (an IRI is in many triples); literals mostly are not.
    # pyoxigraph has validated IRIs, language tags and blank node ids, so the rdflib terms
    # are made without rdflib's checks (``URIRef(v)`` is ``str.__new__`` after a check that
    # only logs; a blank node gets an id unique to this parse).
    iris = store.iris
    bnodes: dict[str, BNode] = {}
    add = store.add_triple
    named_node, literal, blank_node = pyoxigraph.NamedNode, pyoxigraph.Literal, pyoxigraph.BlankNode
    bnode_prefix = f"N{uuid.uuid4().hex}b"
    fast_literals = _FAST_LITERALS

    def iri(v: str) -> URIRef:
        t = iris.get(v)
        if t is None:
            t = iris[v] = _new_str(URIRef, v)
        return t

    def term(n: object) -> Node:
        tn = type(n)
        if tn is named_node:
            return iri(n.value)  # type: ignore[attr-defined]
        if tn is literal:
            lang = n.language  # type: ignore[attr-defined]
            if lang:
                v = n.value  # type: ignore[attr-defined]
                return _plain_literal(v, lang) if fast_literals else Literal(v, lang=lang)
            dt = n.datatype.value  # type: ignore[attr-defined]
            if dt == _XSD_STRING:
                v = n.value  # type: ignore[attr-defined]
                return _plain_literal(v, None) if fast_literals else Literal(v)
            return Literal(n.value, datatype=iri(dt))  # type: ignore[attr-defined]
        if tn is blank_node:
            v = n.value  # type: ignore[attr-defined]
            b = bnodes.get(v)
            if b is None:
                b = bnodes[v] = _new_str(BNode, bnode_prefix + v)
            return b
        raise ValueError(f"unsupported RDF term {n!r}")

    get_iri = iris.get
    s: Node | None
    pt: URIRef | None
    o: Node | None
    q: Any
    for q in quads:
        # the common cases inline (IRI subject, predicate and object; a plain or tagged
        # literal object), the rest through term(); a predicate is always an IRI
        sn, p, on = q.subject, q.predicate.value, q.object
        s = get_iri(sn.value) if type(sn) is named_node else None
        if s is None:
            s = term(sn)
        pt = get_iri(p)
        if pt is None:
            pt = iri(p)
        to = type(on)
        if to is named_node:
            o = get_iri(on.value)
            if o is None:
                o = iri(on.value)
        elif to is literal and fast_literals and (on.language or on.datatype.value == _XSD_STRING):
            o = _plain_literal(on.value, on.language or None)
        else:
            o = term(on)
        add(s, pt, o)


def _xmlns_prefixes(data: bytes) -> list[tuple[str, str]]:
    """The ``xmlns`` declarations of an RDF/XML document, in document order."""
    out: list[tuple[str, str]] = []
    try:
        for _, (prefix, ns) in ET.iterparse(io.BytesIO(data), events=("start-ns",)):
            out.append((prefix, ns))
    except ET.ParseError:
        pass
    return out


def _parse_as(data: bytes, text: str, fmt: str, path: Path) -> Graph:
    """Parse in one syntax; for Turtle, retry once with multi-line literals re-escaped."""
    base = path.resolve().as_uri()
    graph = Graph(bind_namespaces="none")
    try:
        graph.parse(data=data, format=fmt, publicID=base)
        return graph
    except Exception as strict_error:
        fixed = _escape_multiline_short_literals(text) if fmt == "turtle" else text
        if fixed == text:
            raise
        graph = Graph(bind_namespaces="none")
        try:
            graph.parse(data=fixed, format=fmt, publicID=base)
        except Exception:  # noqa: BLE001 - the strict error is the one to report
            raise strict_error from None
    logger.warning(
        "%s: Turtle literal spans several lines; re-escaped raw newlines as \\n and parsed again",
        path,
    )
    return graph


def _merge(graph: Graph, part: Graph) -> None:
    for prefix, ns in part.namespaces():
        graph.bind(prefix, ns, override=False, replace=False)
    graph += part


def _escape_multiline_short_literals(text: str) -> str:
    """Replace raw line breaks inside single-quoted Turtle strings with ``\\n`` escapes.

    Long (triple-quoted) strings, IRIs and comments are left untouched.
    """
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[i:j])
            i = j
        elif c == "<":
            j = i + 1
            while j < n and text[j] not in '>\n "{}|^`':
                j += 1
            if j < n and text[j] == ">":
                out.append(text[i : j + 1])
                i = j + 1
            else:
                out.append(c)
                i += 1
        elif c in "\"'":
            if text.startswith(c * 3, i):
                j = i + 3
                while j < n and not text.startswith(c * 3, j):
                    j += 2 if text[j] == "\\" else 1
                out.append(text[i : j + 3])
                i = j + 3
            else:
                j = i + 1
                buf = [c]
                while j < n and text[j] != c:
                    if text[j] == "\\" and j + 1 < n:
                        buf.append(text[j : j + 2])
                        j += 2
                        continue
                    if text[j] == "\r":
                        buf.append("\\r")
                    elif text[j] == "\n":
                        buf.append("\\n")
                    else:
                        buf.append(text[j])
                    j += 1
                buf.append(c if j < n else "")
                out.append("".join(buf))
                i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _error_line(e: BaseException) -> int | None:
    get_line = getattr(e, "getLineNumber", None)
    if callable(get_line):
        try:
            return int(get_line())
        except (TypeError, ValueError):
            return None
    m = re.search(r"\bline (\d+)", str(e))
    return int(m.group(1)) if m else None


def _one_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text[:300] + ("…" if len(text) > 300 else "")


# -- imports and catalogs ------------------------------------------------------------------


def _catalog_uris(elem: ET.Element, base: Path) -> Iterator[tuple[str, Path]]:
    xml_base = elem.get(_XML_BASE)
    if xml_base:
        base = base / xml_base
    for child in elem:
        if child.tag == f"{_CATALOG_NS}uri":
            name, uri = child.get("name"), child.get("uri")
            if name and uri:
                yield name, _local_path(uri, base)
        elif child.tag == f"{_CATALOG_NS}group":
            yield from _catalog_uris(child, base)


def _local_path(uri: str, base: Path) -> Path:
    if uri.startswith("file:"):
        return Path(unquote(urlparse(uri).path))
    return (base / unquote(uri)).resolve()


def _resolve_import(iri: str, entries: dict[str, Path]) -> Path | None:
    local = entries.get(iri) or entries.get(iri.rstrip("/"))
    if local is None and iri.startswith("file:"):
        local = _local_path(iri, Path("."))
    if local is None:
        return None
    if not local.is_file():
        raise OntologyParseError(f"import {iri} resolves to a missing file", path=local)
    return local


def _imports_of(graph: Graph) -> list[URIRef]:
    return sorted({o for o in graph.objects(None, OWL.imports) if isinstance(o, URIRef)})


def _ontology_iri(graph: Graph) -> str | None:
    iris = sorted(str(s) for s in graph.subjects(RDF.type, OWL.Ontology) if isinstance(s, URIRef))
    return iris[0] if iris else None


# -- extraction ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Reader:
    """Reads entity facts out of one graph."""

    g: Graph
    lean: LeanStore | None = None  # g's store when it is one: look-ups skip rdflib's layers

    @staticmethod
    def of(g: Graph) -> _Reader:
        return _Reader(g, g.store if isinstance(g.store, LeanStore) else None)

    def objects(self, s: Node, p: URIRef) -> Iterable[Node]:
        if self.lean is not None:
            return self.lean.objects_of(s, p)
        return self.g.objects(s, p)

    def subject_map(self, p: URIRef) -> Mapping[Node, list[Node]]:
        """``{subject: [objects]}`` of predicate ``p``."""
        if self.lean is not None:
            return self.lean.by_predicate().get(p, {})
        out: dict[Node, list[Node]] = {}
        for s, o in self.g.subject_objects(p):
            out.setdefault(s, []).append(o)
        return out

    def predicates(self) -> set[Node]:
        """Every predicate of the graph."""
        if self.lean is not None:
            return set(self.lean.by_predicate())
        return set(self.g.predicates())

    def note_predicates(self) -> list[URIRef]:
        """The annotation properties other than the label and comment ones: every
        predicate but ``rdf:type`` and the declared object and data properties (a literal
        on a class or property can only be an annotation), sorted. :func:`_notes` keeps
        their textual values."""
        skip = {RDF.type, *_LABEL_PREDICATES, *_COMMENT_PREDICATES}
        skip |= self.declared(OWL.ObjectProperty, OWL.DatatypeProperty)
        return sorted(p for p in self.predicates() if isinstance(p, URIRef) and p not in skip)

    def subjects(self, p: URIRef, o: Node) -> Iterable[Node]:
        if self.lean is not None:
            return self.lean.subjects_of(p, o)
        return self.g.subjects(p, o)

    def declared(self, *types: URIRef) -> set[URIRef]:
        return {s for t in types for s in self.subjects(RDF.type, t) if isinstance(s, URIRef)}

    def named(self, s: URIRef, p: URIRef) -> frozenset[str]:
        return frozenset(str(o) for o in self.objects(s, p)
                         if type(o) is URIRef or isinstance(o, URIRef))

    def symmetric(self, s: URIRef, p: URIRef) -> frozenset[str]:
        out = {o for o in self.objects(s, p) if type(o) is URIRef or isinstance(o, URIRef)}
        out |= {o for o in self.subjects(p, s) if type(o) is URIRef or isinstance(o, URIRef)}
        out.discard(s)
        return frozenset(str(x) for x in out)

    def members(self, node: Node, p: URIRef) -> list[object]:
        out: list[object] = []
        for head in self.objects(node, p):
            out.extend(Collection(self.g, head))
        return out

    def union_flat(self, s: URIRef, p: URIRef) -> frozenset[str]:
        """Named objects of ``p``, with ``owl:unionOf`` members of anonymous ones flattened."""
        out: set[str] = set()
        todo: list[object] = list(self.objects(s, p))
        seen: set[object] = set()
        while todo:
            o = todo.pop()
            if o in seen:
                continue
            seen.add(o)
            if isinstance(o, URIRef):
                out.add(str(o))
            elif isinstance(o, BNode):
                todo.extend(self.members(o, OWL.unionOf))
        return frozenset(out)

    def restriction_terms(self, cls: URIRef) -> tuple[frozenset[str], frozenset[str]]:
        """Named classes and properties inside anonymous superclass expressions of ``cls``.

        Superclass side: objects of ``rdfs:subClassOf`` and ``owl:equivalentClass`` that are
        blank nodes, walked through restrictions (``someValuesFrom``, ``allValuesFrom``,
        ``onClass``) and ``intersectionOf``; ``unionOf``/``complementOf`` are not entailed
        superclasses and are not entered. Datatype fillers (``xsd:double`` in a data
        property restriction) are not classes and are left out; the property is kept.
        """
        todo = [
            o
            for p in _SUPERCLASS_PREDICATES
            for o in self.objects(cls, p)
            if type(o) is not URIRef and isinstance(o, BNode)  # a named parent: no check
        ]
        if not todo:
            return _NONE, _NONE
        classes: set[str] = set()
        props: set[str] = set()
        seen: set[BNode] = set()
        while todo:
            node = todo.pop()
            if node in seen:
                continue
            seen.add(node)
            for prop in self.objects(node, OWL.onProperty):
                if isinstance(prop, BNode):
                    prop = next(iter(self.objects(prop, OWL.inverseOf)), prop)
                if isinstance(prop, URIRef):
                    props.add(str(prop))
            fillers: list[object] = [
                o
                for p in (OWL.someValuesFrom, OWL.allValuesFrom, OWL.onClass)
                for o in self.objects(node, p)
            ]
            fillers += self.members(node, OWL.intersectionOf)
            for f in fillers:
                if isinstance(f, URIRef):
                    classes.add(str(f))
                elif isinstance(f, BNode):
                    todo.append(f)
        classes -= {str(c) for c in _EXCLUDED_CLASSES}
        classes = {c for c in classes if not self.is_datatype(URIRef(c))}
        return frozenset(classes), frozenset(props)

    def is_datatype(self, iri: URIRef) -> bool:
        """Whether ``iri`` names a datatype (XSD, ``rdfs:Literal``, ``rdf:*``, or declared)."""
        return (
            str(iri).startswith(_XSD)
            or iri in _BUILTIN_DATATYPES
            or RDFS.Datatype in self.objects(iri, RDF.type)
        )

    def all_disjoint(self) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for node in self.subjects(RDF.type, OWL.AllDisjointClasses):
            names = [str(m) for m in self.members(node, OWL.members) if isinstance(m, URIRef)]
            for a in names:
                out.setdefault(a, set()).update(b for b in names if b != a)
        return out


def is_blank(x: object) -> bool:
    """``isinstance(x, BNode)``, without rdflib's ABC check for the exact term types."""
    t = type(x)
    return t is BNode or (t is not URIRef and t is not Literal and isinstance(x, BNode))


def is_iri(x: object) -> bool:
    """``isinstance(x, URIRef)``, without rdflib's ABC check for the exact term types."""
    t = type(x)
    return t is URIRef or (t is not BNode and t is not Literal and isinstance(x, URIRef))


def _texts(s: Node, maps: Iterable[Mapping[Node, list[Node]]], langs: dict[str, str]
           ) -> tuple[LangString, ...]:
    """The literal objects of ``s`` in ``maps`` (subject maps of the label or comment
    predicates), distinct and sorted. Language tags are lower-cased (BCP 47 tags are
    case-insensitive; pyoxigraph's parsers lower-case them, rdflib's keep the case), one
    str per tag through ``langs``."""
    found: list[LangString] = []
    for m in maps:
        for o in m.get(s, ()):
            if type(o) is Literal or isinstance(o, Literal):
                lang = o.language
                if lang:
                    tag = langs.get(lang)
                    if tag is None:
                        tag = langs[lang] = lang.lower()
                    lang = tag
                found.append(LangString(str(o), lang or None))
    if len(found) < 2:
        return tuple(found)
    return tuple(sorted(set(found), key=lambda v: (v.lang or "", v.text)))


_BARE_IRI = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://\S*")
_TEXT_TYPES = frozenset({None, URIRef(XSD + "string"), RDF.langString})


def _notes(s: Node, maps: Iterable[Mapping[Node, list[Node]]], langs: dict[str, str],
           known: tuple[LangString, ...]) -> tuple[LangString, ...]:
    """The textual literals of ``s`` in ``maps`` (the note predicates' subject maps) that
    are not already in ``known`` (its labels and comments); numbers, dates and other
    typed literals are left out."""
    texts = [v for v in _texts(s, maps, langs) if v not in known]
    if not texts:
        return ()
    typed = {str(o) for m in maps for o in m.get(s, ())
             if isinstance(o, Literal) and o.datatype not in _TEXT_TYPES}
    return tuple(v for v in texts if v.text not in typed and v.text.strip()
                 and not _BARE_IRI.fullmatch(v.text.strip()))


def _symmetric(pairs: Mapping[Node, list[Node]], name: Callable[[object], str]
               ) -> dict[str, frozenset[str]]:
    """``{a: the IRIs stated in a (p) b or b (p) a}`` for a symmetric predicate's subject map
    (IRIs only, an IRI not paired with itself)."""
    out: dict[str, set[str]] = {}
    for s, objs in pairs.items():
        if not is_iri(s):
            continue
        for o in objs:
            if is_iri(o) and o != s:
                a, b = name(s), name(o)
                out.setdefault(a, set()).add(b)
                out.setdefault(b, set()).add(a)
    return {k: frozenset(v) for k, v in out.items()}


def _build(
    g: Graph,
    path: Path,
    iri: str | None,
    followed: tuple[str, ...],
    skipped: tuple[str, ...],
) -> Ontology:
    r = _Reader.of(g)
    class_iris = r.declared(OWL.Class, RDFS.Class) - _EXCLUDED_CLASSES
    group_disjoint = r.all_disjoint()
    classes: dict[str, OntClass] = {}
    # One pass per predicate instead of one look-up per class and predicate, and one str
    # object per IRI (a parent's IRI is its class's key), one per language tag: a large
    # ontology's model is built several times faster and is smaller (and so is its pickle).
    names: dict[str, str] = {}

    def name(u: object) -> str:
        v = str(u)
        return names.setdefault(v, v)

    thing = str(OWL.Thing)
    sub_class_of = r.subject_map(RDFS.subClassOf)
    equivalent_class = r.subject_map(OWL.equivalentClass)
    equivalents = _symmetric(equivalent_class, name)
    disjoints = _symmetric(r.subject_map(OWL.disjointWith), name)
    label_maps = [r.subject_map(p) for p in _LABEL_PREDICATES]
    comment_maps = [r.subject_map(p) for p in _COMMENT_PREDICATES]
    note_maps = [m for m in (r.subject_map(p) for p in r.note_predicates()) if m]
    langs: dict[str, str] = {}
    for c in sorted(class_iris, key=str):  # URIRef order is str order, str is faster
        iri_c = name(c)
        stated = sub_class_of.get(c, ())
        if any(is_blank(o) for o in stated) or any(
                is_blank(o) for o in equivalent_class.get(c, ())):
            restr_classes, restr_props = r.restriction_terms(c)
            restr_classes = frozenset(name(x) for x in restr_classes)
        else:
            restr_classes = restr_props = _NONE
        parents = frozenset(name(o) for o in stated if is_iri(o)) - {thing, iri_c}
        disjoint = disjoints.get(iri_c, _NONE) | group_disjoint.get(iri_c, _NONE)
        labels, comments = _texts(c, label_maps, langs), _texts(c, comment_maps, langs)
        classes[iri_c] = OntClass(
            iri=iri_c,
            labels=labels,
            comments=comments,
            notes=_notes(c, note_maps, langs, labels + comments),
            parents=parents or _NONE,
            restriction_parents=restr_classes,
            restriction_properties=restr_props,
            equivalents=equivalents.get(iri_c, _NONE),
            disjoints=frozenset(disjoint) if disjoint else _NONE,
        )
    functional = r.declared(OWL.FunctionalProperty)

    def props(kind: EntityKind, decl: URIRef) -> dict[str, OntProperty]:
        out: dict[str, OntProperty] = {}
        for p in sorted(r.declared(decl)):
            labels, comments = _texts(p, label_maps, langs), _texts(p, comment_maps, langs)
            out[str(p)] = OntProperty(
                iri=str(p),
                kind=kind,
                labels=labels,
                comments=comments,
                notes=_notes(p, note_maps, langs, labels + comments),
                parents=r.named(p, RDFS.subPropertyOf) - {str(p)},
                domains=r.union_flat(p, RDFS.domain),
                ranges=r.union_flat(p, RDFS.range),
                inverses=r.symmetric(p, OWL.inverseOf),
                equivalents=r.symmetric(p, OWL.equivalentProperty),
                functional=p in functional,
            )
        return out

    return Ontology(
        classes=classes,
        object_properties=props(EntityKind.OBJECT_PROPERTY, OWL.ObjectProperty),
        data_properties=props(EntityKind.DATA_PROPERTY, OWL.DatatypeProperty),
        annotation_properties=props(EntityKind.ANNOTATION_PROPERTY, OWL.AnnotationProperty),
        prefixes={prefix: str(ns) for prefix, ns in g.namespaces()},
        triple_count=len(g),
        iri=iri,
        source=path,
        imports=followed,
        skipped_imports=skipped,
    )
