"""Parse Ontop's native ``.obda`` mapping syntax into a :class:`~navqa.model.mapping.MappingSet`.

Accepted syntax::

    [PrefixDeclaration]
    :       http://example.org/voc#          <- the default prefix is written ``:``
    xsd:    http://www.w3.org/2001/XMLSchema#

    [MappingDeclaration] @collection [[
    mappingId   wells
    target      :well/{id} a :Well ; :name {name}^^xsd:string ; :label {"Nm"}@en .
                :well/{id}/pt :of :well/{id} .          <- several subjects, ' . '-separated
    source      SELECT id, name, "Nm"
                FROM well                               <- continuation lines
    ]]

* An entry is ``mappingId`` / ``target`` / ``source`` (label, whitespace, value); a line that
  does not start with one of these labels continues the previous entry; a blank line ends
  the assertion. Lines whose first non-blank character is ``;`` (Ontop's comment symbol)
  or ``#`` are comments. Prefix declarations may come before or after the mappings.
* Targets are Turtle-like: ``;`` separates predicate-object pairs, ``,`` objects, ``.``
  triples (subjects); ``a`` is ``rdf:type``.
* Terms: ``<http://x/{col}>`` and ``prefix:local{col}`` are IRIs (templates when they hold a
  placeholder, constants otherwise); a bare ``{col}`` object is a **literal** column, with
  an optional ``^^datatype`` or ``@lang``; ``"..{a}..{b}.."`` is a literal template,
  ``"text"``/numbers/``true``/``false`` are constant literals; ``_:b{col}`` is a blank node.
  A bare ``{col}`` in subject position is an IRI column.
* ``TermMap.value`` holds the template text with its prefix expanded but otherwise as
  written (``{"wlbName"}`` keeps its quotes); column term maps hold the unquoted name.

Errors (:class:`~navqa.errors.MappingParseError`, with file, line and mapping id): unknown
prefix, unbalanced ``{}`` / ``<>`` / ``[]``, an assertion without ``mappingId``, ``target``
or ``source``, a duplicate mapping id, a target that is not a sequence of triples.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from navqa.errors import MappingParseError
from navqa.model.iri import RDF_TYPE, XSD
from navqa.model.mapping import (
    MappingAssertion,
    MappingAtom,
    MappingSet,
    SourceLocation,
    TermKind,
    TermMap,
    TermType,
)
from navqa.model.template import PLACEHOLDER, unquote_column
from navqa.model.xsd import XSD_BOOLEAN

__all__ = ["parse_obda", "parse_obda_text", "parse_target"]


_LABELS = ("mappingId", "target", "source")
_LABEL_LINE = re.compile(r"(mappingId|target|source)(?:[ \t]+(.*))?$")
_PREFIX_LINE = re.compile(r"([A-Za-z_][\w.\-]*)?:[ \t]+<?([^\s>]+)>?\s*$")
# An IRI or prefixed name as a target writes it (``<http://x/{id}>``, ``:a/{id}``,
# ``ex:name``), never SQL's ``x::int`` cast.
_TERM = r"(?:<[^>\s]*>|[A-Za-z_][\w\-.]*:(?!:)\S*|:(?!:)\S*)"
# A line of triple templates (``:a/{id} a :A .``, ``:a/{id} :name {n} ;``): subject,
# predicate (``a`` or an IRI), an object, and Turtle's closing punctuation.
_TRIPLE_LINE = re.compile(rf"(?:target[ \t]+)?{_TERM}[ \t]+(?:a|{_TERM})[ \t]+\S.*[.;,]")
# A label pushed right of the line start, where only SQL may stand.
_INDENTED_LABEL = re.compile(r"(?:mappingId[ \t]+\S+|source[ \t]+(?i:select|with)\b.*)")
_STOP = set(" \t\r\n;,<>\"'()[]")


@dataclass
class _RawAssertion:
    """An assertion as read from the file, before its target is parsed."""

    line: int
    mapping_id: str | None = None
    target: list[str] = field(default_factory=list)
    target_line: int = 0
    source: list[str] = field(default_factory=list)
    current: str | None = None


def parse_obda(path: Path) -> MappingSet:
    """Parse a native Ontop ``.obda`` file.

    Args:
        path: The mapping file.

    Returns:
        The mapping set (``format="obda"``), one assertion per ``mappingId``, in file order.

    Raises:
        MappingParseError: The file is missing, malformed (file, line and mapping id) or
            has no mapping assertion.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise MappingParseError("mapping file not found", path=path) from e
    except (OSError, UnicodeDecodeError) as e:
        raise MappingParseError(f"cannot read mapping file: {e}", path=path) from e
    ms = parse_obda_text(text, path=path)
    if not ms.assertions:
        raise MappingParseError(
            "the mapping file has no mapping assertion: the VKG would have no data",
            path=path, hint="assertions go inside [MappingDeclaration] @collection [[ … ]]")
    return ms


