"""The answer class: the class the wh-phrase names becomes the chosen subgraph's root.

On the served demo VKG (real PostgreSQL + Ontop), with the deterministic offline backend.
The head noun of "which <N>" / "what are the <N>" is looked up on its own; a class whose
label, or the genus of whose comment, is that noun is *named* by the question; the
answer class is favoured as the root by the reranker (the extra preference for a named
class was dropped by the held-out ablation, docs/evaluation.md).
"""

from __future__ import annotations

import pytest

from navqa.model.events import AnswerKind, SubgraphsReranked
from navqa.online.pipeline import Pipeline
from navqa.online.reading.answer_type import AnswerType, defined_as, offline_answer_type, root_bonus
from navqa.online.reading.mentions import extract_mentions

pytestmark = [pytest.mark.ontop, pytest.mark.postgres]

RAIL = "http://example.org/navqa/rail#"


def chosen_root(pipeline: Pipeline, question: str) -> str:
    """The root of the subgraph the reranker chose for ``question``."""
    chosen = [e.chosen for e in pipeline.stream(question) if isinstance(e, SubgraphsReranked)]
    assert chosen, f"no subgraph was chosen for {question!r}"
    return chosen[0]


def answer_type(pipeline: Pipeline, question: str) -> AnswerType:
    return offline_answer_type(pipeline.ctx, question, extract_mentions(question))


@pytest.mark.parametrize(("question", "root"), [
    # the noun phrase ends at its plural head: "operators", not "operators run services"
    ("Which operators run services that call in the city of Dunmere?", "OperatorCompany"),
    ("Which manufacturer built locomotive 66-412?", "Manufacturer"),
])
def test_the_wh_head_noun_names_the_root(demo_pipeline: Pipeline, question: str, root: str) -> None:
    assert chosen_root(demo_pipeline, question) == RAIL + root


def test_a_synonym_found_only_in_a_comment_names_the_class(demo_pipeline: Pipeline) -> None:
    at = answer_type(demo_pipeline, "Which vehicles owned by leasing companies are there?")
    assert at.cls == RAIL + "RollingStock"
    assert at.phrase == "vehicles"
    assert at.named
    assert "vehicle" not in demo_pipeline.ctx.label(at.cls).lower()


def test_a_word_of_a_comment_outside_its_genus_names_nothing(demo_pipeline: Pipeline) -> None:
    # Line's comment: "A named railway line running from an origin station to a terminus
    # station." — "station" is in it, but the comment does not define a line as a station.
    at = answer_type(demo_pipeline, "Which stations are there?")
    assert at.cls == RAIL + "Station"
    assert at.named
    assert not defined_as(demo_pipeline.ctx, RAIL + "Line", "station")
    assert defined_as(demo_pipeline.ctx, RAIL + "RollingStock", "vehicle")


def test_what_are_the_n_lists_things_of_a_class(demo_pipeline: Pipeline) -> None:
    at = answer_type(demo_pipeline, "What are the three oldest stations?")
    assert (at.kind, at.cls, at.attribute) == (AnswerKind.ENTITY, RAIL + "Station", False)
    # "what is the X of Y" still asks for an attribute
    at = answer_type(demo_pipeline, "What is the population of Dunmere?")
    assert at.attribute and at.kind is AnswerKind.QUANTITY


def test_root_bonus_favours_the_class_then_its_subclasses(demo_pipeline: Pipeline) -> None:
    at = answer_type(demo_pipeline, "Which companies build rolling stock?")
    sup = demo_pipeline.ctx.ontology.superclasses
    assert at.cls == RAIL + "Company"
    company = root_bonus(at, RAIL + "Company", sup(RAIL + "Company"))
    maker = root_bonus(at, RAIL + "Manufacturer", sup(RAIL + "Manufacturer"))
    assert company > maker > 0
    assert root_bonus(at, RAIL + "Station", sup(RAIL + "Station")) == 0
