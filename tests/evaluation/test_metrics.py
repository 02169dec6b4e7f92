"""Metric, breakdown and diagnostic definitions, on hand-computed examples.

Metrics: NaVQA §4.2 (bag F1, Acc, NR) and SAGA (set EM, empty-result rate).
Breakdowns: hops and features read from the gold query's algebra.
Diagnostics: grounding recall, filter reduction ratio, gold-property retention.
"""

from __future__ import annotations

import pytest

from navqa.errors import SparqlSyntaxError
from navqa.evaluation.diagnostics import grounding_of, summarize_grounding
from navqa.evaluation.metrics import canonical_row, canonical_term, score
from navqa.evaluation.shape import analyse_query, hop_bucket
from navqa.model.events import (
    Candidate,
    Linked,
    PropertiesJudged,
    ScoredTerm,
    SubgraphExpanded,
    SubgraphsReranked,
)
from navqa.model.graph import Edge
from navqa.model.terms import (
    AskResult,
    BNodeTerm,
    GraphResult,
    IRITerm,
    LiteralTerm,
    SelectResult,
)

XSD = "http://www.w3.org/2001/XMLSchema#"
EX = "http://example.org/"


def iri(x: str) -> IRITerm:
    return IRITerm(EX + x)


def lit(v: str, dt: str | None = None, lang: str | None = None) -> LiteralTerm:
    return LiteralTerm(v, datatype=XSD + dt if dt else None, lang=lang)


def sel(*rows: tuple[object, ...], variables: tuple[str, ...] | None = None) -> SelectResult:
    width = len(rows[0]) if rows else 1
    return SelectResult(variables=variables or tuple(f"v{i}" for i in range(width)),
                        rows=tuple(tuple(r) for r in rows))  # type: ignore[misc]


A, B, C, D, E = (iri(x) for x in "abcde")


# -- term equality -----------------------------------------------------------------------------


@pytest.mark.parametrize(("x", "y"), [
    (lit("5", "integer"), lit("5.0", "decimal")),
    (lit("5", "int"), lit("5", "integer")),
    (lit("05", "integer"), lit("5", "long")),
    (lit("10", "integer"), lit("1.0E1", "double")),
    (lit("0.30000000000000004", "double"), lit("0.3", "decimal")),
    (lit("-0.0", "decimal"), lit("0", "integer")),
    (lit("1", "boolean"), lit("true", "boolean")),
    (lit("abc"), lit("abc", "string")),
    (lit("chat", lang="EN"), lit("chat", lang="en")),
    (BNodeTerm("b1"), BNodeTerm("b7")),
])
def test_equal_terms(x: object, y: object) -> None:
    assert canonical_term(x) == canonical_term(y)  # type: ignore[arg-type]


@pytest.mark.parametrize(("x", "y"), [
    (lit("0.30000000000000004", "decimal"), lit("0.3", "decimal")),  # decimals are exact
    (lit("5", "integer"), lit("5")),                                  # number vs string
    (lit("2020-01-01", "date"), lit("2020-01-01")),                   # datatype matters
    (lit("chat", lang="en"), lit("chat")),
    (lit("chat", lang="en"), lit("chat", lang="fr")),
    (IRITerm(EX + "a"), lit(EX + "a")),
    (lit("abc", "integer"), lit("0", "integer")),                     # invalid lexical form
    (lit("true", "boolean"), lit("true")),
])
def test_different_terms(x: object, y: object) -> None:
    assert canonical_term(x) != canonical_term(y)  # type: ignore[arg-type]


def test_invalid_numeric_lexical_forms_compare_as_literals() -> None:
    assert canonical_term(lit("abc", "integer")) == ("lit", "abc", XSD + "integer", "")
    assert canonical_term(lit("5.5", "integer"))[0] == "lit"
    assert canonical_term(lit("INF", "double")) == canonical_term(lit("INF", "float"))


# -- rows and results ------------------------------------------------------------------------


def test_variable_order_is_ignored() -> None:
    gold = sel((A, lit("1", "integer")), variables=("s", "o"))
    pred = sel((lit("1.0", "decimal"), A), variables=("o", "s"))
    s = score(gold, pred)
    assert (s.precision, s.recall, s.f1, s.acc, s.em) == (1.0, 1.0, 1.0, True, True)


def test_unbound_is_absent() -> None:
    assert canonical_row((A, None)) == canonical_row((A,))
    gold = sel((A, None), (B, C), variables=("x", "y"))
    pred = sel((A,), variables=("x",))
    s = score(gold, pred)
    # {A} matches, {B, C} missing: P = 1/1, R = 1/2
    assert (s.precision, s.recall) == (1.0, 0.5)
    assert s.f1 == pytest.approx(2 / 3)


