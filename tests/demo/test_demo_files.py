"""File-level sanity tests for the demo VKG (no PostgreSQL, no Ontop needed).

The checks use rdflib and small regular expressions on purpose: the proper
mapping parsers live in ``navqa.offline`` and are tested there. What is pinned
here is the fixture itself: its size, its hierarchy, its deliberately unmapped
elements, the equivalence of its two mapping files, and its question set.
"""

from __future__ import annotations

import importlib.util
import json
import re
import tomllib
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from rdflib import OWL, RDF, RDFS, XSD, Graph, Literal, Namespace, URIRef
from rdflib.collection import Collection
from rdflib.plugins.sparql import prepareQuery

REPO = Path(__file__).resolve().parents[2]
ONTOLOGY = REPO / "ontologies" / "demo.ttl"
OBDA = REPO / "mappings" / "demo.obda"
R2RML = REPO / "mappings" / "demo.r2rml.ttl"
DATASET = REPO / "datasets" / "demo"
QUESTIONS = DATASET / "questions.jsonl"
#: The validation split (written from the ontology, mappings and data, never used to write
#: rules; rules are kept or dropped by it); its SQL cross-checks run in
#: tests/runtime/test_demo_endpoint.py. The demo VKG has no test split.
VALIDATION_QUESTIONS = DATASET / "questions-validation.jsonl"

RAIL = Namespace("http://example.org/navqa/rail#")
DATA = "http://example.org/navqa/rail/data/"
RR = Namespace("http://www.w3.org/ns/r2rml#")

#: Declared in the ontology, populated by no mapping: the silent-failure traps.
UNMAPPED = {
    RAIL.Train,
    RAIL.operatesLine,
    RAIL.stopsAt,
    RAIL.stationRegion,
    RAIL.openingYear,
}

FEATURES = {"filter", "union", "optional", "minus", "aggregation", "order", "limit", "ask"}
REQUIRED_KEYS = {"id", "question", "sparql", "hops", "features", "vkg"}

#: (predicate, subject template, object template | datatype | class)
Atom = tuple[str, str, str]


# ---------------------------------------------------------------- loaders


@cache
def ontology() -> Graph:
    return Graph().parse(ONTOLOGY, format="turtle")


def named(graph: Graph, kind: URIRef) -> set[URIRef]:
    return {s for s in graph.subjects(RDF.type, kind) if isinstance(s, URIRef)}


def classes() -> set[URIRef]:
    return named(ontology(), OWL.Class)


def object_properties() -> set[URIRef]:
    return named(ontology(), OWL.ObjectProperty)


def data_properties() -> set[URIRef]:
    return named(ontology(), OWL.DatatypeProperty)


@cache
def questions() -> list[dict[str, Any]]:
    lines = QUESTIONS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


@cache
def held_out_questions() -> list[dict[str, Any]]:
    lines = VALIDATION_QUESTIONS.read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def normalise_template(template: str) -> str:
    """Replace every ``{placeholder}`` (quoted or not) by ``{}``."""
    return re.sub(r"\{[^{}]*\}", "{}", template)


# ---------------------------------------------------------------- native .obda


def obda_prefixes(text: str) -> dict[str, str]:
    section = text.split("[PrefixDeclaration]", 1)[1].split("[MappingDeclaration]", 1)[0]
    prefixes = {}
    for line in section.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0].endswith(":"):
            prefixes[parts[0][:-1]] = parts[1]
    return prefixes


def obda_targets(text: str) -> list[str]:
    body = text.split("@collection [[", 1)[1].rsplit("]]", 1)[0]
    return [m.group(1).strip() for m in re.finditer(r"^target\s+(.+)$", body, re.MULTILINE)]


def expand(term: str, prefixes: dict[str, str]) -> str:
    if term.startswith("<") and term.endswith(">"):
        return term[1:-1]
    prefix, sep, local = term.partition(":")
    if not sep or prefix not in prefixes:
        raise ValueError(f"cannot expand {term!r}")
    return prefixes[prefix] + local


