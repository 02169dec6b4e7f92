"""RDF terms and SPARQL results as returned by an endpoint.

These are plain values: two results compare equal when their terms do, which is
what the evaluation metrics rely on.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from navqa.model.iri import XSD


@dataclass(frozen=True, slots=True)
class IRITerm:
    """An IRI in a result."""

    value: str

    def n3(self) -> str:
        """SPARQL/Turtle syntax."""
        return f"<{self.value}>"

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class LiteralTerm:
    """A literal with an optional datatype or language tag (never both)."""

    value: str
    datatype: str | None = None
    lang: str | None = None

    def n3(self) -> str:
        """SPARQL/Turtle syntax, with the lexical form escaped."""
        body = '"' + escape_string(self.value) + '"'
        if self.lang:
            return f"{body}@{self.lang}"
        if self.datatype and self.datatype != XSD + "string":
            return f"{body}^^<{self.datatype}>"
        return body

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True, slots=True)
class BNodeTerm:
    """A blank node; its label is only meaningful inside one result."""

    id: str

    def n3(self) -> str:
        return f"_:{self.id}"

    def __str__(self) -> str:
        return f"_:{self.id}"


Term = IRITerm | LiteralTerm | BNodeTerm


def escape_string(text: str) -> str:
    """Escape ``text`` for use inside a double-quoted SPARQL string literal."""
    out = []
    for ch in text:
        if ch == "\\":
            out.append("\\\\")
        elif ch == '"':
            out.append('\\"')
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return "".join(out)


@dataclass(frozen=True, slots=True)
class SelectResult:
    """The result of a SELECT query: variable names and rows aligned with them.

    A row holds ``None`` where a variable is unbound.
    """

    variables: tuple[str, ...]
    rows: tuple[tuple[Term | None, ...], ...] = field(default_factory=tuple)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[tuple[Term | None, ...]]:
        return iter(self.rows)

    @property
    def is_empty(self) -> bool:
        return not self.rows

    def column(self, name: str) -> list[Term | None]:
        """All values of one variable, in row order."""
        i = self.variables.index(name)
        return [row[i] for row in self.rows]

    def as_dicts(self) -> list[dict[str, Term]]:
        """Rows as ``{variable: term}`` dicts, unbound variables left out."""
        return [
            {v: t for v, t in zip(self.variables, row, strict=True) if t is not None}
            for row in self.rows
        ]


@dataclass(frozen=True, slots=True)
class AskResult:
    """The result of an ASK query."""

    value: bool

    @property
    def is_empty(self) -> bool:
        """An ASK result is never 'empty': false is an answer."""
        return False


@dataclass(frozen=True, slots=True)
class GraphResult:
    """The result of a CONSTRUCT or DESCRIBE query, as N-Triples text and parsed triples."""

    ntriples: str
    triples: tuple[tuple[Term, Term, Term], ...] = ()

    def __len__(self) -> int:
        return len(self.triples)

    @property
    def is_empty(self) -> bool:
        return not self.triples


QueryResult = SelectResult | AskResult | GraphResult