def test_duplicates_count_in_the_bag() -> None:
    gold = sel((A,), (A,), (B,))
    pred = sel((A,), (B,))
    s = score(gold, pred)
    # overlap = min(2,1) + min(1,1) = 2; P = 2/2, R = 2/3, F1 = 0.8
    assert (s.overlap, s.precision) == (2, 1.0)
    assert s.recall == pytest.approx(2 / 3)
    assert s.f1 == pytest.approx(0.8)
    assert not s.acc          # multisets differ
    assert s.em               # sets are equal (SAGA's EM ignores duplicates)


def test_extra_duplicates_in_the_prediction() -> None:
    s = score(sel((A,)), sel((A,), (A,), (A,)))
    assert (s.overlap, s.recall) == (1, 1.0)
    assert s.precision == pytest.approx(1 / 3)
    assert s.f1 == pytest.approx(0.5)
    assert (s.acc, s.em) == (False, True)


def test_partial_overlap_hand_computed() -> None:
    s = score(sel((A,), (B,), (C,), (D,)), sel((A,), (B,), (E,)))
    # overlap 2; P = 2/3; R = 2/4; F1 = 2PR/(P+R) = 4/7
    assert s.precision == pytest.approx(2 / 3)
    assert s.recall == pytest.approx(0.5)
    assert s.f1 == pytest.approx(4 / 7)
    assert (s.acc, s.em, s.nonempty) == (False, False, True)
    assert (s.gold_size, s.pred_size) == (4, 3)


def test_rows_are_multisets_of_terms() -> None:
    # (A, A) and (A,) are different rows; (A, B) equals (B, A)
    assert score(sel((A, A)), sel((A,), variables=("x",))).f1 == 0.0
    assert score(sel((A, B)), sel((B, A))).acc


def test_empty_vs_empty() -> None:
    s = score(sel(), sel())
    assert (s.precision, s.recall, s.f1, s.acc, s.em, s.nonempty) == (
        1.0, 1.0, 1.0, True, True, False)


def test_empty_vs_nonempty_scores_zero() -> None:
    s = score(sel(), sel((A,)))
    assert (s.precision, s.recall, s.f1, s.acc, s.em, s.nonempty) == (
        0.0, 0.0, 0.0, False, False, True)
    s = score(sel((A,)), sel())
    assert (s.f1, s.acc, s.em, s.nonempty) == (0.0, False, False, False)


def test_no_prediction_scores_zero() -> None:
    s = score(sel((A,)), None)
    assert (s.f1, s.acc, s.em, s.nonempty, s.gold_size) == (0.0, False, False, False, 1)


def test_ask_compares_booleans() -> None:
    assert score(AskResult(True), AskResult(True)).f1 == 1.0
    assert score(AskResult(False), AskResult(False)).acc
    s = score(AskResult(True), AskResult(False))
    assert (s.f1, s.acc, s.em) == (0.0, False, False)
    assert s.nonempty  # an ASK answer is never empty
    assert score(AskResult(True), sel((lit("true", "boolean"),))).f1 == 0.0
    assert score(sel((A,)), AskResult(True)).f1 == 0.0


def test_ordered_gold_compares_positions_for_acc_only() -> None:
    gold = sel((A,), (B,), (C,))
    swapped = sel((B,), (A,), (C,))
    s = score(gold, swapped, ordered=True)
    assert (s.f1, s.em, s.acc, s.ordered) == (1.0, True, False, True)
    assert score(gold, swapped).acc                       # without ORDER BY … LIMIT
    assert score(gold, sel((A,), (B,), (C,)), ordered=True).acc
    short = score(gold, sel((A,), (B,)), ordered=True)
    assert not short.acc
    assert short.f1 == pytest.approx(0.8)


def test_graph_results_are_bags_of_triples() -> None:
    t1 = (A, iri("p"), B)
    t2 = (B, iri("p"), C)
    gold = GraphResult(ntriples="", triples=(t1, t2))
    pred = GraphResult(ntriples="", triples=(t2,))
    s = score(gold, pred)
    assert (s.precision, s.recall) == (1.0, 0.5)


# -- hops --------------------------------------------------------------------------------------

P = "PREFIX : <http://example.org/> PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#> "


