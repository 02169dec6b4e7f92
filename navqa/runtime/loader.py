"""Load a dataset into PostgreSQL in manifest order, and reuse it when nothing changed.

The database comment holds ``navqa-dataset:<name>:<checksum>`` once a load completed;
an interrupted load leaves no marker and is redone from scratch next time.
"""

from __future__ import annotations

import gzip
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from psycopg import sql

from navqa.errors import PostgresError
from navqa.model.dataset import LoadStep
from navqa.runtime.datasets import LocalDataset
from navqa.runtime.load_fixes import get_transform
from navqa.runtime.postgres import (
    PgConnection,
    check_database_name,
    database_marker,
    recreate_database,
    run_psql,
    set_database_marker,
)

StatusFn = Callable[[str], None]
LOADER_VERSION = "1"


@dataclass
class LoadReport:
    """What :func:`ensure_loaded` did.

    Attributes:
        database: The database name.
        reused: True when the loaded database matched the dataset checksum.
        seconds: Wall time of the load (0 when reused).
        steps: ``(file, seconds)`` per load step.
        tolerated: Expected errors that were ignored, per the manifest.
    """

    database: str
    reused: bool
    seconds: float = 0.0
    steps: list[tuple[str, float]] = field(default_factory=list)
    tolerated: list[str] = field(default_factory=list)


def marker_for(ds: LocalDataset) -> str:
    return f"navqa-dataset:{ds.name}:{LOADER_VERSION}:{ds.database_checksum()}"


def ensure_loaded(
    conn: PgConnection,
    ds: LocalDataset,
    *,
    force: bool = False,
    database: str | None = None,
    status: StatusFn | None = None,
) -> LoadReport:
    """Create and load the dataset's database unless an identical load is already there.

    Raises:
        PostgresError: when a step fails (quoting psql's error) or an extension is missing.
    """
    say = status or (lambda _m: None)
    dbname = check_database_name(database or ds.manifest.database)
    marker = marker_for(ds)
    if not force and database_marker(conn, dbname) == marker:
        return LoadReport(database=dbname, reused=True)
    say(f"loading {ds.name} into PostgreSQL database {dbname}")
    t0 = time.monotonic()
    recreate_database(conn, dbname)
    report = LoadReport(database=dbname, reused=False)
    if ds.manifest.extensions:
        with conn.connect(dbname, autocommit=True) as c:
            for ext in ds.manifest.extensions:
                try:
                    c.execute(sql.SQL("CREATE EXTENSION IF NOT EXISTS {}").format(
                        sql.Identifier(ext)))
                except Exception as e:  # psycopg raises several types here
                    raise PostgresError(
                        f"dataset {ds.name!r} needs the PostgreSQL extension {ext!r}: {e}",
                        hint="install it, e.g. apt-get install postgresql-15-postgis-3",
                    ) from e
    for step in ds.manifest.load:
        t1 = time.monotonic()
        say(f"  {step.file}")
        report.tolerated.extend(run_load_step(conn, ds, dbname, step))
        report.steps.append((step.file, time.monotonic() - t1))
    with conn.connect(dbname, autocommit=True) as c:
        c.execute("ANALYZE")
    set_database_marker(conn, dbname, marker)
    report.seconds = time.monotonic() - t0
    return report


def run_load_step(
    conn: PgConnection, ds: LocalDataset, dbname: str, step: LoadStep
) -> list[str]:
    """Run one manifest load step through psql: decompress, apply its transform, execute.

    Returns:
        The psql errors the step's manifest tolerates (empty for a step without ``tolerate``).

    Raises:
        PostgresError: the step failed with an error its manifest does not tolerate.
    """
    path = ds.local(step.file)
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    if step.transform:
        raw = get_transform(step.transform)(raw.decode("utf-8"), path.parent).encode("utf-8")
    if not step.tolerate:
        run_psql(conn, dbname, raw, label=step.file)
        return []
    err = run_psql(conn, dbname, raw, label=step.file, stop_on_error=False)
    errors = [ln for ln in err.splitlines() if re.search(r"\bERROR\b", ln)]
    unexpected = [e for e in errors if not any(t in e for t in step.tolerate)]
    if unexpected:
        raise PostgresError(f"loading {step.file} failed: " + "\n".join(unexpected[:10]))
    return errors
