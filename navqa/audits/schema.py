"""The database schema behind a VKG, read from ``information_schema`` (for suggestions).

Tables are named as :mod:`navqa.offline.mapping_sql` names them: ``table`` in the
``public`` schema, ``schema.table`` elsewhere; column names keep their case.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Column", "DbSchema", "ForeignKey", "introspect", "sql_ident", "sql_table"]

_COLUMNS = """
SELECT c.table_schema, c.table_name, c.column_name, c.data_type, c.udt_name,
       c.is_nullable, c.ordinal_position,
       col_description(format('%I.%I', c.table_schema, c.table_name)::regclass,
                       c.ordinal_position::int)
FROM information_schema.columns c
JOIN information_schema.tables t
  ON t.table_schema = c.table_schema AND t.table_name = c.table_name
WHERE c.table_schema NOT IN ('pg_catalog', 'information_schema', 'topology', 'tiger')
  AND c.table_schema NOT LIKE 'pg_%%'
ORDER BY c.table_schema, c.table_name, c.ordinal_position
"""

_TABLES = """
SELECT t.table_schema, t.table_name, t.table_type,
       obj_description(format('%I.%I', t.table_schema, t.table_name)::regclass, 'pg_class')
FROM information_schema.tables t
WHERE t.table_schema NOT IN ('pg_catalog', 'information_schema', 'topology', 'tiger')
  AND t.table_schema NOT LIKE 'pg_%%'
"""

_FOREIGN_KEYS = """
SELECT kcu.constraint_schema, kcu.constraint_name, kcu.table_schema, kcu.table_name,
       kcu.column_name, kcu.ordinal_position, ref.table_schema, ref.table_name,
       ref.column_name
FROM information_schema.referential_constraints rc
JOIN information_schema.key_column_usage kcu
  ON kcu.constraint_schema = rc.constraint_schema AND kcu.constraint_name = rc.constraint_name
JOIN information_schema.key_column_usage ref
  ON ref.constraint_schema = rc.unique_constraint_schema
 AND ref.constraint_name = rc.unique_constraint_name
 AND ref.ordinal_position = kcu.position_in_unique_constraint
ORDER BY kcu.constraint_schema, kcu.constraint_name, kcu.ordinal_position
"""

_PRIMARY_KEYS = """
SELECT kcu.table_schema, kcu.table_name, kcu.column_name, kcu.ordinal_position
FROM information_schema.table_constraints tc
JOIN information_schema.key_column_usage kcu
  ON kcu.constraint_schema = tc.constraint_schema AND kcu.constraint_name = tc.constraint_name
WHERE tc.constraint_type = 'PRIMARY KEY'
  AND kcu.table_schema NOT IN ('pg_catalog', 'information_schema', 'topology', 'tiger')
ORDER BY kcu.table_schema, kcu.table_name, kcu.ordinal_position
"""


def _qualified(schema: str, table: str) -> str:
    return table if schema == "public" else f"{schema}.{table}"


def sql_ident(name: str) -> str:
    """A double-quoted SQL identifier (keeps case; quotes doubled)."""
    return '"' + name.replace('"', '""') + '"'


def sql_table(name: str) -> str:
    """``schema.table`` or ``table`` as quoted SQL."""
    if "." in name:
        schema, _, table = name.partition(".")
        return f"{sql_ident(schema)}.{sql_ident(table)}"
    return sql_ident(name)


@dataclass(frozen=True, slots=True)
class Column:
    """One column.

    Attributes:
        table: ``table`` or ``schema.table``.
        name: The column name (case kept).
        data_type: ``information_schema`` data type (``integer``, ``date``, ``text``…).
        udt_name: The underlying type name (``int4``, ``geometry``…).
        nullable: Whether NULLs are allowed.
        comment: ``COMMENT ON COLUMN``, if any.
    """

    table: str
    name: str
    data_type: str
    udt_name: str = ""
    nullable: bool = True
    comment: str | None = None

    @property
    def family(self) -> str:
        """numeric, integer, text, date, datetime, time, boolean, geometry or other."""
        t = self.data_type.lower()
        if t in ("smallint", "integer", "bigint"):
            return "integer"
        if t in ("numeric", "real", "double precision", "decimal"):
            return "numeric"
        if t in ("text", "character varying", "character", "varchar", "char", "name",
                 "citext"):
            return "text"
        if t == "date":
            return "date"
        if t.startswith("timestamp"):
            return "datetime"
        if t.startswith("time"):
            return "time"
        if t == "boolean":
            return "boolean"
        if self.udt_name in ("geometry", "geography"):
            return "geometry"
        return "other"


@dataclass(frozen=True, slots=True)
class ForeignKey:
    """``table(columns) REFERENCES ref_table(ref_columns)``."""

    table: str
    columns: tuple[str, ...]
    ref_table: str
    ref_columns: tuple[str, ...]


@dataclass
class DbSchema:
    """Tables, columns, comments, primary and foreign keys of one database."""

    columns: dict[str, list[Column]] = field(default_factory=dict)
    table_comments: dict[str, str] = field(default_factory=dict)
    views: set[str] = field(default_factory=set)
    primary_keys: dict[str, tuple[str, ...]] = field(default_factory=dict)
    foreign_keys: list[ForeignKey] = field(default_factory=list)

    @property
    def tables(self) -> list[str]:
        return sorted(self.columns)

    def column(self, table: str, name: str) -> Column | None:
        for c in self.columns.get(table, ()):
            if c.name == name:
                return c
        return None

    def has_columns(self, table: str, names: tuple[str, ...]) -> bool:
        have = {c.name for c in self.columns.get(table, ())}
        return all(n in have for n in names)

    def resolve_table(self, name: str) -> str | None:
        """The schema's name for a table as a mapping's SQL names it (case-insensitive
        fallback)."""
        if name in self.columns:
            return name
        low = {t.lower(): t for t in self.columns}
        return low.get(name.lower())

    def fks_from(self, table: str) -> list[ForeignKey]:
        return [fk for fk in self.foreign_keys if fk.table == table]


def introspect(conn: Any) -> DbSchema:
    """Read the schema through ``information_schema`` on an open psycopg connection."""
    out = DbSchema()
    cols: dict[str, list[Column]] = defaultdict(list)
    for schema, table, name, dtype, udt, nullable, _pos, comment in conn.execute(_COLUMNS):
        q = _qualified(schema, table)
        cols[q].append(Column(q, name, dtype, udt or "", nullable == "YES", comment))
    out.columns = dict(cols)
    for schema, table, ttype, comment in conn.execute(_TABLES):
        q = _qualified(schema, table)
        if comment:
            out.table_comments[q] = comment
        if ttype == "VIEW":
            out.views.add(q)
    pks: dict[str, list[str]] = defaultdict(list)
    for schema, table, col, _pos in conn.execute(_PRIMARY_KEYS):
        pks[_qualified(schema, table)].append(col)
    out.primary_keys = {t: tuple(c) for t, c in pks.items()}
    fks: dict[tuple[str, str], tuple[str, list[str], str, list[str]]] = {}
    for cschema, cname, schema, table, col, _pos, rschema, rtable, rcol in conn.execute(
            _FOREIGN_KEYS):
        key = (cschema, cname)
        if key not in fks:
            fks[key] = (_qualified(schema, table), [], _qualified(rschema, rtable), [])
        fks[key][1].append(col)
        fks[key][3].append(rcol)
    out.foreign_keys = [ForeignKey(t, tuple(c), rt, tuple(rc)) for t, c, rt, rc in fks.values()]
    return out
