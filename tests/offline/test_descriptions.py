"""desc(e): deterministic texts from names, labels, comments, hierarchy and mapping columns."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from navqa.errors import LLMResponseError
from navqa.model.llm import Message, Response
from navqa.model.mapping import MappingSet
from navqa.model.ontology import LangString, OntClass, Ontology
from navqa.offline.class_graph import build_class_graph
from navqa.offline.closure import build_active_ontology
from navqa.offline.descriptions import (
    MAX_COLUMNS,
    ElementKind,
    describe,
    describe_element,
    indexed_elements,
)
from navqa.offline.mapping_sql import annotate_sql
from navqa.offline.obda_parser import parse_obda_text
from navqa.offline.ontology_parser import parse_ontology

ONTOLOGY = """\
@prefix : <http://example.org/d#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

:Facility a owl:Class ; rdfs:label "Anlage"@de , "facility"@en .
:ProductionFacility a owl:Class ; rdfs:subClassOf :Facility ;
    rdfs:label "Produktionsanlage"@de , "production facility"@en , "platform" ;
    rdfs:comment "A fixed   installation\\n producing oil."@en , "Eine Anlage."@de .
:Company a owl:Class .
:currentFieldOperator a owl:ObjectProperty ; rdfs:domain :ProductionFacility ;
    rdfs:range :Company .
:operatedBy a owl:ObjectProperty .
:waterDepth a owl:DatatypeProperty ; rdfs:domain :ProductionFacility ; rdfs:range xsd:decimal .
"""

MAPPING = """\
[PrefixDeclaration]
:		http://example.org/d#
d:		http://example.org/data/
xsd:		http://www.w3.org/2001/XMLSchema#

[MappingDeclaration] @collection [[
mappingId	fac
target		d:fac/{fclNpdid} a :ProductionFacility ; :waterDepth {fclWaterDepth}^^xsd:decimal ;
			:currentFieldOperator d:company/{cmpId} ; :operatedBy d:company/{cmpId} .
source		SELECT "fclNpdid", "fclWaterDepth", "cmpId" FROM facility

mappingId	cmp
target		d:company/{id} a :Company ;
			<http://www.w3.org/2000/01/rdf-schema#label> {name}^^xsd:string .
source		SELECT id, name FROM company
]]
"""

D = "http://example.org/d#"


@pytest.fixture
def inputs(tmp_path: Path) -> tuple[Any, MappingSet]:
    path = tmp_path / "d.ttl"
    path.write_text(ONTOLOGY, encoding="utf-8")
    onto = parse_ontology(path)
    maps = annotate_sql(parse_obda_text(MAPPING))
    return build_active_ontology(onto, maps), maps


def test_description_texts(inputs: tuple[Any, MappingSet]) -> None:
    active, maps = inputs
    descs = describe(active, maps, build_class_graph(active, maps))
    assert descs[D + "ProductionFacility"].text == (
        'Class "production facility" (:ProductionFacility). '
        "Label: platform; Produktionsanlage. A fixed installation producing oil. "
        "Subclass of facility. Mapped from columns facility.fclNpdid."
    )
    assert descs[D + "currentFieldOperator"].text == (
        'Object property "current field operator" '
        "(:currentFieldOperator). Domain: production facility. "
        "Range: company. Mapped from columns facility.cmpId."
    )
    # no domain or range in T: the class graph (templates) supplies them
    assert "Domain: production facility. Range: company." in descs[D + "operatedBy"].text
    assert descs[D + "waterDepth"].kind is ElementKind.DATA_PROPERTY
    assert "facility.fclWaterDepth" in descs[D + "waterDepth"].text
    # an undeclared mapped term is indexed as a data property
    label = "http://www.w3.org/2000/01/rdf-schema#label"
    assert descs[label].kind is ElementKind.DATA_PROPERTY
    assert descs[label].text.startswith('Data property "label"')
    assert all(not d.by_llm and d.text == d.base for d in descs.values())


def test_indexed_elements_are_the_active_signature(inputs: tuple[Any, MappingSet]) -> None:
    active, maps = inputs
    kinds = indexed_elements(active, maps)
    assert set(kinds) == active.signature
    assert list(kinds) == sorted(kinds)
    assert kinds[D + "Facility"] is ElementKind.CLASS
    assert kinds[D + "operatedBy"] is ElementKind.OBJECT_PROPERTY


def test_descriptions_are_deterministic(inputs: tuple[Any, MappingSet]) -> None:
    active, maps = inputs
    first = describe(active, maps, build_class_graph(active, maps))
    shuffled = list(maps.assertions)
    random.Random(7).shuffle(shuffled)
    maps2 = replace(maps, assertions=tuple(reversed(shuffled)))
    second = describe(active, maps2, build_class_graph(active, maps2))
    assert first == second
    assert list(first) == sorted(first)


def test_describe_element_clips_long_lists() -> None:
    onto = Ontology(classes={"http://x/C": OntClass("http://x/C", comments=(
        LangString("word " * 200, "en"),))}, object_properties={}, data_properties={})
    cols = [f"t.c{i:02d}" for i in range(MAX_COLUMNS + 3)]
    text = describe_element(onto, "http://x/C", ElementKind.CLASS, columns=cols)
    assert text.count("t.c") == MAX_COLUMNS
    assert "and 3 more" in text
    assert "…" in text and len(text) < 700


class _FakeLLM:
    model = "fake"

    def __init__(self, text: str = "A described thing.") -> None:
        self.text = text
        self.calls: list[Sequence[Message]] = []

    def call(self, messages: Sequence[Message], *, schema: type[Any] | None = None,
             temperature: float | None = None, max_tokens: int | None = None) -> Response:
        self.calls.append(messages)
        return Response(text=self.text, model=self.model)


def test_llm_descriptions_pass_the_facts(inputs: tuple[Any, MappingSet]) -> None:
    active, maps = inputs
    llm = _FakeLLM("  An oil   platform.\n")
    descs = describe(active, maps, llm=llm)
    d = descs[D + "ProductionFacility"]
    assert d.by_llm and d.text == "An oil platform."
    assert d.base.startswith('Class "production facility"')
    assert len(llm.calls) == len(descs)
    prompts = [m[-1].content for m in llm.calls]
    assert any(d.base in p for p in prompts)


def test_empty_llm_description_is_an_error(inputs: tuple[Any, MappingSet]) -> None:
    active, maps = inputs
    with pytest.raises(LLMResponseError, match="empty description"):
        describe(active, maps, llm=_FakeLLM("   "))
