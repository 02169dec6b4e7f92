"""The offline synthesizer's shapes, each on a small query graph built here.

Three layers, each pinned on its own:

* :mod:`navqa.online.synthesis.plan` renders every shape of the grammar (projection list,
  ordering with and without a bound, GROUP BY with a count per group, HAVING, OPTIONAL,
  UNION, MINUS, date ranges, ASK) — checked through rdflib's parser and algebra;
* :mod:`navqa.online.reading.question_shape` reads the shape from a question's structure;
* :class:`~navqa.online.synthesis.offline.OfflineSynthesizer` turns a question into that
  shape over a three-class VKG (books, authors, branches) indexed in a temporary folder.

Structure is asserted on the parsed query, never on its text.
"""

from __future__ import annotations

from typing import Any

import pytest
from rdflib.plugins.sparql import prepareQuery
from rdflib.term import Literal, URIRef, Variable
from synth_vkgs import algebra as _algebra
from synth_vkgs import books_vkg, index_vkg, label_synth
from synth_vkgs import nodes as _nodes

from navqa.model.events import ValueMention
from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.lexicon import LEXICON, Phenomenon, words
from navqa.online.reading.mentions import extract_mentions
from navqa.online.reading.question_shape import Direction, parse_shape
from navqa.online.synthesis.plan import OrderKey, Plan, render, year_range
from navqa.online.values import GroundedValue, UnmatchedValue

EX = "http://example.org/shapes#"
XSD = "http://www.w3.org/2001/XMLSchema#"
PREFIXES = {"ex": EX}


# -- helpers --------------------------------------------------------------------------------


def _names(text: str) -> list[str]:
    return [n.name for n in _nodes(_algebra(text))]


def _triples(text: str) -> set[tuple[Any, Any, Any]]:
    out: set[tuple[Any, Any, Any]] = set()
    for n in _nodes(_algebra(text)):
        if n.name == "BGP":
            out |= set(n["triples"])
    return out


def _projected(text: str) -> list[str]:
    return [str(v) for v in _algebra(text)["PV"]]


def _triples_with(text: str, prop: str) -> list[tuple[Any, Any, Any]]:
    return [t for t in _triples(text) if t[1] == URIRef(EX + prop)]


# -- the grammar: rendering -----------------------------------------------------------------


def _plan(**kw: Any) -> Plan:
    p = Plan(**kw)
    p.add("?book", "a", "ex:Book")
    p.add("?book", "ex:title", "?title")
    return p


def test_a_projection_list_projects_every_column() -> None:
    p = _plan(select=["?title", "?pages"])
    p.add("?book", "ex:pages", "?pages")
    assert _projected(render(PREFIXES, p)) == ["title", "pages"]


def test_an_ordering_without_a_bound_has_no_limit() -> None:
    p = _plan(select=["?title"], order=[OrderKey("?title", Direction.DESC)])
    names = _names(render(PREFIXES, p))
    assert "OrderBy" in names and "Slice" not in names


def test_an_ordering_by_an_unprojected_key_is_not_distinct() -> None:
    """Ontop 5.1.2 rejects DISTINCT with an ORDER BY key outside the projection."""
    p = _plan(select=["?title"], order=[OrderKey("?pages", Direction.DESC)], limit=3)
    p.add("?book", "ex:pages", "?pages")
    assert "Distinct" not in _names(render(PREFIXES, p))
    p.select.append("?pages")
    assert "Distinct" in _names(render(PREFIXES, p))


def test_an_ordering_with_a_bound_is_sliced() -> None:
    p = _plan(select=["?title"], order=[OrderKey("?title", Direction.ASC)], limit=3)
    alg = _algebra(render(PREFIXES, p))
    [sl] = [n for n in _nodes(alg) if n.name == "Slice"]
    assert sl["length"] == 3
    assert "OrderBy" in [n.name for n in _nodes(alg)]


def test_a_count_per_group_groups_by_the_group_variable() -> None:
    p = _plan(select=["?authorName", "(COUNT(DISTINCT ?book) AS ?count)"],
              group_by=["?authorName"], distinct=False)
    p.add("?book", "ex:writtenBy", "?author")
    p.add("?author", "ex:name", "?authorName")
    alg = _algebra(render(PREFIXES, p))
    [group] = [n for n in _nodes(alg) if n.name == "Group"]
    assert list(group["expr"]) == [Variable("authorName")]
    aggs = [n for n in _nodes(alg) if n.name == "Aggregate_Count"]
    assert aggs and aggs[0]["distinct"] == "DISTINCT"


