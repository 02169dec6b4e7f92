"""NPD served by real Ontop over real PostgreSQL: SPARQL answers equal hand-written SQL.

Each case pairs a SPARQL query over NPD's mapped vocabulary with an SQL query written
independently against the NPD tables (reading the mapping only to know which table
backs which term). Results are compared as multisets of normalised values.
"""

from __future__ import annotations

from collections import Counter
from decimal import Decimal

import pytest

from navqa.model.terms import AskResult, IRITerm, LiteralTerm, SelectResult, Term

pytestmark = [pytest.mark.npd, pytest.mark.ontop, pytest.mark.postgres]

P = """PREFIX npdv: <http://sws.ifi.uio.no/vocab/npd-v2#>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
"""
FIELD = "http://sws.ifi.uio.no/data/npd-v2/field/"


def norm(v: object) -> object:
    """One comparable value for a SPARQL term or an SQL cell."""
    if isinstance(v, IRITerm):
        return v.value
    if isinstance(v, LiteralTerm):
        dt = v.datatype or ""
        if dt.endswith(("#integer", "#int", "#long", "#decimal", "#double", "#float")):
            return Decimal(v.value).normalize()
        return v.value
    if isinstance(v, bool):
        return v
    if isinstance(v, int | float | Decimal):
        return Decimal(str(v)).normalize()
    return v if v is None else str(v)


def bag(rows: list[tuple[object, ...]] | tuple[tuple[Term | None, ...], ...]) -> Counter:
    return Counter(tuple(norm(x) for x in r) for r in rows)


CASES = [
    (
        "count-fields",
        "SELECT (COUNT(DISTINCT ?f) AS ?n) WHERE { ?f a npdv:Field }",
        'SELECT count(*) FROM "field"',
    ),
    (
        "field-names",
        "SELECT DISTINCT ?name WHERE { ?f a npdv:Field ; npdv:name ?name }",
        'SELECT DISTINCT "fldName" FROM "field"',
    ),
    (
        "discoveries-2010",
        "SELECT DISTINCT ?name WHERE { ?d a npdv:Discovery ; npdv:name ?name ; "
        "npdv:discoveryYear ?y . FILTER(?y = 2010) }",
        'SELECT DISTINCT "dscName" FROM "discovery" WHERE "dscDiscoveryYear" = 2010',
    ),
    (
        "troll-operators",
        "SELECT DISTINCT ?company ?from WHERE { ?op npdv:operatorForField ?f ; "
        "npdv:fieldOperator ?c ; npdv:dateFieldOperatorFrom ?from . ?f npdv:name \"TROLL\" . "
        "?c npdv:name ?company }",
        'SELECT DISTINCT c."cmpLongName", h."fldOperatorFrom"::text FROM "field_operator_hst" h '
        'JOIN "field" f ON f."fldNpdidField" = h."fldNpdidField" '
        'JOIN "company" c ON c."cmpNpdidCompany" = h."cmpNpdidCompany" '
        "WHERE f.\"fldName\" = 'TROLL' AND h.\"fldOperatorFrom\" <> '9999-12-31'",
    ),
    (
        "discoveries-in-oseberg",
        "SELECT DISTINCT ?dname WHERE { ?d npdv:includedInField ?f ; npdv:name ?dname . "
        "?f npdv:name \"OSEBERG\" }",
        'SELECT DISTINCT d."dscName" FROM "discovery" d JOIN "field" f '
        "ON d.\"fldNpdidField\" = f.\"fldNpdidField\" WHERE f.\"fldName\" = 'OSEBERG'",
    ),
    (
        "ekofisk-exploration-wellbores",
        "SELECT DISTINCT ?w WHERE { ?w npdv:explorationWellboreForField ?f . "
        "?f npdv:name \"EKOFISK\" }",
        "SELECT DISTINCT 'http://sws.ifi.uio.no/data/npd-v2/wellbore/' || w.\"wlbNpdidWellbore\" "
        'FROM "wellbore_exploration_all" w JOIN "field" f '
        "ON w.\"fldNpdidField\" = f.\"fldNpdidField\" WHERE f.\"fldName\" = 'EKOFISK'",
    ),
    (
        "statfjord-oil-by-year",
        "SELECT ?year ?oil WHERE { ?p a npdv:FieldYearlyProduction ; npdv:productionForField ?f ; "
        "npdv:productionYear ?year ; "
        "npdv:producedOil ?oil . ?f npdv:name \"STATFJORD\" . FILTER(?year >= 2005) }",
        'SELECT p."prfYear", p."prfPrdOilNetMillSm3" FROM "field_production_yearly" p '
        'JOIN "field" f ON f."fldNpdidField" = p."prfNpdidInformationCarrier" '
        "WHERE f.\"fldName\" = 'STATFJORD' AND p.\"prfYear\" >= 2005",
    ),
    (
        "discoveries-per-year-since-2008",
        "SELECT ?y (COUNT(DISTINCT ?d) AS ?n) WHERE { ?d a npdv:Discovery ; npdv:discoveryYear ?y "
        ". FILTER(?y >= 2008) } GROUP BY ?y",
        'SELECT "dscDiscoveryYear", count(*) FROM "discovery" WHERE "dscDiscoveryYear" >= 2008 '
        'GROUP BY "dscDiscoveryYear"',
    ),
    (
        "licences-granted-1965",
        "SELECT DISTINCT ?name WHERE { ?l a npdv:ProductionLicence ; npdv:name ?name ; "
        "npdv:dateLicenceGranted ?d . FILTER(?d >= \"1965-01-01\"^^xsd:date && "
        "?d < \"1966-01-01\"^^xsd:date) }",
        'SELECT DISTINCT "prlName" FROM "licence" WHERE "prlDateGranted" >= \'1965-01-01\' '
        "AND \"prlDateGranted\" < '1966-01-01'",
    ),
    (
        "drilling-operators-count",
        "SELECT (COUNT(DISTINCT ?c) AS ?n) WHERE { ?w npdv:drillingOperatorCompany ?c }",
        'SELECT count(DISTINCT c."cmpNpdidCompany") FROM "company" c WHERE c."cmpLongName" IN '
        '(SELECT "wlbDrillingOperator" FROM "wellbore_exploration_all" UNION '
        'SELECT "wlbDrillingOperator" FROM "wellbore_development_all")',
    ),
    (
        "current-operator-of-fields-starting-with-gj",
        "SELECT DISTINCT ?fname ?cname WHERE { ?f npdv:currentFieldOperator ?c ; "
        "npdv:name ?fname . "
        "?c npdv:name ?cname . FILTER(STRSTARTS(?fname, \"GJ\")) }",
        'SELECT DISTINCT f."fldName", c."cmpLongName" FROM "field" f JOIN "company" c '
        "ON f.\"cmpNpdidCompany\" = c.\"cmpNpdidCompany\" WHERE f.\"fldName\" LIKE 'GJ%'",
    ),
]


