"""The query side of the lint: where terms are written, and the query as conjunctive branches.

:class:`Locator` finds the text of a term, variable or literal in a query (comments and
string contents masked). :func:`branches` turns rdflib's SPARQL algebra into the
conjunctive alternatives the join checks need: UNIONs are distributed (at most
:data:`MAX_BRANCHES` alternatives), OPTIONAL and MINUS groups are kept apart from the
required triples, property-path sequences and inverses become plain triples with fresh
variables, and a sub-SELECT's non-projected variables are renamed apart.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from rdflib import Literal, URIRef
from rdflib.paths import InvPath, Path, SequencePath
from rdflib.term import Variable

from navqa.model.iri import RDF_TYPE
from navqa.online.check import path_iris

__all__ = ["MAX_BRANCHES", "Branch", "Locator", "Triple", "Walk", "branches", "iter_exprs",
           "node_name"]

MAX_BRANCHES = 256

# -- locating text ---------------------------------------------------------------------------


_IRI_REF = re.compile(r"<[^<>\"{}|^`\\\s]*>")
_PREFIX_DECL = re.compile(r"PREFIX\s+([A-Za-z][\w\-.]*)?:\s*<([^<>\s]*)>", re.I)


class Locator:
    """Finds where a term, variable or literal is written in the query text.

    Comments and the contents of string literals are masked, so a term named in a comment
    or inside a string is never reported as its position.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self.masked = self._mask(text)
        self.prefixes: dict[str, str] = {}
        for m in _PREFIX_DECL.finditer(self.masked):
            self.prefixes[m.group(1) or ""] = m.group(2)
        self._line_starts = [0] + [i + 1 for i, ch in enumerate(text) if ch == "\n"]
        body = [m.end() for m in _PREFIX_DECL.finditer(self.masked)]
        self.body_start = max(body) if body else 0

    @staticmethod
    def _mask(text: str) -> str:
        out = list(text)
        i, n = 0, len(text)
        while i < n:
            ch = text[i]
            if ch == "<":
                m = _IRI_REF.match(text, i)
                if m:
                    i = m.end()
                    continue
            if ch == "#":
                j = text.find("\n", i)
                j = n if j < 0 else j
                for k in range(i, j):
                    out[k] = " "
                i = j
                continue
            if ch in "\"'":
                q = text[i:i + 3] if text[i:i + 3] in ('"""', "'''") else ch
                j = i + len(q)
                while j < n and not text.startswith(q, j):
                    j += 2 if text[j] == "\\" else 1
                end = min(n, j + len(q))
                for k in range(i + len(q), min(j, n)):
                    if out[k] != "\n":
                        out[k] = " "
                i = end
                continue
            i += 1
        return "".join(out)

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (line, column) of a character offset."""
        lo, hi = 0, len(self._line_starts) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self._line_starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo + 1, offset - self._line_starts[lo] + 1

    def span(self, start: int, end: int) -> tuple[int, int, int, int]:
        l1, c1 = self.position(start)
        l2, c2 = self.position(end)
        return l1, c1, l2, c2

    def _iri_patterns(self, iri: str) -> list[re.Pattern[str]]:
        pats = [re.compile(re.escape(f"<{iri}>"))]
        for p, ns in self.prefixes.items():
            if ns and iri.startswith(ns):
                local = iri[len(ns):]
                if re.fullmatch(r"[\w\-.%]*", local):
                    pats.append(re.compile(
                        rf"(?<![\w\-.:]){re.escape(p)}:{re.escape(local)}(?![\w\-:])"))
        if iri == RDF_TYPE:
            pats.append(re.compile(r"(?<![\w?$:])a(?![\w\-:])"))
        return pats

    def find_iri(self, iri: str, *, after: int = 0) -> tuple[int, int] | None:
        """(start, end) offsets of the first occurrence of ``iri`` at or after ``after``."""
        best: tuple[int, int] | None = None
        for pat in self._iri_patterns(iri):
            m = pat.search(self.masked, max(after, self.body_start))
            if m and (best is None or m.start() < best[0]):
                best = (m.start(), m.end())
        return best

    def find_iri_all(self, iri: str) -> list[tuple[int, int]]:
        out: list[tuple[int, int]] = []
        for pat in self._iri_patterns(iri):
            out.extend((m.start(), m.end()) for m in pat.finditer(self.masked, self.body_start))
        return sorted(set(out))

    def find_var(self, name: str, *, after: int = 0) -> tuple[int, int] | None:
        m = re.compile(rf"[?$]{re.escape(name)}(?!\w)").search(self.masked, after)
        return (m.start(), m.end()) if m else None

    def find_literal(self, lit: Literal, *, after: int = 0) -> tuple[int, int] | None:
        lex = str(lit)
        for q in ('"', "'"):
            i = self.text.find(f"{q}{lex}{q}", after)
            if i >= 0:
                return i, i + len(lex) + 2
        m = re.compile(rf"(?<![\w.]){re.escape(lex)}(?![\w])").search(self.masked, after)
        return (m.start(), m.end()) if m else None

    def find_text(self, needle: str) -> tuple[int, int] | None:
        i = self.masked.find(needle)
        return (i, i + len(needle)) if i >= 0 else None


# -- the query as conjunctive branches ------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Triple:
    """One triple pattern with a simple predicate (paths are decomposed)."""

    s: Any
    p: URIRef
    o: Any
    scope: int = 0
    origin: Any = None  # the predicate as written (a path), for locating


@dataclass
class Branch:
    """One alternative of the query after distributing UNIONs.

    ``required`` must all match; each ``extras`` entry is an OPTIONAL or MINUS group
    joined with the required part.
    """

    required: list[Triple] = field(default_factory=list)
    extras: list[tuple[str, list[Triple]]] = field(default_factory=list)

    def join(self, other: Branch) -> Branch:
        return Branch(self.required + other.required, self.extras + other.extras)


@dataclass
class Walk:
    """Everything the algebra walk collects."""

    filters: list[tuple[Any, int]] = field(default_factory=list)
    exists: int = 0
    truncated: bool = False
    fresh: Iterator[int] = field(default_factory=lambda: itertools.count(1))
    all_triples: list[Triple] = field(default_factory=list)
    path_iris: set[str] = field(default_factory=set)


def _expand_path(s: Any, path: Any, o: Any, scope: int, walk: Walk,
                 origin: Any) -> list[Triple] | None:
    """Triples for ``s path o`` (sequences and inverses), or ``None`` when not modelled."""
    if isinstance(path, URIRef):
        return [Triple(s, path, o, scope, origin)]
    if isinstance(path, InvPath):
        return _expand_path(o, path.arg, s, scope, walk, origin)
    if isinstance(path, SequencePath):
        out: list[Triple] = []
        cur = s
        for i, part in enumerate(path.args):
            nxt = o if i == len(path.args) - 1 else Variable(f"_path{next(walk.fresh)}")
            sub = _expand_path(cur, part, nxt, scope, walk, origin)
            if sub is None:
                return None
            out.extend(sub)
            cur = nxt
        return out
    return None


def node_name(node: Any) -> str:
    return getattr(node, "name", "") or ""


def branches(node: Any, walk: Walk, scope: int, rename: dict[Variable, Variable]
              ) -> list[Branch]:
    """Distribute the algebra into conjunctive branches (bounded by ``MAX_BRANCHES``)."""
    name = node_name(node)

    def r(t: Any) -> Any:
        return rename.get(t, t) if isinstance(t, Variable) else t

    if name == "BGP":
        triples: list[Triple] = []
        for s, p, o in node.get("triples") or ():
            if isinstance(p, URIRef):
                t = Triple(r(s), p, r(o), scope, p)
                triples.append(t)
            elif isinstance(p, Path):
                sub = _expand_path(r(s), p, r(o), scope, walk, p)
                if sub is not None:
                    triples.extend(sub)
                else:
                    walk.path_iris |= path_iris(p)
        walk.all_triples.extend(triples)
        return [Branch(required=triples)]
    if name == "Join":
        left = branches(node.p1, walk, scope, rename)
        right = branches(node.p2, walk, scope, rename)
        out = [a.join(b) for a in left for b in right]
        if len(out) > MAX_BRANCHES:
            walk.truncated = True
            out = out[:MAX_BRANCHES]
        return out
    if name == "LeftJoin":
        left = branches(node.p1, walk, scope, rename)
        right = branches(node.p2, walk, scope, rename)
        if node.get("expr") is not None and not _trivial(node.expr):
            walk.filters.append((_renamed_expr(node.expr, rename), scope))
        out = []
        for a in left:
            extras = list(a.extras)
            for b in right:
                extras.append(("optional", b.required))
            out.append(Branch(list(a.required), extras))
        return out
    if name == "Minus":
        left = branches(node.p1, walk, scope, rename)
        right = branches(node.p2, walk, scope, rename)
        return [Branch(list(a.required), a.extras + [("minus", b.required) for b in right])
                for a in left]
    if name == "Union":
        out = branches(node.p1, walk, scope, rename) + branches(node.p2, walk, scope, rename)
        if len(out) > MAX_BRANCHES:
            walk.truncated = True
            out = out[:MAX_BRANCHES]
        return out
    if name == "Filter":
        walk.filters.append((_renamed_expr(node.expr, rename), scope))
        return branches(node.p, walk, scope, rename)
    if name == "ToMultiSet":
        inner = node.p
        if node_name(inner) == "Project":
            # A sub-SELECT: its non-projected variables are its own.
            sub_scope = next(walk.fresh)
            projected = set(inner.PV or ())
            sub_rename: dict[Variable, Variable] = {}
            for v in inner.get("_vars") or ():
                if v not in projected:
                    sub_rename[v] = Variable(f"{v}__sub{sub_scope}")
                else:
                    sub_rename[v] = rename.get(v, v)
            return branches(inner.p, walk, sub_scope, sub_rename)
        return branches(inner, walk, scope, rename)
    if name in ("values", "ServiceGraphPattern"):
        return [Branch()]
    child = node.get("p") if hasattr(node, "get") else None
    if child is not None:
        return branches(child, walk, scope, rename)
    return [Branch()]


def _trivial(expr: Any) -> bool:
    return isinstance(expr, Literal) or (node_name(expr) == "TrueFilter")


def _renamed_expr(expr: Any, rename: dict[Variable, Variable]) -> Any:
    return (expr, dict(rename))


def iter_exprs(expr: Any) -> Iterator[Any]:
    """Every sub-expression of an rdflib algebra expression."""
    stack = [expr]
    seen: set[int] = set()
    while stack:
        e = stack.pop()
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        if isinstance(e, dict):
            for k, v in e.items():
                if k in ("_vars",):
                    continue
                stack.append(v)
        elif isinstance(e, list | tuple):
            stack.extend(e)
