"""Databases other than PostgreSQL, holding the demo VKG's data: MariaDB and DuckDB.

The demo's ``schema.sql``, ``data.sql`` and ``constraints.sql`` are PostgreSQL; each
fixture translates them with sqlglot (never by hand) and loads them itself, the way a
user's database is loaded by its owner: navqa only ever reads it, through Ontop.

* ``mariadb``: a throwaway ``mariadbd`` (Debian's ``mariadb-server``) on a free port,
  started from a fresh ``mariadb-install-db`` data directory.
* ``duckdb_file``: a DuckDB database file written with DuckDB's Python package.

Each yields a :class:`ForeignDb`: the Ontop properties to reach it and a
:meth:`ForeignDb.fingerprint` (row counts and a schema checksum) to check that it is
unchanged after every command.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlglot
from sqlglot import exp

from navqa.runtime.postgres import free_port

REPO = Path(__file__).resolve().parents[2]
DEMO = REPO / "datasets" / "demo"
DEMO_SQL = (DEMO / "schema.sql", DEMO / "data.sql", DEMO / "constraints.sql")


def translate_demo_sql(dialect: str) -> list[str]:
    """The demo's PostgreSQL load scripts as statements of ``dialect``, by sqlglot.

    Two rewrites on sqlglot's tree, both about what the target cannot store rather than
    about SQL syntax: MySQL/MariaDB cannot index a ``TEXT`` key (so ``TEXT`` becomes
    ``VARCHAR(255)``), and an index's column order is not a sort (sqlglot would emulate
    PostgreSQL's NULL ordering there). Transaction statements are dropped.
    """
    out = []
    for path in DEMO_SQL:
        for tree in sqlglot.parse(path.read_text(encoding="utf-8"), read="postgres"):
            if tree is None or isinstance(tree, exp.Transaction | exp.Commit):
                continue
            if dialect == "mysql":
                for dt in list(tree.find_all(exp.DataType)):
                    if dt.this == exp.DataType.Type.TEXT:
                        dt.replace(exp.DataType.build("VARCHAR(255)", dialect="mysql"))
            if isinstance(tree, exp.Create) and tree.kind == "INDEX":
                for o in list(tree.find_all(exp.Ordered)):
                    o.replace(o.this)
            out.append(tree.sql(dialect=dialect))
    return out


def demo_tables() -> tuple[str, ...]:
    """The demo's table names, read from its schema."""
    trees = sqlglot.parse((DEMO / "schema.sql").read_text(encoding="utf-8"), read="postgres")
    return tuple(t.this.this.name for t in trees
                 if isinstance(t, exp.Create) and t.kind == "TABLE")


@dataclass
class ForeignDb:
    """A database holding the demo's data, and how Ontop reaches it.

    Attributes:
        name: ``mariadb`` or ``duckdb``.
        properties: The text of an Ontop ``.properties`` file for it.
        password: The password in ``properties`` (must never appear in navqa's output).
        fingerprint: Row counts per table and a checksum of the schema.
        skipped: Statements of the translated load the database refused (with why).
    """

    name: str
    properties: str
    password: str | None
    fingerprint: Callable[[], tuple[dict[str, int], str]]
    skipped: tuple[str, ...] = ()


def _tempdir() -> Path:
    return Path("/var/tmp" if os.geteuid() == 0 else os.environ.get("TMPDIR", "/tmp"))


def _mariadb_bin(name: str) -> str:
    found = shutil.which(name) or next(
        (str(p) for p in (Path("/usr/sbin") / name, Path("/usr/bin") / name) if p.exists()), None)
    if found is None:
        pytest.fail(f"{name} not found: install Debian's mariadb-server (scripts/bootstrap.sh "
                    "does)")
    return found


