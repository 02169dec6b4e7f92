"""PostgreSQL for navqa: an existing server (``NAVQA_PG_DSN``) or a private cluster.

The private cluster is created with ``initdb`` under the cache, listens only on a free
loopback port, and uses password authentication (the password is generated and kept
in a 0600 file). ``initdb`` refuses to run as root, so under root (as in CI) the cluster
runs as an unprivileged user (``postgres`` if it exists, else ``nobody``) in
``/var/tmp/navqa-pg-<id>`` — a folder that user can reach.

A cluster already running on the same data folder (started by another navqa process)
is reused and left running; a cluster this process started is stopped by
:meth:`PrivateCluster.stop` (or on exit of the context manager).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import pwd
import re
import secrets
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit

import psycopg
from psycopg import sql

from navqa.config import NavqaConfig
from navqa.errors import PostgresError

ADMIN_USER = "navqa"


def free_port() -> int:
    """A TCP port that is free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class PgConnection:
    """How to reach a PostgreSQL server.

    The password is never part of ``repr`` or of the JDBC URL.
    """

    host: str
    port: int
    user: str
    password: str | None = None

    def __repr__(self) -> str:
        return f"PgConnection(host={self.host!r}, port={self.port}, user={self.user!r})"

    def conninfo(self, dbname: str) -> str:
        """A libpq URI for ``dbname`` (includes the password: never log it)."""
        auth = quote(self.user, safe="")
        if self.password:
            auth += ":" + quote(self.password, safe="")
        return f"postgresql://{auth}@{self.host}:{self.port}/{quote(dbname, safe='')}"

    def jdbc_url(self, dbname: str) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{dbname}"

    def env(self) -> dict[str, str]:
        """libpq environment variables for psql (the password goes here, not on argv)."""
        out = {"PGHOST": self.host, "PGPORT": str(self.port), "PGUSER": self.user}
        if self.password:
            out["PGPASSWORD"] = self.password
        return out

    def connect(self, dbname: str, **kwargs: object) -> psycopg.Connection:
        """Open a psycopg connection.

        Raises:
            PostgresError: when the server cannot be reached or refuses.
        """
        try:
            return psycopg.connect(self.conninfo(dbname), connect_timeout=10, **kwargs)  # type: ignore[arg-type]
        except psycopg.Error as e:
            raise PostgresError(
                f"cannot connect to PostgreSQL at {self.host}:{self.port} (database {dbname!r}, "
                f"user {self.user!r}): {_first_line(e)}"
            ) from e

    @classmethod
    def from_dsn(cls, dsn: str) -> PgConnection:
        """Parse ``postgresql://user:pass@host:port``.

        Raises:
            PostgresError: when the DSN is not a postgresql URI.
        """
        parts = urlsplit(dsn)
        if parts.scheme not in ("postgres", "postgresql") or not parts.hostname:
            raise PostgresError(
                "NAVQA_PG_DSN must look like postgresql://user:password@host:port",
            )
        from urllib.parse import unquote

        return cls(
            host=parts.hostname,
            port=parts.port or 5432,
            user=unquote(parts.username or "postgres"),
            password=unquote(parts.password) if parts.password else None,
        )


def _first_line(e: BaseException) -> str:
    return (str(e).strip().splitlines() or [type(e).__name__])[0]


def postgres_bindir() -> Path:
    """The folder holding ``initdb`` and ``pg_ctl``.

    Raises:
        PostgresError: when no PostgreSQL server binaries are installed.
    """
    cands = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                   key=lambda p: int(p.parent.parent.name) if p.parent.parent.name.isdigit() else 0)
    if cands:
        return cands[-1].parent
    which = shutil.which("initdb")
    if which:
        return Path(which).resolve().parent
    raise PostgresError(
        "PostgreSQL server binaries (initdb, pg_ctl) are not installed",
        hint="apt-get install postgresql, or set NAVQA_PG_DSN to an existing server",
    )


def psql_executable() -> str:
    """The ``psql`` client: on PATH, else beside the server binaries."""
    found = shutil.which("psql")
    if found:
        return found
    cand = postgres_bindir() / "psql"
    if cand.exists():
        return str(cand)
    raise PostgresError("psql is not installed", hint="apt-get install postgresql-client")


@dataclass
class _RunAs:
    uid: int
    gid: int
    name: str


def _unprivileged_user() -> _RunAs | None:
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            pw = pwd.getpwnam(name)
        except KeyError:
            continue
        return _RunAs(pw.pw_uid, pw.pw_gid, name)
    raise PostgresError("running as root and no unprivileged user (postgres, nobody) exists")


