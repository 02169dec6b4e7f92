"""The pyoxigraph reader and the lean store give exactly what rdflib's parsers give.

``read_ontology_graph`` reads with pyoxigraph into a :class:`LeanStore` graph by default
(Performance §2: large ontologies). Every figure of ``navqa index --stats`` derives from the
parsed :class:`Ontology`, the active ontology's :class:`ActiveStats` (triples and axioms of
T and Ta, computed on the graph) and the class graph, so these tests build all three with
both readers on the four bundled VKGs, and on a generated taxonomy, and compare them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from rdflib import BNode, Literal, URIRef
from rdflib.namespace import RDFS

from navqa.model.ontology import LangString
from navqa.offline import artifacts
from navqa.offline.artifacts import compute_stats, parse_mappings
from navqa.offline.class_graph import build_class_graph
from navqa.offline.closure import build_active_ontology
from navqa.offline.ontology_parser import (
    LeanStore,
    OntologyGraph,
    RdfReader,
    lean_graph,
    ontology_from_graph,
    read_ontology_graph,
)
from navqa.runtime.paths import repo_root

TAX = "http://example.org/navqa/taxon#"


def _figures(og: OntologyGraph, mapping: Path) -> tuple[Any, ...]:
    onto = ontology_from_graph(og)
    mappings = parse_mappings(mapping)
    active = build_active_ontology(onto, mappings, graph=og.graph)
    stats = compute_stats(onto, mappings, active, build_class_graph(active, mappings))
    return onto, active.stats, active.signature, stats


def _assert_same_reading(ontology: Path, mapping: Path, catalog: Path | None = None) -> None:
    kw: dict[str, Any] = {"catalog": catalog, "follow_imports": catalog is not None}
    fast = read_ontology_graph(ontology, reader=RdfReader.PYOXIGRAPH, **kw)
    ref = read_ontology_graph(ontology, reader=RdfReader.RDFLIB, **kw)
    assert isinstance(fast.graph.store, LeanStore)
    assert not isinstance(ref.graph.store, LeanStore)
    assert len(fast.graph) == len(ref.graph)
    assert (fast.ontology_iri, fast.imports, fast.skipped_imports) == (
        ref.ontology_iri, ref.imports, ref.skipped_imports)
    onto_f, stats_f, sig_f, figures_f = _figures(fast, mapping)
    onto_r, stats_r, sig_r, figures_r = _figures(ref, mapping)
    assert onto_f.classes == onto_r.classes
    assert onto_f.object_properties == onto_r.object_properties
    assert onto_f.data_properties == onto_r.data_properties
    assert onto_f.annotation_properties == onto_r.annotation_properties
    assert onto_f.prefixes == onto_r.prefixes
    assert onto_f == onto_r
    assert stats_f == stats_r
    assert sig_f == sig_r
    assert figures_f == figures_r


def test_demo_reads_the_same() -> None:
    root = repo_root()
    _assert_same_reading(root / "ontologies" / "demo.ttl", root / "mappings" / "demo.obda")


@pytest.mark.parametrize("name", ["npd", "bgee", "atkis"])
def test_dataset_reads_the_same(name: str, dataset_file: Callable[[str, str], Path]) -> None:
    catalog = dataset_file(name, "catalog") if name == "atkis" else None
    _assert_same_reading(dataset_file(name, "ontology"), dataset_file(name, "mapping"),
                         catalog)


def test_atkis_main_file_alone_reads_the_same(
        dataset_file: Callable[[str, str], Path]) -> None:
    # atkis2.ttl has a multi-line literal pyoxigraph rejects: the rdflib fallback reads it
    _assert_same_reading(dataset_file("atkis", "ontology"), dataset_file("atkis", "mapping"))


def _taxonomy(path: Path, n: int) -> None:
    demo = (repo_root() / "ontologies" / "demo.ttl").read_text(encoding="utf-8")
    lines = [demo, f"@prefix tax: <{TAX}> .",
             "@prefix oio: <http://www.geneontology.org/formats/oboInOwl#> .",
             "oio:hasExactSynonym a owl:AnnotationProperty ."]
    for i in range(n):
        parts = [f'tax:T{i} a owl:Class ; rdfs:label "taxon {i}"@en , "Taxon {i}"@de']
        if i:
            parts.append(f"rdfs:subClassOf tax:T{(i - 1) // 3}")
        if i % 5 == 0:
            parts.append(f'rdfs:comment """A taxon,\nnumber {i}."""')
            parts.append(f'oio:hasExactSynonym "t{i}"^^xsd:string')
            parts.append("rdfs:subClassOf [ a owl:Restriction ; owl:onProperty rail:name ; "
                         'owl:someValuesFrom xsd:string ]')
        lines.append(" ;\n  ".join(parts) + " .")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_generated_taxonomy_reads_the_same(tmp_path: Path) -> None:
    path = tmp_path / "taxonomy.ttl"
    _taxonomy(path, 400)
    _assert_same_reading(path, repo_root() / "mappings" / "demo.obda")
    onto = ontology_from_graph(read_ontology_graph(path))
    assert len([c for c in onto.classes if c.startswith(TAX)]) == 400
    assert onto.classes[TAX + "T7"].parents == frozenset({TAX + "T2"})
    assert onto.classes[TAX + "T5"].comments[0].text == "A taxon,\nnumber 5."


def test_lean_store_answers_every_pattern_and_ignores_duplicates() -> None:
    g = lean_graph()
    a, b, p, q = URIRef("urn:a"), URIRef("urn:b"), URIRef("urn:p"), URIRef("urn:q")
    many = [Literal(f"v{i}") for i in range(40)]  # past the small-list duplicate check
    for o in [*many, *many, b]:
        g.add((a, p, o))
    g.add((b, q, a))
    g.add((BNode("x"), q, b))
    assert len(g) == 43
    assert set(g.objects(a, p)) == {*many, b}
    assert set(g.subjects(p, b)) == {a}
    assert set(g.subjects(q, a)) == {b}
    assert (a, p, many[39]) in g and (a, q, b) not in g
    assert set(g.predicates(b, a)) == {q}
    assert {t[1] for t in g.triples((a, None, None))} == {p}
    assert set(g) == {*((a, p, o) for o in [*many, b]), (b, q, a), (BNode("x"), q, b)}
    g.add((b, p, a))  # a new triple invalidates the reverse index built above
    assert set(g.subjects(p, a)) == {b}
    assert set(g.subject_objects(RDFS.label)) == set()


def test_owlready_check_is_skipped_above_the_size_and_says_so(
        monkeypatch: pytest.MonkeyPatch) -> None:
    og = read_ontology_graph(repo_root() / "ontologies" / "demo.ttl")
    onto = ontology_from_graph(og)
    assert artifacts.owlready_check(onto, og.graph) == {"disagreements": 0, "examples": []}
    monkeypatch.setattr(artifacts, "OWLREADY_MAX_TRIPLES", 100)
    skipped = artifacts.owlready_check(onto, og.graph)
    assert set(skipped) == {"skipped"} and "342 triples" in skipped["skipped"]


def test_fast_terms_are_rdflib_terms_and_shared(tmp_path: Path) -> None:
    path = tmp_path / "t.ttl"
    # (a lower-case language tag: pyoxigraph lower-cases tags, rdflib keeps their case)
    path.write_text("@prefix : <urn:x#> .\n"
                    "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                    ':a rdfs:label "Eine Art"@de-ch , "plain" ; rdfs:subClassOf :b , [ :p :a ] .\n',
                    encoding="utf-8")
    fast = read_ontology_graph(path).graph
    ref = read_ontology_graph(path, reader=RdfReader.RDFLIB).graph
    store = fast.store
    assert isinstance(store, LeanStore)
    a = store.node("urn:x#a")
    # the store holds rdflib's own namespace constant and one object per IRI
    assert next(p for _, p, _ in store.all_triples() if str(p).endswith("label")) is RDFS.label
    assert {s for s, _, _ in store.all_triples() if s == a} and all(
        s is a for s, _, _ in store.all_triples() if s == a)
    assert store.node("urn:x#unknown") == URIRef("urn:x#unknown")
    labels = sorted(fast.objects(a, RDFS.label), key=str)
    wanted = sorted(ref.objects(URIRef("urn:x#a"), RDFS.label), key=str)
    assert labels == wanted
    for lit, want in zip(labels, wanted, strict=True):
        assert type(lit) is Literal and isinstance(want, Literal)
        assert (lit.n3(), lit.value, lit.language, lit.datatype, hash(lit)) == (
            want.n3(), want.value, want.language, want.datatype, hash(want))
    bnodes = [o for o in fast.objects(a, RDFS.subClassOf) if isinstance(o, BNode)]
    assert len(bnodes) == 1 and fast.value(bnodes[0], URIRef("urn:x#p")) == a


def test_both_readers_lower_case_language_tags_in_the_model(tmp_path: Path) -> None:
    # BCP 47 tags are case-insensitive: pyoxigraph lower-cases them, rdflib keeps their
    # case; the parsed ontology holds them lower-cased whichever reader read the file
    path = tmp_path / "t.ttl"
    path.write_text("@prefix : <urn:x#> .\n"
                    "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
                    "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                    ':A a owl:Class ; rdfs:label "Eine Art"@de-CH , "A kind"@EN ;\n'
                    '    rdfs:comment "Noch eine"@de-CH .\n'
                    ':p a owl:ObjectProperty ; rdfs:label "hat"@De-Ch .\n',
                    encoding="utf-8")
    ref_graph = read_ontology_graph(path, reader=RdfReader.RDFLIB)
    assert {o.language for o in ref_graph.graph.objects(URIRef("urn:x#A"), RDFS.label)} == {
        "de-CH", "EN"}  # the rdflib reading does keep the case in the graph
    fast = ontology_from_graph(read_ontology_graph(path))
    ref = ontology_from_graph(ref_graph)
    assert fast.classes == ref.classes and fast.object_properties == ref.object_properties
    a = ref.classes["urn:x#A"]
    assert [(v.text, v.lang) for v in a.labels] == [("Eine Art", "de-ch"), ("A kind", "en")]
    assert a.label("en") == "A kind" and a.comment("de-ch") == "Noch eine"
    assert [v.lang for v in ref.object_properties["urn:x#p"].labels] == ["de-ch"]


def test_model_objects_pickle_to_equal_objects(tmp_path: Path) -> None:
    # the model's classes, properties and labels pickle through their constructor's
    # arguments (``__reduce__``): every field must come back in its place
    import dataclasses
    import pickle

    onto = ontology_from_graph(read_ontology_graph(repo_root() / "ontologies" / "demo.ttl"))
    back = pickle.loads(pickle.dumps(onto, protocol=pickle.HIGHEST_PROTOCOL))
    entities = [*onto.classes.values(), *onto.object_properties.values(),
                *onto.data_properties.values(), *onto.annotation_properties.values()]
    assert entities and any(c.labels for c in onto.classes.values())
    for e in entities:
        other = back.entity(e.iri) or back.annotation_properties[e.iri]
        assert type(other) is type(e)
        for f in dataclasses.fields(e):
            assert getattr(other, f.name) == getattr(e, f.name), (e.iri, f.name)
    lang = LangString("Eine Art", "de-ch")
    assert pickle.loads(pickle.dumps(lang)) == lang
