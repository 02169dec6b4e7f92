"""The ATKIS full-data path (BKG DLM250 shapefiles), without network.

The command construction, decimal fix, archive handling and download are unit-tested with
fakes. One integration test (``atkis``, ``postgres``) exports two layers of the partial
database as shapefiles with ``pgsql2shp``, zips them the way BKG does, and loads them back
through the same code ``navqa datasets fetch atkis --full`` uses; another checks that serving
``atkis-full`` before that load fails with a message saying what to run.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
import requests

from navqa.errors import DatasetError, PostgresError, SetupError
from navqa.runtime import atkis_full
from navqa.runtime.atkis_full import (
    DLM250_URL,
    ShapeLayer,
    download_dlm250,
    extract_shapefiles,
    find_shp2pgsql,
    fix_decimal_commas,
    layer_table,
    psql_command,
    shp2pgsql_command,
)


def test_shp2pgsql_command_matches_the_upstream_import_script() -> None:
    shp = Path("/data/dlm250_ebenen/sie01_f.shp")
    assert shp2pgsql_command(shp, "sie01_f") == [
        "shp2pgsql", "-s", "31467", "-I", "/data/dlm250_ebenen/sie01_f.shp", "sie01_f"]
    assert shp2pgsql_command(shp, "sie01_f", exe="/usr/bin/shp2pgsql", srid=25832)[:3] == [
        "/usr/bin/shp2pgsql", "-s", "25832"]
    with pytest.raises(DatasetError):
        shp2pgsql_command(shp, 'x"; DROP TABLE y; --')


def test_psql_command_stops_on_the_first_error() -> None:
    assert psql_command("atkis_full", psql="psql") == [
        "psql", "-X", "-q", "-d", "atkis_full", "-v", "ON_ERROR_STOP=1", "-f", "-"]


def test_layer_table_is_the_lower_case_file_name() -> None:
    assert layer_table(Path("x/VER01_L.shp")) == "ver01_l"
    assert layer_table(Path("gew01_f.SHP")) == "gew01_f"
    with pytest.raises(DatasetError):
        layer_table(Path("bad name.shp"))


@pytest.mark.parametrize(("line", "fixed"), [
    (b"VALUES ('12,5','DE')", b"VALUES ('12.5','DE')"),
    (b"VALUES ('839.0.0')", b"VALUES ('839.00')"),
    (b"VALUES ('1,5','2,25')", b"VALUES ('1.5','2.25')"),
    (b"VALUES ('DE','DLM250','0106000020EB7A')", b"VALUES ('DE','DLM250','0106000020EB7A')"),
])
def test_decimal_fix(line: bytes, fixed: bytes) -> None:
    assert fix_decimal_commas(line) == fixed


@pytest.mark.skipif(shutil.which("sed") is None, reason="sed is not installed")
def test_decimal_fix_equals_the_upstream_sed() -> None:
    text = b"a 1,5 b 839.0.0 c 12,34,56 d 3.1.4.1 e x,1 f 9,\n"
    sed = subprocess.run(
        ["sed", "-E", "-e", r"s/([0-9]),([0-9])/\1.\2/g",
         "-e", r"s/([0-9]+\.[0-9]+)\.([0-9]+)/\1\2/g"],
        input=text, capture_output=True, check=True).stdout
    assert fix_decimal_commas(text) == sed


def _zip(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return path


def test_extract_lists_layers_sorted_by_table(tmp_path: Path) -> None:
    z = _zip(tmp_path / "dlm.zip", {
        "dlm250.gk3.shape.ebenen/dlm250_ebenen/ver01_l.shp": b"x",
        "dlm250.gk3.shape.ebenen/dlm250_ebenen/ver01_l.dbf": b"x",
        "dlm250.gk3.shape.ebenen/dlm250_ebenen/SIE01_F.shp": b"x",
        "dlm250.gk3.shape.ebenen/README.txt": b"x",
    })
    layers = extract_shapefiles(z, tmp_path / "out")
    assert [(ly.table, ly.path.name) for ly in layers] == [("sie01_f", "SIE01_F.shp"),
                                                           ("ver01_l", "ver01_l.shp")]
    # extracting again replaces the folder
    assert len(extract_shapefiles(z, tmp_path / "out")) == 2


def test_extract_rejects_bad_archives(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="unsafe path"):
        extract_shapefiles(_zip(tmp_path / "a.zip", {"../evil.shp": b"x"}), tmp_path / "o1")
    with pytest.raises(DatasetError, match="no shapefile"):
        extract_shapefiles(_zip(tmp_path / "b.zip", {"readme.txt": b"x"}), tmp_path / "o2")
    with pytest.raises(DatasetError, match="map to table"):
        extract_shapefiles(_zip(tmp_path / "c.zip", {"a/x.shp": b"x", "b/X.shp": b"x"}),
                           tmp_path / "o3")
    (tmp_path / "d.zip").write_bytes(b"not a zip")
    with pytest.raises(DatasetError, match="not a zip"):
        extract_shapefiles(tmp_path / "d.zip", tmp_path / "o4")


class _FakeResponse:
    def __init__(self, body: bytes, fail: bool = False) -> None:
        self.body, self.fail = body, fail
        self.headers = {"Content-Length": str(len(body))}

    def __enter__(self) -> _FakeResponse:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def raise_for_status(self) -> None:
        if self.fail:
            raise requests.HTTPError("404 Not Found")

    def iter_content(self, size: int):
        stream = io.BytesIO(self.body)
        yield from iter(lambda: stream.read(size), b"")


def test_download_writes_the_zip_and_its_checksum(tmp_path: Path, monkeypatch) -> None:
    calls = []

    def fake_get(url: str, **kw: object) -> _FakeResponse:
        calls.append(url)
        return _FakeResponse(b"PK-fake-zip")

    monkeypatch.setattr(atkis_full.requests, "get", fake_get)
    seen: list[tuple[int, int | None]] = []
    out = download_dlm250(tmp_path / "d" / "dlm.zip", progress=lambda d, t: seen.append((d, t)))
    assert calls == [DLM250_URL]
    assert out.read_bytes() == b"PK-fake-zip"
    sha_line = (tmp_path / "d" / "dlm.zip.sha256").read_text().splitlines()
    assert sha_line[0].endswith("  dlm.zip") and sha_line[1] == DLM250_URL
    assert seen[-1] == (11, 11)


def test_download_failure_says_how_to_use_a_local_zip(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(atkis_full.requests, "get",
                        lambda url, **kw: _FakeResponse(b"", fail=True))
    with pytest.raises(DatasetError, match="pass it with --zip"):
        download_dlm250(tmp_path / "dlm.zip")
    assert not (tmp_path / "dlm.zip").exists()
    assert not (tmp_path / "dlm.zip.part").exists()


def test_missing_shp2pgsql_is_a_setup_error(monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(atkis_full.shutil, "which", lambda name: None)
    monkeypatch.setattr(atkis_full, "postgres_bindir", lambda: tmp_path)
    with pytest.raises(SetupError, match="apt-get install postgis"):
        find_shp2pgsql()


# -- with PostgreSQL -----------------------------------------------------------------------


@pytest.mark.atkis
@pytest.mark.postgres
def test_layers_round_trip_through_shapefiles(tmp_path: Path, pg, shared_dataset) -> None:
    """Two partial layers -> pgsql2shp -> zip -> extract -> shp2pgsql | fix | psql."""
    from navqa.runtime.loader import ensure_loaded
    from navqa.runtime.postgres import recreate_database

    ensure_loaded(pg, shared_dataset("atkis"))
    pgsql2shp = shutil.which("pgsql2shp")
    assert pgsql2shp, "pgsql2shp is missing: apt-get install postgis"
    env = {"PGPASSWORD": pg.password or "", "PATH": "/usr/bin:/bin"}
    src = tmp_path / "export"
    src.mkdir()
    for table in ("sie04_f", "rel01_p"):
        subprocess.run([pgsql2shp, "-h", pg.host, "-p", str(pg.port), "-u", pg.user,
                        "-f", str(src / table), "atkis_db",
                        f"SELECT objid, objart, nam, geom FROM public.{table}"],
                       check=True, capture_output=True, env=env)
    z = tmp_path / "dlm250.gk3.shape.ebenen.zip"
    with zipfile.ZipFile(z, "w") as zf:
        for f in sorted(src.iterdir()):
            zf.write(f, f"dlm250.gk3.shape.ebenen/dlm250_ebenen/{f.name}")
    layers = extract_shapefiles(z, tmp_path / "dlm250")
    assert [ly.table for ly in layers] == ["rel01_p", "sie04_f"]
    db = "navqa_test_atkis_layers"
    recreate_database(pg, db)
    with pg.connect(db, autocommit=True) as c:
        c.execute("CREATE EXTENSION IF NOT EXISTS postgis")
    shp2pgsql = find_shp2pgsql()
    for layer in layers:
        atkis_full.load_layer(pg, db, layer, shp2pgsql=shp2pgsql)
    for table in ("sie04_f", "rel01_p"):
        with pg.connect("atkis_db") as c:
            want = c.execute(f"SELECT objid, nam, ST_AsText(geom) FROM {table} "
                             "ORDER BY objid").fetchall()
        with pg.connect(db) as c:
            got = c.execute(f"SELECT objid, nam, ST_AsText(geom) FROM {table} "
                            "ORDER BY objid").fetchall()
            srid, index = c.execute(
                f"SELECT Find_SRID('public', '{table}', 'geom'), "
                f"(SELECT count(*) FROM pg_indexes WHERE tablename = '{table}' "
                "AND indexdef ILIKE '%gist%')").fetchone()
        assert got == want
        assert srid == 31467 and index == 1


@pytest.mark.atkis
@pytest.mark.postgres
def test_loading_a_missing_layer_reports_psql_error(tmp_path: Path, pg) -> None:
    db = "navqa_test_atkis_layers_err"
    from navqa.runtime.postgres import recreate_database

    recreate_database(pg, db)  # no PostGIS: AddGeometryColumn fails
    shp = Path(__file__).parent / "nonexistent.shp"
    with pytest.raises(PostgresError, match="shp2pgsql failed on nonexistent.shp"):
        atkis_full.load_layer(pg, db, ShapeLayer(shp, "nonexistent"),
                              shp2pgsql=find_shp2pgsql())


@pytest.mark.atkis
@pytest.mark.postgres
def test_serving_atkis_full_before_the_full_load_says_what_to_run(pg, navqa_config) -> None:
    from navqa.runtime.loader import ensure_loaded

    ds = atkis_full.fetch_full_dataset(navqa_config)
    assert ds.manifest.database == "atkis_full" and not ds.manifest.partial
    with pytest.raises(PostgresError, match="navqa datasets fetch atkis --full"):
        ensure_loaded(pg, ds, force=True, database="navqa_test_atkis_full_guard")