def obda_atoms() -> set[Atom]:
    text = OBDA.read_text(encoding="utf-8")
    prefixes = obda_prefixes(text)
    atoms: set[Atom] = set()
    for target in obda_targets(text):
        # Templates and literals in this file never contain ' . ' or ' ; '.
        for triples in filter(None, (t.strip() for t in re.split(r"\s\.(?:\s|$)", target))):
            subject, rest = triples.split(None, 1)
            subject_template = normalise_template(expand(subject, prefixes))
            for pair in rest.split(" ; "):
                predicate, obj = pair.split(None, 1)
                obj = obj.strip()
                if predicate == "a":
                    atoms.add((str(RDF.type), subject_template, expand(obj, prefixes)))
                elif "^^" in obj:
                    _, datatype = obj.split("^^")
                    atoms.add(
                        (expand(predicate, prefixes), subject_template, expand(datatype, prefixes))
                    )
                else:
                    atoms.add(
                        (
                            expand(predicate, prefixes),
                            subject_template,
                            normalise_template(expand(obj, prefixes)),
                        )
                    )
    return atoms


# ---------------------------------------------------------------- R2RML


@cache
def r2rml() -> Graph:
    return Graph().parse(R2RML, format="turtle")


def r2rml_subject_template(graph: Graph, triples_map: Any) -> str:
    subject_map = graph.value(triples_map, RR.subjectMap)
    return normalise_template(str(graph.value(subject_map, RR.template)))


def r2rml_atoms() -> set[Atom]:
    graph = r2rml()
    atoms: set[Atom] = set()
    for triples_map in graph.subjects(RDF.type, RR.TriplesMap):
        subject = r2rml_subject_template(graph, triples_map)
        subject_map = graph.value(triples_map, RR.subjectMap)
        for cls in graph.objects(subject_map, RR["class"]):
            atoms.add((str(RDF.type), subject, str(cls)))
        for pom in graph.objects(triples_map, RR.predicateObjectMap):
            predicate = str(graph.value(pom, RR.predicate))
            object_map = graph.value(pom, RR.objectMap)
            parent = graph.value(object_map, RR.parentTriplesMap)
            if parent is not None:
                obj = r2rml_subject_template(graph, parent)
            elif (template := graph.value(object_map, RR.template)) is not None:
                obj = normalise_template(str(template))
            else:
                datatype = graph.value(object_map, RR.datatype)
                assert datatype is not None, f"column map without rr:datatype in {triples_map}"
                obj = str(datatype)
            atoms.add((predicate, subject, obj))
    return atoms


def mapped_terms(atoms: set[Atom]) -> set[URIRef]:
    terms = set()
    for predicate, _, obj in atoms:
        terms.add(URIRef(obj) if predicate == str(RDF.type) else URIRef(predicate))
    return terms


# ---------------------------------------------------------------- ontology


def test_ontology_declares_itself_with_label_and_comment() -> None:
    (onto,) = named(ontology(), OWL.Ontology)
    assert ontology().value(onto, RDFS.label) is not None
    assert ontology().value(onto, RDFS.comment) is not None


def test_ontology_size() -> None:
    assert 10 <= len(classes()) <= 20
    assert 20 <= len(object_properties()) + len(data_properties()) <= 40
    assert all(
        str(term).startswith(str(RAIL))
        for term in classes() | object_properties() | data_properties()
    )


def test_subclass_hierarchy_is_at_least_three_levels_deep() -> None:
    graph = ontology()

    def depth(cls: URIRef) -> int:
        parents = [p for p in graph.objects(cls, RDFS.subClassOf) if isinstance(p, URIRef)]
        return 1 + max((depth(p) for p in parents), default=0)

    assert depth(RAIL.ElectricLocomotive) >= 3
    assert depth(RAIL.OperatorCompany) >= 3
    assert max(depth(c) for c in classes()) >= 3


