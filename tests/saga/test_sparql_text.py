"""Exact edits of SPARQL text: the triple patterns the scanner reads are rdflib's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rdflib import BNode, Literal, URIRef, Variable
from saga_common import PREFIX, RAIL

from navqa.online.check import parse
from navqa.online.saga.sparql_text import QueryText
from navqa.online.saga.typestate import bgp_triples

ROOT = Path(__file__).parents[2]
GOLD = [json.loads(line) for name in ("demo", "npd", "bgee", "atkis")
        for line in (ROOT / "datasets" / name / "questions.jsonl").read_text(
            encoding="utf-8").splitlines() if line.strip()]


def _as_rdflib(q: QueryText, t) -> object:
    if t.is_var:
        return Variable(t.text[1:])
    iri = q.iri(t)
    if iri is not None:
        return URIRef(iri)
    lit = q.literal(t)
    if lit is not None:
        return Literal(lit[0], datatype=URIRef(lit[1]) if lit[1] else None)
    return t.text


@pytest.mark.parametrize("q", GOLD, ids=[q["id"] for q in GOLD])
def test_triples_match_rdflib(q) -> None:
    qt = QueryText.parse(q["sparql"])
    mine = {tuple(str(_as_rdflib(qt, x)) for x in (tp.s, tp.p, tp.o)) for tp in qt.triples
            if tp.p.kind != "path" and not tp.s.text.startswith(("[", "_:"))}
    theirs = {tuple(str(x) for x in t) for t in bgp_triples(parse(q["sparql"]),
                                                            positive_only=False)
              if isinstance(t[1], URIRef) and not any(isinstance(x, BNode) for x in t)}
    assert mine == theirs


def test_edits_keep_everything_else() -> None:
    text = (PREFIX + 'SELECT ?name WHERE {\n  ?s a rail:Station ; rail:name ?name ; '
            'rail:builtBy ?op .\n  ?op rail:name "Kestrel Metro" , "KM" .\n'
            '  FILTER(?name != "x")\n}\nORDER BY ?name')
    qt = QueryText.parse(text)
    built = next(t for t in qt.triples if t.p.text == "rail:builtBy")
    assert built.shared_s and not built.shared_p
    swapped = qt.replace_term(built.p, qt.term_text(RAIL + "operatedBy"))
    assert "rail:operatedBy ?op ." in swapped and swapped.endswith("ORDER BY ?name")
    cut = qt.remove_triple(built)
    assert cut is not None and "builtBy" not in cut and "rail:name ?name" in cut
    parse(cut)
    km = next(t for t in qt.triples if t.o.text == '"KM"')
    assert km.shared_p
    cut2 = qt.remove_triple(km)
    assert cut2 is not None and '"KM"' not in cut2 and '"Kestrel Metro"' in cut2
    parse(cut2)
    no_filter = qt.remove_filter(qt.filters[0])
    assert "FILTER" not in no_filter
    parse(no_filter)
    inserted = qt.insert_in_group(built.group, "?s rail:stationCode ?c .")
    assert "?s rail:stationCode ?c ." in inserted
    parse(inserted)


def test_ask_and_literals() -> None:
    qt = QueryText.parse(PREFIX + 'PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n'
                                  'ASK { ?l rail:electrified true ; rail:lengthKm 12.5 ; '
                                  'rail:name "O\'Leary\\"s"@en ; rail:openingDate '
                                  '"1850-01-01"^^xsd:date }')
    lits = [qt.literal(t.o) for t in qt.triples]
    assert lits[0] == ("true", "http://www.w3.org/2001/XMLSchema#boolean")
    assert lits[1] == ("12.5", "http://www.w3.org/2001/XMLSchema#decimal")
    assert lits[2] == ("O'Leary\"s", None)
    assert lits[3] == ("1850-01-01", "http://www.w3.org/2001/XMLSchema#date")
