"""Counting shapes of the offline synthesizer (:mod:`navqa.online.synthesis.counting`).

* a ranking by a count ("Which author wrote the most books?") → GROUP BY the answer,
  ORDER BY the count of the counted class, LIMIT n; the count projected only when asked;
* a bound on a count ("… more than 2 different books") → HAVING, and the number is no
  FILTER on a data property;
* a count per year ("… in each year since 1990") → GROUP BY the year of a date.

A phrase naming a quantity ("the most pages", "more than 300 pages") keeps the ordering /
filter on the data property. Structure is asserted on the parsed query (rdflib algebra)
over a three-class VKG built here; one question per shape is then answered end to end on
the served demo VKG, against answers computed by SQL on its database.
"""

from __future__ import annotations

from typing import Any

import pytest
from rdflib.term import URIRef, Variable
from synth_vkgs import algebra as _algebra
from synth_vkgs import books_vkg, index_vkg, label_synth
from synth_vkgs import nodes as _nodes

from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions
from navqa.online.reading.question_shape import Direction, parse_shape
from navqa.online.synthesis.plan import Plan

EX = "http://example.org/counting#"
XSD = "http://www.w3.org/2001/XMLSchema#"

ONTOLOGY, MAPPING = books_vkg(EX)


# -- helpers --------------------------------------------------------------------------------


def _named(text: str, name: str) -> list[Any]:
    return [n for n in _nodes(_algebra(text)) if n.name == name]


def _triples(text: str) -> set[tuple[Any, Any, Any]]:
    out: set[tuple[Any, Any, Any]] = set()
    for n in _named(text, "BGP"):
        out |= set(n["triples"])
    return out


def _with(text: str, prop: str) -> list[tuple[Any, Any, Any]]:
    return [t for t in _triples(text) if t[1] == URIRef(EX + prop)]


def _projected(text: str) -> list[str]:
    return [str(v) for v in _algebra(text)["PV"]]


def _shape(q: str) -> Any:
    return parse_shape(q, extract_mentions(q).cues)


@pytest.fixture(scope="module")
def ctx(navqa_config, embedder, tmp_path_factory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("counting"), "counting",
                     ONTOLOGY, MAPPING)


def _synth(ctx: SchemaContext, question: str, root: str) -> tuple[str, Plan]:
    mentions = extract_mentions(question)
    return label_synth(ctx)(question, mentions, link(ctx, question, mentions), [],
                                   Subgraph(EX + root))


def _count_aggregates(text: str) -> list[Any]:
    return _named(text, "Aggregate_Count")


# -- the question's shape -------------------------------------------------------------------


def test_the_most_of_a_plural_is_a_ranking_by_a_count() -> None:
    r = _shape("Which author has written the most books?").count_rank
    assert r is not None and (r.phrase, r.direction, r.limit, r.show_count) == (
        "books", Direction.DESC, 1, False)
    r = _shape("Which three authors wrote the largest number of books, and how many?"
               ).count_rank
    assert r is not None and (r.phrase, r.limit, r.show_count) == ("books", 3, True)
    r = _shape("Which branch holds the fewest books? Give the top two with their counts."
               ).count_rank
    assert r is not None and (r.direction, r.limit, r.show_count) == (Direction.ASC, 2, True)


@pytest.mark.parametrize("question", [
    "Which river is the most polluted?",            # an adjective, no plural noun
    "Which field produced the most oil in 2012?",   # a mass noun: a quantity
    "Which authors wrote at least ten books?",      # a comparative, not a superlative
    "How many authors wrote the most books?",       # a count question
])
def test_no_ranking_by_a_count(question: str) -> None:
    assert _shape(question).count_rank is None


