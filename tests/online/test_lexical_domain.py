"""Lexical evidence names the property, not the class it is on.

Comments often say which table or class they describe ("Column of the vessel register").
A question that names the class ("Which tankers are in the register?") must not make
every property of that class lexical evidence: those would fill the context's budget
before the question's own properties. The comment still counts for the words that are
not the class's (:func:`navqa.online.linking.lexical_score`).
"""

from __future__ import annotations

import pytest
from synth_vkgs import XSD, index_vkg

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.online.context import SchemaContext
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions

EX = "http://example.org/register#"

ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Vessel a owl:Class ; rdfs:label "vessel" .
:Tanker a owl:Class ; rdfs:subClassOf :Vessel ; rdfs:label "tanker" .
:p1 a owl:DatatypeProperty ; rdfs:domain :Vessel ; rdfs:range xsd:string ;
    rdfs:comment "Column of the vessel and tanker register." .
:p2 a owl:DatatypeProperty ; rdfs:domain :Vessel ; rdfs:range xsd:decimal ;
    rdfs:comment "Deadweight tonnage of the vessel, from the vessel register." .
:name a owl:DatatypeProperty ; rdfs:label "name" ; rdfs:range xsd:string .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tvessel
target\t\t:vessel/{{id}} a :Vessel ; :name {{n}}^^xsd:string ; :p1 {{a}}^^xsd:string ; \
:p2 {{b}}^^xsd:decimal .
source\t\tSELECT id, n, a, b FROM t1

mappingId\ttanker
target\t\t:vessel/{{id}} a :Tanker .
source\t\tSELECT id FROM t1 WHERE kind = 'T'
]]
"""


@pytest.fixture(scope="module")
def fleet(navqa_config: NavqaConfig, embedder: Embedder,
          tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("register"), "register",
                     ONTOLOGY, MAPPING)


def _lexical(ctx: SchemaContext, question: str) -> dict[str, float]:
    return link(ctx, question, extract_mentions(question), k=2, k_props=2).lexical


def test_the_domain_of_a_property_is_its_classes_and_their_subclasses(
        fleet: SchemaContext) -> None:
    domain = fleet.lexical_profiles[EX + "p1"].domain
    assert {"vessel", "tanker"} <= domain
    assert fleet.lexical_profiles[EX + "Vessel"].domain == frozenset()


def test_a_question_naming_only_the_class_is_no_evidence_for_its_properties(
        fleet: SchemaContext) -> None:
    # the comments of p1 and p2 name the class (and p1 its subclass); the question
    # says nothing else that they say
    for question in ("Which vessels are there?", "List every tanker."):
        lexical = _lexical(fleet, question)
        assert EX + "p1" not in lexical, question
        assert EX + "p2" not in lexical, question


def test_the_comment_still_counts_for_the_words_beyond_the_class(
        fleet: SchemaContext) -> None:
    lexical = _lexical(fleet, "What is the deadweight tonnage of each tanker?")
    assert lexical.get(EX + "p2", 0.0) > 0.0
    assert EX + "p1" not in lexical


def test_the_budget_goes_to_the_strongest_evidence_first(fleet: SchemaContext) -> None:
    from navqa.model.graph import Edge
    from navqa.online.expansion import ContextRequest, Subgraph, complete
    from navqa.online.verbalize import edge_cost, token_count, verbalize

    sub = Subgraph(root=EX + "Vessel", nodes={EX + "Vessel"})

    def run(request: ContextRequest) -> Subgraph:
        return complete(fleet, sub, request, lambda g, e: edge_cost(fleet, g, e),
                        token_count(verbalize(fleet, sub)))

    base = run(ContextRequest(per_class=0))  # the name only: no lexical evidence
    used = token_count(verbalize(fleet, base))
    room = max(edge_cost(fleet, base, Edge(EX + "Vessel", EX + p, XSD + t, True))
               for p, t in (("p1", "string"), ("p2", "decimal")))
    for strong, weak in (("p1", "p2"), ("p2", "p1")):
        out = run(ContextRequest(per_class=0, budget=used + room,
                                 lexical={EX + strong: 0.9, EX + weak: 0.4}))
        props = {e.prop for e in out.all_edges}
        assert EX + strong in props and EX + weak not in props, strong


def test_a_property_with_evidence_enters_once_on_the_root(fleet: SchemaContext) -> None:
    from navqa.online.expansion import ContextRequest, Subgraph, complete
    from navqa.online.verbalize import edge_cost, token_count, verbalize

    # Tanker inherits p2 from Vessel: the context shows it once, on the root
    sub = Subgraph(root=EX + "Tanker", nodes={EX + "Tanker", EX + "Vessel"})
    out = complete(fleet, sub, ContextRequest(per_class=0, lexical={EX + "p2": 0.9}),
                   lambda g, e: edge_cost(fleet, g, e), token_count(verbalize(fleet, sub)))
    assert [e.source for e in out.all_edges if e.prop == EX + "p2"] == [EX + "Tanker"]


def test_a_superlative_says_the_quantity_it_ranks_by() -> None:
    from navqa.online.linking import question_stems

    question = "Which is the deepest wellbore?"
    assert "depth" in question_stems(question, extract_mentions(question))
    question = "Which wellbore was drilled first?"
    assert "depth" not in question_stems(question, extract_mentions(question))
