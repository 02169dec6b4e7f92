"""The XSD table: families, lexical forms, Python values and SPARQL literals."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from navqa.model.iri import RDF, RDFS, XSD
from navqa.model.xsd import (
    INTEGER_TYPES,
    NUMERIC_TYPES,
    STRING_TYPES,
    WKT_LITERAL,
    NumericKind,
    XsdFamily,
    family,
    is_valid_lexical,
    sparql_literal,
    to_python,
    types_of,
    xsd_type,
)


@pytest.mark.parametrize(("datatype", "fam"), [
    (None, XsdFamily.STRING),
    (XSD + "string", XsdFamily.STRING),
    (RDFS + "Literal", XsdFamily.STRING),
    (RDF + "langString", XsdFamily.LANG),
    (XSD + "unsignedByte", XsdFamily.NUMERIC),
    (XSD + "double", XsdFamily.NUMERIC),
    (XSD + "date", XsdFamily.DATE),
    (XSD + "dateTimeStamp", XsdFamily.DATETIME),
    (XSD + "time", XsdFamily.TIME),
    (XSD + "gYear", XsdFamily.YEAR),
    (XSD + "boolean", XsdFamily.BOOLEAN),
    (WKT_LITERAL, XsdFamily.GEOMETRY),
    ("http://example.org/myType", None),
])
def test_family(datatype: str | None, fam: XsdFamily | None) -> None:
    assert family(datatype) is fam


def test_derived_sets_partition_the_numbers() -> None:
    assert XSD + "long" in INTEGER_TYPES and XSD + "decimal" not in INTEGER_TYPES
    assert types_of(XsdFamily.NUMERIC, numeric=NumericKind.FLOAT) == {XSD + "float",
                                                                     XSD + "double"}
    assert INTEGER_TYPES < NUMERIC_TYPES
    assert XSD + "gYear" not in NUMERIC_TYPES
    assert NUMERIC_TYPES.isdisjoint(STRING_TYPES)
    assert all(getattr(xsd_type(t), "numeric", None) is not None for t in NUMERIC_TYPES)


@pytest.mark.parametrize(("lexical", "datatype", "value"), [
    (" 042 ", XSD + "integer", 42),
    ("-128", XSD + "byte", -128),
    ("4.50", XSD + "decimal", Decimal("4.50")),
    ("1e3", XSD + "double", 1000.0),
    ("-INF", XSD + "float", float("-inf")),
    ("1", XSD + "boolean", True),
    ("false", XSD + "boolean", False),
    ("2020-02-29", XSD + "date", dt.date(2020, 2, 29)),
    ("2020-01-31T10:00:00.25Z", XSD + "dateTime",
     dt.datetime(2020, 1, 31, 10, 0, 0, 250000, tzinfo=dt.UTC)),
    ("24:00:00", XSD + "time", dt.time(0, 0)),
    ("1999", XSD + "gYear", 1999),
    (" keep spaces ", XSD + "string", " keep spaces "),
])
def test_to_python(lexical: str, datatype: str, value: object) -> None:
    assert to_python(lexical, datatype) == value
    assert is_valid_lexical(lexical, datatype)


@pytest.mark.parametrize(("lexical", "datatype"), [
    ("abc", XSD + "integer"),
    ("4.5", XSD + "integer"),
    ("300", XSD + "byte"),
    ("-1", XSD + "nonNegativeInteger"),
    ("1e3", XSD + "decimal"),
    ("yes", XSD + "boolean"),
    ("2025-13-45", XSD + "date"),
    ("2021-02-29", XSD + "date"),
    ("2020-01-31 10:00:00", XSD + "dateTime"),
    ("2020-01-31T10:00:00", XSD + "dateTimeStamp"),
    ("25:00:00", XSD + "time"),
    ("99", XSD + "gYear"),
])
def test_invalid_lexical_forms(lexical: str, datatype: str) -> None:
    assert not is_valid_lexical(lexical, datatype)
    with pytest.raises(ValueError, match="is not a valid xsd:"):
        to_python(lexical, datatype)


def test_unknown_datatypes_are_not_judged() -> None:
    assert is_valid_lexical("anything", "http://example.org/myType")
    with pytest.raises(ValueError, match="unknown datatype"):
        to_python("x", "http://example.org/myType")


@pytest.mark.parametrize(("args", "kw", "text"), [
    (("1900", XSD + "integer"), {}, "1900"),
    (("abc", XSD + "integer"), {}, f'"abc"^^<{XSD}integer>'),
    (("4.2", XSD + "decimal"), {}, "4.2"),
    (("true", XSD + "boolean"), {}, "true"),
    (("2020-01-31", XSD + "date"), {"prefixes": {"xsd": XSD}}, '"2020-01-31"^^xsd:date'),
    (("2020-01-31", XSD + "date"), {}, f'"2020-01-31"^^<{XSD}date>'),
    (('say "hi"\n', None), {}, '"say \\"hi\\"\\n"'),
    (("x", XSD + "string"), {}, '"x"'),
    (("Oslo", None), {"lang": "no"}, '"Oslo"@no'),
])
def test_sparql_literal(args: tuple[str, str | None], kw: dict, text: str) -> None:
    assert sparql_literal(*args, **kw) == text
