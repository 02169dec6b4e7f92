"""ATKIS with the full DLM250 data: download the BKG shapefiles and load every layer.

The public ATKIS dataset (``datasets/atkis``) holds only the 19 layer tables that survive in
a partial dump. Users who can reach BKG's download server get all layers the way the
upstream docker build (apano-on/atkis ``db_import/``) does it:

1. download ``dlm250.gk3.shape.ebenen.zip`` from BKG (:data:`DLM250_URL`), or use a copy
   the user downloaded (``--zip``); its SHA-256 is recorded next to it, since the "aktuell"
   file changes every year and cannot be pinned;
2. extract it under the cache;
3. for every ``*.shp``: ``shp2pgsql -s 31467 -I <file> <table>`` (the table is the file
   name, lower case), with the decimal-comma fix of the upstream ``sed`` applied to every
   line, streamed into ``psql``;
4. the ``atkis-full`` manifest's load steps (``addtables.sql`` with its repairs);
5. the load marker of the ``atkis-full`` dataset, so that ``navqa endpoint up --vkg
   atkis-full`` serves the database instead of reloading it.

CLI: ``navqa datasets fetch atkis --full [--zip FILE]``. Needs internet access (unless
``--zip``), the ``shp2pgsql`` program (Debian package ``postgis``) and the PostGIS extension.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import tempfile
import time
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import requests
from psycopg import sql

from navqa.config import NavqaConfig
from navqa.errors import DatasetError, PostgresError, SetupError
from navqa.runtime.datasets import LocalDataset, fetch_dataset, load_manifest, sha256_file
from navqa.runtime.loader import marker_for, run_load_step
from navqa.runtime.postgres import (
    PgConnection,
    check_database_name,
    postgres_bindir,
    psql_executable,
    recreate_database,
    set_database_marker,
)

logger = logging.getLogger(__name__)

DLM250_URL = "https://daten.gdz.bkg.bund.de/produkte/dlm/dlm250/aktuell/dlm250.gk3.shape.ebenen.zip"
"""BKG's current DLM250 release, Gauss-Krüger zone 3 (EPSG:31467), one shapefile per layer."""
ZIP_NAME = "dlm250.gk3.shape.ebenen.zip"
SRID = 31467
FULL_DATASET = "atkis-full"

StatusFn = Callable[[str], None]
ProgressFn = Callable[[int, int | None], None]

_TABLE = re.compile(r"^[a-z_][a-z0-9_]*$")
# The two sed expressions of apano-on/atkis db_import/import_shp.sh, applied to every line:
#   s/([0-9]),([0-9])/\1.\2/g            decimal commas in numeric DBF fields
#   s/([0-9]+\.[0-9]+)\.([0-9]+)/\1\2/g  "839.0.0"-style values (gew01_f) lose the extra dot
_DECIMAL_COMMA = re.compile(rb"([0-9]),([0-9])")
_EXTRA_DOT = re.compile(rb"([0-9]+\.[0-9]+)\.([0-9]+)")


@dataclass(frozen=True)
class ShapeLayer:
    """One DLM250 layer: its shapefile and the table it becomes."""

    path: Path
    table: str


@dataclass
class FullLoadReport:
    """What :func:`load_full` did."""

    database: str
    zip_path: Path
    zip_sha256: str
    layers: list[tuple[str, float]] = field(default_factory=list)
    seconds: float = 0.0


def layer_table(shp: Path) -> str:
    """The table a shapefile is loaded into: its file name without suffix, lower case.

    Raises:
        DatasetError: when the name is not a plain SQL identifier.
    """
    name = shp.stem.lower()
    if not _TABLE.match(name):
        raise DatasetError(f"shapefile name {shp.name!r} is not usable as a table name", path=shp)
    return name


def shp2pgsql_command(shp: Path, table: str, *, srid: int = SRID,
                      exe: str = "shp2pgsql") -> list[str]:
    """The ``shp2pgsql`` command for one layer (as the upstream import script runs it)."""
    if not _TABLE.match(table):
        raise DatasetError(f"invalid table name {table!r}")
    return [exe, "-s", str(srid), "-I", str(shp), table]


def fix_decimal_commas(line: bytes) -> bytes:
    """Apply the upstream ``sed`` decimal fixes to one line of ``shp2pgsql`` output."""
    return _EXTRA_DOT.sub(rb"\1\2", _DECIMAL_COMMA.sub(rb"\1.\2", line))


def fixed_lines(lines: Iterable[bytes]) -> Iterator[bytes]:
    """:func:`fix_decimal_commas` over a stream of lines."""
    for line in lines:
        yield fix_decimal_commas(line)


