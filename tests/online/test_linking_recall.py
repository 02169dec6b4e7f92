"""Linking and context recall: what the VKG says for free (column names, comments,
grounded values) brings a property into the linking and into the chosen subgraph.

The schema is built so that the embedding alone has nothing to go on: the properties in
question have opaque local names and no labels.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.model.graph import Edge
from navqa.offline.artifacts import build_index
from navqa.online.context import SchemaContext, stems
from navqa.online.expansion import Anchor, ContextRequest, Subgraph, complete, shortest_path
from navqa.online.linking import Linking, link
from navqa.online.reading.mentions import extract_mentions
from navqa.online.verbalize import edge_cost, token_count, verbalize

EX = "http://example.org/fleet#"
XSD = "http://www.w3.org/2001/XMLSchema#"

ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Vessel a owl:Class ; rdfs:label "vessel" .
:Port a owl:Class ; rdfs:label "port" .
:Company a owl:Class ; rdfs:label "company" .
:homePort a owl:ObjectProperty ; rdfs:label "home port" ; rdfs:domain :Vessel ;
    rdfs:range :Port .
:v2 a owl:ObjectProperty ; rdfs:domain :Vessel ; rdfs:range :Company ;
    rdfs:comment "The company that runs the ship day to day: its operator." .
:v1 a owl:DatatypeProperty ; rdfs:domain :Vessel ; rdfs:range xsd:string .
:tonnage a owl:DatatypeProperty ; rdfs:label "gross tonnage" ; rdfs:domain :Vessel ;
    rdfs:range xsd:integer .
:name a owl:DatatypeProperty ; rdfs:label "name" ; rdfs:range xsd:string .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tvessel
target\t\t:vessel/{{id}} a :Vessel ; :name {{vname}}^^xsd:string ; \
:v1 {{registry_status}}^^xsd:string ; :tonnage {{gt}}^^xsd:integer ; \
:homePort :port/{{port_id}} ; :v2 :company/{{company_id}} .
source\t\tSELECT id, vname, registry_status, gt, port_id, company_id FROM vessel

mappingId\tport
target\t\t:port/{{id}} a :Port ; :name {{name}}^^xsd:string .
source\t\tSELECT id, name FROM port

mappingId\tcompany
target\t\t:company/{{id}} a :Company ; :name {{name}}^^xsd:string .
source\t\tSELECT id, name FROM company
]]
"""


