"""PostgreSQL for navqa: an existing server (``NAVQA_PG_DSN``) or a private cluster.

The private cluster is created with ``initdb`` under the cache, listens only on a free
loopback port, and uses password authentication (the password is generated and kept
in a 0600 file). ``initdb`` refuses to run as root, so under root (as in CI) the cluster
runs as an unprivileged user (``postgres`` if it exists, else ``nobody``) in
``/var/tmp/navqa-pg-<id>`` — a folder that user can reach.

Several navqa processes share one private cluster safely. Everything that changes it
(``initdb``, ``pg_ctl start``/``stop``) runs under an exclusive ``flock`` on
``<cache>/postgres/<name>/lock``, and every process using it holds a *lease*: a file in
``<cache>/postgres/<name>/users/`` naming its pid (and the pid's start time, so a
recycled pid does not count). :meth:`PrivateCluster.stop` drops the lease; the last live
user stops the cluster. Leases of processes that died without dropping them (SIGKILL) are
ignored, so ``navqa endpoint down`` — or the next user to leave — stops the cluster.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
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
from navqa.locks import exclusive_lock

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
        self.run_as = _unprivileged_user()
        self.base = cluster_base(config, name)
        self.data_dir = self.base / "data"
        self.log_path = self.base / "postgres.log"
        # What only navqa reads lives in the cache, writable by this user even under root.
        self.state_dir = config.runtime.cache_dir / "postgres" / (name or config.runtime.pg_cluster)
        self.password_file = self.state_dir / "password"
        self.users_dir = self.state_dir / "users"
        self.bindir = postgres_bindir()
        self.port: int | None = None
        self._lease: Path | None = None

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

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """Hold the cluster's exclusive lock (blocks until other navqa processes release it)."""
        with exclusive_lock(self.state_dir / "lock"):
            yield

    def _take_lease(self) -> None:
        if self._lease is not None:
            return
        self.users_dir.mkdir(parents=True, exist_ok=True)
        pid = os.getpid()
        lease = self.users_dir / f"{pid}-{secrets.token_hex(4)}"
        lease.write_text(json.dumps({"pid": pid, "started": _process_start(pid)}))
        self._lease = lease

    def live_users(self) -> list[int]:
        """PIDs of the live processes holding a lease on the cluster (forgets dead ones)."""
        pids = []
        for lease in sorted(self.users_dir.iterdir()) if self.users_dir.is_dir() else []:
            try:
                info = json.loads(lease.read_text())
                pid, started = int(info["pid"]), info["started"]
            except (OSError, ValueError, KeyError, TypeError):
                pid, started = -1, None
            if pid > 0 and started is not None and _process_start(pid) == started:
                pids.append(pid)
            else:
                lease.unlink(missing_ok=True)
        return pids

    def _preferred_port(self) -> int:
        """The port the cluster last listened on, when it is free: an endpoint still
        running over the cluster (PostgreSQL was stopped under it) then works again."""
        try:
            port = int((self.state_dir / "port").read_text())
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as postgres does
                s.bind(("127.0.0.1", port))
            return port
        except (OSError, ValueError):
            return free_port()

    def _pg_ctl_stop(self, mode: str = "fast") -> None:
        proc = self._run([str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-m", mode,
                          "-w", "stop"], timeout=120)
        if proc.returncode != 0 and self._running_port() is not None:
            raise PostgresError(f"pg_ctl stop failed for {self.data_dir}: "
                                f"{(proc.stderr or proc.stdout).strip()[-500:]}")

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
            self._pg_ctl_stop("immediate")
        shutil.rmtree(self.data_dir, ignore_errors=True)
        # the leases were on the cluster that is gone
        shutil.rmtree(self.users_dir, ignore_errors=True)
        if (self.data_dir / "PG_VERSION").exists():
            raise PostgresError(f"cannot remove the orphaned cluster in {self.data_dir}",
                                hint="stop its postgres process and delete the folder")

    def start(self, timeout: float = 60) -> PgConnection:
        """Start the cluster (creating it first if needed), take a lease, return how to reach it.

        Creating, starting and leasing happen under the cluster's lock, so processes
        starting together neither run ``initdb``/``pg_ctl start`` twice nor see a
        cluster another process is about to stop. Call :meth:`stop` when done.

        Raises:
            PostgresError: when it does not start; the message quotes its log.
        """
        with self._locked():
            self.init()
            port = self._running_port()
            if port is None:
                port = self._preferred_port()
                self.log_path.unlink(missing_ok=True)
                opts = (f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories='' "
                        "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
                        "-c max_connections=50")
                proc = self._run([str(self.bindir / "pg_ctl"), "-D", str(self.data_dir), "-o",
                                  opts, "-l", str(self.log_path), "-w", "-t", str(int(timeout)),
                                  "start"], timeout=timeout + 30)
                if proc.returncode != 0:
                    log = (self.log_path.read_text(errors="replace")
                           if self.log_path.exists() else "")
                    tail = "\n".join(log.strip().splitlines()[-8:])
                    raise PostgresError(f"PostgreSQL did not start (port {port}): "
                                        f"{proc.stderr.strip()}\n{tail}")
                (self.state_dir / "port").write_text(str(port))
            self.port = port
            conn = PgConnection("127.0.0.1", port, ADMIN_USER, self._password())
            _wait_accepting(conn, timeout)
            self._take_lease()
        return conn

    def stop(self) -> None:
        """Drop this object's lease; the last live user stops the cluster."""
        if self._lease is None:
            return
        with self._locked():
            self._lease.unlink(missing_ok=True)
            self._lease = None
            if not self.live_users() and self._running_port() is not None:
                self._pg_ctl_stop()

    def stop_unused(self) -> list[int]:
        """Stop the cluster unless a live navqa process still uses it (``endpoint down``).

        Returns:
            The PIDs of the live users that kept it running (empty when it was stopped or
            was not running).
        """
        with self._locked():
            users = self.live_users()
            if not users and self._running_port() is not None:
                self._pg_ctl_stop()
        return users

    def force_stop(self) -> None:
        """Stop the cluster whoever uses it, and forget every lease (cleanup after a crash)."""
        with self._locked():
            if self._running_port() is not None:
                self._pg_ctl_stop()
            shutil.rmtree(self.users_dir, ignore_errors=True)
            self._lease = None


def cluster_base(config: NavqaConfig, name: str | None = None) -> Path:
    """The folder of the private cluster ``name`` (its data folder is ``<base>/data``).

    Under root the cluster runs as an unprivileged user, so it lives in ``/var/tmp``.
    """
    base = config.runtime.cache_dir / "postgres" / (name or config.runtime.pg_cluster)
    if os.geteuid() == 0:
        tag = hashlib.sha256(str(base).encode()).hexdigest()[:10]
        base = Path("/var/tmp") / f"navqa-pg-{tag}"
    return base


def _process_start(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot), or ``None`` if it is dead or a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    if fields[0] == "Z":
        return None
    return int(fields[19])


def reachable(host: str, port: int, timeout: float = 2.0) -> bool:
    """Whether something accepts TCP connections on ``host:port`` within ``timeout``."""
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


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

    The private cluster is leased for the block; the last navqa process to leave stops it.
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
