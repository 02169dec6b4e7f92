"""The Docker path: PostgreSQL and the ``ontop/ontop`` image through testcontainers.

For users who have a Docker daemon (CI here has none). Both containers join one
network; the database is loaded from the host with navqa's own loader (same load
order and fixes as the local path), and Ontop is awaited with an HTTP wait on
``/sparql?query=SELECT * {}`` that sends an Accept header.

Requires the ``docker`` extra: ``pip install -e '.[docker]'``.
"""

from __future__ import annotations

import contextlib
import gc
import os
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from navqa.config import NavqaConfig
from navqa.errors import ConfigError, DockerUnavailableError
from navqa.runtime.datasets import fetch_dataset
from navqa.runtime.loader import ensure_loaded
from navqa.runtime.postgres import PgConnection
from navqa.runtime.vkg import RunningVkg, mapping_file, xml_catalog

ONTOP_IMAGE = "ontop/ontop:5.1.2"
POSTGRES_IMAGE = "postgres:16"
POSTGIS_IMAGE = "postgis/postgis:16-3.4"
StatusFn = Callable[[str], None]


def docker_status() -> tuple[bool, str]:
    """Whether a Docker daemon answers, and why not when it does not."""
    try:
        import docker
    except ImportError:
        return False, "the docker Python package is missing (pip install -e '.[docker]')"
    with warnings.catch_warnings():
        # docker-py leaks the socket of a failed ping; collect it here, silently.
        warnings.simplefilter("ignore", ResourceWarning)
        try:
            return _ping(docker)
        finally:
            gc.collect()


def _ping(docker: Any) -> tuple[bool, str]:
    client = None
    try:
        # A fixed API version avoids a version request inside the constructor (which leaks
        # its socket when no daemon answers); ping() is the real probe.
        client = docker.from_env(version="1.41", timeout=5)
        client.ping()
    except Exception as e:  # docker raises DockerException, requests errors, FileNotFoundError
        return False, f"no Docker daemon answers ({type(e).__name__}: {str(e)[:160]})"
    finally:
        if client is not None:
            client.close()
    return True, "Docker daemon answers"


def _require_docker() -> None:
    ok, why = docker_status()
    if not ok:
        raise DockerUnavailableError(why, hint="use the local path (Java + PostgreSQL) instead")


@contextlib.contextmanager
def serve_vkg_in_containers(
    config: NavqaConfig,
    name: str,
    *,
    mapping: str | None = None,
    ontop_image: str = ONTOP_IMAGE,
    status: StatusFn | None = None,
) -> Iterator[RunningVkg]:
    """Serve dataset ``name`` with containers for the duration of the ``with`` block.

    Raises:
        DockerUnavailableError: when no daemon answers.
        ConfigError: when testcontainers is not installed.
    """
    say = status or (lambda _m: None)
    _require_docker()
    try:
        from testcontainers.community.postgres import PostgresContainer
        from testcontainers.core.container import DockerContainer
        from testcontainers.core.network import Network
        from testcontainers.core.wait_strategies import HttpWaitStrategy
    except ImportError as e:
        raise ConfigError("the Docker path needs testcontainers >= 4.15",
                          hint="pip install -e '.[docker]'") from e
    ds = fetch_dataset(name, config)
    dbname = ds.manifest.database
    image = POSTGIS_IMAGE if "postgis" in ds.manifest.extensions else POSTGRES_IMAGE
    with Network() as net:
        pg_c = (PostgresContainer(image, username="navqa", password="navqa", dbname="postgres")
                .with_network(net).with_network_aliases("db"))
        with pg_c:
            conn = PgConnection(pg_c.get_container_host_ip(), int(pg_c.get_exposed_port(5432)),
                                "navqa", "navqa")
            report = ensure_loaded(conn, ds, status=say)
            onto = ds.path("ontology")
            mp = mapping_file(ds, mapping)
            jdbc_dir = _jdbc_dir(config)
            ontop = (DockerContainer(ontop_image).with_network(net).with_exposed_ports(8080)
                     .with_volume_mapping(str(onto.parent.resolve()), "/opt/vkg/ontology")
                     .with_volume_mapping(str(mp.parent.resolve()), "/opt/vkg/mapping")
                     .with_volume_mapping(str(jdbc_dir), "/opt/ontop/jdbc")
                     .with_env("ONTOP_ONTOLOGY_FILE", f"/opt/vkg/ontology/{onto.name}")
                     .with_env("ONTOP_MAPPING_FILE", f"/opt/vkg/mapping/{mp.name}")
                     .with_env("ONTOP_DB_URL", f"jdbc:postgresql://db:5432/{dbname}")
                     .with_env("ONTOP_DB_USER", "navqa")
                     .with_env("ONTOP_DB_PASSWORD", "navqa")
                     .with_env("ONTOP_DB_DRIVER", "org.postgresql.Driver")
                     .with_env("ONTOP_DEV_MODE", "true")
                     .with_env("ONTOP_JAVA_ARGS", "-Xmx1g -Duser.timezone=UTC"))
            cat = xml_catalog(config, ds)
            if cat is not None:
                ontop = ontop.with_volume_mapping(str(cat.parent.resolve()), "/opt/vkg/catalog")
                ontop = ontop.with_env("ONTOP_XML_CATALOG_FILE", f"/opt/vkg/catalog/{cat.name}")
            ontop = ontop.waiting_for(
                HttpWaitStrategy(8080, "/sparql?query=SELECT%20*%20%7B%7D")
                .with_header("Accept", "application/sparql-results+json")
                .for_status_code(200))
            say(f"starting {ontop_image}")
            with ontop:
                url = (f"http://{ontop.get_container_host_ip()}:"
                       f"{ontop.get_exposed_port(8080)}/sparql")
                yield RunningVkg(name=name, url=url, dataset=ds, ontop=None, pg=conn,
                                 load=report)


def _jdbc_dir(config: NavqaConfig) -> Path:
    """A folder holding only the PostgreSQL JDBC jar (from navqa's Ontop cache)."""
    from navqa.runtime.ontop_setup import ensure_ontop

    inst = ensure_ontop(config)
    jars = sorted(inst.jars_dir.glob("postgresql-*.jar"))
    if not jars:
        raise ConfigError("the PostgreSQL JDBC driver is missing from the Ontop cache")
    d = config.runtime.cache_dir / "docker-jdbc"
    d.mkdir(parents=True, exist_ok=True)
    target = d / jars[0].name
    if not target.exists():
        target.write_bytes(jars[0].read_bytes())
    os.chmod(target, 0o644)
    return d