class PrivateCluster:
    """A PostgreSQL cluster owned by navqa.

    Args:
        config: Supplies the cache directory.
        name: Cluster name (one folder per name); defaults to ``runtime.pg_cluster``.
    """

    def __init__(self, config: NavqaConfig, name: str | None = None) -> None:
        name = name or config.runtime.pg_cluster
        self.run_as = _unprivileged_user()
        base = config.runtime.cache_dir / "postgres" / name
        if self.run_as is not None:
            tag = hashlib.sha256(str(base).encode()).hexdigest()[:10]
            base = Path("/var/tmp") / f"navqa-pg-{tag}"
        self.base = base
        self.data_dir = base / "data"
        self.log_path = base / "postgres.log"
        self.password_file = config.runtime.cache_dir / "postgres" / name / "password"
        self.bindir = postgres_bindir()
        self.port: int | None = None
        self._started_here = False

    # -- helpers -------------------------------------------------------------------------

    def _run(self, args: list[str], *, timeout: float = 120) -> subprocess.CompletedProcess[str]:
        kw: dict[str, object] = {}
        if self.run_as is not None:
            kw = {"user": self.run_as.uid, "group": self.run_as.gid, "extra_groups": []}
        env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
        env["LC_ALL"] = "C.UTF-8"
        try:
            return subprocess.run(args, capture_output=True, text=True, timeout=timeout,
                                  env=env, cwd="/", **kw)  # type: ignore[call-overload]
        except subprocess.TimeoutExpired as e:
            raise PostgresError(f"{Path(args[0]).name} timed out after {timeout:.0f}s") from e

    def _chown(self, path: Path) -> None:
        if self.run_as is not None:
            os.chown(path, self.run_as.uid, self.run_as.gid)

    def _password(self) -> str:
        if self.password_file.is_file():
            return self.password_file.read_text().strip()
        self.password_file.parent.mkdir(parents=True, exist_ok=True)
        pw = secrets.token_urlsafe(24)
        fd = os.open(self.password_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(pw)
        return pw

    def postmaster_pid(self) -> int | None:
        """PID of the running postmaster, if any."""
        pid_file = self.data_dir / "postmaster.pid"
        try:
            return int(pid_file.read_text().splitlines()[0])
        except (OSError, IndexError, ValueError):
            return None

    def _running_port(self) -> int | None:
        pid_file = self.data_dir / "postmaster.pid"
        if not pid_file.is_file():
            return None
        lines = pid_file.read_text().splitlines()
        try:
            pid, port = int(lines[0]), int(lines[3])
        except (IndexError, ValueError):
            return None
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return port

    # -- lifecycle -----------------------------------------------------------------------

    def init(self) -> None:
        """Create the cluster if it does not exist yet (idempotent).

        A cluster whose password file is gone is an orphan: its cache was deleted (under
        root the cluster lives in ``/var/tmp``, outside the cache) and nobody knows its
        password any more. It holds only reloadable datasets, so it is stopped and
        created afresh instead of failing every connection with "password authentication
        failed".
        """
        if (self.data_dir / "PG_VERSION").is_file():
            if self.password_file.is_file():
                return
            self._discard_orphan()
        password = self._password()
        self.base.mkdir(parents=True, exist_ok=True, mode=0o700)
        self._chown(self.base)
        pwfile = self.base / ".initpw"
        pwfile.write_text(password)
        pwfile.chmod(0o600)
        self._chown(pwfile)
        try:
            proc = self._run([str(self.bindir / "initdb"), "-D", str(self.data_dir), "-U",
                              ADMIN_USER, "--pwfile", str(pwfile), "-A", "scram-sha-256",
                              "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"], timeout=300)
        finally:
            pwfile.unlink(missing_ok=True)
        if proc.returncode != 0:
            shutil.rmtree(self.data_dir, ignore_errors=True)
            raise PostgresError("initdb failed: " + (proc.stderr or proc.stdout).strip()[-1500:])

    def _discard_orphan(self) -> None:
        if self._running_port() is not None:
            self._run([str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", "immediate",
                       "-w", "stop"], timeout=120)
        shutil.rmtree(self.data_dir, ignore_errors=True)
        if (self.data_dir / "PG_VERSION").exists():
            raise PostgresError(f"cannot remove the orphaned cluster in {self.data_dir}",
                                hint="stop its postgres process and delete the folder")

    def start(self, timeout: float = 60) -> PgConnection:
        """Start the cluster (creating it first if needed) and return how to reach it.

        Raises:
            PostgresError: when it does not start; the message quotes its log.
        """
        self.init()
        port = self._running_port()
        if port is None:
            port = free_port()
            self.log_path.unlink(missing_ok=True)
            opts = (f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' "
                    "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
                    "-c max_connections=50")
            proc = self._run([str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-o", opts,
                              "-l", str(self.log_path), "-w", "-t", str(int(timeout)), "start"],
                             timeout=timeout + 30)
            if proc.returncode != 0:
                log = self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
                tail = "\n".join(log.strip().splitlines()[-8:])
                raise PostgresError(f"PostgreSQL did not start (port {port}): "
                                    f"{proc.stderr.strip()}\n{tail}")
            self._started_here = True
        self.port = port
        conn = PgConnection("127.0.0.1", port, ADMIN_USER, self._password())
        _wait_accepting(conn, timeout)
        return conn

    def stop(self) -> None:
        """Stop the cluster if this object started it."""
        if not self._started_here:
            return
        self._run([str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w",
                   "stop"], timeout=120)
        self._started_here = False

    def force_stop(self) -> None:
        """Stop the cluster whoever started it (``navqa endpoint down``)."""
        if self._running_port() is not None:
            self._run([str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w",
                       "stop"], timeout=120)
        self._started_here = False


def _wait_accepting(conn: PgConnection, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            with conn.connect("postgres"):
                return
        except PostgresError as e:
            last = e
            if "password authentication failed" in str(e):
                break  # not transient: waiting cannot fix a wrong password
            time.sleep(0.2)
    raise PostgresError(f"PostgreSQL at {conn.host}:{conn.port} does not accept connections: "
                        f"{last}")


@contextlib.contextmanager
def postgres(config: NavqaConfig) -> Iterator[PgConnection]:
    """Yield a reachable PostgreSQL: ``NAVQA_PG_DSN`` if set, else the private cluster.

    A private cluster started here is stopped on exit.
    """
    if config.runtime.pg_dsn is not None:
        conn = PgConnection.from_dsn(config.runtime.pg_dsn.get_secret_value())
        _wait_accepting(conn, 10)
        yield conn
        return
    cluster = PrivateCluster(config)
    conn = cluster.start()
    try:
        yield conn
    finally:
        cluster.stop()


_SAFE_DB = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def check_database_name(name: str) -> str:
    if not _SAFE_DB.match(name):
        raise PostgresError(f"invalid database name {name!r}")
    return name


def database_marker(conn: PgConnection, dbname: str) -> str | None:
    """The navqa load marker stored as the database comment, or ``None`` if absent."""
    with conn.connect("postgres", autocommit=True) as c:
        row = c.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            (dbname,),
        ).fetchone()
    if row is None:
        return None
    return row[0] or ""


def recreate_database(conn: PgConnection, dbname: str) -> None:
    """Drop (terminating its sessions) and create ``dbname`` empty."""
    check_database_name(dbname)
    with conn.connect("postgres", autocommit=True) as c:
        c.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                  "AND pid <> pg_backend_pid()", (dbname,))
        c.execute(sql.SQL("DROP DATABASE IF EXISTS {}").format(sql.Identifier(dbname)))
        c.execute(sql.SQL("CREATE DATABASE {} TEMPLATE template0 ENCODING 'UTF8'").format(
            sql.Identifier(dbname)))


def set_database_marker(conn: PgConnection, dbname: str, marker: str) -> None:
    with conn.connect("postgres", autocommit=True) as c:
        c.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(sql.Identifier(dbname),
                                                                 sql.Literal(marker)))


def run_psql(conn: PgConnection, dbname: str, script: bytes, *, label: str,
             stop_on_error: bool = True, timeout: float = 3600) -> str:
    """Feed ``script`` to ``psql`` on stdin; return its stderr.

    Raises:
        PostgresError: when psql fails (with ``stop_on_error``) — quoting psql's error.
    """
    args = [psql_executable(), "-X", "-q", "-d", dbname,
            "-v", f"ON_ERROR_STOP={1 if stop_on_error else 0}", "-f", "-"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(conn.env())
    env["PGOPTIONS"] = "-c client_min_messages=warning"
    try:
        proc = subprocess.run(args, input=script, capture_output=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        raise PostgresError(f"loading {label} timed out after {timeout:.0f}s") from e
    err = proc.stderr.decode("utf-8", "replace")
    if proc.returncode != 0:
        raise PostgresError(f"loading {label} failed: " + "\n".join(
            ln for ln in err.splitlines() if "ERROR" in ln or "FATAL" in ln)[:2000])
    return err
