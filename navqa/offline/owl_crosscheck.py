"""Cross-check the typed ontology against owlready2's reading of the same triples.

navqa parses ontologies with rdflib alone (exact triple counts, every RDF syntax, one
second on NPD). owlready2 is an independent OWL implementation: it classifies entities
and reads ``is_a``, domains, ranges and inverses with its own OWL semantics. Reading the
same graph with both and comparing them catches parser mistakes that counts alone do not
(a restriction read as a named parent, a union flattened wrongly, a punned entity).

owlready2 reads RDF/XML, OWL/XML and N-Triples only, so the graph is handed over as
N-Triples; any syntax rdflib reads can therefore be checked.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from rdflib import Graph
from rdflib.namespace import OWL, RDF

from navqa.errors import OntologyParseError
from navqa.model.iri import IRI
from navqa.model.ontology import Ontology
from navqa.offline.ontology_parser import lean_graph

__all__ = ["Disagreement", "crosscheck_with_owlready"]

_BASE = "urn:navqa:owlready-crosscheck"


@dataclass(frozen=True, slots=True)
class Disagreement:
    """One fact on which navqa's parser and owlready2 differ.

    ``aspect`` is ``classes``, ``object_properties``, ``data_properties``, ``parents``,
    ``domains``, ``ranges`` or ``inverses``; ``iri`` is the element (empty for the
    signature aspects, whose ``ours``/``theirs`` hold the IRIs only one side has).
    """

    aspect: str
    iri: IRI
    ours: frozenset[IRI]
    theirs: frozenset[IRI]


def crosscheck_with_owlready(ontology: Ontology, graph: Graph) -> list[Disagreement]:
    """Compare ``ontology`` with owlready2's reading of ``graph`` (the triples it came from).

    Compared: the declared classes, object and data properties; each class's named
    parents (``rdfs:subClassOf`` to a named class); each property's named super-properties,
    domain and range classes (members of an ``owl:unionOf`` count as named); and inverses.

    Returns:
        The disagreements, sorted; an empty list when both readings agree.

    Raises:
        OntologyParseError: owlready2 cannot read the graph.
    """
    import owlready2  # deferred: owlready2 sets up a SQLite quadstore on import

    world = owlready2.World()
    # The imports navqa followed are merged into ``graph`` already; owlready2 would try to
    # download every owl:imports IRI, so those triples are not handed over.
    handed = lean_graph()
    handed += (t for t in graph if t[1] != OWL.imports)
    data = handed.serialize(format="nt", encoding="utf-8")
    symmetric = {str(s) for s in graph.subjects(RDF.type, OWL.SymmetricProperty)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            world.get_ontology(_BASE).load(fileobj=io.BytesIO(data), format="ntriples")
        except Exception as e:  # noqa: BLE001 - owlready2 raises several unrelated types
            raise OntologyParseError(f"owlready2 cannot read the ontology: {e}",
                                     path=ontology.source) from e
    try:
        return sorted(_compare(ontology, world, symmetric), key=lambda d: (d.aspect, d.iri))
    finally:
        world.close()


def _compare(onto: Ontology, world: Any, symmetric: set[IRI]) -> Iterator[Disagreement]:
    import owlready2 as ow

    # The two differ on names that are referenced but never declared as classes: owlready2
    # drops an undeclared range (ATKIS's ``:ArchaologicalType``) but invents a class for an
    # undeclared parent (``geo:Feature`` when the imports are not followed); navqa keeps
    # both as stated. Only classes declared in the graph are compared.
    declared = frozenset(onto.classes)

    roots = {ow.Thing, ow.ObjectProperty, ow.DataProperty}

    def named(xs: Iterable[Any]) -> frozenset[IRI]:
        out: set[IRI] = set()
        for x in xs:
            if isinstance(x, ow.ThingClass) and x not in roots and str(x.iri) in declared:
                out.add(str(x.iri))
            elif isinstance(x, ow.Or):
                out |= named(x.Classes)
        return frozenset(out)

    def supers(p: Any) -> frozenset[IRI]:
        return frozenset(str(x.iri) for x in p.is_a
                         if isinstance(x, ow.ObjectPropertyClass | ow.DataPropertyClass)
                         and x not in roots)

    theirs_classes = {str(c.iri): c for c in world.classes()}
    theirs_obj = {str(p.iri): p for p in world.object_properties()}
    theirs_data = {str(p.iri): p for p in world.data_properties()}
    for aspect, ours, theirs in (
        ("classes", set(onto.classes), set(theirs_classes)),
        ("object_properties", set(onto.object_properties), set(theirs_obj)),
        ("data_properties", set(onto.data_properties), set(theirs_data)),
    ):
        if ours != theirs:
            yield Disagreement(aspect, "", frozenset(ours - theirs), frozenset(theirs - ours))

    for iri, c in theirs_classes.items():
        ours_c = onto.classes.get(iri)
        if ours_c is not None and (ours_c.parents & declared) != named(c.is_a) - {iri}:
            yield Disagreement("parents", iri, ours_c.parents & declared, named(c.is_a) - {iri})

    for table, ours_table, is_object in ((theirs_obj, onto.object_properties, True),
                                         (theirs_data, onto.data_properties, False)):
        for iri, p in table.items():
            ours_p = ours_table.get(iri)
            if ours_p is None:
                continue
            checks = [("parents", frozenset(ours_p.parents), supers(p) - {iri}),
                      ("domains", ours_p.domains & declared, named(p.domain))]
            if is_object:
                # owlready2 makes a symmetric property its own inverse
                inv = p.inverse_property
                theirs_inv = {str(inv.iri)} if inv is not None else set()
                mine_inv = set(ours_p.inverses) | ({iri} if iri in symmetric else set())
                checks += [("ranges", ours_p.ranges & declared, named(p.range)),
                           ("inverses", frozenset(mine_inv), frozenset(theirs_inv))]
            for aspect, mine, other in checks:
                if mine != other:
                    yield Disagreement(aspect, iri, mine, other)
