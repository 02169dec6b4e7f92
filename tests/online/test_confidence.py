"""Events and final SPARQL in, confidence, unplaced parts and alternatives out
(:mod:`navqa.online.confidence`; no endpoint: the events are written by hand)."""

from __future__ import annotations

import json

from navqa.model.events import (
    Alternative,
    AlternativeKind,
    Answer,
    AnswerKind,
    AnswerTypePredicted,
    ConfidenceLevel,
    ConfidenceReason,
    Event,
    Linked,
    Mentions,
    MentionsExtracted,
    PartKind,
    QueryChecked,
    QueryCostChecked,
    QuestionCues,
    ScoredTerm,
    SubgraphsReranked,
    UngroundedValue,
    UnplacedWhy,
    ValueGrounding,
    ValueMention,
    ValuesGrounded,
)
from navqa.model.events_json import answer_json, assessment_from_json
from navqa.model.terms import IRITerm, LiteralTerm, SelectResult
from navqa.online.confidence import assess

R = "http://example.org/navqa/rail#"
OBO = "http://purl.obolibrary.org/obo/"
XSD = "http://www.w3.org/2001/XMLSchema#"
ROWS = SelectResult(("name",), ((LiteralTerm("Aster Coast Trains"),),))
EMPTY = SelectResult(("name",), ())
Q = "Which company currently operates the Aster Coast Line?"
SPARQL = (f'PREFIX rail: <{R}>\nSELECT DISTINCT ?name WHERE {{ ?c a rail:Company . '
          '?s rail:operatedBy ?c ; rail:runsOnLine ?l . ?l rail:name "Aster Coast Line" . '
          '?c rail:name ?name }')


def _events(*values: ValueMention, grounded: tuple[ValueGrounding, ...] = (),
            ungrounded: tuple[UngroundedValue, ...] = (), cues: QuestionCues | None = None,
            phrase: str = "company", rerank: tuple[float, float] = (1.2, 0.8),
            classes: tuple[float, float] = (0.61, 0.40)) -> list[Event]:
    return [
        MentionsExtracted(mentions=Mentions(("company",), ("operates",), values,
                                            cues or QuestionCues(wh="which")),
                          method="offline"),
        Linked(classes=(ScoredTerm(R + "Company", classes[0], "company"),
                        ScoredTerm(R + "Manufacturer", classes[1], "manufacturer")),
               properties=(ScoredTerm(R + "operatedBy", 0.49, "operated by"),
                           ScoredTerm(R + "headquarteredIn", 0.38, "headquartered in"))),
        AnswerTypePredicted(kind=AnswerKind.ENTITY, cls=R + "Company", label=phrase,
                            method="offline"),
        ValuesGrounded(groundings=grounded, ungrounded=ungrounded),
        SubgraphsReranked(scores=(ScoredTerm(R + "Company", rerank[0], "company"),
                                  ScoredTerm(R + "Manufacturer", rerank[1], "manufacturer")),
                          chosen=R + "Company", method="bi-encoder"),
    ]


ASTER = ValueMention("Aster Coast Line")
ASTER_FOUND = ValueGrounding("Aster Coast Line", R + "Line", R + "name", "Aster Coast Line")


def test_a_clean_answer_is_high_with_nothing_unplaced_and_its_alternatives() -> None:
    a = assess(Q, _events(ASTER, grounded=(ASTER_FOUND,)), sparql=SPARQL, result=ROWS,
               error=None)
    assert a.confidence.level is ConfidenceLevel.HIGH and a.confidence.score == 1.0
    assert a.confidence.reasons == () and a.unplaced == ()
    # the classes and properties the query does not use, and the subgraph not chosen
    assert [(x.kind, x.iri) for x in a.alternatives] == [
        (AlternativeKind.CLASS, R + "Manufacturer"),
        (AlternativeKind.PROPERTY, R + "headquarteredIn"),
        (AlternativeKind.SUBGRAPH, R + "Manufacturer")]
    assert a.alternatives[0].margin == 0.21 and a.alternatives[2].margin == 0.4


