"""The ATKIS load fixes: the pg_dump restore-script rewrite and the addtables.sql repairs.

Unit tests on small synthetic scripts, plus one check on the real restore.sql (marked
``atkis``: it needs the dataset files, not PostgreSQL).
"""

from __future__ import annotations

import gzip
import re
from pathlib import Path

import pytest

from navqa.errors import DatasetError
from navqa.runtime.load_fixes import get_transform
from navqa.runtime.load_fixes_atkis import (
    FULL_DATA_GUARD,
    MISSING_DAT_FILES,
    VEG02_NTZ_FIX,
    fix_addtables,
    rewrite_restore_script,
)

RESTORE = """--
-- File paths need to be edited. Search for $$PATH$$ and
--
SET client_encoding = 'UTF8';
SELECT pg_catalog.set_config('search_path', '', false);
DROP DATABASE atkis_db;
CREATE DATABASE atkis_db WITH TEMPLATE = template0 ENCODING = 'UTF8' LOCALE_PROVIDER = icu;
ALTER DATABASE atkis_db OWNER TO postgres;
\\connect atkis_db
CREATE EXTENSION IF NOT EXISTS postgis WITH SCHEMA public;
COMMENT ON EXTENSION postgis IS 'PostGIS geometry and geography spatial types and functions';
CREATE TABLE public.layer_a (gid integer, nam character varying(100));
ALTER TABLE public.layer_a OWNER TO postgres;
ALTER TABLE ONLY public.layer_a ALTER COLUMN gid SET DEFAULT 1;
\\copy public.layer_a (gid, nam) FROM stdin;
\\.
\\copy public.layer_a (gid, nam) FROM 'docker-entrypoint-initdb.d/backup/1001.dat';
COPY public.layer_b (gid) FROM '$$PATH$$/1002.dat';
\\copy public.sie01_f (gid) FROM 'docker-entrypoint-initdb.d/backup/4890.dat';
"""


def _dat(folder: Path, num: str, rows: list[str], *, gz: bool = True) -> None:
    body = ("".join(r + "\n" for r in rows) + "\\.\n\n\n").encode()
    if gz:
        (folder / f"{num}.dat.gz").write_bytes(gzip.compress(body))
    else:
        (folder / f"{num}.dat").write_bytes(body)


def test_restore_rewrite_inlines_data_and_drops_database_statements(tmp_path: Path) -> None:
    _dat(tmp_path, "1001", ["1\tFritzlar", "2\tK\\\\assel"])
    _dat(tmp_path, "1002", ["7"], gz=False)
    out, skipped = rewrite_restore_script(RESTORE, tmp_path)
    live = [ln for ln in out.splitlines() if not ln.startswith("--")]
    assert not any(re.match(r"(DROP|CREATE|ALTER) DATABASE|\\connect|COMMENT ON EXTENSION", ln)
                   for ln in live)
    assert not any("OWNER TO" in ln for ln in live)
    assert "ALTER TABLE ONLY public.layer_a ALTER COLUMN gid SET DEFAULT 1;" in live
    assert "docker-entrypoint-initdb.d" not in "\n".join(live)
    assert "$$PATH$$" not in "\n".join(live)
    # data is inlined after COPY ... FROM stdin, terminated once, backslashes kept as dumped
    i = live.index("COPY public.layer_a (gid, nam) FROM stdin;")
    assert live[i + 1:i + 4] == ["1\tFritzlar", "2\tK\\\\assel", "\\."]
    j = live.index("COPY public.layer_b (gid) FROM stdin;")
    assert live[j + 1:j + 3] == ["7", "\\."]
    # the known-missing file is skipped, with a comment
    assert skipped == ["4890"]
    assert "-- navqa: skipped public.sie01_f (gid): 4890.dat is not part of the partial dump" in out
    # the empty FROM stdin block of pg_dump -Ft is left alone
    assert "\\copy public.layer_a (gid, nam) FROM stdin;" in live


def test_restore_rewrite_refuses_an_unexpected_missing_file(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match=r"1001\.dat \(public\.layer_a"):
        rewrite_restore_script(RESTORE, tmp_path)


def test_known_missing_files_are_loaded_when_present(tmp_path: Path) -> None:
    _dat(tmp_path, "1001", [])
    _dat(tmp_path, "1002", [])
    _dat(tmp_path, "4890", ["5"])
    out, skipped = rewrite_restore_script(RESTORE, tmp_path)
    assert skipped == []
    assert "COPY public.sie01_f (gid) FROM stdin;\n5\n\\." in out


def test_restore_rewrite_rejects_a_corrupt_archive(tmp_path: Path) -> None:
    (tmp_path / "1001.dat.gz").write_bytes(b"not gzip")
    with pytest.raises(DatasetError, match="cannot decompress 1001.dat.gz"):
        rewrite_restore_script(RESTORE, tmp_path)


def test_missing_list_is_the_21_unpublished_tables() -> None:
    assert len(MISSING_DAT_FILES) == 21


def test_addtables_fix_adds_ntz_and_repairs_gebaeudefunktion_1000() -> None:
    sql = ("CREATE TABLE gebaeudefunktion (code VARCHAR(4));\n"
           "INSERT INTO gebaeudefunktion VALUES (1000, 'Residential building', "
           "'''Wohngebäude'' ist ein Gebäude, das zum Wohnen genutzt wird.');\n"
           "INSERT INTO gebaeudefunktion VALUES (1010, 'Residential house', 'Wohnhaus', 'x');\n")
    out = fix_addtables(sql)
    assert out.startswith(VEG02_NTZ_FIX)
    assert "ADD COLUMN IF NOT EXISTS ntz" in out
    assert ("INSERT INTO gebaeudefunktion VALUES (1000, 'Residential building', 'Wohngebäude', "
            "'''Wohngebäude'' ist ein Gebäude, das zum Wohnen genutzt wird.');") in out
    assert "(1010, 'Residential house', 'Wohnhaus', 'x')" in out
    # a revision that already has the fix is left as is
    again = fix_addtables(out[len(VEG02_NTZ_FIX):])
    assert again == out


def test_transforms_are_registered(tmp_path: Path) -> None:
    assert get_transform("atkis-addtables")("SELECT 1;", tmp_path).endswith("SELECT 1;")
    full = get_transform("atkis-full-addtables")("SELECT 1;", tmp_path)
    assert full.startswith(FULL_DATA_GUARD) and "navqa datasets fetch atkis --full" in full
    _dat(tmp_path, "1001", [])
    _dat(tmp_path, "1002", [])
    assert "COPY public.layer_b" in get_transform("atkis-restore")(RESTORE, tmp_path)


@pytest.mark.atkis
def test_real_restore_script(shared_dataset) -> None:
    ds = shared_dataset("atkis")
    path = ds.local("db/dlm250_partial_dump_dsa015/restore.sql")
    out, skipped = rewrite_restore_script(path.read_text(encoding="utf-8"), path.parent)
    assert sorted(skipped) == sorted(MISSING_DAT_FILES)
    live = "\n".join(ln for ln in out.splitlines() if not ln.startswith("-- navqa"))
    assert "docker-entrypoint-initdb.d" not in live
    assert "OWNER TO postgres" not in live
    assert "\\connect" not in live
    # 20 data files are inlined: the 19 layer tables with rows plus the empty spatial_ref_sys
    assert len(re.findall(r"^COPY public\.\S+ \(.*\) FROM stdin;$", out, re.M)) == 20