@pytest.mark.parametrize(("case", "sparql", "sql"), CASES, ids=[c[0] for c in CASES])
def test_npd_sparql_equals_sql(vkg, case: str, sparql: str, sql: str) -> None:
    npd = vkg("npd")
    result = npd.endpoint.select(P + sparql)
    assert isinstance(result, SelectResult)
    expected = npd.sql(sql)
    assert expected, f"{case}: the SQL oracle returned nothing; pick another value"
    assert bag(list(result.rows)) == bag(expected)


def test_npd_ask_matches_sql(vkg) -> None:
    npd = vkg("npd")
    for name in ("TROLL", "NO SUCH FIELD"):
        ask = npd.endpoint.ask(P + f'ASK {{ ?f a npdv:Field ; npdv:name "{name}" }}')
        rows = npd.sql(f"SELECT count(*) FROM \"field\" WHERE \"fldName\" = '{name}'")
        assert isinstance(ask, AskResult)
        assert ask.value == (rows[0][0] > 0)


def test_npd_deepest_wellbore_matches_sql(vkg) -> None:
    npd = vkg("npd")
    result = npd.endpoint.select(
        P + "SELECT ?w ?d WHERE { ?w npdv:wellboreTotalDepth ?d } ORDER BY DESC(?d) LIMIT 1")
    (top,) = npd.sql(
        'SELECT max(d) FROM (SELECT "wlbTotalDepth" d FROM "wellbore_exploration_all" UNION ALL '
        'SELECT "wlbTotalDepth" FROM "wellbore_development_all") t')
    assert len(result.rows) == 1
    assert norm(result.rows[0][1]) == norm(top[0])
    assert str(result.rows[0][0]).startswith("http://sws.ifi.uio.no/data/npd-v2/wellbore/")
