"""A value that is not in the data is reported and its constraint kept (never dropped).

"Which company operates the Foo Bar Line?" names no stored line: answering with every
company would answer another question. The answer must be empty, say that the value was
not found, and name the nearest stored values.
"""

from __future__ import annotations

import pytest

from navqa.model.events import ValuesGrounded

pytestmark = [pytest.mark.ontop, pytest.mark.postgres]


def test_a_value_not_in_the_data_keeps_its_constraint_and_is_reported(demo_pipeline) -> None:
    answer = demo_pipeline.ask("Which company operates the Foo Bar Line?")
    assert answer.error is None, answer.error
    [ev] = answer.of(ValuesGrounded)
    assert isinstance(ev, ValuesGrounded)
    [u] = ev.ungrounded
    assert u.mention == "Foo Bar Line" and u.kept
    # the nearest stored values are real lines of the demo data
    assert u.nearest and all(v.endswith("Line") for v in u.nearest), u.nearest
    assert answer.sparql is not None and '"Foo Bar Line"' in answer.sparql
    assert answer.result is not None and answer.empty, answer.sparql
    # and the value is not silently dropped: without it the query returns companies
    companies = demo_pipeline.endpoint.query(
        "PREFIX rail: <http://example.org/navqa/rail#> "
        "SELECT DISTINCT ?c WHERE { ?c a rail:Company }")
    assert not companies.is_empty


def test_a_stored_value_is_not_reported_as_missing(demo_pipeline) -> None:
    answer = demo_pipeline.ask("Which company currently operates the Aster Coast Line?")
    [ev] = answer.of(ValuesGrounded)
    assert isinstance(ev, ValuesGrounded)
    assert ev.ungrounded == ()
    assert not answer.empty
