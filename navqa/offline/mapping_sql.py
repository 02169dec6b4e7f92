"""Which tables and columns each mapping's SQL reads (sqlglot, PostgreSQL dialect).

Names follow PostgreSQL: a quoted identifier keeps its case (``"wlbName"`` → ``wlbName``),
an unquoted one folds to lower case (``stageId`` → ``stageid``). Tables are reported as
``table`` or ``schema.table``; columns as ``table.column``.

A column is attributed to a base table when its qualifier names that table (directly or
through an alias) in the query block where it appears, or when it is unqualified in a
block that reads exactly one source and that source is a base table. Other references
(unqualified columns in a join, columns of derived tables, select-list aliases reused in
``ORDER BY``) are not attributed: the schema would be needed to resolve them.

SQL that sqlglot cannot parse falls back to a regular expression over ``FROM``/``JOIN``
that finds tables only; such assertions get no columns, and a warning names them.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass, replace

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.scope import Scope, traverse_scope

from navqa.model.mapping import MappingAssertion, MappingSet

logger = logging.getLogger(__name__)

__all__ = ["SqlReferences", "annotate_sql", "sql_references", "whole_table"]

_NAME = r'(?:"[^"]+"|[A-Za-z_][\w$]*)'
_TABLE = rf"{_NAME}(?:\s*\.\s*{_NAME})?"
_FROM_JOIN = re.compile(rf"\b(?:FROM|JOIN)\s+({_TABLE})", re.IGNORECASE)
_KEYWORDS = "|".join(
    (
        "WHERE",
        "JOIN",
        "INNER",
        "LEFT",
        "RIGHT",
        "FULL",
        "CROSS",
        "ON",
        "GROUP",
        "ORDER",
        "LIMIT",
        "UNION",
        "NATURAL",
        "HAVING",
        "OFFSET",
        "EXCEPT",
        "INTERSECT",
        "USING",
    )
)
# after a FROM item: an optional alias, then ", next_table"
_NEXT_ITEM = re.compile(
    rf"(?:\s+(?:AS\s+)?(?!(?:{_KEYWORDS})\b){_NAME})?\s*,\s*({_TABLE})", re.IGNORECASE
)


@dataclass(frozen=True, slots=True)
class SqlReferences:
    """The base tables and ``table.column`` references a query reads.

    Attributes:
        tables: Base tables, sorted.
        columns: Resolved ``table.column`` references, sorted.
        parsed: False when sqlglot failed and the regex fallback found the tables.
    """

    tables: tuple[str, ...]
    columns: tuple[str, ...]
    parsed: bool = True


def sql_references(sql: str) -> SqlReferences:
    """List the tables and columns ``sql`` reads.

    Example:
        >>> refs = sql_references('SELECT "wlbName", id FROM "Wellbore" w WHERE w.depth > 0')
        >>> refs.tables, refs.columns
        (('Wellbore',), ('Wellbore.depth', 'Wellbore.id', 'Wellbore.wlbName'))
    """
    try:
        tree = sqlglot.parse_one(sql, dialect="postgres")
        scopes = traverse_scope(tree)
    except (SqlglotError, ValueError, RecursionError):
        return _regex_references(sql)
    tables: set[str] = set()
    columns: set[str] = set()
    for scope in scopes:
        sources = _base_sources(scope)
        tables.update(sources.values())
        columns.update(_scope_columns(scope, sources))
    return SqlReferences(tuple(sorted(tables)), tuple(sorted(columns)))


def whole_table(sql: str) -> str | None:
    """The table ``sql`` reads every row of, when it is a plain scan of one base table
    (no ``WHERE``, join, grouping, ``DISTINCT``, limit or set operation); else ``None``.

    Example:
        >>> whole_table('SELECT "id" FROM "facility_moveable"')
        'facility_moveable'
        >>> whole_table('SELECT "id" FROM "facility_moveable" WHERE "kind" = \'VESSEL\'') is None
        True
    """
    try:
        tree = sqlglot.parse_one(sql, dialect="postgres")
    except (SqlglotError, ValueError, RecursionError):
        return None
    if not isinstance(tree, exp.Select) or any(
            tree.args.get(k) for k in ("where", "joins", "group", "having", "distinct",
                                       "limit", "offset", "with")):
        return None
    source = tree.args.get("from_") or tree.args.get("from")
    table = source.this if source is not None else None
    if not isinstance(table, exp.Table):
        return None
    return _table_name(table)


def annotate_sql(ms: MappingSet) -> MappingSet:
    """Fill ``tables``, ``columns`` and ``whole_table`` of every assertion of ``ms``.

    Returns:
        A new mapping set; ``ms`` is not modified. Assertions whose SQL does not parse get
        regex-found tables and no columns (logged as a warning).
    """
    out: list[MappingAssertion] = []
    for a in ms.assertions:
        refs = sql_references(a.source)
        if not refs.parsed:
            logger.warning(
                "%s: SQL of mapping %r does not parse; tables found by regex, columns unknown",
                ms.path,
                a.id,
            )
        out.append(replace(a, tables=refs.tables, columns=refs.columns,
                           whole_table=whole_table(a.source) is not None))
    return replace(ms, assertions=tuple(out))


# -- helpers ------------------------------------------------------------------------------


def _ident(node: exp.Expression | None) -> str:
    """PostgreSQL name of an identifier: quoted keeps case, unquoted folds to lower."""
    if isinstance(node, exp.Identifier):
        return node.this if node.quoted else node.this.lower()
    return "" if node is None else node.name.lower()


def _table_name(table: exp.Table) -> str:
    name = _ident(table.this)
    schema = table.args.get("db")
    return f"{_ident(schema)}.{name}" if schema is not None else name


def _base_sources(scope: Scope) -> dict[str, str]:
    """``{visible name: base table}`` for the base tables a query block reads."""
    out: dict[str, str] = {}
    for source in scope.sources.values():
        if isinstance(source, exp.Table) and isinstance(source.this, exp.Identifier):
            alias = source.args.get("alias")
            visible = (
                _ident(alias.this) if alias is not None and alias.this else _ident(source.this)
            )
            out[visible] = _table_name(source)
    return out


def _projection_aliases(scope: Scope) -> set[str]:
    select = scope.expression
    if not isinstance(select, exp.Select):
        return set()
    return {_ident(e.args.get("alias")) for e in select.expressions if isinstance(e, exp.Alias)}


def _scope_columns(scope: Scope, sources: dict[str, str]) -> set[str]:
    """Columns written in this query block (not in a nested one), attributed to base tables.

    A qualified column is looked up in this block's sources, then in the enclosing blocks'
    (correlated subqueries); an unqualified one only in this block.
    """
    out: set[str] = set()
    only = next(iter(sources.values())) if len(scope.sources) == 1 and len(sources) == 1 else None
    aliases = _projection_aliases(scope)
    for col in scope.columns:
        if isinstance(col.this, exp.Star) or col.find_ancestor(exp.Select) is not scope.expression:
            continue
        name = _ident(col.this)
        qualifier = col.args.get("table")
        if qualifier is not None:
            table = _lookup(scope, _ident(qualifier))
        else:
            if name in aliases and col.find_ancestor(exp.Order, exp.Group) is not None:
                continue
            table = only
        if table is not None:
            out.add(f"{table}.{name}")
    return out


def _lookup(scope: Scope | None, qualifier: str) -> str | None:
    while scope is not None:
        tables = _base_sources(scope)
        if qualifier in tables:
            return tables[qualifier]
        if qualifier in {k for name in scope.sources for k in (name, name.lower())}:
            return None  # a derived table or CTE of this block
        scope = scope.parent
    return None


def _regex_references(sql: str) -> SqlReferences:
    """Tables after ``FROM``/``JOIN`` (and in ``FROM a, b`` lists), found without parsing."""
    tables: set[str] = set()
    for m in _FROM_JOIN.finditer(sql):
        tables.add(_regex_table(m.group(1)))
        pos = m.end()
        while (nxt := _NEXT_ITEM.match(sql, pos)) is not None:
            tables.add(_regex_table(nxt.group(1)))
            pos = nxt.end()
    return SqlReferences(tuple(sorted(tables)), (), parsed=False)


def _regex_table(text: str) -> str:
    parts = re.findall(_NAME, text)
    return ".".join(p[1:-1] if p.startswith('"') else p.lower() for p in parts)
