"""Conformance folders for the mapping parsers (morph-kgc ``test/r2rml`` style).

Each folder under ``tests/conformance/{obda,r2rml}/<case>/`` holds an input file and, written
by hand from it, either ``expected.json`` (the assertions; atoms compared as sets) or
``expected_error.json`` (a message substring, the line and the mapping id of the
:class:`~navqa.errors.MappingParseError`).

``expected.json``::

    {"prefixes": {...},                      # optional, compared exactly
     "assertions": [{"id": ..., "line": ..., "source": ...,   # whitespace-normalised
                     "atoms": [{"class": IRI, "subject": TERM}
                               | {"predicate": IRI, "subject": TERM, "object": TERM}]}]}

    TERM = {"template"|"column"|"constant": value, "type": "iri"|"literal"|"blank",
            "datatype"?: IRI, "language"?: tag, "columns"?: [names]}
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from navqa.errors import MappingParseError
from navqa.model.mapping import MappingAtom, MappingSet, TermKind, TermMap, TermType
from navqa.offline.obda_parser import parse_obda
from navqa.offline.r2rml_parser import parse_r2rml

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"
PARSERS: dict[str, tuple[str, Callable[[Path], MappingSet]]] = {
    "obda": ("input.obda", parse_obda),
    "r2rml": ("input.ttl", parse_r2rml),
}


def _cases(kind: str) -> list[Path]:
    return sorted(p for p in (CONFORMANCE / kind).iterdir() if p.is_dir())


def _term(d: dict[str, Any]) -> TermMap:
    (kind,) = [k for k in ("template", "column", "constant") if k in d]
    return TermMap(
        TermKind(kind),
        d[kind],
        TermType(d["type"]),
        d.get("datatype"),
        d.get("language"),
    )


def _atom(d: dict[str, Any]) -> MappingAtom:
    if "class" in d:
        return MappingAtom(d["class"], _term(d["subject"]), None, is_class=True)
    return MappingAtom(d["predicate"], _term(d["subject"]), _term(d["object"]))


def _norm(sql: str) -> str:
    return " ".join(sql.split())


def _check_columns(expected_atoms: list[dict[str, Any]], actual: set[MappingAtom]) -> None:
    for d in expected_atoms:
        atom = _atom(d)
        assert atom in actual
        for position in ("subject", "object"):
            term = d.get(position)
            if term and "columns" in term:
                got = getattr(atom, position).columns
                assert list(got) == term["columns"], (position, d)


def _run(kind: str, case: Path) -> None:
    input_name, parse = PARSERS[kind]
    source = case / input_name
    error_file = case / "expected_error.json"
    if error_file.exists():
        want = json.loads(error_file.read_text())
        with pytest.raises(MappingParseError) as info:
            parse(source)
        err = info.value
        assert want["message"] in str(err)
        assert err.line == want["line"]
        assert err.mapping_id == want["mapping_id"]
        assert err.path == source
        return

    want = json.loads((case / "expected.json").read_text())
    ms = parse(source)
    assert ms.format == kind
    assert ms.path == source
    if "prefixes" in want:
        assert dict(ms.prefixes) == want["prefixes"]
    got = {a.id: a for a in ms.assertions}
    assert len(got) == len(ms.assertions), "mapping ids must be unique"
    assert set(got) == {a["id"] for a in want["assertions"]}
    for expected in want["assertions"]:
        actual = got[expected["id"]]
        assert _norm(actual.source) == _norm(expected["source"])
        assert actual.location is not None
        assert actual.location.line == expected["line"]
        assert actual.location.path == str(source)
        actual_atoms = set(actual.atoms)
        assert len(actual_atoms) == len(actual.atoms), "no duplicate atoms"
        assert actual_atoms == {_atom(a) for a in expected["atoms"]}
        _check_columns(expected["atoms"], actual_atoms)


@pytest.mark.parametrize("case", _cases("obda"), ids=lambda p: p.name)
def test_obda_conformance(case: Path) -> None:
    _run("obda", case)


@pytest.mark.parametrize("case", _cases("r2rml"), ids=lambda p: p.name)
def test_r2rml_conformance(case: Path) -> None:
    _run("r2rml", case)


def test_every_folder_has_an_input_and_one_expectation() -> None:
    for kind, (input_name, _) in PARSERS.items():
        cases = _cases(kind)
        assert len(cases) >= 10, kind
        for case in cases:
            assert (case / input_name).is_file(), case
            expectations = [(case / n).is_file() for n in ("expected.json", "expected_error.json")]
            assert expectations.count(True) == 1, case