@pytest.fixture(scope="module")
def fleet(navqa_config: NavqaConfig, embedder: Embedder,
          tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    d: Path = tmp_path_factory.mktemp("fleet")
    (d / "fleet.ttl").write_text(ONTOLOGY, encoding="utf-8")
    (d / "fleet.obda").write_text(MAPPING, encoding="utf-8")
    bundle = build_index(navqa_config, ontology_path=d / "fleet.ttl",
                         mapping_path=d / "fleet.obda", out_dir=d / "idx", embedder=embedder,
                         name="fleet")
    return SchemaContext(bundle, embedder)


def _link(ctx: SchemaContext, question: str) -> Linking:
    return link(ctx, question, extract_mentions(question), k=3, k_props=3)


def _complete(ctx: SchemaContext, sub: Subgraph, request: ContextRequest) -> Subgraph:
    return complete(ctx, sub, request, lambda g, e: edge_cost(ctx, g, e),
                    token_count(verbalize(ctx, sub)))


def test_stems_split_identifiers_and_merge_inflections() -> None:
    assert stems("registry_status") == stems("Registry Status")
    assert stems("operator") == stems("operated")
    assert "id" not in stems("vessel_id")


def test_property_named_only_by_its_column_enters_the_context(fleet: SchemaContext) -> None:
    lk = _link(fleet, "What is the status of each vessel?")
    assert lk.lexical.get(EX + "v1", 0.0) >= 0.3
    # its table names the class, not each of its columns: no evidence for the tonnage
    assert EX + "tonnage" not in lk.lexical
    sub = Subgraph(root=EX + "Vessel", nodes={EX + "Vessel"})
    out = _complete(fleet, sub, ContextRequest(lexical=lk.lexical, per_class=0))
    assert EX + "v1" in {e.prop for e in out.all_edges}
    assert EX + "tonnage" not in {e.prop for e in out.all_edges}


def test_property_named_only_by_its_comment_has_evidence(fleet: SchemaContext) -> None:
    lk = _link(fleet, "Who is the operator of each vessel?")
    assert lk.lexical.get(EX + "v2", 0.0) > 0.0
    # a value mention is not lexical evidence
    lk = _link(fleet, 'Which vessels are called "Tonnage Queen"?')
    assert EX + "tonnage" not in lk.lexical


def test_grounded_value_brings_its_property_and_class(fleet: SchemaContext) -> None:
    sub = Subgraph(root=EX + "Vessel", nodes={EX + "Vessel"})
    out = _complete(fleet, sub, ContextRequest(anchors=(Anchor(EX + "name", (EX + "Port",)),)))
    assert EX + "Port" in out.classes
    triples = {e.triple for e in out.all_edges}
    assert (EX + "Vessel", EX + "homePort", EX + "Port") in triples
    assert any(e.source == EX + "Port" and e.prop == EX + "name" and e.is_data
               for e in out.all_edges)
    # the input subgraph is left as it was, and what the expansion chose stays apart
    assert sub.context == [] and out.edges == [] and out.data == []


def test_context_keeps_the_property_its_comment_names(fleet: SchemaContext) -> None:
    lk = _link(fleet, "Who is the operator of each vessel?")
    sub = Subgraph(root=EX + "Vessel", nodes={EX + "Vessel"})
    out = _complete(fleet, sub, ContextRequest(lexical=lk.lexical, per_class=0))
    assert (EX + "Vessel", EX + "v2", EX + "Company") in {e.triple for e in out.all_edges}
    assert EX + "Company" in out.classes
    # the unasked tonnage is no evidence-less extra when no per-class quota is given
    assert EX + "tonnage" not in {e.prop for e in out.all_edges}


def test_budget_bounds_everything_but_the_grounded_values(fleet: SchemaContext) -> None:
    sub = Subgraph(root=EX + "Vessel", nodes={EX + "Vessel"})
    request = ContextRequest(anchors=(Anchor(EX + "name", (EX + "Port",)),),
                             lexical={EX + "tonnage": 1.0}, budget=0)
    out = _complete(fleet, sub, request)
    assert {e.prop for e in out.context} == {EX + "homePort", EX + "name"}
    roomy = _complete(fleet, sub, ContextRequest(lexical={EX + "tonnage": 1.0}))
    assert EX + "tonnage" in {e.prop for e in roomy.context}


def test_verbalization_without_context_is_the_expanded_subgraph(fleet: SchemaContext) -> None:
    sub = Subgraph(root=EX + "Vessel", nodes={EX + "Vessel"},
                   data=[Edge(EX + "Vessel", EX + "tonnage", XSD + "integer", True)])
    out = _complete(fleet, sub, ContextRequest(anchors=(Anchor(EX + "name", (EX + "Port",)),)))
    assert verbalize(fleet, out, context=False) == verbalize(fleet, sub)
    full = verbalize(fleet, out)
    assert "homePort" in full and "Port" in full and "tonnage" in full


def test_shortest_path_is_oriented_and_bounded(fleet: SchemaContext) -> None:
    path = shortest_path(fleet, {EX + "Port"}, {EX + "Company"})
    assert path is not None
    assert [e.triple for e in path] == [(EX + "Vessel", EX + "homePort", EX + "Port"),
                                        (EX + "Vessel", EX + "v2", EX + "Company")]
    assert shortest_path(fleet, {EX + "Port"}, {EX + "Company"}, max_len=1) is None
    assert shortest_path(fleet, {EX + "Port"}, {EX + "Port"}) == []
