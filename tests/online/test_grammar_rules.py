"""Grammar rules can be switched off one at a time, and a query records the ones that
shaped it: what the held-out ablation (scripts/ablate_rules.py) relies on.

The synthesizer cases run on the small books VKG of :mod:`synth_vkgs`; the evaluation
cases check the ablation names and that a run's records carry the rules.
"""

from __future__ import annotations

from typing import Any

import pytest
from synth_vkgs import algebra, books_vkg, index_vkg, label_synth, nodes
from typer.testing import CliRunner

from navqa.cli.main import app
from navqa.config import NavqaConfig
from navqa.errors import EvaluationError
from navqa.evaluation.runner import ablation_names, effective_config
from navqa.model.events import ValueMention
from navqa.model.rules import GrammarRule
from navqa.online.context import SchemaContext
from navqa.online.expansion import Subgraph
from navqa.online.linking import link
from navqa.online.reading.mentions import extract_mentions
from navqa.online.synthesis.plan import Plan
from navqa.online.values import GroundedValue

EX = "http://example.org/rules#"
ONTOLOGY, MAPPING = books_vkg(EX)


@pytest.fixture(scope="module")
def ctx(navqa_config, embedder, tmp_path_factory) -> SchemaContext:
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("rules"), "rules",
                     ONTOLOGY, MAPPING)


def _synth(ctx: SchemaContext, question: str, root: str,
           disabled: frozenset[GrammarRule] = frozenset(),
           names: tuple[tuple[str, str], ...] = ()) -> tuple[str, Plan]:
    """Synthesize ``question``; ``names``: (stored name, class) of grounded values."""
    mentions = extract_mentions(question)
    grounded = [GroundedValue(ValueMention(text, "string"), EX + "name", text,
                              f"{EX}{cls.lower()}/{i}", (EX + cls,), True)
                for i, (text, cls) in enumerate(names)]
    return label_synth(ctx, disabled)(
        question, mentions, link(ctx, question, mentions), grounded, Subgraph(EX + root))


def _names(sparql: str) -> list[str]:
    return [n.name for n in nodes(algebra(sparql))]


def test_a_rule_that_shapes_the_query_is_recorded(ctx) -> None:
    sparql, plan = _synth(ctx, "Which author has written the most books?", "Author")
    assert GrammarRule.COUNT_RANK in plan.rules
    assert "Group" in _names(sparql)
    # a plain question records no counting rule
    _, plain = _synth(ctx, "Which books have more than 300 pages?", "Book")
    assert not {GrammarRule.COUNT_RANK, GrammarRule.COUNT_BOUND} & plain.rules


def test_a_switched_off_rule_neither_applies_nor_is_recorded(ctx) -> None:
    q = "Which author has written the most books?"
    sparql, plan = _synth(ctx, q, "Author", frozenset({GrammarRule.COUNT_RANK}))
    assert GrammarRule.COUNT_RANK not in plan.rules
    assert "Aggregate_Count" not in _names(sparql), sparql
    # the other rules are untouched: the same question with another rule off is ranked
    sparql, plan = _synth(ctx, q, "Author", frozenset({GrammarRule.SPATIAL}))
    assert GrammarRule.COUNT_RANK in plan.rules and "Aggregate_Count" in _names(sparql)


def test_a_count_bound_switched_off_leaves_the_number_a_filter(ctx) -> None:
    q = "Which authors have written more than 2 different books?"
    on, plan_on = _synth(ctx, q, "Author")
    off, plan_off = _synth(ctx, q, "Author", frozenset({GrammarRule.COUNT_BOUND}))
    assert GrammarRule.COUNT_BOUND in plan_on.rules
    assert plan_on.having and not plan_off.having
    assert GrammarRule.COUNT_BOUND not in plan_off.rules
    assert on != off


def test_required_columns_are_optional_with_the_rule_off(ctx) -> None:
    q = "List the books with their pages."
    _, on = _synth(ctx, q, "Book")
    _, off = _synth(ctx, q, "Book", frozenset({GrammarRule.REQUIRED_COLUMN}))
    assert GrammarRule.REQUIRED_COLUMN in on.rules and not on.optionals
    pages = EX + "pages"
    assert any(any(p == pages or p.endswith(":pages") for _, p, _ in block)
               for block in off.optionals), off.optionals
    assert GrammarRule.REQUIRED_COLUMN not in off.rules


def _name_holders(plan: Plan) -> dict[str, str]:
    """Stored name → the variable that holds it."""
    return {o.strip('"'): s for s, p, o in plan.triples if p.endswith("name")
            and o.startswith('"')}


