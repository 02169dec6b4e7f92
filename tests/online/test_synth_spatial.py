"""Spatial constraints ("within 2 km of X", "how far away", "how far apart").

The question side is pinned on :func:`~navqa.online.synthesis.spatial.parse_spatial`; the query
side on a small GeoSPARQL VKG indexed here (places and museums with a geometry, roads
without one), asserted on the parsed query, never on its text. On a live endpoint,
``tests/online/test_pinned_answers.py`` runs an ATKIS dev question of this shape through
Ontop against its gold query.
"""

from __future__ import annotations

from typing import Any

import pytest
from rdflib.term import Literal, URIRef, Variable
from synth_vkgs import algebra as _query
from synth_vkgs import index_vkg, label_synth
from synth_vkgs import nodes as _nodes

from navqa.model.events import ValueMention
from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions
from navqa.online.synthesis.spatial import (
    GEO,
    GEOF_DISTANCE,
    SpatialKind,
    geometry_property,
    parse_spatial,
)
from navqa.online.values import GroundedValue

EX = "http://example.org/geo#"
XSD = "http://www.w3.org/2001/XMLSchema#"


@pytest.mark.parametrize(("question", "metres", "op", "number"), [
    ("Which museums lie within 2 km of Lustheim?", 2000.0, "<", "2"),
    ("Which places are less than 500 m from the museum Glyptothek?", 500.0, "<", "500"),
    ("Which places are more than 1.5 kilometres from Lustheim?", 1500.0, ">", "1.5"),
    ("Which places lie within 2 miles of Lustheim?", 3218.688, "<", "2"),
])
def test_a_distance_bound_is_read_in_metres(question: str, metres: float, op: str,
                                            number: str) -> None:
    s = parse_spatial(question)
    assert s is not None and s.kind is SpatialKind.WITHIN
    assert (s.metres, s.comparator, s.number_text) == (pytest.approx(metres), op, number)
    assert question[s.anchor_start:].startswith(("Lustheim", "the museum"))
    assert not s.ask_distance


def test_the_distance_asked_for_is_read() -> None:
    s = parse_spatial("Which places lie within 3 km of Lustheim, and how far away are they?")
    assert s is not None and s.kind is SpatialKind.WITHIN and s.ask_distance
    s = parse_spatial("How far apart are Grainau and Hinterstein?")
    assert s is not None and s.kind is SpatialKind.BETWEEN and s.ask_distance


@pytest.mark.parametrize("question", [
    "Which roads are longer than 3 km?",  # a length, not a distance from something
    "Which museums opened within 2 years of 1990?",  # no unit of length
    "Which places have more than 500 inhabitants?",
])
def test_other_comparisons_are_not_spatial(question: str) -> None:
    assert parse_spatial(question) is None


ONTOLOGY = f"""@prefix : <{EX}> .
@prefix geo: <{GEO}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Place a owl:Class ; rdfs:label "place" .
:Museum a owl:Class ; rdfs:label "museum" .
:Road a owl:Class ; rdfs:label "road" .
:name a owl:DatatypeProperty ; rdfs:label "name" ; rdfs:range xsd:string .
:length a owl:DatatypeProperty ; rdfs:label "length" ; rdfs:range xsd:decimal .
:visitors a owl:DatatypeProperty ; rdfs:label "number of visitors" ; rdfs:range xsd:integer .
:inPlace a owl:ObjectProperty ; rdfs:label "in place" ; rdfs:domain :Museum ;
    rdfs:range :Place .
geo:Geometry a owl:Class .
geo:hasDefaultGeometry a owl:ObjectProperty .
geo:asWKT a owl:DatatypeProperty .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
geo:\t\t{GEO}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tplace
target\t\t:place/{{id}} a :Place ; :name {{name}}^^xsd:string ; \
geo:hasDefaultGeometry :place/geom/{{id}} .
source\t\tSELECT id, name FROM place

mappingId\tplace-geometry
target\t\t:place/geom/{{id}} geo:asWKT {{wkt}}^^geo:wktLiteral .
source\t\tSELECT id, wkt FROM place

mappingId\tmuseum
target\t\t:museum/{{id}} a :Museum ; :name {{name}}^^xsd:string ; \
:visitors {{visitors}}^^xsd:integer ; :inPlace :place/{{place_id}} ; \
geo:hasDefaultGeometry :museum/geom/{{id}} .
source\t\tSELECT id, name, visitors, place_id FROM museum

mappingId\tmuseum-geometry
target\t\t:museum/geom/{{id}} geo:asWKT {{wkt}}^^geo:wktLiteral .
source\t\tSELECT id, wkt FROM museum

mappingId\troad
target\t\t:road/{{id}} a :Road ; :name {{name}}^^xsd:string ; :length {{length}}^^xsd:decimal .
source\t\tSELECT id, name, length FROM road
]]
"""