@pytest.mark.parametrize(("where", "joins"), [
    # one class and its attributes: no join
    ("?a a :A ; :name ?n ; :size 5 .", 0),
    # a join to a node that has attributes of its own
    ("?a :p ?b . ?b :name ?n .", 1),
    # an object variable seen nowhere else is a value, not an entity
    ("?a a :A ; :p ?b .", 0),
    # ... unless it is typed
    ("?a :p ?b . ?b a :B .", 1),
    # an IRI object is an entity
    ("?a :p :b1 .", 1),
    # chains add up
    ("?a :p ?b . ?b :q ?c . ?c :r ?d . ?d :name ?n .", 3),
    # a UNION counts its longest branch
    ("{ ?a :p ?b . ?b :q ?c . ?c :name ?n } UNION { ?a :r ?d . ?d :name ?n }", 2),
    # OPTIONAL and MINUS add
    ("?a :p ?b . ?b :name ?n . OPTIONAL { ?a :q ?c . ?c :name ?m }", 2),
    ("?a :p ?b . ?b :name ?n . MINUS { ?a :q ?c . ?c a :C }", 2),
    # FILTER NOT EXISTS adds too
    ("?a :p ?b . ?b :name ?n . FILTER NOT EXISTS { ?a :q :c1 }", 2),
    ("?a :p ?b . ?b :name ?n . FILTER NOT EXISTS { ?a :q ?c . ?c a :C . "
     "FILTER EXISTS { ?c :r :x } }", 3),
    # rdf:type and subClassOf paths are never joins
    ("?a a/rdfs:subClassOf* :A ; :name ?n .", 0),
    # a sequence path counts its steps, the last one only if it lands on an entity
    ("?a :p/:q ?c . ?c :name ?n .", 2),
    ("?a :p/:name ?n .", 1),
    # an inverse step, an alternative
    ("?a ^:p ?b . ?b :name ?n .", 1),
    ("?a (:p|:q/:r) ?b . ?b :name ?n .", 2),
    # variable predicates are not joins
    ("?a ?p ?b . ?b :name ?n .", 0),
])
def test_joins(where: str, joins: int) -> None:
    shape = analyse_query(P + "SELECT * WHERE { " + where + " }")
    assert shape.joins == joins
    assert shape.hops == max(1, joins)


def test_ontology_knowledge_refines_joins() -> None:
    q = P + "SELECT * WHERE { ?a a :A ; :operatedBy ?op ; :label ?l . }"
    assert analyse_query(q).joins == 0
    assert analyse_query(q, object_properties={EX + "operatedBy"}).joins == 1
    q2 = P + "SELECT * WHERE { ?a :weird ?b . ?b :name ?n }"
    assert analyse_query(q2, data_properties={EX + "weird"}).joins == 0


def test_hop_buckets() -> None:
    assert [hop_bucket(h) for h in (0, 1, 2, 3, 7)] == ["1", "1", "2", "3+", "3+"]


# -- features --------------------------------------------------------------------------------


@pytest.mark.parametrize(("query", "features", "ordered"), [
    ("SELECT ?a WHERE { ?a a :A }", set(), False),
    ("SELECT ?a WHERE { ?a :n ?n FILTER(?n > 3) }", {"filter"}, False),
    ("SELECT ?a WHERE { ?a a :A OPTIONAL { ?a :n ?n } }", {"optional"}, False),
    ("SELECT ?a WHERE { ?a a :A OPTIONAL { ?a :n ?n FILTER(?n > 1) } }",
     {"optional", "filter"}, False),
    ("SELECT ?a WHERE { { ?a a :A } UNION { ?a a :B } }", {"union"}, False),
    ("SELECT ?a WHERE { ?a a :A MINUS { ?a a :B } }", {"minus"}, False),
    ("SELECT (COUNT(?a) AS ?n) WHERE { ?a a :A }", {"aggregation"}, False),
    ("SELECT ?c (COUNT(?a) AS ?n) WHERE { ?a :c ?c } GROUP BY ?c HAVING (COUNT(?a) > 2)",
     {"aggregation", "filter"}, False),
    ("SELECT ?a WHERE { ?a :n ?n } ORDER BY ?n", {"order"}, False),
    ("SELECT ?a WHERE { ?a :n ?n } LIMIT 5", {"limit"}, False),
    ("SELECT ?a WHERE { ?a :n ?n } ORDER BY DESC(?n) LIMIT 1", {"order", "limit"}, True),
    ("SELECT DISTINCT ?a WHERE { ?a :n ?n } ORDER BY DESC(?n) LIMIT 1 OFFSET 2",
     {"order", "limit"}, True),
    ("SELECT ?a WHERE { { SELECT ?a WHERE { ?a :n ?n } ORDER BY ?n LIMIT 1 } }",
     {"subquery", "order", "limit"}, False),
    ("ASK { ?a a :A }", {"ask"}, False),
])
def test_features(query: str, features: set[str], ordered: bool) -> None:
    shape = analyse_query(P + query)
    assert set(shape.features) == features
    assert shape.ordered is ordered


