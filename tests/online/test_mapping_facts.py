"""What the mappings say that no literal or axiom does: constant IRIs and shared rows.

A fleet VKG in the image of NPD's facilities. Mobile units come from the table
``facility_moveable``; vessels are the rows of kind ``VESSEL`` of that same table, but
the ontology puts ``VesselFacility`` under ``Facility``, not under ``MoveableFacility``
(whose instances have a responsible company). The country a unit is registered in is a
constant IRI per stored code (``<…/The_Bahamas>`` where ``nation = 'Bahamas'``): no
literal holds it.

* constant IRIs ground values (:mod:`navqa.online.constant_values`): "the Bahamas" and
  "UK" (the string the source SQL compares with) are the IRIs themselves;
* row superclasses (:func:`navqa.offline.class_graph.row_superclasses`): a vessel has
  the edges of a moveable facility;
* together: "List the vessels registered in the UK and, where known, the company
  responsible for each" is answered exactly; the queries run as written against an
  rdflib graph standing in for the endpoint.
"""

from __future__ import annotations

import pytest
import rdflib
from synth_vkgs import XSD, GraphEndpoint, index_vkg, label_synth

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.model.events import ValueMention
from navqa.offline.class_graph import row_superclasses
from navqa.offline.mapping_sql import whole_table
from navqa.online.constant_values import match_constants, spoken_names
from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions
from navqa.online.values import ground_mentions

EX = "http://example.org/fleet#"
PLACES = "http://example.org/places/"
ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Facility a owl:Class ; rdfs:label "facility" .
:MoveableFacility a owl:Class ; rdfs:subClassOf :Facility ; rdfs:label "moveable facility" .
:VesselFacility a owl:Class ; rdfs:subClassOf :Facility ; rdfs:label "vessel" .
:Company a owl:Class ; rdfs:label "company" .
:Wellbore a owl:Class ; rdfs:label "wellbore" .
:name a owl:DatatypeProperty ; rdfs:label "name" .
:registeredInCountry a owl:ObjectProperty ; rdfs:domain :MoveableFacility ;
    rdfs:label "registered in country" .
:currentResponsibleCompany a owl:ObjectProperty ; rdfs:domain :MoveableFacility ;
    rdfs:range :Company ; rdfs:label "current responsible company" .
:drillingFacility a owl:ObjectProperty ; rdfs:domain :Wellbore ; rdfs:range :Facility ;
    rdfs:label "drilling facility" .
:drillingOperator a owl:ObjectProperty ; rdfs:domain :Wellbore ; rdfs:range :Company ;
    rdfs:label "drilling operator" .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tmoveable
target\t\t:facility/{{id}} a :MoveableFacility ; :name {{nam}}^^xsd:string .
source\t\tSELECT id, nam FROM facility_moveable

mappingId\tvessel
target\t\t:facility/{{id}} a :VesselFacility .
source\t\tSELECT id FROM facility_moveable WHERE kind = 'VESSEL'

mappingId\tresponsible
target\t\t:facility/{{id}} :currentResponsibleCompany :company/{{cmp}} .
source\t\tSELECT id, cmp FROM facility_moveable WHERE cmp IS NOT NULL

mappingId\tbahamas
target\t\t:facility/{{id}} :registeredInCountry <{PLACES}The_Bahamas> .
source\t\tSELECT id FROM facility_moveable WHERE nation = 'Bahamas'

mappingId\tbritain
target\t\t:facility/{{id}} :registeredInCountry <{PLACES}Great_Britain> .
source\t\tSELECT id FROM facility_moveable WHERE nation = 'UK'

mappingId\tcompany
target\t\t:company/{{id}} a :Company ; :name {{nam}}^^xsd:string .
source\t\tSELECT id, nam FROM company

