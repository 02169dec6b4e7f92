"""Serve any VKG from its descriptor: bundled, the user's own, or a running endpoint.

:func:`serve_source` is the descriptor-based entry next to
:func:`navqa.runtime.vkg.serve_vkg` (which it uses for bundled VKGs). For a user's VKG it
starts Ontop on *their* properties over read-only sessions and never loads, alters or
writes their database; for ``--endpoint`` it starts nothing.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from navqa.config import NavqaConfig
from navqa.errors import ConfigError, OntopStartupError
from navqa.model.vkg_source import VkgKind, VkgSource
from navqa.runtime.ontop import OntopProcess, OntopSpec
from navqa.runtime.ontop_setup import ensure_ontop
from navqa.runtime.vkg import (
    EndpointState,
    RunningVkg,
    endpoint_states,
    record_endpoint,
    serve_vkg,
    write_state,
)

StatusFn = Callable[[str], None]


@dataclass
class ServedSource:
    """A VKG described by a :class:`~navqa.model.vkg_source.VkgSource`, being served.

    Attributes:
        source: The descriptor.
        url: Its SPARQL endpoint.
        ontop: The Ontop process this navqa started, or ``None`` (a user's endpoint, or a
            reused ``navqa endpoint up``).
        bundled: The full record of a bundled VKG (its dataset, database and load).
    """

    source: VkgSource
    url: str
    ontop: OntopProcess | None
    bundled: RunningVkg | None = None

    @property
    def partial_note(self) -> str | None:
        """The bundled dataset's partial-data note, if it has one."""
        if self.bundled is not None and self.bundled.dataset.manifest.partial:
            return self.bundled.dataset.manifest.partial_note or "partial data"
        return None


def source_checksum(source: VkgSource) -> str:
    """One SHA-256 over what an endpoint of ``source`` serves (files, URL, settings; never
    the password)."""
    from navqa.runtime.datasets import sha256_file

    h = hashlib.sha256()
    files = {**source.index_inputs(), "lenses": source.lenses,
             "properties": source.properties_file}
    for role, p in sorted(files.items()):
        if p is not None:
            h.update(f"{role}:{Path(p).resolve()}:{sha256_file(Path(p))}\n".encode())
    if source.database is not None:
        h.update(f"db:{source.database.jdbc_url}:{source.database.user}\n".encode())
    h.update(json.dumps(source.ontop_properties, sort_keys=True).encode())
    return h.hexdigest()


def user_ontop_spec(config: NavqaConfig, source: VkgSource, *, dev: bool = False,
                    port: int | None = None) -> OntopSpec:
    """How to start Ontop on a user's VKG: their properties, read-only sessions.

    The JDBC URL gets ``default_transaction_read_only`` and a ``statement_timeout`` (for
    PostgreSQL), so nothing Ontop runs can write the database or run unbounded.

    Raises:
        ConfigError: the descriptor has no database access.
    """
    from navqa.runtime.jdbc_drivers import driver_jars
    from navqa.runtime.project import is_native_mapping, read_only_jdbc_url, read_only_properties

    db = source.database
    if db is None:
        raise ConfigError(f"{source.name}: navqa needs -p/--properties FILE to start Ontop "
                          "on your database, or --endpoint URL of a running endpoint")
    mapping = source.mapping
    if is_native_mapping(mapping) and mapping.suffix.lower() != ".obda":
        # Ontop tells native from R2RML by the suffix; give it one
        d = config.runtime.cache_dir / "vkg" / source.name
        d.mkdir(parents=True, exist_ok=True)
        link = d / (mapping.stem + ".obda")
        link.unlink(missing_ok=True)
        link.symlink_to(mapping)
        mapping = link
    props = {"jdbc.driver": db.driver, **source.ontop_properties,
             **read_only_properties(db.jdbc_url)}
    return OntopSpec(
        ontology=source.ontology, mapping=mapping,
        jdbc_url=read_only_jdbc_url(db.jdbc_url, config.runtime.query_timeout_s),
        user=db.user or "",
        password=db.password.get_secret_value() if db.password is not None else None,
        properties=props, xml_catalog=source.catalog, lenses=source.lenses, dev=dev, port=port,
        driver_jars=driver_jars(config.runtime.cache_dir, db))


