"""Question files: JSONL, one question per line, validated line by line.

Each non-blank line is a JSON object::

    {"id": "demo-001", "question": "What is the population of Dunmere?",
     "sparql": "PREFIX rail: <…> SELECT ?population WHERE { … }",
     "hops": 1, "features": ["filter"], "vkg": "demo",
     "sql": "SELECT …", "trap": "http://…#openingYear", "note": "…"}

``id``, ``question`` and ``sparql`` are required; the others are optional. An unknown
key is a *warning* (benchmark files carry their own metadata; a typo shows up there):
it is ignored, and listed with its line in :attr:`QuestionSet.warnings`. ``sparql`` must
parse as a SPARQL 1.1 *query* (UPDATE is refused). ``trap`` names the unmapped ontology
term(s) a naive system is expected to fall into: a string or a list of strings.

Reference answers: ``answer`` scores the question against these rows instead of
executing its gold query (which must still be given: it fixes the hops and features,
and the ``gold`` strategy runs it). ``answer`` is a list of rows, each a list of cells,
or ``true``/``false`` for an ASK question. A cell is ``null`` (unbound), a JSON number
(``xsd:integer`` for an integer, else ``xsd:decimal``), ``true``/``false``
(``xsd:boolean``), a string (a plain literal, or an IRI when written ``"<http://…>"``),
or a SPARQL 1.1 JSON term (``{"type": "literal", "value": "5", "datatype": "…"}``).
``ordered`` (a boolean) says whether Acc compares ranked lists; by default, whether
the gold query is ORDER BY … LIMIT.

:func:`load_questions` reads the whole file and reports **every** problem, each with
its line number, in one :class:`QuestionFileError`; ids must be unique.

Splits (:class:`Split`): a VKG's manifest lists its *dev* question files
(``questions = [...]``, normally ``datasets/<vkg>/questions.jsonl``: rules are written on
them); the *validation* split is ``questions-validation.jsonl`` next to the first of them
(rules are kept or dropped by it), the *test* split ``questions-test.jsonl`` (frozen,
written without seeing the system, reported and never used to decide). The *blind* dev and
validation splits (``questions-dev-blind.jsonl``, ``questions-validation-blind.jsonl``) were
written like the test split, by helpers who never saw the system, and split in two by id
parity: rules are written on the first and kept or dropped by the second, so a rule is
judged on phrasing nobody here chose. All but dev are optional: asking for a split that
does not exist is an error. Any other file is ``custom``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from navqa.errors import EvaluationError, InputError, QueryCheckError
from navqa.model.answers import EntityAnswer
from navqa.model.iri import XSD
from navqa.model.resultio import term_from_json
from navqa.model.terms import AskResult, IRITerm, LiteralTerm, QueryResult, SelectResult, Term

log = logging.getLogger(__name__)

__all__ = [
    "Question",
    "QuestionFileError",
    "QuestionSet",
    "SPLITS",
    "SPLIT_FILES",
    "Split",
    "default_question_files",
    "load_questions",
    "load_split",
    "reference_result",
    "split_convention",
]


class Split(StrEnum):
    """Which question set of a VKG a run uses."""

    DEV = "dev"
    """Rules are written on it."""
    VALIDATION = "validation"
    """Rules are kept or dropped by it."""
    TEST = "test"
    """Reported only: never read, never used to decide."""
    DEV_BLIND = "dev-blind"
    """Written blind like the test split; rules are written on it."""
    VALIDATION_BLIND = "validation-blind"
    """Written blind with :attr:`DEV_BLIND` (the other half by id parity); rules are kept or
    dropped by it, its questions are not read."""
    CUSTOM = "custom"
    """Files given by the user (``--dataset``)."""


Cell = Any
"""One cell of a reference answer (see the module docstring)."""


def _cell_term(cell: Cell) -> Term | None:
    if cell is None:
        return None
    if isinstance(cell, bool):
        return LiteralTerm("true" if cell else "false", datatype=XSD + "boolean")
    if isinstance(cell, int):
        return LiteralTerm(str(cell), datatype=XSD + "integer")
    if isinstance(cell, float):
        return LiteralTerm(str(Decimal(repr(cell))), datatype=XSD + "decimal")
    if isinstance(cell, str):
        if len(cell) > 2 and cell.startswith("<") and cell.endswith(">"):
            return IRITerm(cell[1:-1])
        return LiteralTerm(cell)
    if isinstance(cell, dict):
        try:
            return term_from_json(cell)
        except (InputError, KeyError, TypeError) as e:
            raise ValueError(f"not a SPARQL JSON term: {cell!r}") from e
    raise ValueError(f"not a cell (null, number, boolean, string or term): {cell!r}")


def reference_result(answer: bool | Sequence[Sequence[Cell]]) -> QueryResult:
    """A reference ``answer`` as a query result (an ASK result for a boolean).

    Raises:
        ValueError: a row that is not a list, or a cell of no known form.
    """
    if isinstance(answer, bool):
        return AskResult(answer)
    rows: list[tuple[Term | None, ...]] = []
    for row in answer:
        if not isinstance(row, list | tuple):
            raise ValueError(f"a row must be a list of cells, got {row!r}")
        rows.append(tuple(_cell_term(c) for c in row))
    width = max((len(r) for r in rows), default=0)
    padded = tuple(r + (None,) * (width - len(r)) for r in rows)
    return SelectResult(variables=tuple(f"_{i + 1}" for i in range(width)), rows=padded)


class Question(BaseModel):
    """One line of a question file."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    sparql: str = Field(min_length=1)
    hops: int | None = Field(default=None, ge=0)
    features: tuple[str, ...] = ()
    vkg: str | None = None
    sql: str | None = None
    trap: tuple[str, ...] = ()
    note: str | None = None
    answer: bool | tuple[tuple[Cell, ...], ...] | None = None
    ordered: bool | None = None

    @field_validator("answer")
    @classmethod
    def _answer_converts(cls, v: Any) -> Any:
        if v is not None:
            reference_result(v)
        return v

    def reference(self) -> QueryResult | None:
        """The reference answer as a result, or ``None`` when the gold query decides."""
        return None if self.answer is None else reference_result(self.answer)

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
        split: Which split of a VKG these are (``custom`` for files given by hand).
        warnings: ``(file, line, message)`` for each ignored unknown key.
    """

    questions: tuple[Question, ...]
    sources: tuple[Path, ...] = ()
    lines: dict[str, tuple[Path, int]] | None = None
    split: Split = Split.CUSTOM
    warnings: tuple[tuple[Path, int, str], ...] = ()

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
    warnings: list[tuple[Path, int, str]] = []
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
            unknown = sorted(set(data) - set(Question.model_fields))
            if unknown:
                note = (f"unknown key{'s' if len(unknown) > 1 else ''} ignored: "
                        f"{', '.join(unknown)}")
                log.warning("%s:%d: %s", path, lineno, note)
                warnings.append((path, lineno, note))
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
    return QuestionSet(questions=tuple(questions), sources=tuple(sources), lines=seen,
                       warnings=tuple(warnings))


SPLIT_FILES = {Split.VALIDATION: "questions-validation.jsonl",
               Split.TEST: "questions-test.jsonl",
               Split.DEV_BLIND: "questions-dev-blind.jsonl",
               Split.VALIDATION_BLIND: "questions-validation-blind.jsonl"}
"""The file of each split beside the manifest's first (dev) question file."""
SPLITS = (Split.DEV, Split.VALIDATION, Split.TEST, Split.DEV_BLIND, Split.VALIDATION_BLIND)
"""The splits ``--split`` takes."""