def test_a_comparative_before_a_number_of_things_bounds_a_count() -> None:
    b = _shape("Which authors wrote more than 60 different books?").count_bound
    assert b is not None and (b.phrase, b.comparator, b.value, b.distinct, b.show_count) == (
        "books", ">", 60, True, False)
    b = _shape("Which authors wrote at least ten books, and how many?").count_bound
    assert b is not None and (b.comparator, b.value, b.number_text, b.show_count) == (
        ">=", 10, "ten", True)
    b = _shape("Which authors wrote fewer than 3 books?").count_bound
    assert b is not None and (b.comparator, b.value) == ("<", 3)
    assert _shape("Which cities have more than 100,000 inhabitants?").count_bound is None


def test_each_year_is_a_count_per_year_not_a_group_named_year() -> None:
    s = _shape("How many books were published in each year since 1990?")
    assert s.per_year and s.per_group is None
    assert not _shape("Which books were published in 1990?").per_year
    assert _shape("How many books does each author have?").per_year is False


# -- the synthesizer ------------------------------------------------------------------------


def test_synth_ranks_the_answers_by_the_count_of_a_class(ctx) -> None:
    sparql, _ = _synth(ctx, "Which author has written the most books?", "Author")
    [(book, _, author)] = _with(sparql, "writtenBy")
    [(_, _, name)] = [t for t in _with(sparql, "name") if t[0] == author]
    [group] = _named(sparql, "Group")
    assert list(group["expr"]) == [name]
    [order] = _named(sparql, "OrderBy")
    assert order["expr"][0]["order"] == "DESC"
    [agg] = _count_aggregates(sparql)
    assert agg["vars"] == book and agg["distinct"] == "DISTINCT"
    [sl] = _named(sparql, "Slice")
    assert sl["length"] == 1
    assert _projected(sparql) == [str(name)], sparql  # the count was not asked for
    assert not _with(sparql, "pages"), sparql  # not "the book with the most pages"


def test_synth_projects_the_count_of_a_bounded_ranking_when_asked(ctx) -> None:
    sparql, _ = _synth(ctx, "Which three authors wrote the largest number of books, and in "
                            "how many?", "Author")
    [(_, _, author)] = _with(sparql, "writtenBy")
    [(_, _, name)] = [t for t in _with(sparql, "name") if t[0] == author]
    assert _projected(sparql) == [str(name), "count"], sparql
    [sl] = _named(sparql, "Slice")
    assert sl["length"] == 3
    [order] = _named(sparql, "OrderBy")
    assert order["expr"][0]["order"] == "DESC"


def test_synth_the_most_of_a_quantity_still_orders_by_the_property(ctx) -> None:
    sparql, _ = _synth(ctx, "Which book has the most pages?", "Book")
    [(_, _, pages)] = _with(sparql, "pages")
    [order] = _named(sparql, "OrderBy")
    assert order["expr"][0]["expr"] == pages
    assert not _named(sparql, "Group") and not _count_aggregates(sparql), sparql


def test_synth_bounds_a_count_with_having_and_no_filter(ctx) -> None:
    sparql, _ = _synth(ctx, "Which authors have written more than 2 different books?",
                       "Author")
    [(book, _, author)] = _with(sparql, "writtenBy")
    [(_, _, name)] = [t for t in _with(sparql, "name") if t[0] == author]
    [group] = _named(sparql, "Group")
    assert list(group["expr"]) == [name]
    [having] = [f for f in _named(sparql, "Filter") if _named_in(f["p"], "AggregateJoin")]
    assert having["expr"]["op"] == ">" and int(having["expr"]["other"]) == 2
    # the bound is on the count, not a FILTER on a data property of the plan
    assert not _with(sparql, "pages"), sparql
    assert [f for f in _named(sparql, "Filter")] == [having], sparql
    assert _projected(sparql) == [str(name)]
    [agg] = _count_aggregates(sparql)
    assert agg["vars"] == book


def _named_in(alg: Any, name: str) -> bool:
    return name in [n.name for n in _nodes(alg)]


