"""Ontology parser: syntax sniffing, extraction rules, errors, catalogs, and the real datasets."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from rdflib import Graph

from navqa.errors import OntologyParseError
from navqa.model.ontology import EntityKind, LangString
from navqa.offline.ontology_parser import parse_ontology, read_catalog, sniff_rdf_format

EX = "http://example.org/onto#"
XSD = "http://www.w3.org/2001/XMLSchema#"

# Every axiom kind the parser reads, in one small Turtle file (hand-written expectations below).
SMALL = textwrap.dedent(
    """\
    @prefix : <http://example.org/onto#> .
    @prefix owl: <http://www.w3.org/2002/07/owl#> .
    @prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
    @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
    @prefix skos: <http://www.w3.org/2004/02/skos/core#> .
    @prefix dc: <http://purl.org/dc/elements/1.1/> .
    @prefix dcterms: <http://purl.org/dc/terms/> .
    @prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

    <http://example.org/onto> a owl:Ontology .

    :Well a owl:Class ;
        rdfs:label "well"@en , "Brønn"@no ;
        skos:prefLabel "oil well"@en ;
        skos:altLabel "hole" ;
        rdfs:comment "A hole in the ground." ;
        skos:definition "Drilled hole."@en ;
        dc:description "dc text" ;
        dcterms:description "dcterms text" ;
        rdfs:subClassOf :Facility , owl:Thing ;
        rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :inField ;
                          owl:someValuesFrom :Field ] ;
        rdfs:subClassOf [ a owl:Restriction ; owl:onProperty [ owl:inverseOf :hasWell ] ;
                          owl:allValuesFrom :Licence ] ;
        rdfs:subClassOf [ a owl:Class ; owl:intersectionOf (
                              [ a owl:Restriction ; owl:onProperty :operator ;
                                owl:onClass :Company ; owl:qualifiedCardinality 1 ]
                              :Asset ) ] ;
        rdfs:subClassOf [ a owl:Restriction ; owl:onProperty :depth ;
                          owl:someValuesFrom xsd:decimal ] ;
        rdfs:subClassOf [ a owl:Class ; owl:unionOf ( :Onshore :Offshore ) ] ;
        owl:equivalentClass :Borehole ;
        owl:disjointWith :Field .

    :Facility a owl:Class .
    :Field a owl:Class .
    :Licence a owl:Class .
    :Company a rdfs:Class .
    :Asset a owl:Class .
    :Onshore a owl:Class .
    :Offshore a owl:Class .
    :Borehole a owl:Class .
    owl:Thing a owl:Class .
    [] a owl:Class ; owl:unionOf ( :Field :Licence ) .
    [] a owl:AllDisjointClasses ; owl:members ( :Company :Licence :Asset ) .

    :inField a owl:ObjectProperty , owl:FunctionalProperty ;
        rdfs:label "in field"@en ;
        rdfs:subPropertyOf :locatedIn ;
        rdfs:domain [ a owl:Class ; owl:unionOf ( :Well [ owl:unionOf ( :Facility :Asset ) ] ) ] ;
        rdfs:range :Field .
    :hasWell a owl:ObjectProperty ; owl:inverseOf :wellOf .
    :wellOf a owl:ObjectProperty .
    :locatedIn a owl:ObjectProperty ; owl:equivalentProperty :isIn .
    :isIn a owl:ObjectProperty .
    :operator a owl:ObjectProperty .
    :depth a owl:DatatypeProperty , owl:FunctionalProperty ;
        rdfs:domain :Well ;
        rdfs:range xsd:decimal .
    :code a owl:DatatypeProperty ;
        rdfs:range [ a rdfs:Datatype ; owl:unionOf ( xsd:string xsd:integer ) ] .
    :note a owl:AnnotationProperty .
    """
)


def _write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


# -- syntax ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('<?xml version="1.0"?>\n<rdf:RDF/>', "xml"),
        ("<rdf:RDF xmlns:rdf='x'/>", "xml"),
        ("\n\n# comment\n@prefix : <http://x/> .", "turtle"),
        ("PREFIX : <http://x/>", "turtle"),
        ("@base <http://x/> .", "turtle"),
        ("<http://x/a> <http://x/b> <http://x/c> .", None),
        ("", None),
    ],
)
def test_sniff_rdf_format(text: str, expected: str | None) -> None:
    assert sniff_rdf_format(text) == expected


def test_turtle_with_owl_extension_is_read_by_content(tmp_path: Path) -> None:
    onto = parse_ontology(_write(tmp_path, "small.owl", SMALL))
    assert set(onto.classes) == {
        EX + n
        for n in (
            "Well",
            "Facility",
            "Field",
            "Licence",
            "Company",
            "Asset",
            "Onshore",
            "Offshore",
            "Borehole",
        )
    }
    assert onto.iri == "http://example.org/onto"
    assert onto.triple_count == len(Graph().parse(data=SMALL, format="turtle"))


def test_rdfxml_with_ttl_extension_gives_the_same_ontology(tmp_path: Path) -> None:
    xml = Graph().parse(data=SMALL, format="turtle").serialize(format="xml")
    from_xml = parse_ontology(_write(tmp_path, "small.ttl", xml))
    from_ttl = parse_ontology(_write(tmp_path, "small2.owl", SMALL))
    assert from_xml.classes == from_ttl.classes
    assert from_xml.object_properties == from_ttl.object_properties
    assert from_xml.data_properties == from_ttl.data_properties
    assert from_xml.annotation_properties == from_ttl.annotation_properties
    assert from_xml.triple_count == from_ttl.triple_count


def test_ntriples_without_header_falls_back(tmp_path: Path) -> None:
    nt = (
        "<http://example.org/onto#A> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> "
        "<http://www.w3.org/2002/07/owl#Class> .\n"
    )
    onto = parse_ontology(_write(tmp_path, "a.data", nt))
    assert set(onto.classes) == {EX + "A"}
    assert onto.triple_count == 1


# -- extraction rules --------------------------------------------------------------------


@pytest.fixture
def small(tmp_path: Path):
    return parse_ontology(_write(tmp_path, "small.ttl", SMALL))


def test_counts_and_kinds(small) -> None:
    assert len(small.classes) == 9  # owl:Thing and the anonymous class are not counted
    assert set(small.object_properties) == {
        EX + n for n in ("inField", "hasWell", "wellOf", "locatedIn", "isIn", "operator")
    }
    assert set(small.data_properties) == {EX + "depth", EX + "code"}
    assert set(small.annotation_properties) == {EX + "note"}
    assert small.kind(EX + "depth") is EntityKind.DATA_PROPERTY
    assert small.prefixes[""] == EX


def test_labels_and_comments_keep_every_language(small) -> None:
    well = small.classes[EX + "Well"]
    assert set(well.labels) == {
        LangString("well", "en"),
        LangString("Brønn", "no"),
        LangString("oil well", "en"),
    }  # skos:altLabel is not a label
    assert set(well.comments) == {
        LangString("A hole in the ground."),
        LangString("Drilled hole.", "en"),
        LangString("dc text"),
        LangString("dcterms text"),
    }
    assert small.properties[EX + "inField"].labels == (LangString("in field", "en"),)


def test_class_axioms(small) -> None:
    well = small.classes[EX + "Well"]
    assert well.parents == {EX + "Facility"}  # owl:Thing dropped, anonymous parents apart
    assert well.restriction_parents == {EX + "Field", EX + "Licence", EX + "Company", EX + "Asset"}
    assert well.restriction_properties == {
        EX + "inField",
        EX + "hasWell",
        EX + "operator",
        EX + "depth",
    }
    assert well.equivalents == {EX + "Borehole"}
    assert small.classes[EX + "Borehole"].equivalents == {EX + "Well"}
    assert well.disjoints == {EX + "Field"}
    assert small.classes[EX + "Field"].disjoints == {EX + "Well"}
    assert small.classes[EX + "Company"].disjoints == {EX + "Licence", EX + "Asset"}
    assert small.classes[EX + "Asset"].disjoints == {EX + "Company", EX + "Licence"}


def test_property_axioms(small) -> None:
    in_field = small.object_properties[EX + "inField"]
    assert in_field.parents == {EX + "locatedIn"}
    assert in_field.domains == {EX + "Well", EX + "Facility", EX + "Asset"}
    assert in_field.ranges == {EX + "Field"}
    assert in_field.functional is True
    assert small.object_properties[EX + "hasWell"].inverses == {EX + "wellOf"}
    assert small.object_properties[EX + "wellOf"].inverses == {EX + "hasWell"}
    assert small.object_properties[EX + "locatedIn"].equivalents == {EX + "isIn"}
    assert small.object_properties[EX + "isIn"].equivalents == {EX + "locatedIn"}
    depth = small.data_properties[EX + "depth"]
    assert (depth.domains, depth.ranges, depth.functional) == (
        {EX + "Well"},
        {XSD + "decimal"},
        True,
    )
    assert small.data_properties[EX + "code"].ranges == {XSD + "string", XSD + "integer"}
    assert small.object_properties[EX + "operator"].functional is False


# -- errors and the tolerated Turtle defect -----------------------------------------------


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(OntologyParseError, match="not found") as info:
        parse_ontology(tmp_path / "nope.owl")
    assert info.value.path == tmp_path / "nope.owl"


def test_malformed_turtle_names_file_and_line(tmp_path: Path) -> None:
    bad = _write(tmp_path, "bad.ttl", "@prefix : <http://x/> .\n:a a :B .\n:c :d .\n")
    with pytest.raises(OntologyParseError) as info:
        parse_ontology(bad)
    assert info.value.path == bad
    assert info.value.line == 3
    assert str(bad) in str(info.value)


def test_malformed_rdfxml_names_file_and_line(tmp_path: Path) -> None:
    bad = _write(
        tmp_path,
        "bad.owl",
        '<?xml version="1.0"?>\n<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">\n'
        '<rdf:Description rdf:about="http://x/a">\n</rdf:RDF>\n',
    )
    with pytest.raises(OntologyParseError, match="not valid RDF") as info:
        parse_ontology(bad)
    assert info.value.line == 4


def test_unknown_content_reports_the_first_format_tried(tmp_path: Path) -> None:
    with pytest.raises(OntologyParseError, match=r"turtle, xml, n3, nt tried"):
        parse_ontology(_write(tmp_path, "junk.owl", "this is not RDF at all\n"))


def test_multiline_short_literal_is_re_escaped(tmp_path: Path, caplog) -> None:
    text = (
        "@prefix : <http://x/> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
        ':A a owl:Class ; rdfs:comment "first line\n   second line"@en ;\n'
        '  rdfs:label """long\nstring""" , \'it\\\'s\' . # a "comment\n'
        ":B a owl:Class ; rdfs:seeAlso <http://x/#frag> .\n"
    )
    onto = parse_ontology(_write(tmp_path, "ml.ttl", text))
    assert onto.classes["http://x/A"].comments == (LangString("first line\n   second line", "en"),)
    assert set(onto.classes["http://x/A"].labels) == {
        LangString("long\nstring"),
        LangString("it's"),
    }
    assert set(onto.classes) == {"http://x/A", "http://x/B"}
    assert "re-escaped" in caplog.text


# -- catalogs and imports -----------------------------------------------------------------


def _import_tree(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "imp" / "deep").mkdir(parents=True)
    main = _write(
        tmp_path,
        "main.ttl",
        textwrap.dedent("""\
        @prefix owl: <http://www.w3.org/2002/07/owl#> .
        <http://example.org/main> a owl:Ontology ;
            owl:imports <http://example.org/a> , <http://example.org/offline-only> .
        <http://example.org/main#M> a owl:Class .
        """),
    )
    _write(
        tmp_path / "imp",
        "a.ttl",
        textwrap.dedent("""\
        @prefix owl: <http://www.w3.org/2002/07/owl#> .
        <http://example.org/a> a owl:Ontology ; owl:imports <http://example.org/b> .
        <http://example.org/a#A> a owl:Class .
        <http://example.org/a#p> a owl:ObjectProperty .
        """),
    )
    _write(
        tmp_path / "imp" / "deep",
        "b.rdf",
        textwrap.dedent("""\
        <?xml version="1.0"?>
        <rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"
                 xmlns:owl="http://www.w3.org/2002/07/owl#">
          <owl:Class rdf:about="http://example.org/b#B"/>
          <owl:DatatypeProperty rdf:about="http://example.org/b#d"/>
        </rdf:RDF>
        """),
    )
    _write(tmp_path / "imp", "decoy.ttl", "this file must never be read\n")
    catalog = _write(
        tmp_path,
        "catalog-v001.xml",
        textwrap.dedent("""\
        <?xml version="1.0" encoding="UTF-8" standalone="no"?>
        <catalog prefer="public" xmlns="urn:oasis:names:tc:entity:xmlns:xml:catalog">
            <uri name="http://example.org/a" uri="imp/a.ttl"/>
            <uri name="http://example.org/a" uri="imp/decoy.ttl"/>
            <group xml:base="imp/">
                <uri name="http://example.org/b" uri="deep/b.rdf"/>
            </group>
        </catalog>
        """),
    )
    return main, catalog


def test_read_catalog_first_entry_wins_and_xml_base(tmp_path: Path) -> None:
    _, catalog = _import_tree(tmp_path)
    assert read_catalog(catalog) == {
        "http://example.org/a": (tmp_path / "imp" / "a.ttl").resolve(),
        "http://example.org/b": (tmp_path / "imp" / "deep" / "b.rdf").resolve(),
    }


def test_imports_not_followed_by_default(tmp_path: Path) -> None:
    main, catalog = _import_tree(tmp_path)
    onto = parse_ontology(main, catalog=catalog)
    assert set(onto.classes) == {"http://example.org/main#M"}
    assert onto.imports == ()
    assert onto.skipped_imports == ("http://example.org/a", "http://example.org/offline-only")
    assert onto.triple_count == 4


def test_imports_followed_through_catalog(tmp_path: Path) -> None:
    main, catalog = _import_tree(tmp_path)
    onto = parse_ontology(main, catalog=catalog, follow_imports=True)
    assert set(onto.classes) == {
        "http://example.org/main#M",
        "http://example.org/a#A",
        "http://example.org/b#B",
    }
    assert set(onto.object_properties) == {"http://example.org/a#p"}
    assert set(onto.data_properties) == {"http://example.org/b#d"}
    assert onto.imports == ("http://example.org/a", "http://example.org/b")
    assert onto.skipped_imports == ("http://example.org/offline-only",)
    assert onto.triple_count == 4 + 4 + 2
    assert onto.iri == "http://example.org/main"


def test_follow_imports_without_catalog_touches_no_network(tmp_path: Path) -> None:
    main, _ = _import_tree(tmp_path)
    onto = parse_ontology(main, follow_imports=True)
    assert onto.imports == ()
    assert onto.skipped_imports == ("http://example.org/a", "http://example.org/offline-only")


def test_catalog_entry_pointing_at_missing_file(tmp_path: Path) -> None:
    main, catalog = _import_tree(tmp_path)
    (tmp_path / "imp" / "a.ttl").unlink()
    with pytest.raises(OntologyParseError, match="http://example.org/a resolves to a missing file"):
        parse_ontology(main, catalog=catalog, follow_imports=True)


def test_malformed_or_missing_catalog(tmp_path: Path) -> None:
    main, _ = _import_tree(tmp_path)
    bad = _write(tmp_path, "bad.xml", "<catalog>\n<uri name='x'\n")
    with pytest.raises(OntologyParseError, match="malformed XML catalog") as info:
        parse_ontology(main, catalog=bad)
    assert info.value.path == bad
    with pytest.raises(OntologyParseError, match="XML catalog not found"):
        parse_ontology(main, catalog=tmp_path / "none.xml")


# -- the real datasets --------------------------------------------------------------------


@pytest.mark.npd
def test_npd_counts(dataset_file: Callable[[str, str], Path]) -> None:
    onto = parse_ontology(dataset_file("npd", "ontology"))
    assert len(onto.classes) == 342
    assert len(onto.object_properties) == 142
    assert len(onto.data_properties) == 238
    assert onto.triple_count == 13_448
    assert len(onto.annotation_properties) == 63
    assert onto.iri == "http://sws.ifi.uio.no/vocab/npd-v2"
    assert onto.imports == () and onto.skipped_imports == ()


@pytest.mark.npd
def test_npd_entities_read_from_the_file(dataset_file: Callable[[str, str], Path]) -> None:
    onto = parse_ontology(dataset_file("npd", "ontology"))
    npdv = "http://sws.ifi.uio.no/vocab/npd-v2#"
    # npd-v2-ql.owl lines 10611-10648
    wellbore = onto.classes[npdv + "Wellbore"]
    assert wellbore.parents == {"http://www.ifomis.org/bfo/1.1/snap#Continuant"}
    assert wellbore.restriction_properties == {
        npdv + "belongsToWell",
        npdv + "dateSyncNPD",
        npdv + "idNPD",
        npdv + "name",
    }
    assert wellbore.restriction_parents == frozenset()  # owl:Thing, rdfs:Literal, xsd:string
    # lines 1571-1574
    wff = onto.object_properties[npdv + "wellboreForField"]
    assert (wff.domains, wff.ranges) == ({npdv + "Wellbore"}, {npdv + "Field"})
    # lines 11565-11572
    cont = onto.classes["http://www.ifomis.org/bfo/1.1/snap#Continuant"]
    assert cont.labels == (LangString("continuant"),)
    assert len(cont.comments) == 3
    assert LangString("Synonyms: endurant") in cont.comments
    assert "http://www.ifomis.org/bfo/1.1/span#Occurrent" in cont.disjoints
    assert cont.parents == {"http://www.ifomis.org/bfo/1.1#Entity"}


@pytest.mark.bgee
def test_bgee_counts_and_axioms(dataset_file: Callable[[str, str], Path]) -> None:
    onto = parse_ontology(dataset_file("bgee", "ontology"))  # Turtle despite the .owl name
    assert (len(onto.classes), len(onto.object_properties), len(onto.data_properties)) == (
        32,
        23,
        6,
    )
    assert onto.triple_count == 882
    assert onto.skipped_imports == ("http://purl.org/lscr",)
    genex = "http://purl.org/genex#"
    # bgee_v14_genex.owl lines 405-411: the union members use the default ':' namespace
    level = onto.data_properties[genex + "hasExpressionLevel"]
    assert level.domains == {
        "http://biosoda.cloudlab.zhaw.ch#AbsenceExpression",
        "http://biosoda.cloudlab.zhaw.ch#Expression",
    }
    assert level.ranges == {XSD + "double"}
    assert onto.data_properties[genex + "hasSex"].functional is True
    # lines 593-624
    expression = onto.classes[genex + "Expression"]
    assert expression.restriction_parents == {
        genex + "ExpressionCondition",
        "http://purl.org/net/orth#SequenceUnit",
    }
    assert expression.restriction_properties == {
        genex + "hasExpressionCondition",
        genex + "hasSequenceUnit",
        genex + "hasExpressionCharacteristic",
        genex + "hasExpressionLevel",
    }
    assert LangString("gene expression", "en") in expression.labels


@pytest.mark.atkis
def test_atkis_main_file_with_tolerated_literal(dataset_file: Callable[[str, str], Path]) -> None:
    onto = parse_ontology(dataset_file("atkis", "ontology"))
    strict = parse_ontology(dataset_file("atkis", "ontology-strict"))
    assert (len(onto.classes), len(onto.object_properties), len(onto.data_properties)) == (
        108,
        33,
        38,
    )
    assert onto.triple_count == 662
    assert onto.classes == strict.classes
    assert onto.object_properties == strict.object_properties
    assert onto.data_properties == strict.data_properties
    assert onto.skipped_imports == (
        "http://www.opengis.net/ont/geosparql/1.1",
        "http://www.opengis.net/ont/sf/1.1",
        "https://schema.org/version/latest/schemaorg-current-http.rdf",
    )


@pytest.mark.atkis
def test_atkis_with_imports(dataset_file: Callable[[str, str], Path]) -> None:
    onto = parse_ontology(
        dataset_file("atkis", "ontology"),
        catalog=dataset_file("atkis", "catalog"),
        follow_imports=True,
    )
    # Counted independently with plain rdflib over atkis2 + geo.ttl + sf.ttl + schema.owl
    # (geo.ttl is the catalog's first entry for geosparql/1.1; gml.owl is not imported).
    assert (len(onto.classes), len(onto.object_properties), len(onto.data_properties)) == (
        1035,
        71,
        56,
    )
    assert len(onto.annotation_properties) == 182
    assert onto.triple_count == 16_214
    assert onto.skipped_imports == ()
    assert len(onto.imports) == 3