def test_gold_terms() -> None:
    shape = analyse_query(P + "SELECT ?n WHERE { ?s a :Station ; :in ?c ; :name ?n . "
                              "?c a :City . ?x :p/:q ?s }")
    assert shape.classes == {EX + "Station", EX + "City"}
    assert shape.properties == {EX + p for p in ("in", "name", "p", "q")}
    assert shape.typed_properties == {
        (EX + "Station", EX + "in", "out"), (EX + "Station", EX + "name", "out"),
        (EX + "City", EX + "in", "in"),
    }
    assert shape.form == "SELECT"


def test_unparsable_query() -> None:
    with pytest.raises(SparqlSyntaxError):
        analyse_query("SELECT ?a WHERE { ?a :p }")


# -- grounding diagnostics -----------------------------------------------------------------------


def _judged(node: str, shown: tuple[str, ...], removed: tuple[str, ...], available: int
            ) -> PropertiesJudged:
    return PropertiesJudged(
        root=EX + "Station", node=node, depth=0,
        candidates=tuple(Candidate(EX + p, "out", EX + "City", 0.5) for p in shown),
        selected=(), filtered_out=tuple(EX + p for p in removed), available=available,
        method="offline")


def test_grounding_diagnostics() -> None:
    shape = analyse_query(P + "SELECT ?n WHERE { ?s a :Station ; :in ?c ; :name ?n . "
                              "?c a :City ; :pop ?p }")
    events = [
        Linked(classes=(ScoredTerm(EX + "Station", 0.9), ScoredTerm(EX + "Line", 0.5)),
               properties=(ScoredTerm(EX + "name", 0.8),)),
        SubgraphExpanded(root=EX + "Line", edges=(Edge(EX + "Line", EX + "via", EX + "Station"),),
                         depth=1),
        SubgraphExpanded(root=EX + "Station", depth=1, edges=(
            Edge(EX + "Station", EX + "in", EX + "City"),
            Edge(EX + "Station", EX + "name", XSD + "string", is_data=True),
        )),
        SubgraphsReranked(scores=(), chosen=EX + "Station", method="bi-encoder"),
        _judged(EX + "Station", ("in", "name", "opened"), ("pop",), 10),
        _judged(EX + "City", ("name",), ("pop", "in"), 6),
    ]
    g = grounding_of(shape, events)
    assert g.linked_class_recall == 0.5            # Station of {Station, City}
    assert g.linked_property_recall == pytest.approx(1 / 3)   # name of {in, name, pop}
    assert g.subgraph_class_recall == 1.0          # Station, City (Line's subgraph not chosen)
    assert g.subgraph_property_recall == pytest.approx(2 / 3)
    assert g.listing_property_recall == pytest.approx(2 / 3)  # in, name listed; pop never
    assert (g.subgraph_edges, g.subgraph_classes) == (2, 2)
    assert (g.lookups, g.shown, g.available) == (2, 4, 16)
    # gold pairs: (Station,in) (Station,name) (City,in) (City,pop); at City, in and pop
    # were filtered out
    assert (g.examined, g.filtered_out) == (4, 2)
    assert g.filtered_gold == (f"{EX}City {EX}in", f"{EX}City {EX}pop")

    out = summarize_grounding([{"grounding": g.to_json()}, {"grounding": None}])
    assert out["reduction"] == pytest.approx(4 / 16)
    assert out["retention"] == pytest.approx(0.5)
    assert out["grounding"]["linked_class_recall"] == 0.5
    assert out["grounding"]["linked_class_recall_n"] == 1


def test_grounding_without_events_is_null() -> None:
    shape = analyse_query(P + "SELECT ?a WHERE { ?a a :A ; :p ?b }")
    g = grounding_of(shape, [])
    assert g.linked_class_recall is None and g.subgraph_edges is None
    out = summarize_grounding([{"grounding": g.to_json()}])
    assert out["retention"] is None and out["reduction"] is None


def test_unexpanded_rerank_falls_back_to_the_union() -> None:
    shape = analyse_query(P + "SELECT ?a WHERE { ?a a :A ; :p ?b . ?b a :B }")
    events = [SubgraphExpanded(root=EX + "A", edges=(Edge(EX + "A", EX + "p", EX + "B"),),
                               depth=1),
              SubgraphExpanded(root=EX + "C", edges=(Edge(EX + "C", EX + "q", EX + "D"),),
                               depth=1)]
    g = grounding_of(shape, events)
    assert g.subgraph_class_recall == 1.0 and g.subgraph_edges == 2