def parse_obda_text(text: str, *, path: Path | None = None) -> MappingSet:
    """Parse ``.obda`` content given as a string (``path`` is used in messages only)."""
    prefixes, raws = _read_sections(text.splitlines(), path)
    assertions: list[MappingAssertion] = []
    seen: dict[str, int] = {}
    for raw in raws:
        mid = raw.mapping_id
        if not mid:
            raise MappingParseError("assertion has no mappingId", path=path, line=raw.line)
        if mid in seen:
            raise MappingParseError(
                f"duplicate mapping id (first defined at line {seen[mid]})",
                path=path,
                line=raw.line,
                mapping_id=mid,
            )
        seen[mid] = raw.line
        target = "\n".join(raw.target).rstrip()  # keep leading newlines: they count lines
        source = "\n".join(raw.source).strip()
        if not target:
            raise MappingParseError(
                "assertion has no target", path=path, line=raw.line, mapping_id=mid
            )
        if not source:
            raise MappingParseError(
                "assertion has no source", path=path, line=raw.line, mapping_id=mid
            )
        atoms = parse_target(target, prefixes, path=path, line=raw.target_line, mapping_id=mid)
        location = SourceLocation(str(path) if path else "<string>", raw.line)
        assertions.append(MappingAssertion(mid, source, atoms, location))
    return MappingSet(tuple(assertions), prefixes, path, "obda")


# -- file structure -----------------------------------------------------------------------


def _is_comment(line: str) -> bool:
    stripped = line.lstrip()
    return stripped.startswith((";", "#"))


def _read_sections(
    lines: list[str], path: Path | None
) -> tuple[dict[str, str], list[_RawAssertion]]:
    prefixes: dict[str, str] = {}
    raws: list[_RawAssertion] = []
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        i += 1
        if not line or _is_comment(line):
            continue
        if line.startswith("[PrefixDeclaration]"):
            i = _read_prefixes(lines, i, prefixes, path)
        elif line.startswith("[MappingDeclaration]"):
            if "@collection [[" not in line:
                raise MappingParseError(
                    "expected '@collection [[' after [MappingDeclaration]", path=path, line=i
                )
            i = _read_mappings(lines, i, raws, path)
        else:
            raise MappingParseError(
                f"unexpected text outside a section: {line[:60]!r}", path=path, line=i
            )
    return prefixes, raws


def _read_prefixes(lines: list[str], i: int, prefixes: dict[str, str], path: Path | None) -> int:
    while i < len(lines):
        line = lines[i].strip()
        if not line or line.startswith("["):
            return i
        i += 1
        if _is_comment(line):
            continue
        m = _PREFIX_LINE.fullmatch(line)
        if m is None:
            raise MappingParseError(
                f"malformed prefix declaration {line[:80]!r} (expected 'prefix:<tab>IRI')",
                path=path,
                line=i,
            )
        prefixes[m.group(1) or ""] = m.group(2)
    return i


