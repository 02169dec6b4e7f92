"""Native .obda parser: target-syntax details and errors not covered by the conformance folders,
plus the NPD, Bgee and ATKIS mapping files."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest

from navqa.errors import MappingParseError
from navqa.model.iri import RDF_TYPE
from navqa.model.mapping import MappingAtom, TermKind, TermMap, TermType
from navqa.offline.obda_parser import parse_obda, parse_obda_text, parse_target

V = "http://example.org/voc#"
XSD = "http://www.w3.org/2001/XMLSchema#"
PREFIXES = {"": V, "xsd": XSD}


def _iri_t(value: str) -> TermMap:
    return TermMap(TermKind.TEMPLATE, value, TermType.IRI)


def _doc(body: str, prefixes: str = ":\thttp://example.org/voc#\n") -> str:
    return f"[PrefixDeclaration]\n{prefixes}\n[MappingDeclaration] @collection [[\n{body}\n]]\n"


# -- targets ------------------------------------------------------------------------------


def test_rdf_type_with_a_template_object_is_a_property_atom() -> None:
    (atom,) = parse_target(":x/{id} a :Kind/{k} .", PREFIXES)
    assert atom == MappingAtom(RDF_TYPE, _iri_t(V + "x/{id}"), _iri_t(V + "Kind/{k}"))
    assert atom.is_class is False


def test_bare_column_subject_is_an_iri_column() -> None:
    (atom,) = parse_target("{uri} a :Thing .", PREFIXES)
    assert atom.subject == TermMap(TermKind.COLUMN, "uri", TermType.IRI)
    assert atom.is_class and atom.predicate == V + "Thing"


def test_full_iri_datatype_and_no_final_dot() -> None:
    (atom,) = parse_target(":x/{id} :p {v}^^<http://www.w3.org/2001/XMLSchema#date>", PREFIXES)
    assert atom.object == TermMap(TermKind.COLUMN, "v", TermType.LITERAL, XSD + "date")


def test_name_with_inner_dots_and_final_dot() -> None:
    (atom,) = parse_target(":x/{id} :p :v1.2/{a}.", PREFIXES)
    assert atom.object == _iri_t(V + "v1.2/{a}")


def test_quoted_placeholder_with_space_inside_a_prefixed_name() -> None:
    (atom,) = parse_target(':x/{"my col"} :p {"Other Col"} .', PREFIXES)
    assert atom.subject.value == V + 'x/{"my col"}'
    assert atom.subject.columns == ("my col",)
    assert atom.object == TermMap(TermKind.COLUMN, "Other Col", TermType.LITERAL)


def test_columns_of_the_template() -> None:
    (atom,) = parse_target(':w/{"wlbName"}/{id} :p :q .', PREFIXES)
    assert atom.subject.columns == ("wlbName", "id")
    assert atom.object == TermMap(TermKind.CONSTANT, V + "q", TermType.IRI)


def test_double_and_negative_numbers() -> None:
    atoms = parse_target(":x :p -3 , 1.5e3 .", PREFIXES)
    assert [a.object for a in atoms] == [
        TermMap(TermKind.CONSTANT, "-3", TermType.LITERAL, XSD + "integer"),
        TermMap(TermKind.CONSTANT, "1.5e3", TermType.LITERAL, XSD + "double"),
    ]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        (":x/{id} :p/{v} :o .", "predicate must be a constant IRI"),
        ('"lit" :p :o .', "a subject must be an IRI or blank node"),
        (":x/{id} :p [ :q :r ] .", "unsupported bracket '['"),
        (":x/{id} :p :o/id} .", "unbalanced braces: '}' without '{'"),
        (':x/{id} :p "open .', "unterminated string literal"),
        (":x/{id} :p :o :extra .", "expected '.', ';' or ',' before ':extra'"),
        (":x/{id} :p", "unexpected end of target, expected an object"),
        (":x/{id} :p {v}^^ .", "missing datatype"),
        (":x/{id} :p {v}@ .", "malformed language tag"),
        (":x/{id} :p word .", "unexpected token 'word'"),
        (":x/{id} :p {a{b}} .", "unbalanced braces: '{' inside a placeholder"),
        (":x/{id} :p :o > .", "unbalanced brackets: '>' without '<'"),
        ("", "empty target"),
    ],
)
def test_target_errors(target: str, message: str) -> None:
    with pytest.raises(MappingParseError, match=re.escape(message)) as info:
        parse_target(target, PREFIXES, path=Path("m.obda"), line=7, mapping_id="m1")
    assert info.value.mapping_id == "m1"
    assert info.value.line == 7


def test_unknown_default_prefix_is_named() -> None:
    with pytest.raises(MappingParseError, match=r"unknown prefix ':' \(default\)"):
        parse_target(":x a :Y .", {"xsd": XSD})


def test_unknown_prefix_in_datatype_points_at_the_continuation_line() -> None:
    with pytest.raises(MappingParseError, match="unknown prefix foo:") as info:
        parse_target(":x/{a} :p {a} ;\n  :q {b}^^foo:bar .", PREFIXES, line=10)
    assert info.value.line == 11


# -- file structure -----------------------------------------------------------------------


def test_prefix_declared_with_angle_brackets() -> None:
    ms = parse_obda_text(
        _doc(
            "mappingId\tm\ntarget\t\t:a/{x} a :A .\nsource\t\tSELECT x FROM t",
            prefixes=":\t<http://example.org/voc#>\n",
        )
    )
    assert ms.prefixes == {"": V}
    assert ms.assertions[0].atoms[0].predicate == V + "A"


def test_malformed_prefix_line() -> None:
    with pytest.raises(MappingParseError, match="malformed prefix declaration") as info:
        parse_obda_text(_doc("", prefixes=":\thttp://x/\nnocolon http://y/\n"), path=Path("p.obda"))
    assert info.value.line == 3


def test_text_outside_sections() -> None:
    with pytest.raises(MappingParseError, match="unexpected text outside a section") as info:
        parse_obda_text("hello\n")
    assert info.value.line == 1


def test_mapping_declaration_without_collection() -> None:
    with pytest.raises(MappingParseError, match="expected '@collection") as info:
        parse_obda_text("[PrefixDeclaration]\n:\thttp://x/\n\n[MappingDeclaration]\n")
    assert info.value.line == 4


def test_mapping_id_must_fit_on_one_line() -> None:
    with pytest.raises(MappingParseError, match="mappingId must fit on one line") as info:
        parse_obda_text(_doc("mappingId\tm\n\tmore\ntarget\t\t:a a :A .\nsource\t\tSELECT 1"))
    assert info.value.line == 6


def test_two_targets_in_one_assertion() -> None:
    body = "mappingId\tm\ntarget\t\t:a a :A .\ntarget\t\t:b a :B .\nsource\t\tSELECT 1"
    with pytest.raises(MappingParseError, match="two target entries") as info:
        parse_obda_text(_doc(body))
    assert info.value.mapping_id == "m"


def test_missing_file() -> None:
    with pytest.raises(MappingParseError, match="not found"):
        parse_obda(Path("/nonexistent/x.obda"))


def test_parse_text_without_path_locates_in_string() -> None:
    ms = parse_obda_text(_doc("mappingId\tm\ntarget\t\t:a/{x} a :A .\nsource\t\tSELECT x FROM t"))
    assert ms.path is None
    assert ms.assertions[0].location is not None
    assert (ms.assertions[0].location.path, ms.assertions[0].location.line) == ("<string>", 5)


# -- the real datasets --------------------------------------------------------------------


@pytest.mark.npd
def test_npd_obda(dataset_file: Callable[[str, str], Path]) -> None:
    path = dataset_file("npd", "mapping")
    ms = parse_obda(path)
    assert len(ms) == 1177
    assert len({a.id for a in ms}) == 1177
    assert sum(len(a.atoms) for a in ms) == 1177  # every NPD target is one triple
    assert len(ms.classes()) > 0 and sum(1 for _, at in ms.atoms() if at.is_class) == 162
    assert ms.prefixes[""] == "http://sws.ifi.uio.no/vocab/npd-v2#"
    first = ms.assertions[0]  # npd-v2-ql.obda lines 22-24
    assert first.id == "Mapping:00001:Literal:wellbore_coordinates:wlbNsMin"
    assert first.location is not None and first.location.line == 22
    assert first.source == 'SELECT "wlbNpdidWellbore", "wlbNsMin" FROM "wellbore_coordinates"'
    assert first.atoms == (
        MappingAtom(
            "http://sws.ifi.uio.no/vocab/npd-v2#minutesNS",
            _iri_t("http://sws.ifi.uio.no/data/npd-v2/wellbore/{wlbNpdidWellbore}/point"),
            TermMap(TermKind.COLUMN, "wlbNsMin", TermType.LITERAL, XSD + "integer"),
        ),
    )


@pytest.mark.bgee
def test_bgee_obda(dataset_file: Callable[[str, str], Path]) -> None:
    ms = parse_obda(dataset_file("bgee", "mapping"))
    assert [a.id for a in ms] == [
        "Stage",
        "Species",
        "AnatomicalEntity",
        "ExpressionCondition",
        "Expression",
        "Gene_IsExpressedIn_anatEntity",
        "Gene_IsExpressedIn_expressionCondition",
        "Gene",
        "AbsenceExpression",
        "Gene_IsNotExpressedIn_anatEntity",
        "Gene_IsNotExpressedIn_expressionCondition",
    ]
    assert [len(a.atoms) for a in ms] == [3, 6, 3, 4, 5, 1, 1, 7, 5, 1, 1]
    species = ms.assertions[1]
    subjects = {at.subject.value for at in species.atoms}
    assert subjects == {
        "http://purl.uniprot.org/taxonomy/{speciesId}",
        "http://bgee.org/#ORGANISM_{speciesId}",
    }
    joined = ms.assertions[5].source  # a multi-line source
    assert joined.count("\n") == 8 and joined.startswith("SELECT g.geneId")


@pytest.mark.atkis
def test_atkis_obda(dataset_file: Callable[[str, str], Path]) -> None:
    ms = parse_obda(dataset_file("atkis", "mapping"))
    assert len(ms) == 168
    ids = {a.id for a in ms}
    assert "building facility in municipality" not in ids  # commented out with ';'
    assert "schema city" not in ids
    wkt = [
        at for _, at in ms.atoms() if at.predicate == "http://www.opengis.net/ont/geosparql#asWKT"
    ]
    assert len(wkt) == 35
    assert {at.object for at in wkt} == {
        TermMap(
            TermKind.TEMPLATE,
            "<http://www.opengis.net/def/crs/EPSG/0/31467> {wkt}",
            TermType.LITERAL,
            "http://www.opengis.net/ont/geosparql#wktLiteral",
        )
    }
    langs = [
        at.object.language for _, at in ms.atoms() if at.object is not None and at.object.language
    ]
    assert (langs.count("de"), langs.count("en")) == (50, 25)


@pytest.mark.atkis
def test_atkis_head_revision_has_duplicate_ids(dataset_file: Callable[[str, str], Path]) -> None:
    path = dataset_file("atkis", "mapping-head")
    with pytest.raises(MappingParseError, match="duplicate mapping id") as info:
        parse_obda(path)
    assert (info.value.line, info.value.mapping_id) == (245, "TransportBuildingAndFacility Point")
    assert info.value.path == path


def test_target_starting_on_a_continuation_line_reports_the_right_line() -> None:
    body = "mappingId\tm\ntarget\n\t\t:a/{x} a :A ;\n\t\tbad:p {x} .\nsource\t\tSELECT x FROM t"
    with pytest.raises(MappingParseError, match="unknown prefix bad:") as info:
        parse_obda_text(_doc(body))
    assert (info.value.line, info.value.mapping_id) == (8, "m")
