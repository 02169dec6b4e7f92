"""Small, exact edits of SPARQL text: the triple patterns of a query, with their positions.

The repairs change one thing at a time — a property, a class, a literal, one triple, one
FILTER — and must leave the rest of the query exactly as it was (rdflib's algebra cannot
be written back faithfully: ASK and HAVING are lost). So the query is tokenised, its
triple patterns are read with their token spans (``;`` and ``,`` lists, ``a``, simple
property paths), and an edit splices new text into those spans.

Only what navqa needs is understood; anything else (a path, a blank-node property list)
is reported as such and never edited.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from navqa.model.iri import RDF_TYPE, XSD

__all__ = ["Term", "Token", "TriplePattern", "FilterSpan", "QueryText", "tokenize"]

_TOKEN = re.compile(r"""
    (?P<ws>\s+)
  | (?P<comment>\#[^\n]*)
  | (?P<string>\"\"\"(?:[^"\\]|\\.|"(?!""))*\"\"\"|'''(?:[^'\\]|\\.|'(?!''))*'''
               |"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<iri><[^<>"{}|^`\\\s]*>)
  | (?P<var>[?$][A-Za-z0-9_\u00C0-\uFFFF]+)
  | (?P<dtype>\^\^)
  | (?P<lang>@[A-Za-z]+(?:-[A-Za-z0-9]+)*)
  | (?P<number>[+-]?(?:\d+\.\d*(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?|\d+(?:[eE][+-]?\d+)?))
  | (?P<pname>(?:[A-Za-z][\w\-.]*[\w\-]|[A-Za-z])?:(?:[\w\-%.:]*[\w\-%:])?)
  | (?P<bnode>_:[\w\-.]+)
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op>\|\||&&|!=|<=|>=|[{}()\[\].;,|/^*+?!=<>-])
""", re.X)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str
    start: int
    end: int


def tokenize(text: str) -> list[Token]:
    """The tokens of a SPARQL text (whitespace and comments dropped).

    Raises:
        ValueError: at a character no token starts with.
    """
    out: list[Token] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"cannot read the query at offset {pos}: {text[pos:pos + 20]!r}")
        kind = m.lastgroup or ""
        if kind not in ("ws", "comment"):
            out.append(Token(kind, m.group(), m.start(), m.end()))
        pos = m.end()
    return out


@dataclass(frozen=True, slots=True)
class Term:
    """One RDF term of a triple pattern, as written, with its character span."""

    text: str
    start: int
    end: int
    kind: str  # var, iri, pname, literal, number, boolean, bnode, a, path

    @property
    def is_var(self) -> bool:
        return self.kind == "var"


@dataclass(frozen=True)
class TriplePattern:
    """A triple pattern and where its parts are written.

    ``group`` is the character offset of the ``{`` of the group it is in; ``shared_p`` /
    ``shared_s`` say whether its predicate (``,`` list) or subject (``;`` list) is
    written once for several triples.
    """

    s: Term
    p: Term
    o: Term
    group: int
    index: int
    shared_s: bool = False
    shared_p: bool = False
    end: int = 0  # offset just after the triple's terminator ('.', or where the block ends)


@dataclass(frozen=True)
class FilterSpan:
    """A ``FILTER`` and the text of its constraint."""

    start: int
    end: int
    text: str
    group: int


@dataclass
class QueryText:
    """A query's text, its prefixes, triple patterns and filters (see the module docstring)."""

    text: str
    prefixes: dict[str, str] = field(default_factory=dict)
    triples: list[TriplePattern] = field(default_factory=list)
    filters: list[FilterSpan] = field(default_factory=list)
    groups: dict[int, int] = field(default_factory=dict)  # '{' offset → matching '}' offset

    @classmethod
    def parse(cls, text: str) -> QueryText:
        """Read ``text`` (raises ``ValueError`` on what it cannot tokenise)."""
        q = cls(text)
        _Scanner(q, tokenize(text)).run()
        return q

    # -- reading ---------------------------------------------------------------------------

    def iri(self, term: Term) -> str | None:
        """The IRI a term stands for (``a`` is ``rdf:type``), or ``None``."""
        if term.kind == "a":
            return RDF_TYPE
        if term.kind == "iri":
            return term.text[1:-1]
        if term.kind == "pname":
            pfx, _, local = term.text.partition(":")
            ns = self.prefixes.get(pfx)
            return None if ns is None else ns + local.replace("\\", "")
        return None

    def literal(self, term: Term) -> tuple[str, str | None] | None:
        """``(lexical form, datatype IRI)`` of a literal term (simple literals: ``None``)."""
        if term.kind == "number":
            kind = "decimal" if "." in term.text and "e" not in term.text.lower() else (
                "double" if "e" in term.text.lower() else "integer")
            return term.text, XSD + kind
        if term.kind == "boolean":
            return term.text, XSD + "boolean"
        if term.kind != "literal":
            return None
        m = re.match(r'^("""|\'\'\'|"|\')(.*)\1(?:\^\^(.+)|@[\w\-]+)?$', term.text, re.S)
        if m is None:
            return None
        body = re.sub(r"\\(.)", lambda x: {"n": "\n", "t": "\t", "r": "\r"}.get(
            x.group(1), x.group(1)), m.group(2))
        written = m.group(3)
        dt: str | None = None
        if written is not None:
            written = written.strip()
            dt = written[1:-1] if written.startswith("<") else self.iri(
                Term(written, 0, 0, "pname"))
        return body, dt

    def variables(self) -> set[str]:
        return {t.text for tp in self.triples for t in (tp.s, tp.o) if t.is_var}

    # -- editing ---------------------------------------------------------------------------

    def term_text(self, iri: str) -> str:
        """How to write ``iri`` in this query: a declared prefix if one covers it, else ``<>``."""
        best = None
        for pfx, ns in self.prefixes.items():
            if iri.startswith(ns) and re.fullmatch(r"[A-Za-z_][\w\-]*", iri[len(ns):]) and (
                    best is None or len(ns) > len(best[1])):
                best = (pfx, ns)
        if best is not None:
            return f"{best[0]}:{iri[len(best[1]):]}"
        return f"<{iri}>"

    def splice(self, edits: list[tuple[int, int, str]]) -> str:
        """The text with ``(start, end, replacement)`` edits applied (non-overlapping)."""
        out = self.text
        for start, end, new in sorted(edits, key=lambda e: -e[0]):
            out = out[:start] + new + out[end:]
        return out

    def replace_term(self, term: Term, new: str) -> str:
        return self.splice([(term.start, term.end, new)])

    def insert_in_group(self, group: int, text: str) -> str:
        """Insert triples (``text``, ending with ``.``) just before the group's ``}``."""
        close = self.groups[group]
        return self.splice([(close, close, f"  {text}\n")])

    def remove_triple(self, tp: TriplePattern) -> str | None:
        """The text without one triple pattern; ``None`` when it cannot be cut out cleanly."""
        if tp.shared_p:
            # "s p o1 , o2": cut ", o" (or "o ,")
            after = self.text[tp.o.end:]
            m = re.match(r"\s*,", after)
            if m:
                return self.splice([(tp.o.start, tp.o.end + m.end(), "")])
            before = self.text[:tp.o.start]
            m2 = re.search(r",\s*$", before)
            if m2:
                return self.splice([(m2.start(), tp.o.end, "")])
            return None
        if tp.shared_s:
            after = self.text[tp.o.end:]
            m = re.match(r"\s*;", after)
            if m:
                return self.splice([(tp.p.start, tp.o.end + m.end(), "")])
            before = self.text[:tp.p.start]
            m2 = re.search(r";\s*$", before)
            if m2:
                return self.splice([(m2.start(), tp.o.end, "")])
            return None
        start, end = tp.s.start, tp.end
        # take the whole line when nothing else is on it
        line_start = self.text.rfind("\n", 0, start) + 1
        if not self.text[line_start:start].strip():
            nl = self.text.find("\n", end)
            if nl != -1 and not self.text[end:nl].strip():
                start, end = line_start, nl + 1
        return self.splice([(start, end, "")])

    def remove_filter(self, f: FilterSpan) -> str:
        return self.splice([(f.start, f.end, "")])


_TERM_KINDS = {"var", "iri", "pname", "number", "bnode"}
_KEYWORDS = {"FILTER", "OPTIONAL", "MINUS", "UNION", "BIND", "VALUES", "GRAPH", "SERVICE",
             "SELECT", "ASK", "CONSTRUCT", "DESCRIBE", "WHERE", "GROUP", "ORDER", "HAVING",
             "LIMIT", "OFFSET", "PREFIX", "BASE", "FROM", "NAMED", "DISTINCT", "REDUCED",
             "EXISTS", "NOT", "AS", "BY", "ASC", "DESC", "SILENT"}


class _Scanner:
    def __init__(self, q: QueryText, toks: list[Token]) -> None:
        self.q = q
        self.t = toks
        self.i = 0

    def peek(self, k: int = 0) -> Token | None:
        j = self.i + k
        return self.t[j] if j < len(self.t) else None

    def run(self) -> None:
        stack: list[int] = []
        # prologue
        while self.i < len(self.t):
            tok = self.t[self.i]
            if tok.kind == "word" and tok.text.upper() == "PREFIX":
                pn = self.peek(1)
                iri = self.peek(2)
                if pn is not None and iri is not None and pn.kind == "pname" and \
                        iri.kind == "iri":
                    self.q.prefixes[pn.text[:-1]] = iri.text[1:-1]
                    self.i += 3
                    continue
            break
        self._groups_and_triples(stack)

    def _skip_parens(self) -> int:
        """At a '(' : skip to after the matching ')'; returns the end offset."""
        depth = 0
        while self.i < len(self.t):
            tok = self.t[self.i]
            self.i += 1
            if tok.text == "(":
                depth += 1
            elif tok.text == ")":
                depth -= 1
                if depth == 0:
                    return tok.end
            elif tok.text == "{" and depth > 0:
                # EXISTS { … } inside a FILTER
                self._skip_braces_from_open()
        return self.t[-1].end if self.t else 0

    def _skip_braces_from_open(self) -> None:
        depth = 1
        while self.i < len(self.t) and depth:
            tok = self.t[self.i]
            self.i += 1
            if tok.text == "{":
                depth += 1
            elif tok.text == "}":
                depth -= 1

    def _term(self) -> Term | None:
        """A subject/object term at the cursor (advances), else ``None``."""
        tok = self.peek()
        if tok is None:
            return None
        if tok.kind == "string":
            start, end = tok.start, tok.end
            self.i += 1
            nxt = self.peek()
            if nxt is not None and nxt.kind == "lang":
                end = nxt.end
                self.i += 1
            elif nxt is not None and nxt.kind == "dtype":
                dt = self.peek(1)
                if dt is not None and dt.kind in ("iri", "pname"):
                    end = dt.end
                    self.i += 2
            return Term(self.q.text[start:end], start, end, "literal")
        if tok.kind == "word" and tok.text in ("true", "false"):
            self.i += 1
            return Term(tok.text, tok.start, tok.end, "boolean")
        if tok.kind in _TERM_KINDS:
            self.i += 1
            return Term(tok.text, tok.start, tok.end, tok.kind)
        if tok.text == "[":
            nxt = self.peek(1)
            if nxt is not None and nxt.text == "]":
                self.i += 2
                return Term("[]", tok.start, nxt.end, "bnode")
        return None

    def _predicate(self) -> Term | None:
        tok = self.peek()
        if tok is None:
            return None
        if tok.kind == "word" and tok.text == "a":
            self.i += 1
            return Term("a", tok.start, tok.end, "a")
        start = tok.start
        path = False
        if tok.text in ("^", "(", "!"):
            path = True
        if tok.text == "(":
            self._skip_parens()
        elif tok.text in ("^", "!"):
            self.i += 1
            inner = self._predicate()
            if inner is None:
                return None
        elif tok.kind in ("iri", "pname", "var"):
            self.i += 1
        else:
            return None
        while True:
            nxt = self.peek()
            if nxt is None:
                break
            if nxt.text in ("*", "+") or (nxt.text == "?" and nxt.kind == "op"):
                path = True
                self.i += 1
                continue
            if nxt.text in ("/", "|"):
                path = True
                self.i += 1
                if self._predicate() is None:
                    return None
                continue
            break
        end = self.t[self.i - 1].end
        kind = "path" if path else (self.t[self.i - 1].kind if not path else "path")
        return Term(self.q.text[start:end], start, end, kind)

    def _groups_and_triples(self, stack: list[int]) -> None:
        q = self.q
        while self.i < len(self.t):
            tok = self.t[self.i]
            up = tok.text.upper() if tok.kind == "word" else ""
            if tok.text == "{":
                stack.append(tok.start)
                self.i += 1
                continue
            if tok.text == "}":
                if stack:
                    q.groups[stack.pop()] = tok.start
                self.i += 1
                continue
            if not stack:
                if tok.text == "(":
                    self._skip_parens()
                else:
                    self.i += 1
                continue
            if up == "FILTER":
                start = tok.start
                self.i += 1
                nxt = self.peek()
                if nxt is not None and nxt.text == "(":
                    end = self._skip_parens()
                else:
                    # FILTER regex(...) / FILTER EXISTS {...} / FILTER NOT EXISTS {...}
                    while self.peek() is not None and self.peek().text not in ("(", "{"):  # type: ignore[union-attr]
                        self.i += 1
                    nxt2 = self.peek()
                    if nxt2 is not None and nxt2.text == "{":
                        self.i += 1
                        self._skip_braces_from_open()
                        end = self.t[self.i - 1].end
                    else:
                        end = self._skip_parens()
                q.filters.append(FilterSpan(start, end, q.text[start:end], stack[-1]))
                continue
            if up in ("BIND",):
                self.i += 1
                self._skip_parens()
                continue
            if up == "VALUES":
                self.i += 1
                if self.peek() is not None and self.peek().text == "(":  # type: ignore[union-attr]
                    self._skip_parens()
                else:
                    self.i += 1
                if self.peek() is not None and self.peek().text == "{":  # type: ignore[union-attr]
                    self.i += 1
                    self._skip_braces_from_open()
                continue
            if up in ("SELECT", "WHERE", "DISTINCT", "REDUCED") or up in ("OPTIONAL", "MINUS",
                                                                           "UNION", "GRAPH",
                                                                           "SERVICE"):
                self.i += 1
                if up == "SELECT":
                    # a sub-query's projection: skip to its WHERE / '{'
                    while (nxt := self.peek()) is not None and nxt.text != "{" and \
                            nxt.text.upper() != "WHERE":
                        if nxt.text == "(":
                            self._skip_parens()
                        else:
                            self.i += 1
                continue
            if up in ("GROUP", "ORDER", "HAVING", "LIMIT", "OFFSET"):
                # solution modifiers of a sub-query
                self.i += 1
                continue
            if tok.text in (".", ";", ","):
                self.i += 1
                continue
            self._triples_block(stack[-1])

    def _triples_block(self, group: int) -> None:
        """Subject, then predicate-object lists, up to '.', '}' or a keyword."""
        q = self.q
        s = self._term()
        if s is None:
            self.i += 1  # something we do not read (a collection, a property list)
            return
        block: list[TriplePattern] = []
        pending_p: list[list[TriplePattern]] = []
        while True:
            p = self._predicate()
            if p is None:
                break
            objs: list[TriplePattern] = []
            while True:
                o = self._term()
                if o is None:
                    break
                tp = TriplePattern(s, p, o, group, len(q.triples) + len(block))
                block.append(tp)
                objs.append(tp)
                nxt = self.peek()
                if nxt is not None and nxt.text == ",":
                    self.i += 1
                    continue
                break
            pending_p.append(objs)
            nxt = self.peek()
            if nxt is not None and nxt.text == ";":
                self.i += 1
                # "; ." or "; }" is allowed
                after = self.peek()
                if after is None or after.text in (".", "}"):
                    break
                continue
            break
        nxt = self.peek()
        end = nxt.end if nxt is not None and nxt.text == "." else (
            nxt.start if nxt is not None else len(q.text))
        shared_s = len(pending_p) > 1
        for objs in pending_p:
            for tp in objs:
                q.triples.append(TriplePattern(tp.s, tp.p, tp.o, tp.group, len(q.triples),
                                               shared_s=shared_s, shared_p=len(objs) > 1,
                                               end=end))
        if nxt is not None and nxt.text == ".":
            self.i += 1


def literal_text(value: str, datatype: str | None, prefixes: Mapping[str, str] | None = None
                 ) -> str:
    """A SPARQL literal (escaped) with its datatype written in full."""
    from navqa.model.terms import escape_string

    body = f'"{escape_string(value)}"'
    if datatype and datatype != XSD + "string":
        return f"{body}^^<{datatype}>"
    return body
