"""SPARQL synthesis by the LLM (NaVQA §3.2, "Query Generation").

The prompt holds the question, the chosen verbalised subgraph, the prefixes, the stored
forms of grounded values and the rules (use only the listed terms, project only the
answer). Only active-ontology terms can appear in it: the subgraph is built from Ga.
The answer is JSON ``{"sparql": "..."}``, validated; a failed check is fed back once.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, field_validator

from navqa.backends.protocols import LLM
from navqa.model.answers import EntityAnswer, projection_instruction
from navqa.model.llm import Message
from navqa.online.values import GroundedValue

_SYSTEM = """You write one SPARQL 1.1 query that answers a question over a virtual knowledge
graph. Rules:
- Use ONLY the classes and properties listed in the schema excerpt; any other term has no
  data behind it and the query would silently return nothing.
- Declare every prefix you use, from the given prefix list.
- Project only what the question asks for: {entities}, one COUNT for "how many", ASK
  for yes/no questions.
- Use the stored forms of values exactly as given.
- Read-only: SELECT or ASK only.
Return JSON: {{"sparql": "<the query>"}}"""


def system_prompt(convention: EntityAnswer = EntityAnswer.ENTITY) -> str:
    """The system message of the synthesis call, for an answer convention."""
    return _SYSTEM.format(entities=projection_instruction(convention))


class _Query(BaseModel):
    sparql: str

    @field_validator("sparql")
    @classmethod
    def _nonempty(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("empty query")
        return v.strip()


def prompt(question: str, schema_text: str, prefixes: dict[str, str],
           groundings: Sequence[GroundedValue], feedback: str | None = None) -> str:
    """The user message of the synthesis call."""
    pre = "\n".join(f"PREFIX {p}: <{ns}>" for p, ns in sorted(prefixes.items()))
    vals = "\n".join(f'- "{g.mention.text}" is stored as {g.sparql()} in the property '
                     f"{g.prop}" for g in groundings) or "- (none)"
    text = (f"Question: {question}\n\nPrefixes:\n{pre}\n\nSchema excerpt:\n{schema_text}\n\n"
            f"Values found in the data:\n{vals}\n")
    if feedback:
        text += f"\nYour previous query was rejected: {feedback}\nWrite a corrected query.\n"
    return text


class LLMSynthesizer:
    """Writes the query with the LLM."""

    method = "llm"

    def __init__(self, llm: LLM, *, entity_answer: EntityAnswer = EntityAnswer.ENTITY) -> None:
        self.llm = llm
        self.entity_answer = entity_answer

    def __call__(self, question: str, schema_text: str, prefixes: dict[str, str],
                 groundings: Sequence[GroundedValue], feedback: str | None = None) -> str:
        resp = self.llm.call([Message.system(system_prompt(self.entity_answer)),
                              Message.user(prompt(question, schema_text, prefixes, groundings,
                                                  feedback))], schema=_Query)
        parsed: _Query = resp.parsed
        return parsed.sparql
