"""Shared fixtures: real PostgreSQL, real Ontop, verified datasets, the scripted LLM server.

Services are started once per test session and stopped at its end:

* ``pg``            navqa's private PostgreSQL cluster (or ``NAVQA_PG_DSN``)
* ``ontop_install`` Ontop jars from Maven Central, verified against the lock
* ``vkg(name)``     a dataset loaded into ``pg`` and served by a real Ontop endpoint
* ``shared_dataset(name)`` dataset files, fetched via ``NAVQA_DATASETS_MIRROR`` (CI) or
  upstream, checksum-verified

Nothing here mocks Ontop or PostgreSQL. When a service cannot start the tests using it
*fail* with navqa's error message; only the ``docker`` tests skip (no Docker engine),
and they say why.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import pytest

from navqa.backends.sparql_http import HttpSparqlEndpoint
from navqa.config import NavqaConfig, load_config
from navqa.runtime.datasets import LocalDataset, fetch_dataset
from navqa.runtime.ontop_setup import OntopInstall, ensure_ontop
from navqa.runtime.postgres import PgConnection, PrivateCluster
from navqa.runtime.vkg import RunningVkg, start_vkg

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")


@pytest.fixture(scope="session")
def navqa_config() -> NavqaConfig:
    """The configuration from the environment (cache, mirror, NAVQA_PG_DSN), LLM off, and
    entity answers as labels alone: the dev and validation questions and the SQL the
    pipeline tests compare with are written in that convention (navqa.model.answers). The
    default, the entity and its label, is tested where it is the subject
    (tests/online/test_entity_answers.py, the CLI tests, which load their own config)."""
    cfg = load_config(env={k: v for k, v in os.environ.items()
                           if not k.startswith(("OPENAI_", "NAVQA_LLM"))})
    return cfg.with_overrides(llm={"provider": "none"}, pipeline={"entity_answer": "label"})


@pytest.fixture(scope="session")
def shared_dataset(navqa_config: NavqaConfig) -> Callable[[str], LocalDataset]:
    """``shared_dataset(name)``: the verified local files of a dataset."""
    cache: dict[str, LocalDataset] = {}

    def get(name: str) -> LocalDataset:
        if name not in cache:
            cache[name] = fetch_dataset(name, navqa_config)
        return cache[name]

    return get


@pytest.fixture(scope="session")
def pg(navqa_config: NavqaConfig) -> Iterator[PgConnection]:
    """A running PostgreSQL for the whole session."""
    if navqa_config.runtime.pg_dsn is not None:
        yield PgConnection.from_dsn(navqa_config.runtime.pg_dsn.get_secret_value())
        return
    cluster = PrivateCluster(navqa_config)
    conn = cluster.start()
    try:
        yield conn
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def ontop_install(navqa_config: NavqaConfig) -> OntopInstall:
    return ensure_ontop(navqa_config)


@dataclass
class ServedVkg:
    """A VKG served for the session: its endpoint, files and database."""

    running: RunningVkg
    endpoint: HttpSparqlEndpoint
    pg: PgConnection

    @property
    def dataset(self) -> LocalDataset:
        return self.running.dataset

    @property
    def database(self) -> str:
        return self.running.dataset.manifest.database

    def sql(self, query: str) -> list[tuple[object, ...]]:
        """Run SQL on the VKG's database and return all rows."""
        with self.pg.connect(self.database) as c:
            return [tuple(r) for r in c.execute(query).fetchall()]


@pytest.fixture(scope="session")
def vkg(
    navqa_config: NavqaConfig,
    pg: PgConnection,
    ontop_install: OntopInstall,
    shared_dataset: Callable[[str], LocalDataset],
) -> Iterator[Callable[..., ServedVkg]]:
    """``vkg(name, mapping=None)``: the dataset loaded and served by real Ontop (dev mode)."""
    served: dict[tuple[str, str | None], ServedVkg] = {}

    def get(name: str, mapping: str | None = None) -> ServedVkg:
        key = (name, mapping)
        if key not in served:
            running = start_vkg(navqa_config, shared_dataset(name), pg, ontop_install,
                                mapping=mapping, dev=True)
            served[key] = ServedVkg(running, HttpSparqlEndpoint(running.url, timeout=300), pg)
        return served[key]

    try:
        yield get
    finally:
        for s in served.values():
            if s.running.ontop is not None:
                s.running.ontop.stop()