def test_having_filters_the_groups() -> None:
    p = _plan(select=["?authorName", "(COUNT(DISTINCT ?book) AS ?count)"],
              group_by=["?authorName"], having=["COUNT(DISTINCT ?book) > 2"], distinct=False)
    p.add("?book", "ex:writtenBy", "?author")
    p.add("?author", "ex:name", "?authorName")
    alg = _algebra(render(PREFIXES, p))
    # HAVING is a filter over the aggregate join, above the group
    filters = [n for n in _nodes(alg) if n.name == "Filter"]
    assert any("AggregateJoin" in [m.name for m in _nodes(f["p"])] for f in filters)


def test_optional_union_and_minus_blocks() -> None:
    p = _plan(select=["?title"])
    p.optionals.append([("?book", "ex:pages", "?pages")])
    p.filters.append("!BOUND(?pages)")
    p.unions.append([[("?book", "ex:heldAt", "ex:central")], [("?book", "ex:heldAt",
                                                               "ex:harbour")]])
    p.minus.append([("?book", "ex:writtenBy", "ex:anon")])
    names = _names(render(PREFIXES, p))
    assert {"LeftJoin", "Union", "Minus", "Filter"} <= set(names)


def test_a_year_against_a_date_is_a_range_of_dates() -> None:
    assert year_range("?d", 1990, "=") == [
        f'?d >= "1990-01-01"^^<{XSD}date>', f'?d < "1991-01-01"^^<{XSD}date>']
    assert year_range("?d", 1990, "<=") == [f'?d < "1991-01-01"^^<{XSD}date>']
    assert year_range("?d", 1990, ">") == [f'?d >= "1991-01-01"^^<{XSD}date>']
    p = _plan(select=["?title"])
    p.add("?book", "ex:published", "?d")
    p.filters += year_range("?d", 1990, "decade")
    consts = {n for node in _nodes(_algebra(render(PREFIXES, p))) for n in node.values()
              if isinstance(n, Literal)}
    assert {str(c) for c in consts} >= {"1990-01-01", "2000-01-01"}


def test_ask_is_an_ask_query() -> None:
    p = _plan(ask=True)
    assert prepareQuery(render(PREFIXES, p)).algebra.name == "AskQuery"


# -- the question's shape -------------------------------------------------------------------


def _shape(q: str) -> Any:
    return parse_shape(q, extract_mentions(q).cues)


def test_a_superlative_is_an_ordering_bounded_to_one() -> None:
    o = _shape("Which river is the longest?").ordering
    assert o is not None and o.limit == 1 and o.direction is Direction.DESC


@pytest.mark.parametrize(("question", "direction"), [
    ("List the rivers from longest to shortest", Direction.DESC),
    ("List the rivers sorted by length", Direction.ASC),
    ("List the rivers ordered by length in descending order", Direction.DESC),
    ("Show the rivers, latest first", Direction.DESC),
])
def test_an_ordering_without_a_bound(question: str, direction: Direction) -> None:
    m = extract_mentions(question)
    assert m.cues.superlative is None, m.cues  # not read as "the longest"
    o = parse_shape(question, m.cues).ordering
    assert o is not None and o.limit is None and o.direction is direction


def test_top_n_is_an_ordering_bounded_to_n_and_n_is_no_value() -> None:
    o = _shape("Which are the 3 longest rivers?").ordering
    assert o is not None and (o.limit, o.bound_text, o.direction) == (3, "3", Direction.DESC)
    o = _shape("Name the top five rivers by length").ordering
    assert o is not None and o.limit == 5
    o = _shape("What are the two rivers with the fewest bridges?").ordering
    assert o is not None and (o.limit, o.direction) == (2, Direction.ASC)


def test_a_count_per_group() -> None:
    s = _shape("How many books does each author have?")
    assert s.count and s.per_group is not None and s.per_group.startswith("author")
    assert _shape("How many books are there?").per_group is None


