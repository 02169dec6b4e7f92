"""Rules of the offline backend that the demo question set does not exercise on its own."""

from __future__ import annotations

import pytest

from navqa.evaluation.metrics import score
from navqa.online.context import SchemaContext
from navqa.online.reading.mentions import extract_mentions

NPDV = "http://sws.ifi.uio.no/vocab/npd-v2#"


def test_digits_with_a_leading_zero_are_a_name_not_a_number() -> None:
    m = extract_mentions("Which companies are licensees in production licence 018?")
    assert [(v.text, v.kind) for v in m.values] == [("018", "string")]


def test_a_thousands_group_is_not_mistaken_for_an_identifier() -> None:
    m = extract_mentions("Which cities have more than 100,000 inhabitants?")
    assert [(v.text, v.kind, v.comparator) for v in m.values] == [("100000", "number", ">")]


def test_an_en_dash_joins_two_names_into_one() -> None:
    m = extract_mentions("Which company operates the Kårstø–Emden gas pipeline?")
    assert [(v.text, v.kind) for v in m.values] == [("Kårstø–Emden", "string")]
    # a spaced dash is punctuation between two names
    m = extract_mentions("Which fields lie between Troll – Oseberg?")
    assert [v.text for v in m.values] == ["Troll", "Oseberg"]


@pytest.mark.npd
def test_the_generic_name_property_names_a_class_before_compound_names(
        navqa_config, shared_dataset, embedder) -> None:
    """NPD's production licences have npdv:name ("018") and npdv:licensingActivityName."""
    from navqa.offline.artifacts import ensure_index

    ctx = SchemaContext(ensure_index(navqa_config, shared_dataset("npd"), embedder=embedder),
                        embedder)
    licence_props = {e.prop for e in ctx.data_properties_of(NPDV + "ProductionLicence")}
    assert NPDV + "licensingActivityName" in licence_props  # the competing candidate
    assert ctx.name_property(NPDV + "ProductionLicence") == NPDV + "name"


@pytest.mark.ontop
def test_the_first_aggregate_word_governs(demo_pipeline) -> None:
    """'average total length' asks for an average, not a total."""
    answer = demo_pipeline.ask("What is the average total length of the railway lines?")
    assert answer.error is None, answer.error
    expected = demo_pipeline.endpoint.query(
        "PREFIX rail: <http://example.org/navqa/rail#>\n"
        "SELECT (AVG(?km) AS ?a) WHERE { ?l a rail:Line ; rail:lengthKm ?km }")
    assert score(expected, answer.result).acc, answer.sparql