mappingId\twellbore
target\t\t:wellbore/{{id}} a :Wellbore ; :name {{nam}}^^xsd:string ; \
:drillingFacility :facility/{{fac}} ; :drillingOperator :company/{{op}} .
source\t\tSELECT id, nam, fac, op FROM wellbore
]]
"""
COMPANIES = {"1": "North Drilling", "2": "Sea Rigs", "3": "Deep Ops"}
# (id, name, kind, nation, responsible company)
UNITS = [("10", "OCEAN STAR", "VESSEL", "UK", "1"), ("11", "WAVE RUNNER", "VESSEL", "UK", None),
         ("12", "SEA LION", "VESSEL", "Bahamas", "2"), ("13", "BIG JACK", "JACKUP", "UK", "2")]
# (id, name, facility, drilling operator): the operator is no responsible company
WELLBORES = [("w1", "1/2-3", "10", "3"), ("w2", "1/2-4", "11", "3")]
QUESTION = ("List the vessels registered in the UK and, where known, the company responsible "
            "for each.")


@pytest.fixture(scope="module")
def fleet(navqa_config: NavqaConfig, embedder: Embedder,
          tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("fleet"), "fleet",
                     ONTOLOGY, MAPPING)


@pytest.fixture(scope="module")
def graph() -> rdflib.Graph:
    """The triples Ontop would serve for :data:`MAPPING` over the rows above."""
    g = rdflib.Graph()

    def uri(local: str) -> rdflib.URIRef:
        return rdflib.URIRef(EX + local)

    nations = {"UK": PLACES + "Great_Britain", "Bahamas": PLACES + "The_Bahamas"}
    for i, name in COMPANIES.items():
        g.add((uri(f"company/{i}"), rdflib.RDF.type, uri("Company")))
        g.add((uri(f"company/{i}"), uri("name"), rdflib.Literal(name)))
    for i, name, kind, nation, cmp in UNITS:
        f = uri(f"facility/{i}")
        g.add((f, rdflib.RDF.type, uri("MoveableFacility")))
        if kind == "VESSEL":
            g.add((f, rdflib.RDF.type, uri("VesselFacility")))
        g.add((f, uri("name"), rdflib.Literal(name)))
        g.add((f, uri("registeredInCountry"), rdflib.URIRef(nations[nation])))
        if cmp is not None:
            g.add((f, uri("currentResponsibleCompany"), uri(f"company/{cmp}")))
    for i, name, fac, op in WELLBORES:
        w = uri(f"wellbore/{i}")
        g.add((w, rdflib.RDF.type, uri("Wellbore")))
        g.add((w, uri("name"), rdflib.Literal(name)))
        g.add((w, uri("drillingFacility"), uri(f"facility/{fac}")))
        g.add((w, uri("drillingOperator"), uri(f"company/{op}")))
    return g


def _rows(graph: rdflib.Graph, sparql: str) -> set[tuple[str, ...]]:
    return {tuple("" if x is None else str(x) for x in row) for row in graph.query(sparql)}


def test_a_constant_iri_is_named_by_its_last_segment_and_its_sql_code() -> None:
    assert spoken_names(PLACES + "The_Bahamas",
                        "SELECT id FROM t WHERE nation = 'Bahamas'") == {"bahamas"}
    assert spoken_names(PLACES + "C%C3%B4te_d%27Ivoire") == {"côte d'ivoire"}
    # two compared strings: neither is known to be the code of this IRI
    assert spoken_names(PLACES + "Norway", "SELECT id FROM t WHERE a = 'X' AND b = 'Y'") == {
        "norway"}


def test_a_plain_table_scan_is_told_from_a_selection() -> None:
    assert whole_table("SELECT id, nam FROM facility_moveable") == "facility_moveable"
    assert whole_table("SELECT id FROM facility_moveable WHERE kind = 'VESSEL'") is None
    assert whole_table("SELECT f.id FROM facility_moveable f JOIN company c ON f.cmp = c.id") \
        is None


def test_the_mappings_constant_objects_match_the_value_as_spelt(fleet: SchemaContext) -> None:
    objects = fleet.constant_objects
    assert {(o.prop, o.iri) for o in objects} == {
        (EX + "registeredInCountry", PLACES + "The_Bahamas"),
        (EX + "registeredInCountry", PLACES + "Great_Britain")}
    assert [o.iri for o in match_constants(objects, "the Bahamas")] == [PLACES + "The_Bahamas"]
    assert [o.iri for o in match_constants(objects, "uk")] == [PLACES + "Great_Britain"]
    assert [o.iri for o in match_constants(objects, "great  britain")] == [
        PLACES + "Great_Britain"]
    assert match_constants(objects, "Britain") == []  # a part of a name is no name


def test_value_grounding_finds_the_constant_iri(fleet: SchemaContext, graph: rdflib.Graph) -> None:
    res = ground_mentions(fleet, GraphEndpoint(graph), [ValueMention("Bahamas", "string")])
    assert [(g.prop, g.stored, g.iri, g.sparql()) for g in res.found] == [
        (EX + "registeredInCountry", PLACES + "The_Bahamas", True, f"<{PLACES}The_Bahamas>")]
    assert res.missing == []


def test_rows_of_a_wholly_mapped_table_make_a_row_superclass(fleet: SchemaContext) -> None:
    assert row_superclasses(fleet.ontology, fleet.mappings) == {
        EX + "VesselFacility": frozenset({EX + "MoveableFacility"})}
    props = {n.edge.prop for n in fleet.neighbours(EX + "VesselFacility")}
    assert EX + "currentResponsibleCompany" in props
    # a moveable facility is not a vessel: the relation is not symmetric
    assert fleet.row_superclasses.get(EX + "MoveableFacility") is None


def test_the_vessels_of_a_country_and_their_responsible_company(fleet: SchemaContext,
                                                               graph: rdflib.Graph) -> None:
    mentions = extract_mentions(QUESTION)
    found = ground_mentions(fleet, GraphEndpoint(graph), list(mentions.values)).found
    assert [g.stored for g in found] == [PLACES + "Great_Britain"]
    sparql, _ = label_synth(fleet)(QUESTION, mentions, link(fleet, QUESTION, mentions),
                                          found, Subgraph(EX + "VesselFacility"))
    assert _rows(graph, sparql) == {("OCEAN STAR", "North Drilling"), ("WAVE RUNNER", "")}


def test_constant_iris_asked_as_alternatives_are_a_union(fleet: SchemaContext,
                                                         graph: rdflib.Graph) -> None:
    question = "Which vessels are registered in the UK or the Bahamas?"
    mentions = extract_mentions(question)
    found = ground_mentions(fleet, GraphEndpoint(graph), list(mentions.values)).found
    assert sorted(g.stored for g in found) == [PLACES + "Great_Britain", PLACES + "The_Bahamas"]
    sparql, _ = label_synth(fleet)(question, mentions, link(fleet, question, mentions),
                                          found, Subgraph(EX + "VesselFacility"))
    assert "UNION" in sparql
    assert _rows(graph, sparql) == {("OCEAN STAR",), ("WAVE RUNNER",), ("SEA LION",)}
