"""Lower-case phrases the data stores as names are values (``plain-name``).

"in the midgut", "during the pupal stage", "(eya)": the extractor finds names by their
capitals and quotes; these are found by one exact probe for the question's lower-case
phrases, kept only when stored with the same case. A phrase naming the schema or
introduced as a class ("for each tissue") is no candidate. Tissues and stages share one
IRI template here, as Bgee's anatomy and stages share ``obo:{id}``, so the class of a
found name comes from the data. The probes run as written against an rdflib graph
standing in for the endpoint.
"""

from __future__ import annotations

import pytest
import rdflib
from synth_vkgs import XSD, GraphEndpoint, index_vkg

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.model.events import ValueMention
from navqa.online.context import SchemaContext
from navqa.online.plain_names import plain_names
from navqa.online.reading.mentions import extract_mentions

EX = "http://example.org/fly#"
ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Gene a owl:Class ; rdfs:label "gene" .
:Tissue a owl:Class ; rdfs:label "tissue" .
:Stage a owl:Class ; rdfs:label "developmental stage" .
:name a owl:DatatypeProperty ; rdfs:label "name" ; rdfs:range xsd:string .
:expressedIn a owl:ObjectProperty ; rdfs:label "expressed in" ; rdfs:domain :Gene ;
    rdfs:range :Tissue .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tgene
target\t\t:gene/{{id}} a :Gene ; :name {{n}}^^xsd:string ; :expressedIn :term/{{t}} .
source\t\tSELECT id, n, t FROM genes

mappingId\ttissue
target\t\t:term/{{id}} a :Tissue ; :name {{n}}^^xsd:string .
source\t\tSELECT id, n FROM terms WHERE kind = 'tissue'

mappingId\tstage
target\t\t:term/{{id}} a :Stage ; :name {{n}}^^xsd:string .
source\t\tSELECT id, n FROM terms WHERE kind = 'stage'
]]
"""
GENES = ["eya", "Run"]
TISSUES = ["midgut", "tissue", "seminal fluid secreting gland"]
STAGES = ["pupal stage (fly)", "embryonic stage 13 (fly)"]


@pytest.fixture(scope="module")
def fly(navqa_config: NavqaConfig, embedder: Embedder,
        tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("fly"), "fly",
                     ONTOLOGY, MAPPING)


@pytest.fixture()
def endpoint() -> GraphEndpoint:
    g = rdflib.Graph()
    name = rdflib.URIRef(EX + "name")
    rows = [("gene", i, n, "Gene") for i, n in enumerate(GENES)]
    rows += [("term", i, n, "Tissue") for i, n in enumerate(TISSUES)]
    rows += [("term", 10 + i, n, "Stage") for i, n in enumerate(STAGES)]
    for kind, i, n, cls in rows:
        s = rdflib.URIRef(f"{EX}{kind}/{i}")
        g.add((s, rdflib.RDF.type, rdflib.URIRef(EX + cls)))
        g.add((s, name, rdflib.Literal(n, datatype=rdflib.XSD.string)))
    return GraphEndpoint(g, "memory:fly")


def _found(ctx: SchemaContext, endpoint: GraphEndpoint, question: str
           ) -> list[tuple[str, str, tuple[str, ...]]]:
    names, _ = plain_names(ctx, endpoint, question, list(extract_mentions(question).values))
    return [(n.grounding.mention.text, n.grounding.stored, n.grounding.classes) for n in names]


def test_a_lower_case_name_is_found_with_the_class_the_data_gives(
        fly: SchemaContext, endpoint: GraphEndpoint) -> None:
    question = "Which genes are expressed in the midgut?"
    names, probes = plain_names(fly, endpoint, question,
                                list(extract_mentions(question).values))
    # the term template is shared by tissues and stages: a second probe asks the data
    assert probes == 2
    assert [(n.grounding.mention, n.grounding.stored, n.grounding.classes,
             question[n.start:n.end]) for n in names] == [
        (ValueMention("midgut", "string"), "midgut", (EX + "Tissue",), "midgut")]


def test_the_longest_stored_phrase_wins_and_a_qualifier_may_follow(
        fly: SchemaContext, endpoint: GraphEndpoint) -> None:
    assert _found(fly, endpoint, "Which genes reach a score above 99 in the seminal fluid "
                                 "secreting gland during the pupal stage?") == [
        ("seminal fluid secreting gland", "seminal fluid secreting gland", (EX + "Tissue",)),
        ("pupal stage", "pupal stage (fly)", (EX + "Stage",))]


def test_a_number_inside_the_phrase_is_part_of_the_name(
        fly: SchemaContext, endpoint: GraphEndpoint) -> None:
    question = "During embryonic stage 13, which genes are expressed?"
    names, _ = plain_names(fly, endpoint, question, list(extract_mentions(question).values))
    assert [(n.grounding.stored, question[n.start:n.end]) for n in names] == [
        ("embryonic stage 13 (fly)", "embryonic stage 13")]


def test_a_symbol_in_parentheses_is_found(fly: SchemaContext,
                                          endpoint: GraphEndpoint) -> None:
    assert _found(fly, endpoint, "Where is eyes absent (eya) expressed?") == [
        ("eya", "eya", (EX + "Gene",))]


@pytest.mark.parametrize("question", [
    "Which genes run in the midgut's neighbour?",  # "run" is stored as "Run": not a name
    "For each tissue, how many genes are expressed?",  # a class, after a quantifier
    "Which tissue has the most genes?",  # a class, after a wh-word
    "Which genes are expressed in the tissue?",  # "tissue" is the class's own label
])
def test_words_that_are_not_names_stay_words(fly: SchemaContext, endpoint: GraphEndpoint,
                                             question: str) -> None:
    assert [t for t, _, _ in _found(fly, endpoint, question)
            if t.lower() in ("run", "tissue")] == []


def test_no_candidate_no_probe(fly: SchemaContext, endpoint: GraphEndpoint) -> None:
    assert plain_names(fly, endpoint, "How many genes are there?", []) == ([], 0)
    assert endpoint.queries == []
