"""Where the columns of Ontop's SQL come from: its subquery aliases resolved to base tables.

Ontop nests its SQL: a join condition in the database's plan often reads
``v7."lsuNpdidLithoStrat3m78"``, a column of the derived table ``v7``, which is itself a
``SELECT DISTINCT`` over a ``UNION ALL`` of two base tables. :func:`sql_aliases` reads the
SQL once and :meth:`SqlAliases.resolve` follows such a reference down to the
``table.column`` pairs it is computed from, so that the cost guard can name the columns of
an exploding join (and, through them, the mappings).

The reader is built for the SQL Ontop generates (one unique alias per table or subquery,
``FROM "table" vN``, ``(SELECT … AS "col" …) vN``, ``((SELECT …)UNION ALL (SELECT …)) vN``);
on other SQL it resolves what it recognises and leaves the rest unresolved, never guessing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["SqlAliases", "sql_aliases", "unquote"]

NAME = r'(?:"(?:[^"]|"")+"|[A-Za-z_][\w$]*)'
QUALIFIED = re.compile(rf"({NAME})\s*\.\s*({NAME})")
"""``alias.column`` (either part quoted or not)."""
_KEYWORDS = frozenset({
    "all", "and", "any", "array", "as", "asc", "between", "by", "case", "cast", "collate",
    "cross", "desc", "distinct", "else", "end", "escape", "except", "exists", "false",
    "from", "full", "group", "having", "ilike", "in", "inner", "intersect", "is", "join",
    "lateral", "left", "like", "limit", "natural", "not", "null", "offset", "on", "or",
    "order", "outer", "right", "select", "similar", "some", "then", "to", "true", "union",
    "using", "when", "where", "with"})
_TABLE = re.compile(rf"(?:\bFROM|\bJOIN|,)\s+((?:{NAME}\s*\.\s*)?{NAME})\s+({NAME})"
                    r"(?=\s|,|\)|$)", re.IGNORECASE)
_ALIAS_AFTER = re.compile(rf"\s*(?:AS\s+)?({NAME})", re.IGNORECASE)
_SELECT = re.compile(r"\s*SELECT\s+(?:DISTINCT\s+)?", re.IGNORECASE)
_UNION = re.compile(r"\s*(?:UNION|INTERSECT|EXCEPT)(?:\s+ALL)?\s*", re.IGNORECASE)
_FROM = re.compile(r"\bFROM\b", re.IGNORECASE)
_AS = re.compile(rf"\bAS\s+({NAME})\s*$", re.IGNORECASE)


def unquote(name: str) -> str:
    """``"a""b"`` → ``a"b``; an unquoted name as it is."""
    return name[1:-1].replace('""', '"') if name.startswith('"') else name


def _table_name(text: str) -> str:
    m = QUALIFIED.fullmatch(text.strip())
    if m is None:
        return unquote(text.strip())
    schema, table = unquote(m.group(1)), unquote(m.group(2))
    return table if schema == "public" else f"{schema}.{table}"


def _masked(sql: str) -> str:
    """``sql`` with the inside of string literals and quoted names blanked (same length), so
    that parentheses, commas and keywords are found only where they are syntax."""
    out = list(sql)
    quote: str | None = None
    for i, ch in enumerate(sql):
        if quote is not None:
            if ch == quote:
                quote = None
            else:
                out[i] = " "
        elif ch in "'\"":
            quote = ch
    return "".join(out)


def _pairs(masked: str) -> dict[int, int]:
    """Each ``(``'s position → its ``)``'s, and back (one pass)."""
    out: dict[int, int] = {}
    stack: list[int] = []
    for i, ch in enumerate(masked):
        if ch == "(":
            stack.append(i)
        elif ch == ")" and stack:
            j = stack.pop()
            out[j], out[i] = i, j
    return out


def _top_level(masked: str) -> list[int]:
    """Depth (parentheses) before each character of ``masked``."""
    depth, out = 0, []
    for ch in masked:
        out.append(depth)
        depth += 1 if ch == "(" else -1 if ch == ")" else 0
    return out


