"""Projection lists: a question asking several things gets all of them as columns, and an
attribute asked of a named entity is projected instead of the entity's name.

Three layers, each pinned on its own:

* :func:`navqa.online.reading.question_shape.projections` reads the asked columns from the
  question's grammar (coordinated modifiers sharing a head noun, a coordinated manner
  clause, a comitative before a subordinate clause) and :func:`optional_columns` the ones
  whose value may be missing ("if any", "when there is one", "where … is recorded");
* the offline synthesizer renders them on the demo VKG's schema context: one SELECT
  variable per column, OPTIONAL only for a column whose value may be missing;
* end to end on the served demo VKG, a two-column answer equals what SQL says.

Structure is asserted on the parsed query, never on its text. The questions are general
sentences about the demo railway, not dataset questions.
"""

from __future__ import annotations

from typing import Any

import pytest
from synth_vkgs import algebra as _algebra
from synth_vkgs import label_synth
from synth_vkgs import nodes as _nodes

from navqa.model.events import ValueMention
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.asked_columns import (
    RANKED_QUANTITY,
    optional_columns,
    pair_columns,
    projections,
)
from navqa.online.reading.mentions import extract_mentions
from navqa.online.synthesis.columns import attribute_phrase, word_overlap
from navqa.online.values import GroundedValue

RAIL = "http://example.org/navqa/rail#"


# -- the grammar ----------------------------------------------------------------------------


def test_coordinated_modifiers_share_the_head_noun() -> None:
    assert projections("What are the official and local names of the cities?") == (
        "official names", "local names")
    assert projections("What were the maximum and average speeds of the trains?") == (
        "maximum speeds", "average speeds")
    assert pair_columns("first", "last names") == ["first names", "last names"]


def test_a_bare_name_word_is_the_entitys_own_column() -> None:
    assert projections("List the names and lengths of the lines") == ("lengths",)
    assert projections("What are the name and status of each line?") == ("status",)
    # two values, no name: both are columns
    assert projections("What are the depth and age of the lakes?") == ("depth", "age")


def test_a_coordinated_manner_clause_asks_for_what_its_verb_names() -> None:
    assert projections("Which lines start in Ashby, and how are they described?") == (
        "described",)
    # an amount-asking "how" asks for the quantity; "how many" is a count, not a column
    assert projections("Which lines start in Ashby, and how long are they?") == (
        RANKED_QUANTITY,)
    assert projections("Which lines start in Ashby, and how many?") == ()


def test_a_comitative_ends_before_a_subordinate_clause() -> None:
    assert projections("List the stations with their opening date when there is one") == (
        "opening date",)
    assert projections("List the towers with their height where a height is recorded.") == (
        "height",)
    # the clause about the answer adds its verb ("the train they use")
    assert projections("List the services together with the train they use, if any.") == (
        "train use",)


@pytest.mark.parametrize("question, optional", [
    ("List the stations with their opening date when there is one", {"opening date"}),
    ("List the stations with their opening date, if any", {"opening date"}),
    ("List the towers with their height where a height is recorded.", {"height"}),
    ("Which cities lie in Fenland, and what is their population where known?",
     {"population"}),
    ("List the stations with their opening date", set()),
    ("Which cities lie in Fenland, and what is their population?", set()),
    # set off between "and" and the column: it qualifies the column after it
    ("Which lines run to Ashby, and, where known, who operates them?", {"operates"}),
    ("List the depots and, if any, the line they serve.", {"line serve"}),
])
def test_a_column_whose_value_may_be_missing_is_optional(question: str,
                                                         optional: set[str]) -> None:
    cols = projections(question)
    assert cols, question
    assert optional_columns(question, cols) == optional


def test_the_optional_cue_names_no_column() -> None:
    # "where recorded" qualifies the column, it is none of its words
    assert projections("Which cities lie in Fenland, and what is their population where "
                       "recorded?") == ("population",)