def _read_mappings(lines: list[str], i: int, raws: list[_RawAssertion], path: Path | None) -> int:
    """Read assertions up to ``]]``; returns the index after it."""
    start = i
    raw: _RawAssertion | None = None
    while i < len(lines):
        line = lines[i]
        lineno = i + 1
        i += 1
        if line.strip() == "]]":
            if raw is not None:
                raws.append(raw)
            return i
        if not line.strip():
            if raw is not None:
                raws.append(raw)
                raw = None
            continue
        if _is_comment(line):
            continue
        m = _LABEL_LINE.match(line)
        if m is not None:
            label, value = m.group(1), (m.group(2) or "").strip()
            if label == "mappingId" and raw is not None and raw.mapping_id is not None:
                raws.append(raw)  # a new assertion without a separating blank line
                raw = None
            if raw is None:
                raw = _RawAssertion(line=lineno)
            raw.current = label
            if label == "mappingId":
                raw.mapping_id = value
                raw.line = lineno
            elif label == "target":
                if raw.target:
                    raise MappingParseError(
                        "assertion has two target entries",
                        path=path,
                        line=lineno,
                        mapping_id=raw.mapping_id,
                    )
                raw.target_line = lineno
                raw.target.append(value)
            else:
                if raw.source:
                    raise MappingParseError(
                        "assertion has two source entries",
                        path=path,
                        line=lineno,
                        mapping_id=raw.mapping_id,
                    )
                raw.source.append(value)
            continue
        if raw is None or raw.current is None:
            raise MappingParseError(
                f"expected mappingId, target or source, got {line.strip()[:60]!r}",
                path=path,
                line=lineno,
            )
        if raw.current == "mappingId":
            raise MappingParseError(
                "mappingId must fit on one line", path=path, line=lineno, mapping_id=raw.mapping_id
            )
        if raw.current == "source":
            _check_sql_line(line.strip(), path, lineno, raw.mapping_id)
        (raw.target if raw.current == "target" else raw.source).append(line.strip())
    raise MappingParseError(
        "missing ']]' closing the @collection opened here", path=path, line=start
    )


def _check_sql_line(text: str, path: Path | None, lineno: int, mapping_id: str | None) -> None:
    """Refuse a continuation line of a ``source`` that is plainly not SQL.

    A target triple template or an indented ``mappingId``/``source`` label there would
    otherwise be glued into the SQL query and only fail (or not) inside Ontop.
    """
    if _TRIPLE_LINE.fullmatch(text):
        what = "a target triple template (a missing 'target' label or blank line?)"
    elif _INDENTED_LABEL.fullmatch(text):
        what = f"a {text.split()[0]!r} entry, which must start its line"
    else:
        return
    raise MappingParseError(f"source: {text[:60]!r} is not SQL: it looks like {what}",
                            path=path, line=lineno, mapping_id=mapping_id)


# -- target queries -----------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # iri | pname | column | string | number | bool | bnode | a | punct
    text: str
    pos: int
    lang: str | None = None
    datatype: str | None = None
    datatype_pos: int = 0


class _TargetError(Exception):
    def __init__(self, message: str, pos: int) -> None:
        super().__init__(message)
        self.pos = pos


def parse_target(
    target: str,
    prefixes: dict[str, str],
    *,
    path: Path | None = None,
    line: int = 1,
    mapping_id: str | None = None,
) -> tuple[MappingAtom, ...]:
    """Parse one target (Turtle-like triple templates) into mapping atoms.

    Args:
        target: The target text; continuation lines joined with newlines.
        prefixes: Declared prefixes (``""`` is the default ``:`` prefix).
        path / line / mapping_id: Where the target was read, for error messages.

    Raises:
        MappingParseError: The target is malformed or uses an undeclared prefix.
    """
    try:
        tokens = _tokenize(target)
        return tuple(_TargetParser(tokens, prefixes, len(target)).triples())
    except _TargetError as e:
        at = line + target.count("\n", 0, e.pos)
        raise MappingParseError(f"target: {e}", path=path, line=at, mapping_id=mapping_id) from e


def _read_braces(s: str, i: int) -> int:
    """Index after the ``}`` closing the ``{`` at ``s[i]`` (quotes inside are honoured)."""
    j = i + 1
    quote: str | None = None
    while j < len(s):
        c = s[j]
        if quote:
            if c == quote:
                quote = None
        elif c in '"`':
            quote = c
        elif c == "{":
            raise _TargetError("unbalanced braces: '{' inside a placeholder", j)
        elif c == "}":
            return j + 1
        elif c == "\n":
            break
        j += 1
    raise _TargetError("unbalanced braces: '{' is never closed", i)


def _read_iri(s: str, i: int) -> int:
    j = i + 1
    while j < len(s):
        c = s[j]
        if c == "{":
            j = _read_braces(s, j)
            continue
        if c == "}":
            raise _TargetError("unbalanced braces: '}' without '{'", j)
        if c == ">":
            return j + 1
        if c in ' \t\r\n<"':
            break
        j += 1
    raise _TargetError("unbalanced brackets: '<' is never closed by '>'", i)


def _read_string(s: str, i: int) -> int:
    q = s[i]
    j = i + 1
    while j < len(s):
        if s[j] == "\\":
            j += 2
            continue
        if s[j] == q:
            return j + 1
        j += 1
    raise _TargetError(f"unterminated string literal (missing {q})", i)