def test_several_columns_asked() -> None:
    assert _shape("List the names and lengths of the rivers").projections == ("lengths",)
    assert _shape("Which rivers are there, along with their source?").projections == (
        "source",)
    assert _shape("Which rivers are there?").projections == ()
    # a coordinated wh-clause asks for a further column
    assert _shape("Which rivers cross Spain, and how long is each river?").projections == (
        "river amount size value",)
    assert _shape("Which rivers cross Spain, and where do they end?").projections == (
        "end location place",)
    assert _shape("Which rivers cross Spain, and how many?").projections == ()


def test_a_range_has_two_inclusive_bounds() -> None:
    m = extract_mentions("Which books appeared between 1990 and 2000?")
    assert [(v.text, v.comparator) for v in m.values] == [("1990", ">="), ("2000", "<=")]


@pytest.mark.parametrize("question, bounds", [
    ("Which books appeared between October and December 2012?",
     [("2012-10-01", ">="), ("2012-12-31", "<=")]),
    ("Which books appeared from November 2011 to February 2012?",
     [("2011-11-01", ">="), ("2012-02-29", "<=")]),
    ("Which books appeared in February 2011?", [("2011-02-01", ">="), ("2011-02-28", "<=")]),
    ("Which books appeared before March 2001?", [("2001-03-01", "<")]),
    ("Which books appeared after March 2001?", [("2001-03-31", ">")]),
])
def test_months_with_their_year_are_date_bounds(question: str,
                                                bounds: list[tuple[str, str]]) -> None:
    values = extract_mentions(question).values
    assert [(v.text, v.kind, v.comparator) for v in values] == [
        (text, "date", cmp) for text, cmp in bounds]
    # the words they were read from, for the words around them
    assert all(v.written is not None and v.written in question for v in values)


def test_may_the_verb_is_no_month() -> None:
    assert not [v for v in extract_mentions("Which books may appear in 2012?").values
                if v.kind == "date"]


def test_synth_keeps_a_month_range_on_the_date(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "Which books were published between October and "
                                   "December 1999?")
    assert _triples_with(sparql, "publicationDate")
    consts = {str(n) for node in _nodes(_algebra(sparql)) for n in node.values()
              if isinstance(n, Literal)}
    assert {"1999-10-01", "1999-12-31"} <= consts, sparql


def test_a_comparative_bound_is_not_a_superlative() -> None:
    for q in ("Which books have at least 300 pages?", "Which authors wrote at most 3 books?",
              "Which branches hold no more than 40 books?"):
        m = extract_mentions(q)
        assert m.cues.superlative is None, q
        assert parse_shape(q, m.cues).ordering is None, q
    assert extract_mentions("Which book has the least pages?").cues.superlative == "min"


def test_an_ordinal_in_a_count_is_not_a_superlative() -> None:
    assert extract_mentions("How many first editions are there?").cues.superlative is None
    assert extract_mentions("Which was the first book?").cues.superlative == "min"


def test_the_lexicon_names_a_phenomenon_per_entry() -> None:
    assert len({c.phenomenon for c in LEXICON}) == len(LEXICON)
    assert all(c.words for c in LEXICON)
    assert "not" in words(Phenomenon.NEGATION)


# -- the synthesizer on a three-class VKG --------------------------------------------------

ONTOLOGY, MAPPING = books_vkg(EX)


@pytest.fixture(scope="module")
def shapes_ctx(navqa_config, embedder, tmp_path_factory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("shapes"), "shapes",
                     ONTOLOGY, MAPPING)


def _synth(ctx: SchemaContext, question: str, root: str = "Book",
           groundings: tuple[tuple[str, str, str], ...] = (),
           ungrounded: tuple[UnmatchedValue, ...] = ()) -> tuple[str, Plan]:
    mentions = extract_mentions(question)
    grounded = [GroundedValue(ValueMention(text, "string"), EX + prop, text,
                              f"{EX}{cls.lower()}/1", (EX + cls,), True)
                for text, prop, cls in groundings]
    return label_synth(ctx)(question, mentions, link(ctx, question, mentions),
                                   grounded, Subgraph(EX + root), ungrounded=ungrounded)


def test_synth_projects_the_name_and_the_asked_column(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "List the titles and the pages of the books")
    [(_, _, title)] = _triples_with(sparql, "title")
    [(_, _, pages)] = _triples_with(sparql, "pages")
    assert _projected(sparql) == [str(title), str(pages)]


