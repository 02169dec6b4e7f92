"""The one table of the literal datatypes navqa knows: XSD, ``rdf:langString``,
``rdfs:Literal`` and GeoSPARQL's ``wktLiteral``.

Every module that asks "is this datatype a number / a date / a string?", checks a lexical
form, turns one into a Python value or writes a SPARQL literal goes through this table, so
the linter, the agent's diagnosis, the synthesizer, the suggestions and the metrics agree on
what a datatype is:

* :data:`XSD_TYPES` — each :class:`XsdType`: its :class:`XsdFamily` (``numeric``, ``date``,
  ``datetime``, ``time``, ``year``, ``boolean``, ``string``, ``lang``, ``geometry``) and,
  for numbers, its :class:`NumericKind` (``integer``, ``decimal``, ``float``);
* :func:`family` / :func:`types_of` and the sets derived from them
  (:data:`NUMERIC_TYPES`, :data:`INTEGER_TYPES`, :data:`STRING_TYPES`, …);
* :func:`to_python` / :func:`is_valid_lexical` — a lexical form's value, or why not;
* :func:`sparql_literal` — a literal as a query writes it.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from enum import Enum

from navqa.model.iri import IRI, RDF, RDFS, XSD, compact
from navqa.model.terms import escape_string

__all__ = [
    "DATE_TYPES",
    "DATETIME_TYPES",
    "DECIMAL_TYPES",
    "FLOAT_TYPES",
    "INTEGER_TYPES",
    "LANG_STRING",
    "NUMERIC_TYPES",
    "STRING_TYPES",
    "TEMPORAL_TYPES",
    "TIME_TYPES",
    "WKT_LITERAL",
    "XSD_BOOLEAN",
    "XSD_DATE",
    "XSD_DATETIME",
    "XSD_DECIMAL",
    "XSD_DOUBLE",
    "XSD_GYEAR",
    "XSD_INTEGER",
    "XSD_STRING",
    "XSD_TIME",
    "XSD_TYPES",
    "NumericKind",
    "XsdFamily",
    "XsdType",
    "family",
    "is_valid_lexical",
    "sparql_literal",
    "to_python",
    "types_of",
    "xsd_type",
]


class XsdFamily(Enum):
    """What kind of value a datatype holds (what it compares with in SPARQL)."""

    NUMERIC = "numeric"
    DATE = "date"
    DATETIME = "datetime"
    TIME = "time"
    YEAR = "year"
    BOOLEAN = "boolean"
    STRING = "string"
    LANG = "lang"
    GEOMETRY = "geometry"


class NumericKind(Enum):
    """The three numeric value spaces of XSD (every integer type derives from decimal)."""

    INTEGER = "integer"
    DECIMAL = "decimal"
    FLOAT = "float"


@dataclass(frozen=True, slots=True)
class XsdType:
    """One literal datatype.

    Attributes:
        iri: The datatype IRI.
        family: What its values are.
        numeric: For a numeric type, its value space.
        example: A valid lexical form, for messages (``2020-01-31`` for ``xsd:date``).
        minimum / maximum: Bounds of a bounded integer type (``xsd:byte``: -128..127).
    """

    iri: IRI
    family: XsdFamily
    numeric: NumericKind | None = None
    example: str = "…"
    minimum: int | None = None
    maximum: int | None = None


XSD_STRING = XSD + "string"
XSD_BOOLEAN = XSD + "boolean"
XSD_INTEGER = XSD + "integer"
XSD_DECIMAL = XSD + "decimal"
XSD_DOUBLE = XSD + "double"
XSD_DATE = XSD + "date"
XSD_DATETIME = XSD + "dateTime"
XSD_TIME = XSD + "time"
XSD_GYEAR = XSD + "gYear"
LANG_STRING = RDF + "langString"
WKT_LITERAL = "http://www.opengis.net/ont/geosparql#wktLiteral"


def _int(name: str, lo: int | None = None, hi: int | None = None) -> XsdType:
    return XsdType(XSD + name, XsdFamily.NUMERIC, NumericKind.INTEGER, "42" if (hi is None or
                   hi >= 42) and (lo is None or lo <= 42) else str(hi), lo, hi)


_TABLE: tuple[XsdType, ...] = (
    XsdType(XSD_STRING, XsdFamily.STRING, example="text"),
    XsdType(XSD + "normalizedString", XsdFamily.STRING, example="text"),
    XsdType(XSD + "token", XsdFamily.STRING, example="text"),
    XsdType(XSD + "anyURI", XsdFamily.STRING, example="http://example.org/"),
    XsdType(RDFS + "Literal", XsdFamily.STRING, example="text"),
    XsdType(LANG_STRING, XsdFamily.LANG, example="text"),
    XsdType(XSD_BOOLEAN, XsdFamily.BOOLEAN, example="true"),
    XsdType(XSD_DECIMAL, XsdFamily.NUMERIC, NumericKind.DECIMAL, "4.2"),
    XsdType(XSD + "float", XsdFamily.NUMERIC, NumericKind.FLOAT, "4.2"),
    XsdType(XSD_DOUBLE, XsdFamily.NUMERIC, NumericKind.FLOAT, "4.2"),
    _int("integer"),
    _int("nonNegativeInteger", 0),
    _int("positiveInteger", 1),
    _int("nonPositiveInteger", None, 0),
    _int("negativeInteger", None, -1),
    _int("long", -2**63, 2**63 - 1),
    _int("int", -2**31, 2**31 - 1),
    _int("short", -2**15, 2**15 - 1),
    _int("byte", -2**7, 2**7 - 1),
    _int("unsignedLong", 0, 2**64 - 1),
    _int("unsignedInt", 0, 2**32 - 1),
    _int("unsignedShort", 0, 2**16 - 1),
    _int("unsignedByte", 0, 2**8 - 1),
    XsdType(XSD_DATE, XsdFamily.DATE, example="2020-01-31"),
    XsdType(XSD_DATETIME, XsdFamily.DATETIME, example="2020-01-31T00:00:00"),
    XsdType(XSD + "dateTimeStamp", XsdFamily.DATETIME, example="2020-01-31T00:00:00Z"),
    XsdType(XSD_TIME, XsdFamily.TIME, example="08:00:00"),
    XsdType(XSD_GYEAR, XsdFamily.YEAR, example="2020"),
    XsdType(WKT_LITERAL, XsdFamily.GEOMETRY, example="POINT(10.4 51.2)"),
)

XSD_TYPES: Mapping[IRI, XsdType] = {t.iri: t for t in _TABLE}
"""Every literal datatype navqa knows, by IRI."""


def xsd_type(datatype: str | None) -> XsdType | None:
    """The table's entry of ``datatype`` (``None``, a plain literal: ``xsd:string``)."""
    return XSD_TYPES.get(datatype or XSD_STRING)