def default_question_files(vkg: str, split: Split | str = Split.DEV) -> list[Path]:
    """The question files of a VKG's split: the manifest's (``dev``), or the validation or
    test file beside the first of them.

    Raises:
        EvaluationError: the manifest lists no question file, the split has no file, or
            ``split`` is not one of :data:`SPLITS`.
        DatasetError: unknown dataset.
    """
    from navqa.runtime.datasets import load_manifest
    from navqa.runtime.paths import repo_root

    if split not in SPLITS:
        raise EvaluationError(f"unknown split {split!r}; use one of "
                              + ", ".join(SPLITS))
    manifest = load_manifest(vkg)
    if not manifest.questions:
        raise EvaluationError(f"dataset {vkg!r} lists no question file in its manifest",
                              hint="pass --dataset FILE")
    root = repo_root()
    dev = [root / q for q in manifest.questions]
    if split == Split.DEV:
        return dev
    path = dev[0].parent / SPLIT_FILES[Split(split)]
    if not path.is_file():
        raise EvaluationError(f"dataset {vkg!r} has no {split} split ({path} does not exist)",
                              hint="use --split dev, or pass --dataset FILE")
    return [path]


def split_convention(vkg: str, split: Split | str = Split.DEV) -> EntityAnswer | None:
    """The answer convention a bundled VKG's split was written in (its manifest's
    ``[answers]``), or ``None`` when the manifest does not say.

    Raises:
        DatasetError: unknown dataset.
    """
    from navqa.runtime.datasets import load_manifest

    return load_manifest(vkg).answers.get(str(split))


def load_split(vkg: str, split: Split | str = Split.DEV, *,
               check_sparql: bool = True) -> QuestionSet:
    """Load the questions of one of a VKG's :data:`SPLITS`
    (see :func:`default_question_files`)."""
    files = default_question_files(vkg, split)
    qs = load_questions(*files, check_sparql=check_sparql)
    return QuestionSet(qs.questions, qs.sources, qs.lines, Split(split), qs.warnings)