@pytest.mark.parametrize("question, columns", [
    # a head list of three conjuncts
    ("What are the names, lengths and opening dates of the lines?",
     ("lengths", "opening dates")),
    # a possessive list after a verb that asks for values, not at the start
    ("For each station, give its code and its opening date.", ("code", "opening date")),
    ("Which lines are electrified? List their lengths.", ("lengths",)),
    # a comitative with a coordinated list
    ("List the stations in Ashby with their code and opening date.",
     ("code", "opening date")),
    ("List the lines, including their length and speed limit.", ("length", "speed limit")),
    ("List the franchises and their respective operators.", ("operators",)),
    # a relative column: a clause about the answer adds its verb, "of their X" its noun
    ("List the lines and the trains they use.", ("trains use",)),
    ("List each station with the year it opened.", ("year opened",)),
    ("List the franchises and the length of their terms.", ("length terms",)),
    # a coordinated wh-clause without a comma
    ("Which stations lie in Fenland and what is their code?", ("code",)),
    ("Which lines start in Ashby and how long are they?", (RANKED_QUANTITY,)),
    ("Which trains run on the Ashby line and since when?", ("date since",)),
    ("Which lines were opened in 1900, and on what date was each opened?",
     ("date opened",)),
    # a relative column whose clause ends on a preposition and a pronoun
    ("List the depots and the company responsible for each.", ("company responsible",)),
    # a comitative ends a list ("its name along with …"); a noun phrase with its own
    # clause may be followed by another one
    ("For each line, give its name along with the station where it starts and the "
     "station where it ends.", ("station starts", "station ends")),
    # a verb listing columns after a leading "for each X," clause (no possessive needed)
    ("For every line in 1990, list the length, the operator and the terminus.",
     ("length", "operator", "terminus")),
    # a later sentence asking for values of the answers
    ("Which trains stop at Ashby? Include the departure time.", ("departure time",)),
    ("Which depots are in Fenland? Also give the capacity.", ("capacity",)),
    # a possessive list set off by a comma needs no verb; a plural ends a noun phrase
    ("List the drivers, their licence numbers and hire dates.",
     ("licence numbers", "hire dates")),
    # "too" is no part of the column
    ("Which lines cross the Ouse; give their length too.", ("length",)),
    # a bare quantity noun stands for the ranked quantity
    ("Which line has the most stations, and what is the figure?", (RANKED_QUANTITY,)),
    ("Top 3 lines by length, with the values", (RANKED_QUANTITY,)),
    # one column read twice (a possessive item and a relative clause) is one column
    ("What is the longest line? Show its length and the year it was opened.",
     ("length", "year opened")),
    # a list of columns about each answer after "with the"
    ("Show the trains of line 4, with the train number and the start and end time of "
     "each run.", ("train number", "start time", "end time")),
    # a relative column after "in which it …"
    ("Which stations does line 4 serve, with the order in which it serves them?",
     ("order serves",)),
])
def test_every_form_of_a_projection_list(question: str, columns: tuple[str, ...]) -> None:
    assert projections(question) == columns


@pytest.mark.parametrize("question", [
    "Which lines are operated by Northern and Southern?",     # coordinated values
    "Which stations are in Ashby and located on the coast?",  # coordinated predicates
    "What is the length of the Ashby line?",                  # one attribute
    "How many stations are in Ashby and in Fenland?",
    "List the lines with a length above 20 km.",              # a restriction, not a column
    "Which lines start in Ashby, and how many?",              # a count
    "Which lines leave Ashby? Give the stations.",            # the answers named again
    "For each line, list the stations.",                      # one noun: the answers
    "Which line is the longest and deepest?",                 # coordinated superlatives
])
def test_what_is_no_projection_list(question: str) -> None:
    assert projections(question) == ()


def test_an_attribute_question_asks_its_first_coordinated_column() -> None:
    assert attribute_phrase("What are the depth and age of X?", "depth and age") == "depth"
    assert attribute_phrase("What are the name and status of X?", "name and status") is None


def test_word_overlap_reads_camel_case_and_plurals() -> None:
    assert word_overlap("opening dates", "openingDate opening date") == 1.0
    assert word_overlap("speed", "maxSpeedKmh") == 1.0
    assert word_overlap("population", "stationCode") == 0.0


# -- the synthesizer on the demo VKG's schema context --------------------------------------


def _required_and_optional(text: str) -> tuple[set[str], set[str]]:
    """Predicates of the required part and of the OPTIONAL parts of a query."""
    required: set[str] = set()
    optional: set[str] = set()
    for n in _nodes(_algebra(text)):
        if n.name == "LeftJoin":
            for m in _nodes(n["p2"]):
                if m.name == "BGP":
                    optional |= {str(t[1]) for t in m["triples"]}
    for n in _nodes(_algebra(text)):
        if n.name == "BGP":
            required |= {str(t[1]) for t in n["triples"]}
    return required - optional, optional


def _projected(text: str) -> list[str]:
    return [str(v) for v in _algebra(text)["PV"]]


