"""Question files: JSONL, one question per line, validated line by line.

Each non-blank line is a JSON object::

    {"id": "demo-001", "question": "What is the population of Dunmere?",
     "sparql": "PREFIX rail: <…> SELECT ?population WHERE { … }",
     "hops": 1, "features": ["filter"], "vkg": "demo",
     "sql": "SELECT …", "trap": "http://…#openingYear", "note": "…"}

``id``, ``question`` and ``sparql`` are required; the others are optional. Unknown keys
are errors (they are usually typos). ``sparql`` must parse as a SPARQL 1.1 *query*
(UPDATE is refused). ``trap`` names the unmapped ontology term(s) a naive system is
expected to fall into: a string or a list of strings.

:func:`load_questions` reads the whole file and reports **every** problem, each with
its line number, in one :class:`QuestionFileError`; ids must be unique.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from navqa.errors import EvaluationError, QueryCheckError

__all__ = [
    "Question",
    "QuestionFileError",
    "QuestionSet",
    "default_question_files",
    "load_questions",
]


class Question(BaseModel):
    """One line of a question file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    sparql: str = Field(min_length=1)
    hops: int | None = Field(default=None, ge=0)
    features: tuple[str, ...] = ()
    vkg: str | None = None
    sql: str | None = None
    trap: tuple[str, ...] = ()
    note: str | None = None

    @field_validator("id", "question", "sparql")
    @classmethod
    def _not_blank(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("must not be blank")
        return v

    @field_validator("trap", mode="before")
    @classmethod
    def _trap_list(cls, v: Any) -> Any:
        if isinstance(v, str):
            return (v,)
        return v


class QuestionFileError(EvaluationError):
    """A question file has invalid lines.

    Attributes:
        path: The file.
        problems: ``(line, message)`` pairs, 1-based lines, in file order.
    """

    def __init__(self, path: Path, problems: Sequence[tuple[int, str]]) -> None:
        self.path = path
        self.problems = list(problems)
        lines = "\n".join(f"  {path}:{line}: {msg}" for line, msg in self.problems)
        n = len(self.problems)
        super().__init__(f"{path}: {n} invalid line{'s' if n != 1 else ''}\n{lines}",
                         hint="fix the lines listed; each must be a JSON object with "
                              "id, question and sparql")


@dataclass(frozen=True)
class QuestionSet:
    """The questions of one or more files, in file order.

    Attributes:
        questions: The questions.
        sources: The files they came from.
        lines: 1-based line number of each question, keyed by id.
    """

    questions: tuple[Question, ...]
    sources: tuple[Path, ...] = ()
    lines: dict[str, tuple[Path, int]] | None = None

    def __len__(self) -> int:
        return len(self.questions)

    def __iter__(self) -> Iterator[Question]:
        return iter(self.questions)

    def ids(self) -> list[str]:
        return [q.id for q in self.questions]

    def by_id(self) -> dict[str, Question]:
        return {q.id: q for q in self.questions}


def _check_query(text: str) -> str | None:
    from navqa.backends.sparql_http import query_form
    from navqa.evaluation.shape import analyse_query

    try:
        query_form(text)
        analyse_query(text)
    except QueryCheckError as e:
        return f"sparql: {e.message}"
    return None


def _pydantic_problems(e: ValidationError) -> list[str]:
    out = []
    for err in e.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "line"
        msg = err["msg"]
        if err["type"] == "extra_forbidden":
            msg = "unknown key"
        elif err["type"] == "missing":
            msg = "required key missing"
        out.append(f"{loc}: {msg}")
    return out


def load_questions(*paths: Path | str, check_sparql: bool = True) -> QuestionSet:
    """Read and validate question files (JSONL).

    Args:
        paths: One or more files; their questions are concatenated in order.
        check_sparql: Parse every ``sparql`` with rdflib (and refuse UPDATE).

    Returns:
        The questions.

    Raises:
        QuestionFileError: listing every invalid line of the first file with problems
            (bad JSON, missing or unknown keys, wrong types, unparsable SPARQL, an id
            already used on an earlier line or in an earlier file).
        EvaluationError: a file cannot be read, or no path was given.
    """
    if not paths:
        raise EvaluationError("no question file given")
    questions: list[Question] = []
    seen: dict[str, tuple[Path, int]] = {}
    sources = []
    for raw_path in paths:
        path = Path(raw_path)
        sources.append(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError as e:
            raise EvaluationError(f"question file {path} does not exist") from e
        except (OSError, UnicodeDecodeError) as e:
            raise EvaluationError(f"cannot read question file {path}: {e}") from e
        problems: list[tuple[int, str]] = []
        for lineno, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
            except json.JSONDecodeError as e:
                problems.append((lineno, f"not valid JSON: {e.msg} (column {e.colno})"))
                continue
            if not isinstance(data, dict):
                problems.append((lineno, "not a JSON object"))
                continue
            try:
                q = Question.model_validate(data)
            except ValidationError as e:
                problems.extend((lineno, m) for m in _pydantic_problems(e))
                continue
            bad = False
            if q.id in seen:
                where_path, where_line = seen[q.id]
                where = f"line {where_line}" if where_path == path else f"{where_path}:{where_line}"
                problems.append((lineno, f"duplicate id {q.id!r} (first used on {where})"))
                bad = True
            else:
                seen[q.id] = (path, lineno)
            if check_sparql:
                msg = _check_query(q.sparql)
                if msg is not None:
                    problems.append((lineno, msg))
                    bad = True
            if not bad:
                questions.append(q)
        if problems:
            raise QuestionFileError(path, problems)
    return QuestionSet(questions=tuple(questions), sources=tuple(sources), lines=seen)


def default_question_files(vkg: str) -> list[Path]:
    """The question files a dataset's manifest lists (``questions = [...]``).

    Raises:
        EvaluationError: when the manifest lists none.
        DatasetError: unknown dataset.
    """
    from navqa.runtime.datasets import load_manifest
    from navqa.runtime.paths import repo_root

    manifest = load_manifest(vkg)
    if not manifest.questions:
        raise EvaluationError(f"dataset {vkg!r} lists no question file in its manifest",
                              hint="pass --dataset FILE")
    root = repo_root()
    return [root / q for q in manifest.questions]