def find_shp2pgsql() -> str:
    """Path of ``shp2pgsql``.

    Raises:
        SetupError: when it is not installed.
    """
    found = shutil.which("shp2pgsql")
    if found:
        return found
    try:
        cand = postgres_bindir() / "shp2pgsql"
    except PostgresError:
        cand = None
    if cand is not None and cand.exists():
        return str(cand)
    raise SetupError("shp2pgsql is not installed (needed to load the DLM250 shapefiles)",
                     hint="apt-get install postgis")


def psql_command(dbname: str, *, psql: str = "psql") -> list[str]:
    """The ``psql`` command a layer's SQL is streamed into (stops at the first error)."""
    return [psql, "-X", "-q", "-d", check_database_name(dbname), "-v", "ON_ERROR_STOP=1",
            "-f", "-"]


def download_dlm250(dest: Path, *, url: str = DLM250_URL, progress: ProgressFn | None = None,
                    timeout: float = 60) -> Path:
    """Download the DLM250 zip to ``dest`` (a file path); keep a ``.sha256`` beside it.

    Raises:
        DatasetError: when the download fails (the message says how to use ``--zip``).
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(dest.name + ".part")
    try:
        with requests.get(url, stream=True, timeout=(10, timeout)) as r:
            r.raise_for_status()
            total = int(r.headers.get("Content-Length") or 0) or None
            done = 0
            with tmp.open("wb") as w:
                for block in r.iter_content(1 << 20):
                    w.write(block)
                    done += len(block)
                    if progress:
                        progress(done, total)
        tmp.replace(dest)
    except requests.RequestException as e:
        raise DatasetError(
            f"download of {url} failed: {e}",
            hint=f"download {ZIP_NAME} by other means and pass it with --zip",
        ) from e
    finally:
        tmp.unlink(missing_ok=True)
    digest = sha256_file(dest)
    dest.with_name(dest.name + ".sha256").write_text(f"{digest}  {dest.name}\n{url}\n")
    return dest


def extract_shapefiles(zip_path: Path, dest: Path) -> list[ShapeLayer]:
    """Extract the zip into ``dest`` (replacing it) and list its layers, sorted by table.

    Raises:
        DatasetError: not a zip, an unsafe member path, no shapefile inside, or two
            shapefiles mapping to the same table.
    """
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    try:
        with zipfile.ZipFile(zip_path) as zf:
            root = dest.resolve()
            for member in zf.namelist():
                target = (dest / member).resolve()
                if not target.is_relative_to(root):
                    raise DatasetError(f"unsafe path in zip: {member!r}", path=zip_path)
            zf.extractall(dest)
    except zipfile.BadZipFile as e:
        raise DatasetError(f"not a zip file: {e}", path=zip_path) from e
    layers: dict[str, ShapeLayer] = {}
    for shp in sorted(dest.rglob("*")):
        if shp.suffix.lower() != ".shp" or not shp.is_file():
            continue
        table = layer_table(shp)
        if table in layers:
            raise DatasetError(f"two shapefiles map to table {table!r}: "
                               f"{layers[table].path} and {shp}", path=zip_path)
        layers[table] = ShapeLayer(shp, table)
    if not layers:
        raise DatasetError("the zip holds no shapefile (*.shp)", path=zip_path)
    return [layers[t] for t in sorted(layers)]


def load_layer(conn: PgConnection, dbname: str, layer: ShapeLayer, *, shp2pgsql: str,
               timeout: float = 3600) -> None:
    """Stream ``shp2pgsql`` output, decimal-fixed, into ``psql``.

    Raises:
        PostgresError: when shp2pgsql or psql fails (quoting their errors).
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")}
    env.update(conn.env())
    env["PGOPTIONS"] = "-c client_min_messages=warning"
    with tempfile.TemporaryFile() as shp_err, tempfile.TemporaryFile() as psql_err:
        gen = subprocess.Popen(shp2pgsql_command(layer.path, layer.table, exe=shp2pgsql),
                               stdout=subprocess.PIPE, stderr=shp_err)
        sink = subprocess.Popen(psql_command(dbname, psql=psql_executable()), stdin=subprocess.PIPE,
                                stdout=subprocess.DEVNULL, stderr=psql_err, env=env)
        assert gen.stdout is not None and sink.stdin is not None
        try:
            for line in fixed_lines(gen.stdout):
                sink.stdin.write(line)
        except BrokenPipeError:
            pass  # psql stopped on an error; reported below
        finally:
            sink.stdin.close()
            gen.stdout.close()
        deadline = time.monotonic() + timeout
        gen_rc = gen.wait(max(1.0, deadline - time.monotonic()))
        sink_rc = sink.wait(max(1.0, deadline - time.monotonic()))
        shp_err.seek(0)
        psql_err.seek(0)
        if gen_rc != 0:
            raise PostgresError(f"shp2pgsql failed on {layer.path.name}: "
                                + shp_err.read().decode("utf-8", "replace").strip()[-1500:])
        if sink_rc != 0:
            err = psql_err.read().decode("utf-8", "replace")
            raise PostgresError(f"loading layer {layer.table} ({layer.path.name}) failed: "
                                + "\n".join(ln for ln in err.splitlines() if "ERROR" in ln)[:2000])


