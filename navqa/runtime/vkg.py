"""Bring a whole VKG up: Ontop jars, dataset files, PostgreSQL, the load, the endpoint.

:func:`serve_vkg` is what every command that needs a live endpoint uses. When
``navqa endpoint up`` is already serving the same VKG (same files), that endpoint is
reused instead of starting a second JVM; its state lives in
``<cache>/endpoints/<name>.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from xml.sax.saxutils import quoteattr

from navqa.config import NavqaConfig
from navqa.errors import DatasetError
from navqa.runtime.datasets import LocalDataset, fetch_dataset
from navqa.runtime.loader import LoadReport, ensure_loaded
from navqa.runtime.ontop import OntopProcess, OntopSpec
from navqa.runtime.ontop_setup import OntopInstall, ensure_ontop
from navqa.runtime.postgres import PgConnection, postgres

StatusFn = Callable[[str], None]


@dataclass
class EndpointState:
    """A running endpoint, as recorded for ``navqa endpoint status`` and reuse.

    ``pid`` is the ``navqa endpoint up`` process (SIGTERM stops it cleanly); ``ontop_pid``
    is its JVM.
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

    def alive(self) -> bool:
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True


def _state_path(config: NavqaConfig, name: str) -> Path:
    return config.runtime.cache_dir / "endpoints" / f"{name}.json"


def read_state(config: NavqaConfig, name: str) -> EndpointState | None:
    """The recorded endpoint for ``name`` if its process is still alive."""
    p = _state_path(config, name)
    if not p.is_file():
        return None
    try:
        st = EndpointState(**json.loads(p.read_text()))
    except (ValueError, TypeError):
        p.unlink(missing_ok=True)
        return None
    if not st.alive():
        p.unlink(missing_ok=True)
        return None
    return st


def write_state(config: NavqaConfig, st: EndpointState) -> None:
    p = _state_path(config, st.name)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(asdict(st), indent=1))


def clear_state(config: NavqaConfig, name: str) -> None:
    _state_path(config, name).unlink(missing_ok=True)


def all_states(config: NavqaConfig) -> list[EndpointState]:
    d = config.runtime.cache_dir / "endpoints"
    out = []
    for p in sorted(d.glob("*.json")) if d.is_dir() else []:
        st = read_state(config, p.stem)
        if st is not None:
            out.append(st)
    return out


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
    if reuse and port is None:
        st = read_state(config, name)
        if st is not None and st.files_checksum == ds.checksum() and st.mapping == str(
                mapping_path):
            say(f"reusing the running endpoint {st.url}")
            yield RunningVkg(name=name, url=st.url, dataset=ds, ontop=None, pg=None, load=None)
            return
    install = ensure_ontop(config, status=say)
    with postgres(config) as pg:
        running = start_vkg(config, ds, pg, install, mapping=mapping, dev=dev, port=port,
                            status=say)
        assert running.ontop is not None
        with running.ontop:
            yield running