def test_synth_bounds_a_count_and_projects_it_when_asked(ctx) -> None:
    sparql, _ = _synth(ctx, "Which authors wrote at least ten books, and how many?", "Author")
    [having] = [f for f in _named(sparql, "Filter") if _named_in(f["p"], "AggregateJoin")]
    assert having["expr"]["op"] == ">=" and int(having["expr"]["other"]) == 10
    assert len(_projected(sparql)) == 2 and _projected(sparql)[1] == "count", sparql


def test_synth_a_number_of_a_quantity_stays_a_filter(ctx) -> None:
    sparql, _ = _synth(ctx, "Which books have more than 300 pages?", "Book")
    [(_, _, pages)] = _with(sparql, "pages")
    [flt] = _named(sparql, "Filter")
    assert flt["expr"]["expr"] == pages and int(flt["expr"]["other"]) == 300
    assert not _named(sparql, "Group"), sparql


def test_synth_counts_per_year_of_a_date_keeping_the_year_filter(ctx) -> None:
    sparql, _ = _synth(ctx, "How many books were published in each year since 1990?", "Book")
    [(book, _, date)] = _with(sparql, "publicationDate")
    [group] = _named(sparql, "Group")
    assert list(group["expr"]) == [Variable("year")], sparql
    # the group key is bound to the year of the date
    assert any(getattr(e["expr"], "name", None) == "Builtin_YEAR" and e["expr"]["arg"] == date
               for e in _named(sparql, "Extend") if e["var"] == Variable("year")), sparql
    assert _projected(sparql) == ["year", "count"]
    [agg] = _count_aggregates(sparql)
    assert agg["vars"] == book
    filters = [f for f in _named(sparql, "Filter") if not _named_in(f["p"], "AggregateJoin")]
    assert filters and "1990-01-01" in str(filters[0]["expr"]), sparql
    assert not any(t[1] == URIRef(EX + "name") for t in _triples(sparql)), sparql


# -- end to end on the demo VKG, against SQL ------------------------------------------------



def _rows(result: Any) -> list[tuple[str, ...]]:
    return sorted(tuple(str(v) for v in row) for row in result.rows)


@pytest.mark.ontop
@pytest.mark.postgres
def test_demo_ranking_by_a_count_matches_sql(demo_pipeline, vkg) -> None:
    answer = demo_pipeline.ask("Which two cities have the most stations, and how many?")
    assert answer.error is None, answer.error
    sql = vkg("demo").sql(
        "SELECT c.name, count(DISTINCT s.station_code) FROM station s JOIN city c "
        "ON c.city_id = s.city_id GROUP BY c.name ORDER BY 2 DESC, 1 LIMIT 3")
    assert sql[1][1] != sql[2][1], "the fixture needs no tie at the bound"
    assert _rows(answer.result) == sorted((str(n), str(c)) for n, c in sql[:2]), answer.sparql


@pytest.mark.ontop
@pytest.mark.postgres
def test_demo_bound_on_a_count_matches_sql(demo_pipeline, vkg) -> None:
    answer = demo_pipeline.ask("Which cities have more than 2 different stations?")
    assert answer.error is None, answer.error
    sql = vkg("demo").sql(
        "SELECT c.name FROM station s JOIN city c ON c.city_id = s.city_id "
        "GROUP BY c.name HAVING count(DISTINCT s.station_code) > 2")
    assert sql, "the fixture needs an answer"
    assert _rows(answer.result) == sorted((str(n),) for (n,) in sql), answer.sparql


@pytest.mark.ontop
@pytest.mark.postgres
def test_demo_count_per_year_matches_sql(demo_pipeline, vkg) -> None:
    answer = demo_pipeline.ask("How many stations were opened in each year since 1990?")
    assert answer.error is None, answer.error
    sql = vkg("demo").sql(
        "SELECT extract(year FROM opened_on)::int, count(*) FROM station "
        "WHERE opened_on >= date '1990-01-01' GROUP BY 1")
    assert sql, "the fixture needs an answer"
    assert _rows(answer.result) == sorted((str(y), str(c)) for y, c in sql), answer.sparql