def _jdbc_database(url: str) -> tuple[str, int, str]:
    m = re.match(r"jdbc:[a-z0-9]+://([^/:?;]*)(?::(\d+))?/?([^?;]*)", url)
    if m is None:
        return (url, 0, "")
    return (m.group(1) or "localhost", int(m.group(2) or 0), m.group(3))


def record_source_endpoint(config: NavqaConfig, served: ServedSource) -> EndpointState:
    """Record an endpoint this process started (``navqa endpoint up``), of any VKG."""
    if served.bundled is not None:
        return record_endpoint(config, served.bundled)
    if served.ontop is None or served.ontop.pid is None or served.source.database is None:
        raise ValueError("only an endpoint this process started can be recorded")
    host, port, dbname = _jdbc_database(served.source.database.jdbc_url)
    st = EndpointState(
        name=served.source.name, url=served.url, pid=os.getpid(), ontop_pid=served.ontop.pid,
        port=served.ontop.port, mapping=str(served.source.mapping),
        files_checksum=source_checksum(served.source), started_at=time.time(),
        log_path=str(served.ontop.log_path), db_host=host, db_port=port, db_name=dbname,
        db_cluster=None)
    write_state(config, st)
    return st


@contextlib.contextmanager
def serve_source(
    config: NavqaConfig,
    source: VkgSource,
    *,
    dev: bool = False,
    port: int | None = None,
    reuse: bool = True,
    status: StatusFn | None = None,
) -> Iterator[ServedSource]:
    """Serve any VKG for the duration of the ``with`` block.

    * ``--endpoint``: nothing is started; the URL is used as it is.
    * bundled: :func:`~navqa.runtime.vkg.serve_vkg` (navqa's own PostgreSQL, loaded as
      needed).
    * the user's VKG: Ontop on their properties, over read-only sessions; the database is
      never loaded, altered or written. An endpoint ``navqa endpoint up`` serves for the
      same files and settings is reused.

    Raises:
        ConfigError: a user VKG without database access.
        OntopStartupError: Ontop did not start; for user VKGs the message says why in their
            terms (unreachable database, missing driver, missing table or column, import).
    """
    say = status or (lambda _m: None)
    if source.endpoint is not None:
        yield ServedSource(source=source, url=source.endpoint, ontop=None)
        return
    if source.kind is VkgKind.bundled:
        with serve_vkg(config, source.name, mapping=source.mapping_choice, dev=dev, port=port,
                       reuse=reuse, status=say) as running:
            yield ServedSource(source=source, url=running.url, ontop=running.ontop,
                               bundled=running)
        return
    spec = user_ontop_spec(config, source, dev=dev, port=port)
    if reuse and port is None:
        checksum = source_checksum(source)
        for st in endpoint_states(config, source.name):
            if st.files_checksum == checksum and st.database_reachable():
                say(f"reusing the running endpoint {st.url}")
                yield ServedSource(source=source, url=st.url, ontop=None)
                return
    install = ensure_ontop(config, status=say)
    logs = config.runtime.cache_dir / "logs"
    log_path = logs / f"ontop-{source.name}-{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    say(f"starting Ontop for {source.name}")
    proc = OntopProcess(install, spec, log_path=log_path, java_heap=config.runtime.java_heap)
    try:
        proc.start(timeout=config.runtime.ontop_start_timeout_s)
    except OntopStartupError as e:
        from navqa.runtime.diagnose import explain_user_startup

        raise explain_user_startup(e, source) from e
    with proc:
        yield ServedSource(source=source, url=proc.url, ontop=proc)
