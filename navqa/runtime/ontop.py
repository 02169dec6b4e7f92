"""Start, probe and stop an Ontop SPARQL endpoint (navqa's launcher over the Ontop library).

:class:`OntopProcess` checks its inputs before launching, writes the JVM log to a file,
waits until ``SELECT * {}`` answers, and turns startup failures into
:class:`~navqa.errors.OntopStartupError` quoting the relevant log lines (never a Java
stack trace). The JVM runs in its own process group and is asked to die with its parent
(``PR_SET_PDEATHSIG``), so no JVM outlives navqa: stopping happens on ``stop()``, on exit
of the ``with`` block, on Ctrl-C, at interpreter exit, and when navqa itself is killed.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType

import requests

from navqa.errors import InputError, OntologyParseError, OntopStartupError
from navqa.runtime.jdbc_drivers import KNOWN_DATABASES, known_database
from navqa.runtime.ontop_setup import MAIN_CLASS, OntopInstall
from navqa.runtime.postgres import free_port

_LIVE: set[OntopProcess] = set()
_LIVE_LOCK = threading.Lock()
_PR_SET_PDEATHSIG = 1


@dataclass
class OntopSpec:
    """What to serve.

    Attributes:
        ontology: The OWL file.
        mapping: ``.obda`` (native) or anything else (R2RML, Turtle).
        jdbc_url: ``jdbc:postgresql://host:port/db``.
        user: Database user.
        password: Database password; passed as ``ONTOP_DB_PASSWORD``, never on argv.
        properties: Extra Ontop properties written to the properties file.
        xml_catalog: An XML catalog resolving ``owl:imports`` offline.
        lenses: An Ontop lenses file (views over the tables).
        driver_jars: JDBC driver jars added to Ontop's class path (other databases than
            PostgreSQL; see :mod:`navqa.runtime.jdbc_drivers`).
        dev: Enable ``/ontop/reformulate``.
        port: Port to listen on; a free one when ``None``.
    """

    ontology: Path
    mapping: Path
    jdbc_url: str
    user: str
    password: str | None = None
    properties: dict[str, str] = field(default_factory=dict)
    xml_catalog: Path | None = None
    lenses: Path | None = None
    driver_jars: tuple[Path, ...] = ()
    dev: bool = False
    port: int | None = None

    def __repr__(self) -> str:
        return (f"OntopSpec(ontology={str(self.ontology)!r}, mapping={str(self.mapping)!r}, "
                f"jdbc_url={self.jdbc_url!r}, user={self.user!r}, dev={self.dev}, "
                f"port={self.port})")


def check_driver_matches_url(jdbc_url: str, driver: str) -> None:
    """Fail when ``driver`` is the JDBC driver navqa knows for another database than the URL's.

    Such a driver does not accept the URL, and Ontop then waits for its ready timeout
    instead of failing; a driver navqa does not know (a wrapper, a vendor fork) is let through.

    Raises:
        InputError: naming the URL's scheme and the driver, e.g. a ``jdbc:postgresql:`` URL
            with ``org.mariadb.jdbc.Driver``.
    """
    url_db = known_database(jdbc_url)
    driver_db = next((k for k in KNOWN_DATABASES if k.driver == driver), None)
    if driver_db is None or driver_db == url_db:
        return
    scheme = ":".join(jdbc_url.split(":")[:2])
    expected = f" (expected {url_db.driver})" if url_db is not None else ""
    raise InputError(f"JDBC URL {scheme}: does not match driver {driver}, which wants a "
                     f"{driver_db.prefix} URL{expected}: fix jdbc.url or jdbc.driver")


def _pdeathsig() -> None:  # pragma: no cover - runs in the child
    os.setsid()
    try:
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)
    except OSError:
        pass


def relevant_log_lines(log: str, limit: int = 14) -> str:
    """The lines of an Ontop log that explain a failure, without Java stack frames."""
    lines = log.splitlines()
    picked = [ln for ln in lines if ln.startswith("navqa-ontop: ")]
    if not picked:
        keys = ("ERROR", "Exception", "Error:", "refused", "does not exist", "Caused by")
        picked = [ln for ln in lines if any(k in ln for k in keys)
                  and not ln.lstrip().startswith("at ")]
    seen: list[str] = []
    for ln in picked:
        short = ln if len(ln) <= 600 else ln[:600] + " …"
        if short not in seen:
            seen.append(short)
    return "\n".join(seen[:limit])


def jdbc_cause(server_message: str) -> str:
    """The database driver's own message in a failed query's answer, said once.

    The launcher answers a failed query with its chain of causes, ``Class: message <-
    Class: message …``, and each wrapper quotes the message it wraps: a refused database
    connection reads four times. This is the message of the first link whose class is an
    ``SQLException`` (the PostgreSQL driver's ``PSQLException``), else of the last link.
    """
    links = [part.strip().partition(": ") for part in server_message.strip().split(" <- ")]
    msgs = [(cls.strip(), msg.strip() or cls.strip()) for cls, _, msg in links if cls.strip()]
    if not msgs:
        return server_message.strip()[:600]
    for cls, msg in msgs:
        if cls.endswith("SQLException") or cls.endswith("SQLTransientConnectionException"):
            return msg[:600]
    return msgs[-1][1][:600]


def _explain(excerpt: str) -> str:
    low = excerpt.lower()
    if "address already in use" in low or "bindexception" in low:
        return "the port is already taken"
    if "connection to" in low and "refused" in low or "connectexception" in low:
        return "the database is unreachable"
    if "password authentication failed" in low:
        return "the database refused the credentials"
    if "does not exist" in low and "database" in low:
        return "the database does not exist"
    if "mapping" in low or "obda" in low or "r2rml" in low or "invalidmapping" in low:
        return "the mapping is invalid"
    if "ontology" in low or "owlontology" in low:
        return "the ontology could not be loaded"
    return "Ontop failed to start"


class OntopProcess:
    """One running Ontop endpoint; use as a context manager.

    Args:
        install: A verified Ontop installation.
        spec: What to serve.
        log_path: Where the JVM's output goes.
        java_heap: ``-Xmx`` value.
    """

    def __init__(self, install: OntopInstall, spec: OntopSpec, *, log_path: Path,
                 java_heap: str = "1g") -> None:
        self.install = install
        self.spec = spec
        self.log_path = log_path
        self.java_heap = java_heap
        self.port = spec.port or free_port()
        self.proc: subprocess.Popen[bytes] | None = None
        self.started_s: float | None = None

    @property
    def url(self) -> str:
        """The SPARQL endpoint URL."""
        return f"http://127.0.0.1:{self.port}/sparql"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int | None:
        return None if self.proc is None else self.proc.pid

    def _check_inputs(self) -> None:
        s = self.spec
        if not s.ontology.is_file():
            raise OntologyParseError("ontology file does not exist", path=s.ontology)
        if not s.mapping.is_file():
            raise InputError("mapping file does not exist", path=s.mapping)
        if s.xml_catalog is not None and not s.xml_catalog.is_file():
            raise InputError("XML catalog does not exist", path=s.xml_catalog)
        if s.lenses is not None and not s.lenses.is_file():
            raise InputError("lenses file does not exist", path=s.lenses)
        props = self._properties()
        check_driver_matches_url(props["jdbc.url"], props["jdbc.driver"])

    def _properties(self) -> dict[str, str]:
        props = {"jdbc.url": self.spec.jdbc_url, "jdbc.user": self.spec.user,
                 "jdbc.driver": "org.postgresql.Driver",
                 "jdbc.initScript": "SET TIME ZONE 'UTC'"}
        props.update(self.spec.properties)
        return props

    def _write_properties(self) -> Path:
        props = self._properties()
        path = self.log_path.with_suffix(".properties")
        body = "".join(f"{k}={v.replace(chr(92), chr(92) * 2)}\n" for k, v in props.items())
        path.write_text(body, encoding="utf-8")
        return path

    def start(self, timeout: float = 240.0) -> OntopProcess:
        """Launch the JVM and wait until the endpoint answers.

        Raises:
            OntologyParseError / InputError: a file does not exist.
            OntopStartupError: the JVM exited or did not become ready in time.
        """
        self._check_inputs()
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        props = self._write_properties()
        cmd = [self.install.java, f"-Xmx{self.java_heap}", "-Dfile.encoding=UTF-8",
               "-Duser.timezone=UTC", "-cp",
               os.pathsep.join([self.install.classpath, *map(str, self.spec.driver_jars)]),
               MAIN_CLASS, "endpoint",
               "--ontology", str(self.spec.ontology), "--mapping", str(self.spec.mapping),
               "--properties", str(props), "--port", str(self.port)]
        if self.spec.xml_catalog is not None:
            cmd += ["--xml-catalog", str(self.spec.xml_catalog)]
        if self.spec.lenses is not None:
            cmd += ["--lenses", str(self.spec.lenses)]
        if self.spec.dev:
            cmd.append("--dev")
        env = {k: v for k, v in os.environ.items() if not k.startswith("ONTOP_")}
        if self.spec.password is not None:
            env["ONTOP_DB_PASSWORD"] = self.spec.password
        t0 = time.monotonic()
        log = self.log_path.open("wb")
        try:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                         stdin=subprocess.DEVNULL, preexec_fn=_pdeathsig)
        finally:
            log.close()
        with _LIVE_LOCK:
            _LIVE.add(self)
        try:
            self._wait_ready(timeout)
        except BaseException:
            self.stop()
            raise
        self.started_s = time.monotonic() - t0
        return self

    def _wait_ready(self, timeout: float) -> None:
        assert self.proc is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            code = self.proc.poll()
            if code is not None:
                excerpt = relevant_log_lines(self._log_text())
                raise OntopStartupError(
                    f"Ontop exited with code {code} before it was ready: {_explain(excerpt)} "
                    f"(ontology {self.spec.ontology.name}, mapping {self.spec.mapping}, "
                    f"database {self.spec.jdbc_url})",
                    log_path=self.log_path, log_excerpt=excerpt)
            if "navqa-ontop: READY" in self._log_text() and self.probe():
                return
            time.sleep(0.25)
        excerpt = relevant_log_lines(self._log_text())
        raise OntopStartupError(f"Ontop did not become ready within {timeout:.0f}s",
                                log_path=self.log_path, log_excerpt=excerpt,
                                hint="large mappings can take minutes; raise "
                                "runtime.ontop_start_timeout_s")

    def _log_text(self) -> str:
        try:
            return self.log_path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def probe(self) -> bool:
        """Whether the endpoint answers ``SELECT * {}`` right now."""
        try:
            r = requests.get(self.url, params={"query": "SELECT * {}"},
                             headers={"Accept": "application/sparql-results+json"}, timeout=5)
        except requests.RequestException:
            return False
        return r.status_code == 200

    def stop(self, timeout: float = 15.0) -> None:
        """Stop the JVM (SIGTERM to its process group, then SIGKILL)."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait(5)
        with _LIVE_LOCK:
            _LIVE.discard(self)

    def peak_rss_mb(self) -> float | None:
        """Peak resident memory of the JVM so far (VmHWM), in MB, while it runs."""
        if self.proc is None:
            return None
        try:
            for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
        except OSError:
            return None
        return None

    def __enter__(self) -> OntopProcess:
        if self.proc is None:
            self.start()
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.stop()


def _stop_all() -> None:
    with _LIVE_LOCK:
        live = list(_LIVE)
    for p in live:
        p.stop(timeout=5)


atexit.register(_stop_all)
