"""A stored value that abbreviates the mention's words, or spells them with other
punctuation between them, is the mention's value.

"Zechstein Group" is stored as "ZECHSTEIN GP", "Tarbert Formation" as "TARBERT FM": the
exact and substring probes miss them, the nearest-value probe sees them. When the stored
form spells the mention with some words abbreviated (:func:`spells_abbreviated`), value
grounding takes it; a merely similar value ("NANSEN FM" for "Nansen Member") stays a
near value of an ungrounded mention.

The probes run as written against an rdflib graph standing in for the endpoint.
"""

from __future__ import annotations

import pytest
import rdflib
from synth_vkgs import XSD, GraphEndpoint, index_vkg

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.model.events import ValueMention
from navqa.online.context import SchemaContext
from navqa.online.values import abbreviates, ground_mentions, respells, spells_abbreviated

EX = "http://example.org/strata#"
ONTOLOGY = f"""@prefix : <{EX}> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <{XSD}> .
<{EX}> a owl:Ontology .
:Unit a owl:Class ; rdfs:label "stratigraphic unit" .
:name a owl:DatatypeProperty ; rdfs:label "name" ; rdfs:range xsd:string .
"""
MAPPING = f"""[PrefixDeclaration]
:\t\t{EX}
xsd:\t\t{XSD}

[MappingDeclaration] @collection [[
mappingId\tunit
target\t\t:unit/{{id}} a :Unit ; :name {{n}}^^xsd:string .
source\t\tSELECT id, n FROM units
]]
"""
STORED = ["ZECHSTEIN GP", "ZECHSTEIN FM", "NANSEN FM", "TARBERT FM", "BRENT GP",
          "Gas KÅRSTØ, EMDEN"]


@pytest.fixture(scope="module")
def strata(navqa_config: NavqaConfig, embedder: Embedder,
           tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("strata"), "strata",
                     ONTOLOGY, MAPPING)


@pytest.fixture()
def endpoint() -> GraphEndpoint:
    g = rdflib.Graph()
    for i, name in enumerate(STORED):
        s = rdflib.URIRef(f"{EX}unit/{i}")
        g.add((s, rdflib.RDF.type, rdflib.URIRef(EX + "Unit")))
        g.add((s, rdflib.URIRef(EX + "name"), rdflib.Literal(name, datatype=rdflib.XSD.string)))
    return GraphEndpoint(g, "memory:strata")


def test_abbreviation_keeps_the_first_letter_and_the_order() -> None:
    assert abbreviates("gp", "group") and abbreviates("fm", "formation")
    assert abbreviates("ltd.", "limited") and abbreviates("st", "saint")
    assert not abbreviates("pg", "group")  # another first letter
    assert not abbreviates("gq", "group")  # a letter the word lacks
    assert not abbreviates("g", "group")  # one letter is too little
    assert not abbreviates("group", "group")


def test_a_spelling_needs_every_word_and_one_full_word() -> None:
    assert spells_abbreviated("ZECHSTEIN GP", "Zechstein Group")
    assert spells_abbreviated("Mount Everest", "Mt Everest")  # either side may abbreviate
    assert not spells_abbreviated("NANSEN FM", "Nansen Member")
    assert not spells_abbreviated("ZECHSTEIN", "Zechstein Group")  # a word missing
    assert not spells_abbreviated("GP FM", "Group Formation")  # no word in full
    assert not spells_abbreviated("TROLL", "Troll")  # nothing abbreviated


def test_the_abbreviated_stored_value_grounds_the_mention(strata: SchemaContext,
                                                          endpoint: GraphEndpoint) -> None:
    res = ground_mentions(strata, endpoint, [ValueMention("Zechstein Group", "string")])
    assert [(g.stored, g.prop, g.classes, g.abbreviated) for g in res.found] == [
        ("ZECHSTEIN GP", EX + "name", (EX + "Unit",), True)]
    assert res.missing == []


def test_switched_off_the_mention_stays_ungrounded(strata: SchemaContext,
                                                   endpoint: GraphEndpoint) -> None:
    # the grammar rule abbreviated-value off (pipeline.disabled_rules)
    res = ground_mentions(strata, endpoint, [ValueMention("Zechstein Group", "string")],
                          abbreviations=False)
    assert res.found == []
    assert [n.stored for n in res.missing[0].nearest][:1] == ["ZECHSTEIN GP"]


def test_a_merely_similar_value_stays_a_near_value(strata: SchemaContext,
                                                    endpoint: GraphEndpoint) -> None:
    res = ground_mentions(strata, endpoint, [ValueMention("Nansen Member", "string")])
    assert res.found == []
    assert [m.mention.text for m in res.missing] == ["Nansen Member"]
    assert "NANSEN FM" in [n.stored for n in res.missing[0].nearest]


def test_a_respelling_needs_the_words_in_a_row() -> None:
    assert respells("Gas KÅRSTØ, EMDEN", "Kårstø–Emden")
    assert respells("ST. FERGUS", "St Fergus")
    assert not respells("EMDEN, KÅRSTØ", "Kårstø–Emden")  # another order
    assert not respells("KÅRSTØ GAS EMDEN", "Kårstø–Emden")  # a word between
    assert not respells("BRENT GP", "Brent")  # one word: the substring probe's case


def test_the_same_words_with_other_punctuation_ground_the_mention(
        strata: SchemaContext, endpoint: GraphEndpoint) -> None:
    res = ground_mentions(strata, endpoint, [ValueMention("Kårstø–Emden", "string")])
    assert [(g.stored, g.exact, g.abbreviated) for g in res.found] == [
        ("Gas KÅRSTØ, EMDEN", False, False)]
    assert res.missing == []