def test_an_answer_that_only_restates_a_value_of_the_question_is_low() -> None:
    # "Which company operates the Aster Coast Line?" answered by the line's own name, as
    # stored ("ASTER COAST LINE"), twice: the answer says nothing the question did not
    upper = ValueGrounding("Aster Coast Line", R + "Line", R + "name", "ASTER COAST LINE")
    sparql = SPARQL.replace("Aster Coast Line", "ASTER COAST LINE")
    rows = SelectResult(("name",), ((LiteralTerm("ASTER COAST LINE"),),
                                    (LiteralTerm("aster coast line"),)))
    a = assess(Q, _events(ASTER, grounded=(upper,)), sparql=sparql, result=rows, error=None)
    [r] = a.confidence.reasons
    assert r.kind is ConfidenceReason.RESTATED_ANSWER and "'Aster Coast Line'" in r.text
    assert a.confidence.level is ConfidenceLevel.LOW and a.confidence.score == 0.5
    # one cell that says something else, an entity (an IRI), or a number the question
    # also states (a count is no restatement) keeps the answer high
    for cells in ((LiteralTerm("ASTER COAST LINE"), LiteralTerm("Aster Coast Trains")),
                  (LiteralTerm("ASTER COAST LINE"), IRITerm(R + "line/7"))):
        mixed = SelectResult(("name",), tuple((c,) for c in cells))
        b = assess(Q, _events(ASTER, grounded=(upper,)), sparql=sparql, result=mixed,
                   error=None)
        assert b.confidence.level is ConfidenceLevel.HIGH, cells
    # an entity answer (navqa.model.answers): the line's IRI beside its restated name is
    # still a restatement
    entity = SelectResult(("line", "name"), ((IRITerm(R + "line/7"),
                                              LiteralTerm("ASTER COAST LINE")),))
    d = assess(Q, _events(ASTER, grounded=(upper,)), sparql=sparql, result=entity, error=None)
    assert d.confidence.level is ConfidenceLevel.LOW
    three = SelectResult(("n",), ((LiteralTerm("3", XSD + "integer"),),))
    c = assess("Which lines have 3 stops?", _events(ValueMention("3", "number")),
               sparql="SELECT ?n WHERE { ?l <urn:stops> 3 . BIND(3 AS ?n) }", result=three,
               error=None)
    assert ConfidenceReason.RESTATED_ANSWER not in [x.kind for x in c.confidence.reasons]


def test_a_kept_value_not_in_the_data_is_placed_but_not_found() -> None:
    q = "Which company operates the Zebra Moon Line?"
    zebra = ValueMention("Zebra Moon Line")
    miss = UngroundedValue("Zebra Moon Line", ("Zebra Coast Line",), R + "name")
    sparql = SPARQL.replace("Aster Coast Line", "Zebra Moon Line")
    a = assess(q, _events(zebra, ungrounded=(miss,)), sparql=sparql, result=EMPTY, error=None)
    [p] = a.unplaced
    assert (p.text, p.kind, p.why) == ("Zebra Moon Line", PartKind.VALUE,
                                       UnplacedWhy.NOT_IN_DATA)
    assert p.span == (27, 42) and q[27:42] == "Zebra Moon Line"
    assert p.nearest == ("Zebra Coast Line",)
    kinds = [r.kind for r in a.confidence.reasons]
    assert kinds == [ConfidenceReason.EMPTY_RESULT, ConfidenceReason.VALUE_NOT_FOUND]
    assert a.confidence.level is ConfidenceLevel.LOW and a.confidence.score < 0.5


def test_a_value_neither_found_nor_used_is_reported_not_dropped() -> None:
    nor = ValueMention("Norwegian")
    miss = UngroundedValue("Norwegian", (), None, kept=False)
    a = assess("Which Norwegian company operates lines?",
               _events(nor, ungrounded=(miss,)), sparql=SPARQL, result=ROWS, error=None)
    [p] = a.unplaced
    assert (p.text, p.why) == ("Norwegian", UnplacedWhy.NOT_GROUNDED)
    assert a.confidence.level is ConfidenceLevel.LOW
    assert "not found in the data" in a.confidence.reasons[0].text


def test_a_grounded_value_the_query_does_not_use_is_unplaced() -> None:
    a = assess(Q, _events(ASTER, grounded=(ASTER_FOUND,)),
               sparql=SPARQL.replace("Aster Coast Line", "Other Line"), result=ROWS,
               error=None)
    [p] = a.unplaced
    assert (p.kind, p.why) == (PartKind.VALUE, UnplacedWhy.NOT_IN_QUERY)
    assert [r.kind for r in a.confidence.reasons] == [ConfidenceReason.UNPLACED_VALUE]


def test_a_comparison_is_placed_only_by_a_filter_on_that_number() -> None:
    more = ValueMention("300", kind="number", comparator=">")
    q = "Which lines are longer than 300 km?"
    base = f"PREFIX rail: <{R}>\nSELECT ?l WHERE {{ ?l a rail:Line ; rail:lengthKm ?k "
    ev = _events(more, phrase="lines")
    ok = assess(q, ev, sparql=base + "FILTER(?k > 300.0) }", result=ROWS, error=None)
    assert ok.unplaced == ()
    unfiltered = assess(q, ev, sparql=base + '; rail:code "300" }', result=ROWS, error=None)
    assert [(p.text, p.kind) for p in unfiltered.unplaced] == [("> 300", PartKind.CONSTRAINT)]
    # 3000 is another number: the value itself is not in the query
    other = assess(q, ev, sparql=base + "FILTER(?k > 3000) }", result=ROWS, error=None)
    assert [(p.kind, p.why) for p in other.unplaced] == [(PartKind.VALUE,
                                                          UnplacedWhy.NOT_IN_QUERY)]