def test_every_term_has_english_label_and_comment() -> None:
    graph = ontology()
    for term in classes() | object_properties() | data_properties():
        labels = [o for o in graph.objects(term, RDFS.label) if isinstance(o, Literal)]
        comments = [o for o in graph.objects(term, RDFS.comment) if isinstance(o, Literal)]
        assert any(label.language == "en" for label in labels), term
        assert any(comment.language == "en" for comment in comments), term


def test_some_labels_are_german_or_french() -> None:
    languages = {o.language for o in ontology().objects(None, RDFS.label) if isinstance(o, Literal)}
    assert {"de", "fr"} <= languages


def test_property_signatures() -> None:
    graph = ontology()
    no_domain = {p for p in object_properties() if graph.value(p, RDFS.domain) is None}
    inherited = {p for p in no_domain if graph.value(p, RDFS.subPropertyOf) is not None}
    union_domains = [
        p
        for p in object_properties()
        if (d := graph.value(p, RDFS.domain)) is not None and graph.value(d, OWL.unionOf)
    ]
    # A few object properties have no declared domain of any kind.
    assert {RAIL.operatedBy, RAIL.ownedBy, RAIL.locatedIn} <= no_domain - inherited
    # Some only inherit their signature from a super-property.
    assert {RAIL.originStation, RAIL.terminusStation} <= inherited
    assert union_domains, "expected at least one owl:unionOf domain"
    head = graph.value(graph.value(RAIL.builtBy, RDFS.domain), OWL.unionOf)
    assert head is not None
    union = Collection(graph, head)
    assert set(union) == {RAIL.Locomotive, RAIL.MultipleUnit}
    for prop in object_properties() - inherited - {RAIL.locatedIn}:
        assert graph.value(prop, RDFS.range) is not None, prop
    for prop in data_properties():
        rng = graph.value(prop, RDFS.range)
        assert rng is not None and str(rng).startswith(str(XSD)), prop


# ---------------------------------------------------------------- mappings


def test_obda_uses_only_ontology_terms() -> None:
    declared = classes() | object_properties() | data_properties()
    used = mapped_terms(obda_atoms())
    assert used, "no mapping target parsed"
    assert used <= declared, used - declared


def test_obda_has_comments_and_two_subject_targets() -> None:
    text = OBDA.read_text(encoding="utf-8")
    assert re.search(r"^\s*;", text, re.MULTILINE)
    prefixes = obda_prefixes(text)
    assert prefixes["data"] == DATA
    subjects_per_target = [
        len(re.findall(r"(?:^|\s\.\s)(data:\S+)", target)) for target in obda_targets(text)
    ]
    assert max(subjects_per_target) >= 2
    # Every literal placeholder carries an explicit datatype: `{col}^^xsd:...`.
    for target in obda_targets(text):
        assert not re.search(r"\s\{[^}]*\}(?!\^\^)", target), target


def test_r2rml_uses_only_ontology_terms_and_a_join() -> None:
    declared = classes() | object_properties() | data_properties()
    assert mapped_terms(r2rml_atoms()) <= declared
    graph = r2rml()
    assert any(graph.objects(None, RR.joinCondition))
    assert any(graph.objects(None, RR.sqlQuery)) and any(graph.objects(None, RR.tableName))


def test_obda_and_r2rml_state_the_same_atoms() -> None:
    native, r2 = obda_atoms(), r2rml_atoms()
    assert native - r2 == set()
    assert r2 - native == set()


def test_unmapped_elements_exist_and_are_unmapped() -> None:
    declared = classes() | object_properties() | data_properties()
    assert declared >= UNMAPPED
    assert not UNMAPPED & mapped_terms(obda_atoms())
    assert not UNMAPPED & mapped_terms(r2rml_atoms())
    obda_text = OBDA.read_text(encoding="utf-8")
    for term in UNMAPPED:
        local = str(term).removeprefix(str(RAIL))
        target_text = " ".join(obda_targets(obda_text))
        assert not re.search(rf"rail:{local}\b", target_text), term