def family(datatype: str | None) -> XsdFamily | None:
    """The family of ``datatype`` (a plain literal is a string); ``None`` when unknown."""
    t = xsd_type(datatype)
    return None if t is None else t.family


def types_of(*families: XsdFamily, numeric: NumericKind | None = None) -> frozenset[IRI]:
    """The datatypes of the given families (and, if given, of one numeric value space)."""
    return frozenset(t.iri for t in _TABLE if t.family in families
                     and (numeric is None or t.numeric is numeric))


NUMERIC_TYPES = types_of(XsdFamily.NUMERIC)
INTEGER_TYPES = types_of(XsdFamily.NUMERIC, numeric=NumericKind.INTEGER)
DECIMAL_TYPES = types_of(XsdFamily.NUMERIC, numeric=NumericKind.DECIMAL)
FLOAT_TYPES = types_of(XsdFamily.NUMERIC, numeric=NumericKind.FLOAT)
STRING_TYPES = types_of(XsdFamily.STRING)
DATE_TYPES = types_of(XsdFamily.DATE)
DATETIME_TYPES = types_of(XsdFamily.DATETIME)
TIME_TYPES = types_of(XsdFamily.TIME)
TEMPORAL_TYPES = types_of(XsdFamily.DATE, XsdFamily.DATETIME, XsdFamily.TIME, XsdFamily.YEAR)


# -- lexical forms ------------------------------------------------------------------------------

_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)")
_FLOAT = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?INF|NaN")
_TZ = r"(Z|[+-]\d\d:\d\d)?"
_DATE = re.compile(rf"(-?\d{{4,}})-(\d\d)-(\d\d){_TZ}")
_TIME = re.compile(rf"(\d\d):(\d\d):(\d\d)(\.\d+)?{_TZ}")
_DATETIME = re.compile(rf"(-?\d{{4,}})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)(\.\d+)?{_TZ}")
_GYEAR = re.compile(rf"-?\d{{4,}}{_TZ}")

_NAMES = {"xsd": XSD, "rdf": RDF, "rdfs": RDFS}

Value = int | Decimal | float | bool | dt.date | dt.datetime | dt.time | str
"""What :func:`to_python` returns."""


def _tz(text: str | None) -> dt.tzinfo | None:
    if not text:
        return None
    if text == "Z":
        return dt.UTC
    sign = -1 if text[0] == "-" else 1
    return dt.timezone(sign * dt.timedelta(hours=int(text[1:3]), minutes=int(text[4:6])))


def _time(h: str, m: str, s: str, frac: str | None, tz: str | None) -> dt.time:
    hh, mm, ss = int(h), int(m), int(s)
    if (hh, mm, ss) == (24, 0, 0) and not (frac or "").strip(".0"):
        hh = 0  # 24:00:00 is midnight
    return dt.time(hh, mm, ss, int(((frac or ".0")[1:] + "000000")[:6]), tzinfo=_tz(tz))