def fetch_full_dataset(config: NavqaConfig) -> LocalDataset:
    """The verified files of ``atkis-full`` (ontology, imports, mapping, addtables.sql).

    They are the very files of ``atkis``, which the mirror holds under ``atkis/``; they are
    fetched for ``atkis`` (mirror or upstream) and copied into the ``atkis-full`` cache, so
    that later commands (``navqa endpoint up --vkg atkis-full``) find them verified there.

    Raises:
        DatasetError: a file cannot be fetched, or ``atkis-full`` names a file ``atkis`` lacks.
    """
    base = fetch_dataset("atkis", config)
    root = config.runtime.cache_dir / "datasets" / FULL_DATASET
    for f in load_manifest(FULL_DATASET).files:
        src = base.files.get(f.path)
        if src is None or base.sha256.get(f.path) != f.sha256:
            raise DatasetError(f"dataset {FULL_DATASET!r}: {f.path} is not a file of 'atkis' "
                               "with the same checksum")
        target = root / f.path
        if target.is_file() and sha256_file(target) == f.sha256:
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, target)
    return fetch_dataset(FULL_DATASET, config, offline=True)


def run_load_steps(conn: PgConnection, ds: LocalDataset, dbname: str) -> None:
    """Run the manifest's load steps (``addtables.sql`` for ``atkis-full``) as the loader would.

    Raises:
        PostgresError: when a step fails with an error its manifest does not tolerate.
    """
    for step in ds.manifest.load:
        run_load_step(conn, ds, dbname, step)


def load_full(
    config: NavqaConfig,
    conn: PgConnection,
    *,
    zip_path: Path | None = None,
    url: str = DLM250_URL,
    status: StatusFn | None = None,
    progress: ProgressFn | None = None,
) -> FullLoadReport:
    """Download (unless ``zip_path``), extract and load the full DLM250 into ``atkis_full``.

    Raises:
        SetupError: shp2pgsql missing.
        DatasetError: download or archive problems.
        PostgresError: PostGIS missing, or a layer / addtables.sql failing to load.
    """
    say = status or (lambda _m: None)
    t0 = time.monotonic()
    shp2pgsql = find_shp2pgsql()
    ds = fetch_full_dataset(config)
    work = config.runtime.cache_dir / "datasets" / FULL_DATASET
    if zip_path is None:
        zip_path = work / "download" / ZIP_NAME
        say(f"downloading {url}")
        download_dlm250(zip_path, url=url, progress=progress)
    elif not zip_path.is_file():
        raise DatasetError("the DLM250 zip does not exist", path=zip_path)
    digest = sha256_file(zip_path)
    say(f"extracting {zip_path.name} (sha256 {digest[:16]}…)")
    layers = extract_shapefiles(zip_path, work / "dlm250")
    dbname = check_database_name(ds.manifest.database)
    say(f"creating database {dbname} with PostGIS")
    recreate_database(conn, dbname)
    with conn.connect(dbname, autocommit=True) as c:
        try:
            c.execute(sql.SQL("CREATE EXTENSION IF NOT EXISTS postgis"))
        except Exception as e:  # psycopg raises several types here
            raise PostgresError(f"the full ATKIS load needs PostGIS: {e}",
                                hint="apt-get install postgresql-15-postgis-3") from e
    report = FullLoadReport(database=dbname, zip_path=zip_path, zip_sha256=digest)
    for i, layer in enumerate(layers, 1):
        say(f"  [{i}/{len(layers)}] {layer.path.name} -> {layer.table}")
        t1 = time.monotonic()
        load_layer(conn, dbname, layer, shp2pgsql=shp2pgsql)
        report.layers.append((layer.table, time.monotonic() - t1))
    say("running addtables.sql")
    run_load_steps(conn, ds, dbname)
    with conn.connect(dbname, autocommit=True) as c:
        c.execute("ANALYZE")
    set_database_marker(conn, dbname, marker_for(ds))
    report.seconds = time.monotonic() - t0
    logger.info("ATKIS full data: %d layers loaded into %s in %.0f s (zip sha256 %s)",
                len(layers), dbname, report.seconds, digest)
    return report