def _branches(sql: str, masked: str) -> list[tuple[str, str]]:
    """The ``SELECT`` branches of a subquery body: itself, or each side of its set
    operations (``(SELECT …) UNION ALL (SELECT …)``), nested groups flattened."""
    lead = len(masked) - len(masked.lstrip())
    sql, masked = sql[lead:], masked[lead:]
    if _SELECT.match(masked):
        return [(sql, masked)]
    out: list[tuple[str, str]] = []
    pos = 0
    pairs = _pairs(masked)
    while pos < len(masked) and masked[pos] == "(":
        end = pairs.get(pos)
        if end is None:
            return out
        out += _branches(sql[pos + 1:end], masked[pos + 1:end])
        m = _UNION.match(masked, end + 1)
        if m is None:
            break
        pos = m.end()
    return out


def _select_items(sql: str, masked: str) -> dict[str, tuple[tuple[str, str], ...]]:
    """``column → the alias.column references its expression reads`` of one ``SELECT``."""
    head = _SELECT.match(masked)
    if head is None:
        return {}
    depth = _top_level(masked)
    end = next((m.start() for m in _FROM.finditer(masked, head.end())
                if depth[m.start()] == 0), len(masked))
    items: dict[str, tuple[tuple[str, str], ...]] = {}
    start = head.end()
    cuts = [i for i in range(head.end(), end) if masked[i] == "," and depth[i] == 0] + [end]
    for cut in cuts:
        item, item_masked = sql[start:cut], masked[start:cut]
        start = cut + 1
        m = _AS.search(item_masked)
        if m is not None:
            name = unquote(item[m.start(1):m.end(1)].strip())
            expr = item[:m.start()]
        else:  # a bare reference keeps its column name
            refs = QUALIFIED.findall(item)
            if len(refs) != 1:
                continue
            name, expr = unquote(refs[0][1]), item
        items[name] = tuple((unquote(q), unquote(c)) for q, c in QUALIFIED.findall(
            _masked_strings(expr)))
    return items


def _masked_strings(text: str) -> str:
    """``text`` with string literals blanked (quoted names kept)."""
    return re.sub(r"'(?:[^']|'')*'", lambda m: " " * len(m.group()), text)


@dataclass(frozen=True)
class SqlAliases:
    """The aliases of one SQL statement.

    Attributes:
        tables: Alias of a base table → the table (``schema.table``, ``public`` left out).
        derived: Alias of a subquery → its columns → the ``alias.column`` references
            each is computed from (every branch of a ``UNION`` contributes).
    """

    tables: dict[str, str] = field(default_factory=dict)
    derived: dict[str, dict[str, tuple[tuple[str, str], ...]]] = field(default_factory=dict)

    def resolve(self, alias: str, column: str, _depth: int = 0) -> frozenset[str]:
        """The ``table.column`` pairs ``alias.column`` is computed from (empty when the
        alias is unknown or the column a constant)."""
        if alias in self.tables:
            return frozenset({f"{self.tables[alias]}.{column}"})
        if _depth > 32 or alias not in self.derived:
            return frozenset()
        out: set[str] = set()
        for q, c in self.derived[alias].get(column, ()):
            out |= self.resolve(q, c, _depth + 1)
        return frozenset(out)


def sql_aliases(sql: str) -> SqlAliases:
    """Read the table and subquery aliases of ``sql`` (see the module docstring)."""
    strings = _masked_strings(sql)
    masked = _masked(sql)
    derived: dict[str, dict[str, tuple[tuple[str, str], ...]]] = {}
    pairs = _pairs(masked)
    for close in (i for i, ch in enumerate(masked) if ch == ")"):
        m = _ALIAS_AFTER.match(sql, close + 1)
        if m is None or unquote(m.group(1)).lower() in _KEYWORDS:
            continue
        open_ = pairs.get(close)
        if open_ is None:
            continue
        columns: dict[str, list[tuple[str, str]]] = {}
        for body, body_masked in _branches(sql[open_ + 1:close], masked[open_ + 1:close]):
            for col, refs in _select_items(body, body_masked).items():
                columns.setdefault(col, []).extend(refs)
        if columns:
            derived[unquote(m.group(1))] = {c: tuple(r) for c, r in columns.items()}
    tables: dict[str, str] = {}
    for m in _TABLE.finditer(strings):
        table, alias = m.group(1), unquote(m.group(2))
        if alias.lower() in _KEYWORDS or unquote(table).lower() in _KEYWORDS \
                or alias in derived:
            continue
        tables.setdefault(alias, _table_name(table))
    return SqlAliases(tables=tables, derived=derived)