def test_a_superlative_the_query_does_not_order_by_is_unplaced() -> None:
    cues = QuestionCues(wh="which", superlative="max", superlative_word="longest")
    q = "Which line is the longest?"
    plain = f"PREFIX rail: <{R}>\nSELECT ?l WHERE {{ ?l a rail:Line ; rail:lengthKm ?k }}"
    a = assess(q, _events(cues=cues, phrase="line"), sparql=plain, result=ROWS, error=None)
    [p] = a.unplaced
    assert (p.text, p.kind, p.span) == ("longest", PartKind.CONSTRAINT, (18, 25))
    assert a.confidence.level is ConfidenceLevel.LOW
    ordered = plain[:-1] + "} ORDER BY DESC(?k) LIMIT 1"
    assert assess(q, _events(cues=cues, phrase="line"), sparql=ordered, result=ROWS,
                  error=None).unplaced == ()


def test_the_answer_type_phrase_is_placed_through_the_terms_labels() -> None:
    q = "How many genes are there?"
    sparql = (f"PREFIX obo: <{OBO}>\nSELECT (COUNT(DISTINCT ?g) AS ?n) "
              "WHERE { ?g a obo:SO_0000704 }")
    ev = _events(phrase="genes")
    labelled = assess(q, ev, sparql=sparql, result=ROWS, error=None,
                      label=lambda iri: "gene" if iri.endswith("SO_0000704") else "")
    assert labelled.unplaced == ()
    opaque = assess(q, ev, sparql=sparql, result=ROWS, error=None, label=lambda iri: "")
    [p] = opaque.unplaced
    assert (p.text, p.kind, p.why) == ("genes", PartKind.CLASS, UnplacedWhy.NOT_IN_QUERY)
    assert opaque.confidence.level is ConfidenceLevel.MEDIUM


def test_an_error_has_no_confidence_at_all() -> None:
    a = assess(Q, _events(ASTER), sparql=None, result=None, error="refused: unmapped")
    assert a.confidence.level is ConfidenceLevel.NONE and a.confidence.score == 0.0
    assert a.confidence.reasons[0].kind is ConfidenceReason.NO_RESULT
    assert a.confidence.reasons[0].text == "refused: unmapped"
    # the value is still reported: the query that would place it was never run
    assert [(p.text, p.why) for p in a.unplaced] == [("Aster Coast Line",
                                                      UnplacedWhy.NOT_IN_QUERY)]


def test_repairs_toss_ups_and_cost_warnings_make_an_answer_medium() -> None:
    ev = _events(ASTER, grounded=(ASTER_FOUND,), rerank=(1.2, 1.19), classes=(0.5, 0.49))
    ev += [QueryChecked(sparql=SPARQL, ok=True, repaired=True),
           QueryCostChecked(sparql=SPARQL, verdict="costly", summary="estimate 9e9 > 1e7")]
    a = assess(Q, ev, sparql=SPARQL, result=ROWS, error=None)
    assert a.confidence.level is ConfidenceLevel.MEDIUM
    assert [r.kind for r in a.confidence.reasons] == [
        ConfidenceReason.QUERY_REPAIRED, ConfidenceReason.COSTLY_QUERY,
        ConfidenceReason.CLOSE_SUBGRAPHS, ConfidenceReason.CLOSE_CLASSES]
    assert a.confidence.score == 0.4
    assert a.alternatives[-1] == Alternative(AlternativeKind.SUBGRAPH, R + "Manufacturer",
                                             1.19, 0.01, "manufacturer")


def test_a_costly_draft_replaced_by_a_cheaper_query_does_not_lower_confidence() -> None:
    draft = SPARQL.replace("?c rail:name ?name", "?c rail:legalName ?name")
    ev = _events(ASTER, grounded=(ASTER_FOUND,))
    ev += [QueryChecked(sparql=draft, ok=True),
           QueryCostChecked(sparql=draft, verdict="costly", summary="estimate 9e9 > 1e7"),
           QueryCostChecked(sparql=SPARQL, verdict="ok", summary="estimate 2e3")]
    a = assess(Q, ev, sparql=SPARQL, result=ROWS, error=None)
    assert ConfidenceReason.COSTLY_QUERY not in [r.kind for r in a.confidence.reasons]
    # ... but the same costly estimate on the query that ran does
    b = assess(Q, ev, sparql=draft, result=ROWS, error=None)
    assert ConfidenceReason.COSTLY_QUERY in [r.kind for r in b.confidence.reasons]


def test_the_json_form_round_trips() -> None:
    zebra = ValueMention("Zebra Moon Line")
    miss = UngroundedValue("Zebra Moon Line", ("Zebra Coast Line",), R + "name")
    sparql = SPARQL.replace("Aster Coast Line", "Zebra Moon Line")
    a = assess(Q, _events(zebra, ungrounded=(miss,)), sparql=sparql, result=EMPTY,
               error=None)
    answer = Answer(question=Q, sparql=sparql, result=EMPTY, confidence=a.confidence,
                    unplaced=a.unplaced, alternatives=a.alternatives)
    data = json.loads(json.dumps(answer_json(answer)))
    assert data["confidence"]["level"] == "low"
    assert all(isinstance(r, str) for r in data["confidence"]["reasons"])  # the web page
    assert data["unplaced"][0]["why"] == "not-in-data"
    assert assessment_from_json(data) == (a.confidence, a.unplaced, a.alternatives)