def test_synth_projects_the_column_a_coordinated_clause_asks_for(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "Which books are held at Central, and when were they published?",
                       groundings=(("Central", "name", "Branch"),))
    [(_, _, date)] = _triples_with(sparql, "publicationDate")
    assert len(_projected(sparql)) == 2 and _projected(sparql)[1] == str(date)
    # a plain column is required; only one whose value may be missing ("… if any") is
    # OPTIONAL (tests/online/test_projection_lists.py)
    assert "LeftJoin" not in _names(sparql), sparql


def test_synth_projects_an_entity_column_through_a_join(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "Which books are held at Central, and by which authors?",
                       groundings=(("Central", "name", "Branch"),))
    [(_, _, author)] = _triples_with(sparql, "writtenBy")
    [(_, _, author_name)] = [t for t in _triples_with(sparql, "name") if t[0] == author]
    assert _projected(sparql)[1:] == [str(author_name)], sparql


def test_synth_projects_the_ranked_quantity_when_asked_how_large(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "What are the 3 books with the most pages, and how long "
                                   "are they?")
    [(_, _, pages)] = _triples_with(sparql, "pages")
    assert _projected(sparql)[1:] == [str(pages)], sparql


def test_synth_orders_without_a_bound(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "List the books sorted by publication date")
    alg = _algebra(sparql)
    [order] = [n for n in _nodes(alg) if n.name == "OrderBy"]
    [(_, _, date)] = _triples_with(sparql, "publicationDate")
    assert order["expr"][0]["expr"] == date
    assert "Slice" not in [n.name for n in _nodes(alg)]


def test_synth_bounds_a_superlative_to_one(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "Which book has the most pages?")
    alg = _algebra(sparql)
    [sl] = [n for n in _nodes(alg) if n.name == "Slice"]
    [order] = [n for n in _nodes(alg) if n.name == "OrderBy"]
    [(_, _, pages)] = _triples_with(sparql, "pages")
    assert sl["length"] == 1 and order["expr"][0]["expr"] == pages
    assert order["expr"][0]["order"] == "DESC"


def test_synth_bounds_top_n_to_n_without_filtering_by_n(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "What are the 3 books with the most pages?")
    alg = _algebra(sparql)
    [sl] = [n for n in _nodes(alg) if n.name == "Slice"]
    assert sl["length"] == 3
    assert "Filter" not in [n.name for n in _nodes(alg)], sparql


def test_synth_counts_per_group(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "How many books does each author have?")
    alg = _algebra(sparql)
    [group] = [n for n in _nodes(alg) if n.name == "Group"]
    [(_, _, author)] = _triples_with(sparql, "writtenBy")
    [(subj, _, author_name)] = [t for t in _triples_with(sparql, "name") if t[0] == author]
    assert list(group["expr"]) == [author_name] and subj == author
    assert len(_projected(sparql)) == 2


def test_synth_orders_the_groups_by_their_count(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "How many books does each author have, from most to fewest?")
    alg = _algebra(sparql)
    [order] = [n for n in _nodes(alg) if n.name == "OrderBy"]
    assert order["expr"][0]["order"] == "DESC"
    assert "Group" in [n.name for n in _nodes(alg)]
    assert "Slice" not in [n.name for n in _nodes(alg)]


def test_synth_orders_alphabetically_with_a_bare_bound(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "Which books are there? List at most ten alphabetically.")
    alg = _algebra(sparql)
    [order] = [n for n in _nodes(alg) if n.name == "OrderBy"]
    [(_, _, title)] = _triples_with(sparql, "title")
    assert order["expr"][0]["expr"] == title
    [sl] = [n for n in _nodes(alg) if n.name == "Slice"]
    assert sl["length"] == 10
    assert "Filter" not in [n.name for n in _nodes(alg)], sparql  # "ten" is the bound


def test_synth_keeps_a_year_range_on_the_date(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "Which books were published between 1990 and 2000?")
    [(_, _, date)] = _triples_with(sparql, "publicationDate")
    consts = {str(n) for node in _nodes(_algebra(sparql)) for n in node.values()
              if isinstance(n, Literal)}
    assert {"1990-01-01", "2001-01-01"} <= consts, sparql
    assert str(date) in sparql


