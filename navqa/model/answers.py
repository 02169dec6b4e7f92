"""What an answer to an entity question is: the convention a question set is written in.

"Which fields does Statoil operate?" asks for entities. A SPARQL user expects the entities
themselves, each with a label to show: ``SELECT ?field ?name`` (:attr:`EntityAnswer.ENTITY`,
navqa's convention and the default). NaVQA's question sets, and this repository's dev and
validation splits, project the label alone (:attr:`EntityAnswer.LABEL`). Under the strict
metric (a row is a multiset of terms) the two never score alike, so a question set states
the convention it was written in (``[answers]`` in a dataset manifest, ``navqa eval
--entity-answer``) and the offline synthesizer answers in it. An asked attribute ("What is
the name of …", "How deep is …") is its value in both conventions.
"""

from __future__ import annotations

from enum import StrEnum

from navqa.model.terms import IRITerm, SelectResult

__all__ = ["EntityAnswer", "projection_instruction", "shown_column"]


class EntityAnswer(StrEnum):
    """How an entity answer is projected."""

    ENTITY = "entity"
    """The entity's IRI and its label (``?field ?name``); an entity without a label, its IRI."""
    LABEL = "label"
    """Its label alone (``?name``): NaVQA's convention."""


def projection_instruction(convention: EntityAnswer) -> str:
    """What an LLM prompt says to project for a "which/what" question, in ``convention``."""
    if convention is EntityAnswer.ENTITY:
        return ('each entity and its name (the entity variable, then its name literal) for '
                '"which/what" questions')
    return 'entity names (not IRIs) for "which/what" questions'


def shown_column(result: SelectResult) -> int:
    """The column a person reads an answer by: in an entity answer (a column of IRIs and
    then their labels) the first column with a value that is not an IRI; otherwise, and
    when every column holds IRIs, the first."""
    for j in range(len(result.variables)):
        cells = [row[j] for row in result.rows if row[j] is not None]
        if cells and not all(isinstance(c, IRITerm) for c in cells):
            return j
    return 0
