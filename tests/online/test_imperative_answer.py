"""The answer class of an imperative or partitive question.

"List the books …", "Give the title and page count of each book …" and "How many of the
authors …" name the answer as the imperative's object, after "of each" when a short list
of values comes first (not after "of the": "the branches of the city" are branches), or
after the partitive "of the". A possessive object ("give the
branch's books") names an attribute of a thing, and no class is taken from it. On the
three-class books VKG of ``synth_vkgs``.
"""

from __future__ import annotations

import pytest
from synth_vkgs import books_vkg, index_vkg

from navqa.backends.protocols import Embedder
from navqa.config import NavqaConfig
from navqa.model.events import AnswerKind
from navqa.online.context import SchemaContext
from navqa.online.reading.answer_type import offline_answer_type
from navqa.online.reading.mentions import extract_mentions

EX = "http://example.org/shelf#"


@pytest.fixture(scope="module")
def shelf(navqa_config: NavqaConfig, embedder: Embedder,
          tmp_path_factory: pytest.TempPathFactory) -> SchemaContext:
    ontology, mapping = books_vkg(EX)
    return index_vkg(navqa_config, embedder, tmp_path_factory.mktemp("shelf"), "shelf",
                     ontology, mapping)


@pytest.mark.parametrize(("question", "cls"), [
    ("List the authors born in Leeds, sorted by name.", "Author"),
    ("Show me all the library branches of the city.", "Branch"),
    ("Give the title, page count and publication date of each book written by Ann Lee.",
     "Book"),
    ("Name the five longest books held at the Central branch.", "Book"),
    ("How many of the authors wrote more than three books?", "Author"),
])
def test_the_object_of_the_request_is_the_answer_class(shelf: SchemaContext, question: str,
                                                       cls: str) -> None:
    at = offline_answer_type(shelf, question, extract_mentions(question))
    assert at.cls == EX + cls


def test_a_possessive_object_names_no_class(shelf: SchemaContext) -> None:
    question = "Give the Central branch's oldest books."
    at = offline_answer_type(shelf, question, extract_mentions(question))
    assert at.kind is AnswerKind.ENTITY
    assert at.cls is None
