"""Shapes of mapping term maps, and what the ontology adds to them (OWL 2 QL reasoning)."""

from __future__ import annotations

from audit_helpers import DEMO_NS, REPO

from navqa.audits.shapes import Shape, ShapeIndex, ShapeKind, shape_of
from navqa.model.mapping import TermKind, TermMap, TermType
from navqa.offline.artifacts import parse_mappings
from navqa.offline.ontology_parser import parse_ontology

R = DEMO_NS
D = "http://example.org/navqa/rail/data/"
XSD = "http://www.w3.org/2001/XMLSchema#"


def T(key: str) -> Shape:
    return Shape(ShapeKind.TEMPLATE, key)


def test_compatibility_of_shapes() -> None:
    assert T(D + "station/{}").compatible(T(D + "station/{}"))
    assert not T(D + "station/{}").compatible(T(D + "stock/{}"))
    # a placeholder never produces "/": one segment never meets two
    assert not T(D + "block/{}").compatible(T(D + "block/{}/{}"))
    assert T(D + "stop/{}/{}").compatible(T(D + "stop/{}/{}"))
    const = Shape(ShapeKind.CONSTANT, D + "station/KSJ")
    assert const.compatible(T(D + "station/{}")) and not const.compatible(T(D + "line/{}"))
    assert Shape(ShapeKind.ANY_IRI).compatible(T(D + "x/{}"))
    lit = Shape(ShapeKind.LITERAL, XSD + "string")
    assert not lit.compatible(T(D + "station/{}"))
    assert lit.compatible(Shape(ShapeKind.LITERAL, ""))          # unknown datatype
    assert not lit.compatible(Shape(ShapeKind.LITERAL, XSD + "date"))
    assert not lit.compatible(Shape(ShapeKind.LITERAL, "", "en"))  # "x" never equals "x"@en
    assert T(D + "station/{}").produces(D + "station/KSJ")
    assert not T(D + "station/{}").produces(D + "station/KSJ/1")


def test_a_whole_iri_from_one_column_is_any_iri() -> None:
    tm = TermMap(TermKind.TEMPLATE, "{url}", TermType.IRI)
    assert shape_of(tm).kind is ShapeKind.ANY_IRI


def test_reasoning_over_the_demo() -> None:
    idx = ShapeIndex(parse_ontology(REPO / "ontologies/demo.ttl"),
                     parse_mappings(REPO / "mappings/demo.obda"))
    # super-properties collect their sub-properties' pairs
    assert {s.value for s in idx.subject_shapes(R + "locatedIn")} == {
        D + "station/{}", D + "city/{}"}
    assert {o.value for o in idx.object_shapes(R + "lineEndpoint")} == {D + "station/{}"}
    # superclasses collect their subclasses' templates; Place has all three places
    assert {s.value for s in idx.class_shapes(R + "Place")} == {
        D + "region/{}", D + "city/{}", D + "station/{}"}
    # Organisation is typed through headquarteredIn's single domain (and its subclasses)
    assert {s.value for s in idx.class_shapes(R + "Organisation")} == {D + "company/{}"}
    # name's union domain (Organisation, Place, Line) types nothing by itself: a Line is
    # still only data:line/{}
    assert {s.value for s in idx.class_shapes(R + "Line")} == {D + "line/{}"}
    # unmapped elements produce nothing
    assert idx.class_shapes(R + "Train") == set()
    assert idx.property_pairs(R + "stationRegion") == set()