@pytest.fixture(scope="module")
def geo_ctx(navqa_config, embedder, tmp_path_factory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("geo"), "geo", ONTOLOGY,
                     MAPPING)


def _synth(ctx: SchemaContext, question: str, root: str,
           groundings: tuple[tuple[str, str, str], ...]) -> str:
    mentions = extract_mentions(question)
    grounded = [GroundedValue(ValueMention(text, "string"), EX + prop, text,
                              f"{EX}{cls.lower()}/1", (EX + cls,), True)
                for text, prop, cls in groundings]
    sparql, _ = label_synth(ctx)(question, mentions, link(ctx, question, mentions),
                                        grounded, Subgraph(EX + root))
    return sparql


def _triples(alg: Any) -> set[tuple[Any, Any, Any]]:
    return {t for n in _nodes(alg) if n.name == "BGP" for t in n["triples"]}


def _distance_calls(alg: Any) -> list[Any]:
    return [n for n in _nodes(alg) if n.name == "Function" and n["iri"] == URIRef(GEOF_DISTANCE)]


def test_the_geometry_property_is_found_where_mapped(geo_ctx) -> None:
    assert geometry_property(geo_ctx, EX + "Museum") == GEO + "hasDefaultGeometry"
    assert geometry_property(geo_ctx, EX + "Road") is None


def test_within_a_distance_compares_geometries_not_a_join(geo_ctx) -> None:
    sparql = _synth(geo_ctx, "Which museums lie within 2 km of Lustheim?", "Museum",
                    (("Lustheim", "name", "Place"),))
    alg = _query(sparql)
    triples = _triples(alg)
    [(place, _, _)] = [t for t in triples if t[2] == Literal("Lustheim")]
    museums = {t[0] for t in triples if t[2] == URIRef(EX + "Museum")}
    # the place is measured from: no property path joins it to the museum
    assert not [t for t in triples if t[1] == URIRef(EX + "inPlace")], sparql
    assert place not in museums
    [call] = _distance_calls(alg)
    filters = [n for n in _nodes(alg) if n.name == "RelationalExpression"]
    assert any(f["op"] == "<" and f["other"] == Literal(2000) for f in filters), sparql
    # "2" is the distance, not a value of a data property
    assert not [t for t in triples if t[1] == URIRef(EX + "visitors")], sparql
    assert len(call["expr"]) == 3


def test_the_distance_asked_for_is_projected_nearest_first(geo_ctx) -> None:
    sparql = _synth(geo_ctx, "Which museums lie within 2 km of Lustheim, and how far away "
                             "are they?", "Museum", (("Lustheim", "name", "Place"),))
    alg = _query(sparql)
    assert [str(v) for v in alg["PV"]][-1] == "distance"
    [order] = [n for n in _nodes(alg) if n.name == "OrderBy"]
    assert order["expr"][0]["expr"] == Variable("distance")


def test_the_distance_between_two_named_places(geo_ctx) -> None:
    sparql = _synth(geo_ctx, "How far apart are the places Lustheim and Grainau?", "Place",
                    (("Lustheim", "name", "Place"), ("Grainau", "name", "Place")))
    alg = _query(sparql)
    assert [str(v) for v in alg["PV"]] == ["distance"], sparql
    assert len(_distance_calls(alg)) == 1
    consts = {t[2] for t in _triples(alg) if isinstance(t[2], Literal)}
    assert consts == {Literal("Lustheim"), Literal("Grainau")}


def test_an_answer_without_a_geometry_keeps_the_ordinary_join(geo_ctx) -> None:
    """A road has no geometry in these mappings: no distance is compared, and the value
    still constrains the query (it is never dropped)."""
    sparql = _synth(geo_ctx, "Which roads lie within 2 km of Lustheim?", "Road",
                    (("Lustheim", "name", "Place"),))
    assert not _distance_calls(_query(sparql))