def _read_name(s: str, i: int) -> int:
    j = i
    while j < len(s):
        c = s[j]
        if c == "{":
            j = _read_braces(s, j)
            continue
        if c == "}":
            raise _TargetError("unbalanced braces: '}' without '{'", j)
        if c in _STOP:
            break
        if c == "." and (j + 1 == len(s) or s[j + 1] in _STOP):
            break  # a final '.' ends the triple, it is not part of the name
        j += 1
    return j


def _read_suffix(s: str, j: int) -> tuple[int, str | None, str | None, int]:
    """Read an optional ``@lang`` or ``^^datatype`` after a literal or column."""
    if j < len(s) and s[j] == "@":
        m = re.compile(r"@([A-Za-z]+(?:-[A-Za-z0-9]+)*)").match(s, j)
        if m is None:
            raise _TargetError("malformed language tag", j)
        return m.end(), m.group(1), None, 0
    if s.startswith("^^", j):
        k = j + 2
        end = _read_iri(s, k) if k < len(s) and s[k] == "<" else _read_name(s, k)
        if end == k:
            raise _TargetError("missing datatype after '^^'", j)
        return end, None, s[k:end], k
    return j, None, None, 0


def _tokenize(s: str) -> list[_Token]:
    tokens: list[_Token] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c.isspace():
            i += 1
        elif c in ";,.":
            tokens.append(_Token("punct", c, i))
            i += 1
        elif c == "<":
            j = _read_iri(s, i)
            tokens.append(_Token("iri", s[i + 1 : j - 1], i))
            i = j
        elif c in "\"'":
            j = _read_string(s, i)
            end, lang, dt, dpos = _read_suffix(s, j)
            tokens.append(_Token("string", s[i + 1 : j - 1], i, lang, dt, dpos))
            i = end
        elif c == "{":
            j = _read_braces(s, i)
            end, lang, dt, dpos = _read_suffix(s, j)
            tokens.append(_Token("column", s[i + 1 : j - 1], i, lang, dt, dpos))
            i = end
        elif c == "}":
            raise _TargetError("unbalanced braces: '}' without '{'", i)
        elif c == ">":
            raise _TargetError("unbalanced brackets: '>' without '<'", i)
        elif c in "[]()":
            raise _TargetError(
                f"unbalanced or unsupported bracket {c!r} (blank-node property lists and "
                "collections are not supported in targets)",
                i,
            )
        else:
            j = _read_name(s, i)
            word = s[i:j]
            if re.fullmatch(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?", word):
                tokens.append(_Token("number", word, i))
            elif word in ("true", "false"):
                tokens.append(_Token("bool", word, i))
            elif word == "a":
                tokens.append(_Token("a", word, i))
            elif word.startswith("_:"):
                tokens.append(_Token("bnode", word[2:], i))
            elif ":" in word:
                tokens.append(_Token("pname", word, i))
            else:
                raise _TargetError(f"unexpected token {word!r}", i)
            i = j
    return tokens


class _TargetParser:
    """Recursive descent over target tokens: ``subject predicateObjectList ('.' ...)*``."""

    def __init__(self, tokens: list[_Token], prefixes: dict[str, str], end: int) -> None:
        self.tokens = tokens
        self.prefixes = prefixes
        self.i = 0
        self.end = end

    def peek(self) -> _Token | None:
        return self.tokens[self.i] if self.i < len(self.tokens) else None

    def next(self, what: str) -> _Token:
        tok = self.peek()
        if tok is None:
            raise _TargetError(f"unexpected end of target, expected {what}", self.end)
        self.i += 1
        return tok

    def is_punct(self, c: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.kind == "punct" and tok.text == c

    def triples(self) -> list[MappingAtom]:
        atoms: list[MappingAtom] = []
        if self.peek() is None:
            raise _TargetError("empty target", 0)
        while self.peek() is not None:
            subject = self.subject(self.next("a subject"))
            atoms.extend(self.predicate_objects(subject))
            if self.is_punct("."):
                self.i += 1
            elif self.peek() is not None:
                tok = self.next("'.'")
                raise _TargetError(f"expected '.', ';' or ',' before {tok.text!r}", tok.pos)
        return atoms

    def predicate_objects(self, subject: TermMap) -> list[MappingAtom]:
        atoms: list[MappingAtom] = []
        while True:
            verb = self.next("a predicate")
            predicate = self.predicate(verb)
            while True:
                tok = self.next("an object")
                if verb.kind == "a" and tok.kind in ("pname", "iri"):
                    obj = self.iri_term(tok)
                    if obj.kind is TermKind.CONSTANT:
                        atoms.append(MappingAtom(obj.value, subject, None, is_class=True))
                    else:
                        atoms.append(MappingAtom(predicate, subject, obj))
                else:
                    atoms.append(MappingAtom(predicate, subject, self.object(tok)))
                if not self.is_punct(","):
                    break
                self.i += 1
            if not self.is_punct(";"):
                return atoms
            while self.is_punct(";"):
                self.i += 1
            nxt = self.peek()
            if nxt is None or (nxt.kind == "punct" and nxt.text == "."):
                return atoms

    # -- terms --

    def expand(self, text: str, pos: int) -> str:
        prefix, _, local = text.partition(":")
        if prefix not in self.prefixes:
            shown = f"{prefix}:" if prefix else "':' (default)"
            raise _TargetError(f"unknown prefix {shown} in {text!r}", pos)
        return self.prefixes[prefix] + local

    def iri_term(self, tok: _Token) -> TermMap:
        value = tok.text if tok.kind == "iri" else self.expand(tok.text, tok.pos)
        kind = TermKind.TEMPLATE if PLACEHOLDER.search(value) else TermKind.CONSTANT
        return TermMap(kind, value, TermType.IRI)

    def predicate(self, tok: _Token) -> str:
        if tok.kind == "a":
            return RDF_TYPE
        if tok.kind in ("iri", "pname"):
            term = self.iri_term(tok)
            if term.kind is TermKind.CONSTANT:
                return term.value
            raise _TargetError(f"predicate must be a constant IRI, not {tok.text!r}", tok.pos)
        raise _TargetError(f"expected a predicate, got {tok.text!r}", tok.pos)

    def subject(self, tok: _Token) -> TermMap:
        if tok.kind in ("iri", "pname"):
            return self.iri_term(tok)
        if tok.kind == "bnode":
            return self.bnode(tok)
        if tok.kind == "column" and tok.lang is None and tok.datatype is None:
            return TermMap(TermKind.COLUMN, unquote_column(tok.text), TermType.IRI)
        raise _TargetError(f"a subject must be an IRI or blank node, not {tok.text!r}", tok.pos)

    def bnode(self, tok: _Token) -> TermMap:
        kind = TermKind.TEMPLATE if PLACEHOLDER.search(tok.text) else TermKind.CONSTANT
        return TermMap(kind, tok.text, TermType.BLANK)

    def datatype(self, tok: _Token) -> str | None:
        if tok.datatype is None:
            return None
        if tok.datatype.startswith("<"):
            return tok.datatype[1:-1]
        return self.expand(tok.datatype, tok.datatype_pos)

    def object(self, tok: _Token) -> TermMap:
        if tok.kind in ("iri", "pname"):
            return self.iri_term(tok)
        if tok.kind == "bnode":
            return self.bnode(tok)
        if tok.kind == "column":
            return TermMap(
                TermKind.COLUMN,
                unquote_column(tok.text),
                TermType.LITERAL,
                self.datatype(tok),
                tok.lang,
            )
        if tok.kind == "string":
            text = _unescape(tok.text)
            kind = TermKind.TEMPLATE if PLACEHOLDER.search(text) else TermKind.CONSTANT
            return TermMap(kind, text, TermType.LITERAL, self.datatype(tok), tok.lang)
        if tok.kind == "number":
            dt = "integer" if re.fullmatch(r"[+-]?\d+", tok.text) else "decimal"
            if "e" in tok.text.lower():
                dt = "double"
            return TermMap(TermKind.CONSTANT, tok.text, TermType.LITERAL, XSD + dt)
        if tok.kind == "bool":
            return TermMap(TermKind.CONSTANT, tok.text, TermType.LITERAL, XSD_BOOLEAN)
        raise _TargetError(f"expected an object, got {tok.text!r}", tok.pos)


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "b": "\b", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape(text: str) -> str:
    """Resolve Turtle string escapes; ``\\{`` and ``\\}`` stay escaped (template syntax)."""
    return re.sub(r"\\(.)", lambda m: _ESCAPES.get(m.group(1), m.group(0)), text)
