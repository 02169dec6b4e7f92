"""When a superlative-looking word ranks the answers, and when it is a noun or a
coordinated modifier ("the top and base depth"). General sentences, not dataset questions."""

from __future__ import annotations

import pytest

from navqa.online.reading.mentions import extract_mentions


@pytest.mark.parametrize("question, word", [
    ("Which line is the longest?", "longest"),
    ("List the top 5 stations by passengers.", "top"),
    ("Which is the longest and deepest tunnel?", "longest"),  # two superlatives, one ranking
    ("Which stations have the most and least platforms?", "most"),
])
def test_a_superlative_ranks(question: str, word: str) -> None:
    assert extract_mentions(question).cues.superlative_word == word


@pytest.mark.parametrize("question", [
    "Show the tunnels of line 4, with the top and base depth of each.",
    "What is the top of the embankment made of?",
    "List the top or bottom platforms of Ashby.",
])
def test_a_noun_or_coordinated_modifier_does_not_rank(question: str) -> None:
    assert extract_mentions(question).cues.superlative is None
