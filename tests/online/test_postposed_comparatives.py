"""A comparison written after the number ("50 years or more", "3 km or less") bounds the
value like one written before it ("at least 50 years"); a coordination of two numbers
("2 or 3 platforms") is no comparison."""

from __future__ import annotations

import pytest

from navqa.online.reading.mentions import extract_mentions


def _values(question: str) -> list[tuple[str, str, str]]:
    return [(v.text, v.kind, v.comparator) for v in extract_mentions(question).values]


@pytest.mark.parametrize(("question", "expected"), [
    ("Which bridges have a design lifetime of 50 years or more?", [("50", "number", ">=")]),
    ("Which lakes are 3 km or less across?", [("3", "number", "<=")]),
    ("Which towns were founded in 1990 or later?", [("1990", "year", ">=")]),
    ("Which towns were founded in 1850 or earlier?", [("1850", "year", "<=")]),
    ("Which authors wrote ten books or more?", [("10", "number", ">=")]),
    ("Which rivers are 200 km long and above?", [("200", "number", ">=")]),
])
def test_a_postposed_comparison_bounds_the_value(question: str, expected: list) -> None:
    assert _values(question) == expected


@pytest.mark.parametrize(("question", "expected"), [
    ("Which stations have 2 or 3 platforms?", [("2", "number", "="), ("3", "number", "=")]),
    ("Which lines have more than 5 stops?", [("5", "number", ">")]),
    ("Which books have 300 pages?", [("300", "number", "=")]),
])
def test_no_postposed_comparison(question: str, expected: list) -> None:
    assert _values(question) == expected
