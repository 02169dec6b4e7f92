"""The empty-answer repair that tries the other entities a name could mean.

Unit tests read query texts (which patterns are name anchors, what the probe asks, which
probe rows become repairs); the end-to-end test repairs an empty query on the real demo
VKG (Ontop 5.1.2 over PostgreSQL) and checks the rows against SQL on the demo database.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from navqa.model.events import QueryRepaired
from navqa.model.terms import IRITerm, LiteralTerm, SelectResult
from navqa.online.pipeline import AskState, Pipeline
from navqa.online.saga.repair import repair_empty
from navqa.online.saga.repair_names import name_anchors, probe_query, renamings
from navqa.online.saga.sparql_text import QueryText

EX = "http://example.org/v#"
HEAD = f"PREFIX : <{EX}>\n"
NAMES = [EX + "name", EX + "shortName"]
QUERY = HEAD + """SELECT DISTINCT ?pname WHERE {
  ?p a :Pipeline ; :operator ?c ; :name ?pname .
  ?c :shortName "ACME" .
} ORDER BY ?pname"""


def anchors(q: str) -> list[str]:
    return [f"{tp.s.text} {tp.o.text}" for tp in name_anchors(QueryText.parse(q), NAMES)]


def test_an_anchor_is_a_name_property_with_a_worded_literal() -> None:
    assert anchors(QUERY) == ['?c "ACME"']
    # a code, a typed literal, a non-name property or a constant subject is no anchor
    for body in ('?c :shortName "018"', '?c :shortName "ACME"^^:code', '?c :status "ACME"',
                 ':c1 :shortName "ACME"'):
        assert anchors(f"{HEAD}SELECT ?c WHERE {{ {body} . }}") == []


def test_the_probe_keeps_the_query_and_asks_for_names_holding_the_literal() -> None:
    qt = QueryText.parse(QUERY)
    probe = probe_query(qt, name_anchors(qt, NAMES)[0], NAMES, "ACME")
    assert probe is not None
    assert probe.startswith(HEAD + "SELECT DISTINCT ?navqaAlt ?navqaAltP {")
    assert '"ACME"' not in probe and "?p a :Pipeline ; :operator ?c ; :name ?pname ." in probe
    assert f"{{ ?c <{EX}name> ?navqaAlt . BIND(<{EX}name> AS ?navqaAltP) }} UNION" in probe
    assert 'FILTER(CONTAINS(LCASE(STR(?navqaAlt)), "acme"))' in probe
    assert "ORDER BY" not in probe and probe.endswith("LIMIT 50")


def rows(*values: tuple[str, str]) -> SelectResult:
    return SelectResult(("navqaAlt", "navqaAltP"),
                        tuple((LiteralTerm(v), IRITerm(EX + p)) for v, p in values))


def test_names_holding_the_literal_as_words_become_repairs_shortest_first() -> None:
    asked: list[str] = []

    def select(q: str) -> SelectResult:
        asked.append(q)
        return rows(("Acme Pipelines International AS", "name"), ("acme", "name"),
                    ("ACMEX Holdings", "name"), ("Acme Energy AS", "name"),
                    ("ACME ENERGY", "shortName"))

    got = list(renamings(QueryText.parse(QUERY), lambda _: NAMES, select))
    assert len(asked) == 1
    # the literal itself and a name holding it only inside a word are no other name
    assert [(r.stored, r.prop) for r in got] == [("ACME ENERGY", EX + "shortName"),
                                                  ("Acme Energy AS", EX + "name")]
    assert '?c :shortName "ACME ENERGY" .' in got[0].sparql
    assert '?c :name "Acme Energy AS" .' in got[1].sparql
    assert got[0].sparql.endswith("ORDER BY ?pname")


def test_a_failed_or_empty_probe_gives_no_repair() -> None:
    assert list(renamings(QueryText.parse(QUERY), lambda _: NAMES, lambda _: None)) == []
    assert list(renamings(QueryText.parse(QUERY), lambda _: NAMES, lambda _: rows())) == []


# -- end to end, on the demo VKG ----------------------------------------------------------------

RAIL = "PREFIX rail: <http://example.org/navqa/rail#>\n"
# the station named exactly "Bramwell" has no step-free access; "Bramwell East" has
EMPTY = RAIL + """SELECT ?code WHERE {
  ?s a rail:Station ; rail:name "Bramwell" ; rail:stepFreeAccess true ;
     rail:stationCode ?code .
}"""


@pytest.mark.ontop
@pytest.mark.postgres
def test_an_empty_answer_for_a_name_takes_the_entity_whose_name_holds_it(
        demo_pipeline: Pipeline, vkg: Callable[..., Any]) -> None:
    pipe = demo_pipeline
    st = AskState("What is the code of the step-free Bramwell station?")
    list(pipe.extract(st))
    list(pipe.ground(st))
    st.sparql = EMPTY
    st.result = pipe.endpoint.query(EMPTY)
    assert st.result.is_empty
    events = list(repair_empty(pipe, st))

    expected = {r[0] for r in vkg("demo").sql(
        "SELECT station_code FROM station WHERE step_free AND name <> 'Bramwell' "
        "AND name ~* '(^|\\W)bramwell(\\W|$)'")}
    assert isinstance(st.result, SelectResult)
    assert {str(row[0]) for row in st.result.rows} == expected
    assert expected
    repairs = [e for e in events if isinstance(e, QueryRepaired)]
    assert any(r.reason.startswith("renamed-anchor: no answer with 'Bramwell'") and
               r.reason.endswith("→ rows") for r in repairs)
    assert 'rail:name "Bramwell East"' in st.sparql
