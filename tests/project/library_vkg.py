"""The user's own VKG of these tests: a library in a PostgreSQL the test starts itself.

The test owns the database: it starts a throwaway PostgreSQL cluster with initdb/pg_ctl
itself (not navqa's private cluster) and loads the library VKG with psycopg. :func:`navqa`
runs the CLI as a subprocess and checks, after every command, that the database is
unchanged (same row counts and schema checksum) and that the password appears neither in
the output nor in any file under navqa's cache directory.
"""

from __future__ import annotations

import hashlib
import os
import pwd
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import psycopg

from navqa.config import load_config

HERE = Path(__file__).parent / "library"
NAVQA = str(Path(sys.executable).with_name("navqa"))
TABLES = ("branch", "author", "book", "member", "loan")


@dataclass
class UserDb:
    host: str
    port: int
    dbname: str
    user: str
    password: str

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(host=self.host, port=self.port, dbname=self.dbname,
                               user=self.user, password=self.password)

    def fingerprint(self) -> tuple[dict[str, int], str]:
        """Row counts per table and a checksum of the schema (tables, columns, types)."""
        with self.connect() as c:
            counts = {t: c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in TABLES}
            cols = c.execute(
                "SELECT table_schema, table_name, column_name, data_type, is_nullable "
                "FROM information_schema.columns WHERE table_schema NOT IN "
                "('pg_catalog', 'information_schema') ORDER BY 1, 2, 3").fetchall()
        return counts, hashlib.sha256(repr(cols).encode()).hexdigest()


def as_postgres() -> dict[str, object]:
    if os.geteuid() != 0:
        return {}
    pw = pwd.getpwnam("postgres")
    return {"user": pw.pw_uid, "group": pw.pw_gid, "extra_groups": []}


def tempfile_dir() -> str:
    return "/var/tmp" if os.geteuid() == 0 else os.environ.get("TMPDIR", "/tmp")


def navqa(*args: str, cwd: Path, db: UserDb, ok: tuple[int, ...] = (0,)) -> str:
    """Run the CLI; check the exit code, that no password leaks, and that the DB is intact."""
    before = db.fingerprint()
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("NAVQA_LLM", None)
    proc = subprocess.run([NAVQA, *args], cwd=cwd, capture_output=True, text=True, env=env,
                          timeout=900)
    out = proc.stdout + proc.stderr
    assert proc.returncode in ok, out
    assert db.password not in out
    assert db.fingerprint() == before, f"navqa {args[0]} changed the user's database"
    leaks = files_holding(cache_dir(), db.password)
    assert not leaks, f"navqa {args[0]} wrote the password into {leaks}"
    return out


def cache_dir() -> Path:
    """navqa's cache directory, as the subprocesses see it."""
    return load_config().runtime.cache_dir


def files_holding(root: Path, secret: str) -> list[Path]:
    """Every regular file under ``root`` whose bytes contain ``secret``."""
    needle = secret.encode()
    out = []
    for p in root.rglob("*"):
        try:
            if p.is_file() and not p.is_symlink() and needle in p.read_bytes():
                out.append(p)
        except OSError:  # a file removed meanwhile, a socket, a lock of another process
            continue
    return out


