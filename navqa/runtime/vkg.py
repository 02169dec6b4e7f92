"""Bring a whole VKG up: Ontop jars, dataset files, PostgreSQL, the load, the endpoint.

:func:`serve_vkg` is what every command that needs a live endpoint uses. When
``navqa endpoint up`` is already serving the same VKG (same files, same mapping, same
database), that endpoint is reused instead of starting a second JVM. Each endpoint
records its state in ``<cache>/endpoints/<name>-<port>.json``, so two endpoints of one
VKG never overwrite each other; the record names the database behind the endpoint
(host, port, database, and the private cluster's folder — never a password), so an
endpoint over another database (say, the private cluster while ``NAVQA_PG_DSN`` is set)
is never reused.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from navqa.config import NavqaConfig
from navqa.errors import DatasetError
from navqa.locks import exclusive_lock
from navqa.runtime.datasets import LocalDataset, fetch_dataset
from navqa.runtime.loader import LoadReport, ensure_loaded
from navqa.runtime.ontop import OntopProcess, OntopSpec
from navqa.runtime.ontop_setup import OntopInstall, ensure_ontop
from navqa.runtime.postgres import PgConnection, cluster_base, postgres, reachable

StatusFn = Callable[[str], None]


@dataclass(frozen=True)
class DatabaseId:
    """Which database an endpoint reads: where it is, never how to log in.

    Attributes:
        host: Server host.
        port: Server port.
        database: Database name.
        cluster: The private cluster's data folder, or ``None`` for ``NAVQA_PG_DSN``.
    """

    host: str
    port: int
    database: str
    cluster: str | None

    def __str__(self) -> str:
        return f"{self.host}:{self.port}/{self.database}"

    def same_database(self, other: DatabaseId) -> bool:
        """One private cluster is one database whatever port it listens on today."""
        if self.cluster is not None or other.cluster is not None:
            return self.cluster == other.cluster and self.database == other.database
        return (self.host, self.port, self.database) == (other.host, other.port, other.database)


def database_id(config: NavqaConfig, pg: PgConnection | None, database: str) -> DatabaseId:
    """The identity of ``database`` on ``pg`` — or, without ``pg``, on the server ``config``
    selects (``NAVQA_PG_DSN``, else the private cluster, whose port is then unknown: 0)."""
    cluster = None if config.runtime.pg_dsn is not None else str(cluster_base(config) / "data")
    if pg is None and config.runtime.pg_dsn is not None:
        pg = PgConnection.from_dsn(config.runtime.pg_dsn.get_secret_value())
    if pg is None:
        return DatabaseId("127.0.0.1", 0, database, cluster)
    return DatabaseId(pg.host, pg.port, database, cluster)


@dataclass
class EndpointState:
    """A running endpoint, as recorded for ``navqa endpoint status`` and reuse.

    ``pid`` is the ``navqa endpoint up`` process (SIGTERM stops it cleanly); ``ontop_pid``
    is its JVM; ``db_*`` say which database the endpoint reads.
    """

    name: str
    url: str
    pid: int
    ontop_pid: int
    port: int
    mapping: str
    files_checksum: str
    started_at: float
    log_path: str
    db_host: str
    db_port: int
    db_name: str
    db_cluster: str | None

    @property
    def database(self) -> DatabaseId:
        return DatabaseId(self.db_host, self.db_port, self.db_name, self.db_cluster)

    def alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True

    def database_reachable(self, timeout: float = 2.0) -> bool:
        """Whether the endpoint's database accepts connections right now (a TCP probe)."""
        return reachable(self.db_host, self.db_port, timeout)


def _endpoints_dir(config: NavqaConfig) -> Path:
    return config.runtime.cache_dir / "endpoints"


def _state_path(config: NavqaConfig, name: str, port: int) -> Path:
    return _endpoints_dir(config) / f"{name}-{port}.json"


def _read_state(p: Path) -> EndpointState | None:
    try:
        st = EndpointState(**json.loads(p.read_text()))
    except FileNotFoundError:
        return None
    except (ValueError, TypeError):  # unreadable, or written by an older navqa
        p.unlink(missing_ok=True)
        return None
    if not st.alive():
        p.unlink(missing_ok=True)
        return None
    return st