def to_python(lexical: str, datatype: str | None) -> Value:
    """The value of a lexical form of ``datatype`` (strings, geometries: the text itself).

    Example:
        >>> to_python("042", XSD + "integer"), to_python("1", XSD + "boolean")
        (42, True)

    Raises:
        ValueError: the lexical form is not valid for the datatype (``"abc"^^xsd:integer``,
            ``"2025-13-45"^^xsd:date``, ``"300"^^xsd:byte``), or the datatype is unknown.
    """
    t = xsd_type(datatype)
    if t is None:
        raise ValueError(f"unknown datatype {datatype}")
    text = lexical.strip() if t.family not in (XsdFamily.STRING, XsdFamily.LANG) else lexical
    try:
        return _convert(t, text)
    except (ValueError, InvalidOperation, OverflowError) as e:
        raise ValueError(f"{lexical!r} is not a valid {compact(t.iri, _NAMES)}") from e


def _convert(t: XsdType, text: str) -> Value:
    fam = t.family
    if fam in (XsdFamily.STRING, XsdFamily.LANG, XsdFamily.GEOMETRY):
        return text
    if fam is XsdFamily.BOOLEAN:
        if text not in ("true", "false", "1", "0"):
            raise ValueError(text)
        return text in ("true", "1")
    if t.numeric is NumericKind.INTEGER:
        if not _INTEGER.fullmatch(text):
            raise ValueError(text)
        n = int(text)
        if (t.minimum is not None and n < t.minimum) or (t.maximum is not None
                                                        and n > t.maximum):
            raise ValueError(text)
        return n
    if t.numeric is NumericKind.DECIMAL:
        if not _DECIMAL.fullmatch(text):
            raise ValueError(text)
        return Decimal(text)
    if t.numeric is NumericKind.FLOAT:
        if not _FLOAT.fullmatch(text):
            raise ValueError(text)
        return float(text.replace("INF", "inf"))
    if fam is XsdFamily.DATE:
        m = _DATE.fullmatch(text)
        if m is None:
            raise ValueError(text)
        return dt.date(int(m[1]), int(m[2]), int(m[3]))
    if fam is XsdFamily.TIME:
        m = _TIME.fullmatch(text)
        if m is None:
            raise ValueError(text)
        return _time(m[1], m[2], m[3], m[4], m[5])
    if fam is XsdFamily.DATETIME:
        m = _DATETIME.fullmatch(text)
        if m is None or (t.iri != XSD_DATETIME and not m[8]):
            raise ValueError(text)  # xsd:dateTimeStamp requires a time zone
        day = dt.date(int(m[1]), int(m[2]), int(m[3]))
        return dt.datetime.combine(day, _time(m[4], m[5], m[6], m[7], m[8]))
    if fam is XsdFamily.YEAR:
        if not _GYEAR.fullmatch(text):
            raise ValueError(text)
        return int(text[:4] if text[0] != "-" else text[:5])
    raise ValueError(text)  # pragma: no cover - every family is handled above


def is_valid_lexical(lexical: str, datatype: str | None) -> bool:
    """Whether ``lexical`` is a valid form of ``datatype`` (an unknown datatype: ``True``,
    navqa cannot tell)."""
    if xsd_type(datatype) is None:
        return True
    try:
        to_python(lexical, datatype)
    except ValueError:
        return False
    return True


# -- SPARQL -------------------------------------------------------------------------------------

_BARE = {XSD_INTEGER: _INTEGER, XSD_DECIMAL: re.compile(r"[+-]?\d*\.\d+"),
         XSD_BOOLEAN: re.compile(r"true|false")}


def sparql_literal(lexical: str, datatype: str | None = None, *, lang: str | None = None,
                   prefixes: Mapping[str, str] | None = None) -> str:
    """A literal as a SPARQL query writes it.

    Integers, decimals and booleans whose form SPARQL reads back with the same datatype
    are written bare (``1900``, ``4.2``, ``true``); ``xsd:string`` and plain literals are
    quoted; other datatypes are written ``"…"^^xsd:date`` when ``prefixes`` has a prefix
    for them, else ``"…"^^<IRI>``.

    Example:
        >>> sparql_literal("2020-01-31", XSD + "date", prefixes={"xsd": XSD})
        '"2020-01-31"^^xsd:date'
    """
    body = f'"{escape_string(lexical)}"'
    if lang:
        return f"{body}@{lang}"
    if not datatype or datatype == XSD_STRING:
        return body
    bare = _BARE.get(datatype)
    if bare is not None and bare.fullmatch(lexical):
        return lexical
    return f"{body}^^{compact(datatype, prefixes or {})}"