@pytest.fixture(scope="session")
def mariadb() -> Iterator[ForeignDb]:
    """A MariaDB server started by this fixture, with the demo loaded by its root user."""
    base = _tempdir() / f"navqa-mariadb-{secrets.token_hex(4)}"
    base.mkdir(mode=0o700)
    as_root = ["--user=root"] if os.geteuid() == 0 else []
    subprocess.run([_mariadb_bin("mariadb-install-db"), "--no-defaults",
                    f"--datadir={base / 'data'}", "--auth-root-authentication-method=normal",
                    "--skip-test-db", *as_root], check=True, capture_output=True)
    port, sock = free_port(), base / "sock"
    server = subprocess.Popen(
        [_mariadb_bin("mariadbd"), "--no-defaults", f"--datadir={base / 'data'}",
         f"--socket={sock}", f"--port={port}", "--bind-address=127.0.0.1",
         f"--pid-file={base / 'pid'}", f"--log-error={base / 'error.log'}",
         "--skip-name-resolve", *as_root],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    client = [_mariadb_bin("mariadb"), "--no-defaults", f"--socket={sock}", "-uroot"]

    def sql(query: str, db: str = "") -> str:
        proc = subprocess.run([*client, "-N", "-B", *([db] if db else []), "-e", query],
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    try:
        deadline = time.monotonic() + 120
        while subprocess.run([*client, "-e", "SELECT 1"], capture_output=True).returncode:
            assert server.poll() is None, (base / "error.log").read_text(errors="replace")
            assert time.monotonic() < deadline, "mariadbd did not start within 120 s"
            time.sleep(0.5)
        password = secrets.token_urlsafe(12)
        # the reader may write: only navqa's read-only sessions keep the data intact
        sql(f"CREATE DATABASE navqa_demo CHARACTER SET utf8mb4; "
            f"CREATE USER 'reader'@'127.0.0.1' IDENTIFIED BY '{password}'; "
            f"GRANT ALL PRIVILEGES ON navqa_demo.* TO 'reader'@'127.0.0.1'")
        load = subprocess.run([*client, "navqa_demo"], input=";\n".join(
            translate_demo_sql("mysql")) + ";\n", capture_output=True, text=True, timeout=300)
        assert load.returncode == 0, load.stderr
        tables = demo_tables()

        def fingerprint() -> tuple[dict[str, int], str]:
            counts = {t: int(sql(f"SELECT COUNT(*) FROM {t}", "navqa_demo")) for t in tables}
            cols = sql("SELECT table_name, column_name, column_type, is_nullable FROM "
                       "information_schema.columns WHERE table_schema = 'navqa_demo' "
                       "ORDER BY 1, 2")
            return counts, hashlib.sha256(cols.encode()).hexdigest()

        yield ForeignDb(
            name="mariadb",
            properties=f"jdbc.url=jdbc:mariadb://127.0.0.1:{port}/navqa_demo\n"
                       f"jdbc.user=reader\njdbc.password={password}\n",
            password=password, fingerprint=fingerprint)
    finally:
        server.terminate()
        try:
            server.wait(60)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait(10)
        shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="session")
def duckdb_file(tmp_path_factory: pytest.TempPathFactory) -> ForeignDb:
    """A DuckDB file with the demo, written by DuckDB's Python package and then closed."""
    import duckdb

    path = tmp_path_factory.mktemp("duckdb") / "navqa_demo.duckdb"
    skipped = []
    with duckdb.connect(str(path)) as c:
        for stmt in translate_demo_sql("duckdb"):
            try:
                c.execute(stmt)
            except duckdb.NotImplementedException as e:
                # DuckDB 1.4 cannot add a foreign key to an existing table (ALTER TABLE ...
                # ADD CONSTRAINT); Ontop only misses those keys as optimisation hints
                assert stmt.startswith("ALTER TABLE") and "FOREIGN KEY" in stmt, stmt
                skipped.append(f"{stmt[:60]}…: {e}")
            except duckdb.ParserException as e:
                assert stmt.startswith("ALTER TABLE") and "FOREIGN KEY" in stmt, stmt
                skipped.append(f"{stmt[:60]}…: {e}")
    tables = demo_tables()

    def fingerprint() -> tuple[dict[str, int], str]:
        with duckdb.connect(str(path), read_only=True) as c:
            counts = {t: int(c.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0])  # type: ignore[index]
                      for t in tables}
            cols = c.execute("SELECT table_name, column_name, data_type, is_nullable FROM "
                             "information_schema.columns ORDER BY 1, 2").fetchall()
        return counts, hashlib.sha256(repr(cols).encode()).hexdigest()

    return ForeignDb(name="duckdb", properties=f"jdbc.url=jdbc:duckdb:{path}\n", password=None,
                     fingerprint=fingerprint, skipped=tuple(skipped))