def test_readme_documents_the_unmapped_elements() -> None:
    readme = (DATASET / "README.md").read_text(encoding="utf-8")
    for term in UNMAPPED:
        assert "rail:" + str(term).removeprefix(str(RAIL)) in readme, term


def test_schema_quotes_mixed_case_identifiers() -> None:
    schema = (DATASET / "schema.sql").read_text(encoding="utf-8")
    assert '"lineCode"' in schema
    assert '"lineCode"' in OBDA.read_text(encoding="utf-8")


# ---------------------------------------------------------------- data


def test_generated_data_is_up_to_date() -> None:
    spec = importlib.util.spec_from_file_location(
        "demo_generate_data", DATASET / "generate_data.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.render() == (DATASET / "data.sql").read_text(encoding="utf-8")


def test_data_has_a_few_hundred_rows_and_awkward_values() -> None:
    data = (DATASET / "data.sql").read_text(encoding="utf-8")
    rows = len(re.findall(r"^\s+\(", data, re.MULTILINE))
    assert 200 <= rows <= 1000
    assert "Corrigan''s Ford" in data and "Saint-Étienne" in data
    assert "NULL" in data and "TRUE" in data and "FALSE" in data


def test_manifest_lists_existing_files() -> None:
    manifest = tomllib.loads((DATASET / "manifest.toml").read_text(encoding="utf-8"))
    assert manifest["name"] == "demo"
    assert manifest["database"] == "navqa_demo"
    roles = {f["role"] for f in manifest["files"]}
    assert roles == {"ontology", "mapping", "mapping-r2rml", "schema", "data", "constraints"}
    for entry in manifest["files"]:
        assert (REPO / entry["path"]).is_file(), entry


# ---------------------------------------------------------------- questions


def test_questions_are_well_formed() -> None:
    items = questions()
    assert len(items) >= 45
    ids = [item["id"] for item in items]
    assert len(ids) == len(set(ids))
    for item in items:
        assert item.keys() >= REQUIRED_KEYS, item["id"]
        assert re.fullmatch(r"demo-\d{3}", item["id"])
        assert item["vkg"] == "demo"
        assert item["hops"] in (1, 2, 3)
        assert set(item["features"]) <= FEATURES, item["id"]
        assert item["question"].strip().endswith("?"), item["id"]


def test_held_out_questions_are_well_formed() -> None:
    items = held_out_questions()
    assert len(items) >= 20
    for item in items:
        assert item.keys() >= REQUIRED_KEYS, item["id"]
        assert re.fullmatch(r"demo-t\d{3}", item["id"])
        assert item["vkg"] == "demo" and item["hops"] >= 1 and "sql" in item
        assert set(item["features"]) <= FEATURES, item["id"]
        assert item["question"].strip().endswith("?"), item["id"]
    traps = [item for item in items if "trap" in item]
    assert len(traps) >= 3
    assert {URIRef(item["trap"]) for item in traps} <= UNMAPPED


@pytest.mark.parametrize("item", questions() + held_out_questions(), ids=lambda item: item["id"])
def test_gold_sparql_parses_and_avoids_unmapped_terms(item: dict[str, Any]) -> None:
    query = prepareQuery(item["sparql"])
    assert (query.algebra.name == "AskQuery") == ("ask" in item["features"])
    for term in UNMAPPED:
        local = str(term).removeprefix(str(RAIL))
        assert not re.search(rf"rail:{local}\b", item["sparql"]), (item["id"], term)
        assert str(term) not in item["sparql"]


def test_question_spread() -> None:
    items = questions()
    hops = [item["hops"] for item in items]
    assert hops.count(1) >= 10 and hops.count(2) >= 10 and hops.count(3) >= 8
    features = {f for item in items for f in item["features"]}
    assert features == FEATURES
    assert sum("sql" in item for item in items) >= 20
    traps = [item for item in items if "trap" in item]
    assert len(traps) >= 6
    assert {URIRef(item["trap"]) for item in traps} <= UNMAPPED
