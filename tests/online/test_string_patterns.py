"""String-pattern constraints: "a name starting with 'Cec'" is a FILTER, not one stored value.

"Which genes have a name starting with 'Cec'?" used to ground 'Cec' to the stored "Cec2"
and ask for that one gene. Now the mention carries its :class:`StringMatch` and the
phrase naming the property; value grounding leaves it alone (neither grounded nor
"ungrounded"); the synthesizer writes ``STRSTARTS`` / ``STRENDS`` / ``CONTAINS`` on that
property (case ignored, unless a quoted pattern has capitals).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest

from navqa.model.events import Mentions, StringMatch, ValueMention, ValuesGrounded
from navqa.model.llm import Message, Response
from navqa.model.terms import SelectResult
from navqa.online.pipeline import Pipeline
from navqa.online.reading.mentions import LLMMentionExtractor, extract_mentions
from navqa.online.synthesis.plan import Plan, render
from navqa.online.synthesis.strings import add_string_filters, pattern_filter
from navqa.online.values import ground_mentions

RAIL = "http://example.org/navqa/rail#"


def _value(question: str) -> ValueMention:
    [v] = [v for v in extract_mentions(question).values if v.kind == "string"]
    return v


# -- mentions -----------------------------------------------------------------------------

@pytest.mark.parametrize(("question", "text", "match", "prop", "case_sensitive"), [
    ("Which genes have a name starting with 'Cec'?", "Cec", StringMatch.PREFIX, "name", True),
    ("Which lines begin with 'North'?", "North", StringMatch.PREFIX, None, True),
    ("Which places have a name ending in 'hausen'?", "hausen", StringMatch.SUFFIX, "name",
     False),
    ("Which stations have names that end with 'halt'?", "halt", StringMatch.SUFFIX, None,
     False),
    ("Which genes have a description mentioning 'Chorion'?", "Chorion", StringMatch.CONTAINS,
     "description", True),
    ("Which companies whose name contains 'Conoco' operate fields?", "Conoco",
     StringMatch.CONTAINS, "name", True),
    ("Which entities have 'wing' in their name?", "wing", StringMatch.CONTAINS, "name", False),
    ("Which stages have 'post-juvenile' in their name, and how are they described?",
     "post-juvenile", StringMatch.CONTAINS, "name", False),
    ("Which ports have \"Hafen\" in its label?", "Hafen", StringMatch.CONTAINS, "label", True),
    # an unquoted name is a pattern with the phrase naming its property; case is ignored
    ("Which fields have a name starting with Oseberg?", "Oseberg", StringMatch.PREFIX, "name",
     False),
])
def test_a_pattern_is_recorded_on_its_mention(question: str, text: str, match: StringMatch,
                                              prop: str | None, case_sensitive: bool) -> None:
    v = _value(question)
    assert (v.text, v.match, v.match_property, v.case_sensitive) == (
        text, match, prop, case_sensitive)


@pytest.mark.parametrize(("question", "text"), [
    ("What is the description of the gene 'Cec2'?", "Cec2"),
    ("Which company operates the 'Aster Coast Line'?", "Aster Coast Line"),
    ("Which company currently operates the Aster Coast Line?", "Aster Coast Line"),
    # no property phrase: an unquoted name after "contain" is the thing contained
    ("Which lines contain Dunmere?", "Dunmere"),
    # "in the …" after a quoted value is a place, not "in their name"
    ("Which wells are in 'Troll' in the North Sea?", "Troll"),
])
def test_a_plain_value_stays_exact(question: str, text: str) -> None:
    v = next(v for v in extract_mentions(question).values if v.text == text)
    assert v.match is StringMatch.EXACT and v.match_property is None


class _Answers:
    """An LLM that returns one fixed answer to the mention prompt."""

    model = "fixed"

    def __init__(self, parsed: Any) -> None:
        self.parsed = parsed

    def call(self, messages: Sequence[Message], *, schema: type[Any] | None = None,
             temperature: float | None = None, max_tokens: int | None = None) -> Response:
        assert schema is not None
        return Response(text="", parsed=schema.model_validate(self.parsed))


def test_the_llm_extractor_keeps_the_pattern_of_a_value() -> None:
    question = "Which genes have a name starting with 'Cec'?"
    llm = _Answers({"class_mentions": ["genes"], "property_mentions": ["name"],
                    "value_mentions": [{"text": "Cec", "kind": "string"}]})
    mentions, _ = LLMMentionExtractor(llm)(question)
    [v] = mentions.values
    assert (v.text, v.match, v.match_property) == ("Cec", StringMatch.PREFIX, "name")


# -- SPARQL -------------------------------------------------------------------------------

@pytest.mark.parametrize(("v", "expr"), [
    (ValueMention("Cec", match=StringMatch.PREFIX, case_sensitive=True),
     'STRSTARTS(STR(?n), "Cec")'),
    (ValueMention("Hausen", match=StringMatch.SUFFIX), 'STRENDS(LCASE(STR(?n)), "hausen")'),
    (ValueMention("Wing", match=StringMatch.CONTAINS), 'CONTAINS(LCASE(STR(?n)), "wing")'),
    # the pattern is escaped: a quote or a backslash cannot end the literal
    (ValueMention('a"b\\c', match=StringMatch.CONTAINS, case_sensitive=True),
     'CONTAINS(STR(?n), "a\\"b\\\\c")'),
])
def test_pattern_filter(v: ValueMention, expr: str) -> None:
    assert pattern_filter("?n", v) == expr


def _line_plan(demo_pipeline: Pipeline, *values: ValueMention, disjunction: bool = False) -> str:
    ctx = demo_pipeline.ctx
    plan = Plan()
    plan.var_class["?line"] = RAIL + "Line"
    plan.add("?line", "a", ctx.compact(RAIL + "Line"))
    add_string_filters(ctx, plan, Mentions(values=values), RAIL + "Line", "?line",
                       disjunction=disjunction)
    plan.select = [plan.data_vars[("?line", RAIL + "name")]]
    return render(ctx.prefixes, plan)


@pytest.mark.ontop
@pytest.mark.postgres
def test_rendered_filter_on_the_name_runs_on_ontop(demo_pipeline: Pipeline) -> None:
    sparql = _line_plan(demo_pipeline, ValueMention("line", match=StringMatch.SUFFIX))
    assert "?line rail:name ?name ." in sparql
    assert 'FILTER(STRENDS(LCASE(STR(?name)), "line"))' in sparql
    rows = demo_pipeline.endpoint.select(sparql).rows
    assert sorted(str(r[0]) for r in rows) == [
        "Aster Coast Line", "Kestrel Valley Line", "Northmarch Main Line"]


@pytest.mark.ontop
@pytest.mark.postgres
def test_alternative_patterns_are_one_disjunction(demo_pipeline: Pipeline) -> None:
    sparql = _line_plan(demo_pipeline,
                        ValueMention("Aster", match=StringMatch.PREFIX, case_sensitive=True),
                        ValueMention("Ligne", match=StringMatch.PREFIX, case_sensitive=True),
                        disjunction=True)
    assert ('FILTER((STRSTARTS(STR(?name), "Aster")) || (STRSTARTS(STR(?name), "Ligne")))'
            in sparql)
    rows = demo_pipeline.endpoint.select(sparql).rows
    assert sorted(str(r[0]) for r in rows) == [
        "Aster Coast Line", "Ligne de Port-Aubrac", "Ligne du Val-Brûlé"]


# -- grounding and end to end -------------------------------------------------------------

@pytest.mark.ontop
@pytest.mark.postgres
def test_grounding_neither_grounds_nor_reports_a_pattern(demo_pipeline: Pipeline) -> None:
    # 'Queensmere' is a substring of three stored names: grounded as a value, it would
    # become one of them
    pattern = ValueMention("Queensmere", match=StringMatch.PREFIX, case_sensitive=True)
    res = ground_mentions(demo_pipeline.ctx, demo_pipeline.endpoint, [pattern])
    assert res.found == [] and res.missing == []
    plain = ground_mentions(demo_pipeline.ctx, demo_pipeline.endpoint,
                            [ValueMention("Queensmere")])
    assert plain.found, "the same text as a plain value is grounded"


@pytest.mark.ontop
@pytest.mark.postgres
@pytest.mark.parametrize(("question", "sql"), [
    ("Which stations have a name starting with 'Queensmere'?",
     "SELECT name FROM station WHERE name LIKE 'Queensmere%'"),
    # lower case as written: the case of the stored names is ignored
    ("Which stations have a name ending in 'halt'?",
     "SELECT name FROM station WHERE lower(name) LIKE '%halt'"),
    ("Which rail lines have 'Kestrel' in their name?",
     "SELECT \"lineName\" FROM rail_line WHERE \"lineName\" LIKE '%Kestrel%'"),
])
def test_a_pattern_question_answers_what_sql_like_finds(
        demo_pipeline: Pipeline, vkg: Callable[..., Any], question: str, sql: str) -> None:
    expected = sorted(str(r[0]) for r in vkg("demo").sql(sql))
    assert len(expected) >= 2  # the pattern is no single stored value
    answer = demo_pipeline.ask(question)
    assert answer.error is None, answer.error
    [ev] = answer.of(ValuesGrounded)
    assert isinstance(ev, ValuesGrounded) and ev.groundings == () and ev.ungrounded == ()
    assert isinstance(answer.result, SelectResult), answer.sparql
    assert sorted(str(r[0]) for r in answer.result.rows) == expected, answer.sparql
