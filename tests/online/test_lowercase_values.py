"""Entity values written in lower case are grounded; a schema noun never becomes one.

"Which genes are expressed in the brain?" names an anatomical entity that no mention
extractor sees (no quotes, no capital): without grounding it the synthesizer lists every
gene. The question's content n-grams are probed, exactly and ignoring case, on the
name-like properties of the classes the linking found relevant
(:mod:`navqa.online.phrase_values`). Answers are cross-checked by SQL on the dataset's own
tables. A word the data stores but that names the answer's class ("In which tissue …":
the anatomical entity labelled "tissue" exists) stays the schema reading.
"""

from __future__ import annotations

import pytest

from navqa.model.events import ValueGrounding, ValuesGrounded
from navqa.online.phrase_values import content_ngrams
from navqa.online.pipeline import Pipeline

pytestmark = [pytest.mark.ontop, pytest.mark.postgres]

RDFS_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
GENEX = "http://purl.org/genex#"
STAGE = "http://www.ebi.ac.uk/efo/EFO_0000399"
RAIL = "http://example.org/navqa/rail#"
EXPRESSED = """globalexpression ge JOIN gene g ON g.bgeegeneid = ge.bgeegeneid
  JOIN globalcond gc ON gc.globalconditionid = ge.globalconditionid
  JOIN anatentity a ON a.anatentityid = gc.anatentityid"""


@pytest.fixture(scope="module")
def bgee(vkg):
    return vkg("bgee")


@pytest.fixture(scope="module")
def bgee_pipeline(navqa_config, bgee, embedder) -> Pipeline:
    return Pipeline.for_vkg(navqa_config, bgee.running, embedder=embedder)


def _groundings(answer) -> dict[str, ValueGrounding]:
    [ev] = answer.of(ValuesGrounded)
    assert isinstance(ev, ValuesGrounded)
    return {g.mention: g for g in ev.groundings}


def _column(answer) -> set[str]:
    assert answer.error is None, answer.error
    assert answer.result is not None, answer.sparql
    return {str(r[0].value) for r in answer.result.rows}


def test_content_ngrams_skip_function_words_longest_first() -> None:
    spans = content_ngrams("Which genes are expressed in the second segment of the antenna?")
    texts = [s.text for s in spans]
    assert {len(s.text.split()) for s in spans[:2]} == {5}
    assert "second segment of the antenna" in texts
    assert "the antenna" not in texts and "in the" not in texts and "Which" not in texts
    assert texts.index("second segment") < texts.index("antenna")


@pytest.mark.bgee
def test_a_lower_case_organ_is_grounded_and_answered_like_sql(bgee_pipeline, bgee) -> None:
    answer = bgee_pipeline.ask("Which genes are expressed in the brain?")
    g = _groundings(answer)["brain"]
    assert (g.prop, g.stored, g.classes) == (RDFS_LABEL, "brain", (GENEX + "AnatomicalEntity",))
    expected = {r[0] for r in bgee.sql(
        f"SELECT DISTINCT g.genename FROM {EXPRESSED} "
        "WHERE a.anatentityname = 'brain' AND ge.calltype = 'EXPRESSED'")}
    all_genes = {r[0] for r in bgee.sql("SELECT genename FROM gene")}
    assert expected and expected != all_genes  # the value does constrain the answer
    assert _column(answer) == expected, answer.sparql


@pytest.mark.bgee
def test_a_lower_case_organ_constrains_a_count(bgee_pipeline, bgee) -> None:
    answer = bgee_pipeline.ask("How many genes are expressed in the testis?")
    assert _groundings(answer)["testis"].stored == "testis"
    [(expected,)] = bgee.sql(
        f"SELECT count(DISTINCT g.geneid) FROM {EXPRESSED} "
        "WHERE a.anatentityname = 'testis' AND ge.calltype = 'EXPRESSED'")
    assert _column(answer) == {str(expected)}, answer.sparql


@pytest.mark.bgee
def test_a_name_stored_with_a_qualifier_keeps_its_number(bgee_pipeline) -> None:
    """"embryonic stage 16" is the stage "embryonic stage 16 (Drosophila)", typed by a probe
    (stages and anatomical entities share an IRI template), and 16 is no numeric filter."""
    answer = bgee_pipeline.ask(
        "How many expression calls does the gene boss have during embryonic stage 16?")
    found = _groundings(answer)
    stage = found["embryonic stage 16"]
    assert (stage.stored, stage.classes) == ("embryonic stage 16 (Drosophila)", (STAGE,))
    assert found["boss"].classes == ("http://purl.org/net/orth#Gene",)
    literal = '"embryonic stage 16 (Drosophila)"'
    assert answer.sparql is not None and literal in answer.sparql
    assert "16" not in answer.sparql.replace(literal, ""), answer.sparql


@pytest.mark.bgee
def test_the_answer_noun_stays_a_schema_term_although_the_data_stores_it(
        bgee_pipeline, bgee) -> None:
    # the data does have an anatomical entity labelled "tissue", and the question's
    # lower-case "boss" is grounded ...
    assert bgee.sql("SELECT 1 FROM anatentity WHERE anatentityname = 'tissue'")
    answer = bgee_pipeline.ask("In which tissue is the gene boss expressed?")
    found = _groundings(answer)
    assert found["boss"].stored == "boss"
    # ... but "tissue" asks for the answer's class: it becomes no constant
    assert set(found) == {"boss"}, found
    assert answer.sparql is not None and '"tissue"' not in answer.sparql


def test_a_name_written_in_lower_case_finds_its_stored_spelling(demo_pipeline, vkg) -> None:
    answer = demo_pipeline.ask("what is the population of dunmere?")
    g = _groundings(answer)["dunmere"]
    assert (g.prop, g.stored, g.classes) == (RAIL + "name", "Dunmere", (RAIL + "City",))
    [(population,)] = vkg("demo").sql("SELECT population FROM city WHERE name = 'Dunmere'")
    assert _column(answer) == {str(population)}, answer.sparql


def test_words_the_grammar_reads_are_no_values() -> None:
    # "the first ten alphabetically" is an ordering and a bound, not a stored "First"
    grams = [s.text for s in content_ngrams(
        "Which buildings are museums? Give the first ten alphabetically.")]
    assert not {"first", "ten", "alphabetically", "first ten"} & set(grams), grams
    assert "museums" in grams
    # an ordinal inside a name of several words still counts ("second segment")
    grams = [s.text for s in content_ngrams("Which genes are expressed in the second segment "
                                            "of the antenna?")]
    assert "second segment of the antenna" in grams


def test_the_rule_is_recorded_and_can_be_switched_off(demo_pipeline) -> None:
    from navqa.model.events import QuerySynthesized
    from navqa.model.rules import GrammarRule

    question = "what is the population of dunmere?"
    on = demo_pipeline.ask(question)
    [synth] = [e for e in on.events if isinstance(e, QuerySynthesized)]
    assert GrammarRule.LOWERCASE_VALUE in synth.rules
    cfg = demo_pipeline.config.with_overrides(pipeline={"disabled_rules": ["lowercase-value"]})
    off = Pipeline(demo_pipeline.ctx, demo_pipeline.endpoint, cfg).ask(question)
    assert "dunmere" not in _groundings(off)
    [synth] = [e for e in off.events if isinstance(e, QuerySynthesized)]
    assert GrammarRule.LOWERCASE_VALUE not in synth.rules