def endpoint_states(config: NavqaConfig, name: str | None = None,
                    port: int | None = None) -> list[EndpointState]:
    """The recorded endpoints whose process is still alive (optionally one VKG / port).

    Records of dead processes are removed.
    """
    d = _endpoints_dir(config)
    out = []
    for p in sorted(d.glob("*.json")) if d.is_dir() else []:
        st = _read_state(p)
        if st is not None and name in (None, st.name) and port in (None, st.port):
            out.append(st)
    return out


def write_state(config: NavqaConfig, st: EndpointState) -> None:
    """Record ``st`` (atomically: a concurrent reader never sees half a file)."""
    p = _state_path(config, st.name, st.port)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_name(f".{p.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(asdict(st), indent=1))
    tmp.replace(p)


def clear_state(config: NavqaConfig, st: EndpointState) -> None:
    """Forget ``st`` — only if the record is still ``st``'s (not a newer endpoint's)."""
    p = _state_path(config, st.name, st.port)
    current = _read_state(p)
    if current is None or current.pid == st.pid:
        p.unlink(missing_ok=True)


@dataclass
class RunningVkg:
    """A VKG being served.

    Attributes:
        name: Dataset name.
        url: SPARQL endpoint URL.
        dataset: The local, verified dataset files.
        ontop: The endpoint process, or ``None`` when an already-running one is reused.
        pg: How to reach the database (``None`` when reusing a foreign endpoint).
        load: What the loader did.
        ontop_start_s: Seconds from JVM launch to ready.
    """

    name: str
    url: str
    dataset: LocalDataset
    ontop: OntopProcess | None
    pg: PgConnection | None
    load: LoadReport | None
    ontop_start_s: float | None = None

    @property
    def database(self) -> str:
        return self.dataset.manifest.database


def record_endpoint(config: NavqaConfig, running: RunningVkg) -> EndpointState:
    """Record ``running`` — started by this process — for ``endpoint status``, reuse, ``down``.

    Another endpoint of the same VKG keeps its own record (each port has one).
    """
    if running.ontop is None or running.ontop.pid is None or running.pg is None:
        raise ValueError("only an endpoint this process started can be recorded")
    db = database_id(config, running.pg, running.database)
    st = EndpointState(
        name=running.name, url=running.url, pid=os.getpid(), ontop_pid=running.ontop.pid,
        port=running.ontop.port, mapping=str(running.ontop.spec.mapping),
        files_checksum=running.dataset.checksum(), started_at=time.time(),
        log_path=str(running.ontop.log_path), db_host=db.host, db_port=db.port,
        db_name=db.database, db_cluster=db.cluster)
    write_state(config, st)
    return st


def mapping_file(ds: LocalDataset, mapping: str | None) -> Path:
    """The mapping to serve: the manifest's default, or ``obda``/``r2rml``/a role name."""
    role = mapping or ds.manifest.ontop.mapping
    role = {"obda": "mapping", "r2rml": "mapping-r2rml"}.get(role, role)
    if role not in ("mapping", "mapping-r2rml"):
        raise DatasetError(f"unknown mapping choice {mapping!r}; use obda or r2rml")
    return ds.path(role)  # type: ignore[arg-type]


def xml_catalog(config: NavqaConfig, ds: LocalDataset) -> Path | None:
    """The XML catalog to give Ontop: the dataset's own, plus stubs for unresolvable imports."""
    own = ds.path("catalog") if ds.manifest.has("catalog") else None
    stubs = ds.manifest.ontop.stub_imports
    if not stubs:
        return own
    d = config.runtime.cache_dir / "vkg" / ds.name
    d.mkdir(parents=True, exist_ok=True)
    entries = []
    for i, iri in enumerate(stubs):
        stub = d / f"stub-import-{i}.ttl"
        stub.write_text(f"<{iri}> a <http://www.w3.org/2002/07/owl#Ontology> .\n")
        entries.append(f"  <uri name={quoteattr(iri)} uri={quoteattr(stub.name)}/>")
    if own is not None:
        entries.append(f"  <nextCatalog catalog={quoteattr(str(own))}/>")
    cat = d / "catalog.xml"
    cat.write_text('<?xml version="1.0" encoding="UTF-8"?>\n'
                   '<catalog prefer="public" xmlns="urn:oasis:names:tc:entity:xmlns:xml:catalog">\n'
                   + "\n".join(entries) + "\n</catalog>\n")
    return cat


def start_vkg(
    config: NavqaConfig,
    ds: LocalDataset,
    pg: PgConnection,
    install: OntopInstall,
    *,
    mapping: str | None = None,
    dev: bool = False,
    port: int | None = None,
    status: StatusFn | None = None,
) -> RunningVkg:
    """Load ``ds`` into ``pg`` (unless already loaded) and start Ontop on it.

    The caller owns the returned endpoint and must ``running.ontop.stop()`` it;
    :func:`serve_vkg` does that for you.
    """
    say = status or (lambda _m: None)
    # Processes starting together must not load (drop, create, fill) one database at once.
    key = hashlib.sha256(f"{pg.host}:{pg.port}/{ds.manifest.database}".encode()).hexdigest()
    with exclusive_lock(config.runtime.cache_dir / "locks" / f"load-{key[:16]}.lock"):
        report = ensure_loaded(pg, ds, status=say)
    spec = OntopSpec(
        ontology=ds.path("ontology"),
        mapping=mapping_file(ds, mapping),
        jdbc_url=pg.jdbc_url(ds.manifest.database),
        user=pg.user,
        password=pg.password,
        properties=dict(ds.manifest.ontop.properties),
        xml_catalog=xml_catalog(config, ds),
        dev=dev,
        port=port,
    )
    logs = config.runtime.cache_dir / "logs"
    log_path = logs / f"ontop-{ds.name}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    say(f"starting Ontop for {ds.name}")
    proc = OntopProcess(install, spec, log_path=log_path, java_heap=config.runtime.java_heap)
    proc.start(timeout=config.runtime.ontop_start_timeout_s)
    return RunningVkg(name=ds.name, url=proc.url, dataset=ds, ontop=proc, pg=pg, load=report,
                      ontop_start_s=proc.started_s)


@contextlib.contextmanager
def serve_vkg(
    config: NavqaConfig,
    name: str,
    *,
    mapping: str | None = None,
    dev: bool = False,
    port: int | None = None,
    reuse: bool = True,
    status: StatusFn | None = None,
) -> Iterator[RunningVkg]:
    """Serve dataset ``name`` for the duration of the ``with`` block.

    Args:
        config: navqa configuration.
        name: Dataset name.
        mapping: ``obda`` or ``r2rml`` (defaults to the manifest's choice).
        dev: Enable ``/ontop/reformulate``.
        port: Fixed port for Ontop.
        reuse: Reuse an endpoint started by ``navqa endpoint up`` for the same files.
        status: Progress messages.

    Raises:
        NavqaError subclasses from each stage (setup, dataset, PostgreSQL, Ontop).
    """
    say = status or (lambda _m: None)
    ds = fetch_dataset(name, config)
    mapping_path = mapping_file(ds, mapping)
    want = database_id(config, None, ds.manifest.database)
    matching = [st for st in endpoint_states(config, name)
                if st.files_checksum == ds.checksum() and st.mapping == str(mapping_path)
                and st.database.same_database(want)] if reuse and port is None else []
    with contextlib.ExitStack() as stack:
        pg: PgConnection | None = None
        for st in matching:
            if not st.database_reachable():
                if st.db_cluster is None or pg is not None:
                    say(f"not reusing {st.url}: its database {st.database} is unreachable")
                    continue
                # the private cluster was stopped under the endpoint: start it again (on
                # its last port when free, so the endpoint works again)
                pg = stack.enter_context(postgres(config))
                if not st.database_reachable():
                    say(f"not reusing {st.url}: its database {st.database} is unreachable")
                    continue
                say(f"restarted PostgreSQL under {st.url}")
            say(f"reusing the running endpoint {st.url}")
            yield RunningVkg(name=name, url=st.url, dataset=ds, ontop=None, pg=None, load=None)
            return
        install = ensure_ontop(config, status=say)
        if pg is None:
            pg = stack.enter_context(postgres(config))
        running = start_vkg(config, ds, pg, install, mapping=mapping, dev=dev, port=port,
                            status=say)
        assert running.ontop is not None
        with running.ontop:
            yield running