def test_two_values_of_the_same_kind_get_a_join_each(ctx) -> None:
    q = "Which books are held both at Central and at Riverside?"
    names = (("Central", "Branch"), ("Riverside", "Branch"))
    _, plan = _synth(ctx, q, "Book", names=names)
    holders = _name_holders(plan)
    assert holders["Central"] != holders["Riverside"], plan.triples
    assert GrammarRule.CONJOINED_VALUES in plan.rules
    # off: both names on one branch, as before
    _, off = _synth(ctx, q, "Book", frozenset({GrammarRule.CONJOINED_VALUES}), names)
    held = _name_holders(off)
    assert held["Central"] == held["Riverside"]
    assert GrammarRule.CONJOINED_VALUES not in off.rules


def test_alternative_values_stay_on_one_node(ctx) -> None:
    q = "Which books are held at Central or at Riverside?"
    _, plan = _synth(ctx, q, "Book", names=(("Central", "Branch"), ("Riverside", "Branch")))
    assert GrammarRule.CONJOINED_VALUES not in plan.rules
    assert plan.unions, plan.triples  # one node, its name one of the two


def test_a_negated_relation_is_recorded_and_can_be_switched_off(ctx) -> None:
    q = "Which authors have not written any books?"
    sparql, plan = _synth(ctx, q, "Author")
    assert GrammarRule.NEGATED_RELATION in plan.rules and "Minus" in _names(sparql), sparql
    sparql, plan = _synth(ctx, q, "Author", frozenset({GrammarRule.NEGATED_RELATION}))
    assert GrammarRule.NEGATED_RELATION not in plan.rules and "Minus" not in _names(sparql)
    # a missing value is no negated relation: OPTIONAL + !BOUND, with the rule on
    sparql, plan = _synth(ctx, "Which books have no publication date?", "Book")
    assert GrammarRule.NEGATED_RELATION not in plan.rules and "LeftJoin" in _names(sparql)


def test_rule_ablation_names_switch_rules_off() -> None:
    names = ablation_names()
    assert "no-aoc" in names and "no-rule-count-rank" in names
    assert len([n for n in names if n.startswith("no-rule-")]) == len(GrammarRule)
    cfg = effective_config(NavqaConfig(), ablations=["no-rule-count-rank", "no-rule-spatial",
                                                     "no-values"])
    # on top of the rules off by default (plain-name: it did not help the validation splits)
    assert cfg.pipeline.disabled_rules == {GrammarRule.COUNT_RANK, GrammarRule.SPATIAL,
                                           GrammarRule.PLAIN_NAME}
    assert cfg.pipeline.value_grounding is False
    assert effective_config(NavqaConfig()).pipeline.disabled_rules == {GrammarRule.PLAIN_NAME}
    with pytest.raises(EvaluationError, match="no-rule-bogus"):
        effective_config(NavqaConfig(), ablations=["no-rule-bogus"])


def test_cli_rejects_an_unknown_rule_with_exit_2(tmp_path: Any) -> None:
    res = CliRunner().invoke(app, ["eval", "run", "--vkg", "demo", "--ablate", "no-rule-bogus",
                                   "--out", str(tmp_path / "run")])
    assert res.exit_code == 2, res.output
    assert "no-rule-bogus" in res.output and "Traceback" not in res.output


def test_an_attribute_phrase_naming_the_target_asks_for_the_entity(ctx) -> None:
    question = "What is the earliest book of Ann Lee?"
    sparql, plan = _synth(ctx, question, "Book", names=(("Ann Lee", "Author"),))
    assert GrammarRule.ENTITY_PHRASE in plan.rules
    assert plan.select == [plan.data_vars[(next(iter(plan.var_class)), EX + "title")]]
    assert "ORDER BY ASC(" in sparql and "LIMIT 1" in sparql
    _, off = _synth(ctx, question, "Book", names=(("Ann Lee", "Author"),),
                    disabled=frozenset({GrammarRule.ENTITY_PHRASE}))
    assert GrammarRule.ENTITY_PHRASE not in off.rules
    # an attribute phrase with another head is still an attribute
    _, attr = _synth(ctx, "What is the publication date of the earliest book of Ann Lee?",
                     "Book", names=(("Ann Lee", "Author"),))
    assert GrammarRule.ENTITY_PHRASE not in attr.rules
    assert attr.select == [plan_var(attr, EX + "publicationDate")]


def plan_var(plan: Plan, prop: str) -> str:
    return plan.data_vars[(next(iter(plan.var_class)), prop)]