def _var_of(text: str, prop: str) -> str:
    for n in _nodes(_algebra(text)):
        if n.name == "BGP":
            for _s, p, o in n["triples"]:
                if str(p) == RAIL + prop:
                    return str(o)
    raise AssertionError(f"no triple of {prop} in\n{text}")


def _synth(ctx: Any, question: str, root: str,
           grounded: tuple[tuple[str, str, str], ...] = ()) -> str:
    mentions = extract_mentions(question)
    groundings = [GroundedValue(ValueMention(text, "string"), RAIL + prop, text,
                                f"{RAIL}{cls.lower()}/1", (RAIL + cls,), True)
                  for text, prop, cls in grounded]
    sparql, _ = label_synth(ctx)(question, mentions, link(ctx, question, mentions),
                                        groundings, Subgraph(RAIL + root))
    return sparql


@pytest.fixture(scope="module")
def demo_ctx(demo_pipeline) -> Any:
    return demo_pipeline.ctx


def test_a_plain_column_is_required(demo_ctx) -> None:
    sparql = _synth(demo_ctx, "List the stations along with their opening date", "Station")
    assert _projected(sparql) == [_var_of(sparql, "name"), _var_of(sparql, "openingDate")]
    required, optional = _required_and_optional(sparql)
    assert RAIL + "openingDate" in required and not optional, sparql


def test_a_column_that_may_be_missing_is_optional(demo_ctx) -> None:
    sparql = _synth(demo_ctx, "List the stations with their opening date when there is one",
                    "Station")
    assert _projected(sparql) == [_var_of(sparql, "name"), _var_of(sparql, "openingDate")]
    required, optional = _required_and_optional(sparql)
    assert optional == {RAIL + "openingDate"} and RAIL + "name" in required, sparql


def test_coordinated_modifiers_give_two_columns(demo_ctx) -> None:
    sparql = _synth(demo_ctx, "What are the start and end dates of the franchises?",
                    "Franchise")
    assert _projected(sparql) == [_var_of(sparql, "franchiseStart"),
                                  _var_of(sparql, "franchiseEnd")], sparql


def test_a_possessive_list_gives_a_column_each(demo_ctx) -> None:
    sparql = _synth(demo_ctx, "For each station, give its name, its code and its opening "
                              "date.", "Station")
    assert _projected(sparql) == [_var_of(sparql, "name"), _var_of(sparql, "stationCode"),
                                  _var_of(sparql, "openingDate")], sparql


def test_a_coordinated_manner_clause_projects_a_further_column(demo_ctx) -> None:
    sparql = _synth(demo_ctx, "Which lines are electrified, and how long are they in "
                              "kilometres?", "Line")
    assert _projected(sparql)[0] == _var_of(sparql, "name")
    assert _var_of(sparql, "lengthKm") in _projected(sparql), sparql


def test_a_code_of_a_named_entity_is_projected_instead_of_its_name(demo_ctx) -> None:
    sparql = _synth(demo_ctx, "What is the station code of the station Ashby Road?",
                    "Station", grounded=(("Ashby Road", "name", "Station"),))
    assert _projected(sparql) == [_var_of(sparql, "stationCode")], sparql


# -- end to end on the served demo VKG ------------------------------------------------------


def _rows(result: Any) -> set[tuple[str | None, ...]]:
    return {tuple(None if v is None else str(v) for v in row) for row in result.rows}


@pytest.mark.ontop
@pytest.mark.postgres
def test_two_columns_end_to_end_match_sql(demo_pipeline, vkg) -> None:
    answer = demo_pipeline.ask("List the stations along with their opening date")
    assert answer.error is None, answer.error
    assert len(answer.result.variables) == 2, answer.sparql
    expected = {(name, str(day)) for name, day in vkg("demo").sql(
        "SELECT name, opened_on FROM station WHERE opened_on IS NOT NULL")}
    assert expected and _rows(answer.result) == expected, answer.sparql


@pytest.mark.ontop
@pytest.mark.postgres
def test_an_optional_column_end_to_end_keeps_the_answers_without_it(demo_pipeline,
                                                                    vkg) -> None:
    answer = demo_pipeline.ask("List the stations with their opening date when there is one")
    assert answer.error is None, answer.error
    expected = {(name, None if day is None else str(day)) for name, day in vkg("demo").sql(
        "SELECT name, opened_on FROM station")}
    assert any(day is None for _, day in expected)  # the point: some have no date
    assert _rows(answer.result) == expected, answer.sparql