def test_synth_reads_a_missing_value_as_optional_unbound(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "Which books have no publication date?")
    names = _names(sparql)
    assert "LeftJoin" in names and "Filter" in names
    assert _triples_with(sparql, "publicationDate")


def test_synth_reads_alternatives_as_a_union(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "Which books are held at Central or Harbour?",
                       groundings=(("Central", "name", "Branch"), ("Harbour", "name", "Branch")))
    assert "Union" in _names(sparql), sparql
    sparql, _ = _synth(shapes_ctx, "Which books are held at Central and written by Ann?",
                       groundings=(("Central", "name", "Branch"), ("Ann", "name", "Author")))
    assert "Union" not in _names(sparql), sparql


def test_synth_asks_a_yes_no_question(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "Is there a book written by Ann Lee?",
                       groundings=(("Ann Lee", "name", "Author"),))
    assert prepareQuery(sparql).algebra.name == "AskQuery"
    assert any(str(t[2]) == "Ann Lee" for t in _triples_with(sparql, "name"))


def test_synth_keeps_an_ungrounded_value_as_a_constraint(shapes_ctx) -> None:
    u = UnmatchedValue(ValueMention("Foo Bar", "string"),
                       (GroundedValue(ValueMention("Foo Bar", "string"), EX + "name", "Foo Baz",
                                      f"{EX}author/1", (EX + "Author",), False),))
    sparql, _ = _synth(shapes_ctx, "Which books did Foo Bar write?", ungrounded=(u,))
    assert any(str(t[2]) == "Foo Bar" for t in _triples_with(sparql, "name")), sparql


def test_synth_keeps_a_number_it_cannot_place_well(shapes_ctx) -> None:
    """No property matches "copies" well: the constraint goes on the best one, not away."""
    sparql, plan = _synth(shapes_ctx, "Which books have more than 300 copies?")
    assert "Filter" in _names(sparql), (sparql, plan.explain)


# -- negation: MINUS ------------------------------------------------------------------------


def _minus_blocks(text: str) -> list[Any]:
    return [n for n in _nodes(_algebra(text)) if n.name == "Minus"]


def test_synth_puts_a_negated_value_in_minus_on_variables_of_its_own(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "Which books are held at Central but not written by Ann?",
                       groundings=(("Central", "name", "Branch"), ("Ann", "name", "Author")))
    [minus] = _minus_blocks(sparql)
    negated = {t for n in _nodes(minus["p2"]) if n.name == "BGP" for t in n["triples"]}
    assert Literal("Ann") in {t[2] for t in negated}, sparql
    assert Literal("Central") not in {t[2] for t in negated}, sparql
    # the positive side keeps the branch; the author join exists only inside MINUS
    positive = {t for n in _nodes(minus["p1"]) if n.name == "BGP" for t in n["triples"]}
    assert Literal("Central") in {t[2] for t in positive}
    assert not [t for t in positive if t[1] == URIRef(EX + "writtenBy")], sparql


def test_synth_reads_not_any_class_as_minus_of_the_relation(shapes_ctx) -> None:
    sparql, _ = _synth(shapes_ctx, "Which books have never been held at any library branch?")
    [minus] = _minus_blocks(sparql)
    negated = {t for n in _nodes(minus["p2"]) if n.name == "BGP" for t in n["triples"]}
    assert [t for t in negated if t[1] == URIRef(EX + "heldAt")], sparql
    assert not [t for t in _triples(sparql) - negated if t[1] == URIRef(EX + "heldAt")]


@pytest.mark.parametrize(("question", "text", "negated"), [
    ("Which books are held at Central but not at Harbour?", "Harbour", True),
    ("Which books are held at Central but not at Harbour?", "Central", False),
    ("Which books not written by Ann are held at Central?", "Ann", True),
    ("Which books not written by Ann are held at Central?", "Central", False),
    ("Which books are not long, and written by Ann?", "Ann", False),  # a clause boundary
])
def test_the_scope_of_a_negation(question: str, text: str, negated: bool) -> None:
    from navqa.online.synthesis.negation import is_negated

    assert is_negated(question, text) is negated


def test_a_new_variable_avoids_one_used_only_in_a_triple() -> None:
    # an anchor's node may be in a triple before it has a class
    plan = Plan(triples=[("?pipe", "ex:to", "?facility"), ("?facility", "ex:name", '"A"')])
    assert plan.new_var("Facility") == "?facility2"
