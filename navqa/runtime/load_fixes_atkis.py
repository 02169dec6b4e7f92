"""Load fixes for ATKIS-DLM-KG: the dsa015 partial ``pg_dump -Ft`` restore script and addtables.sql.

Registered transforms (see :mod:`navqa.runtime.load_fixes`):

``atkis-restore``
    Rewrites ``restore.sql`` (the script ``pg_dump -Ft`` writes next to its ``NNNN.dat``
    files) so that it loads into the database navqa created:

    * drops ``DROP DATABASE`` / ``CREATE DATABASE`` / ``ALTER DATABASE`` and ``\\connect``
      (navqa creates and names the database itself);
    * drops ``ALTER ... OWNER TO ...`` and ``COMMENT ON EXTENSION`` (the dump's ``postgres``
      role does not exist in navqa's cluster, and the extension belongs to the loader);
    * replaces every ``\\copy``/``COPY ... FROM '<dir>/NNNN.dat'`` (``<dir>`` is
      ``docker-entrypoint-initdb.d/backup/`` in this dump, ``$$PATH$$`` in a stock one) with
      ``COPY ... FROM stdin`` followed by the rows of ``NNNN.dat.gz`` (or ``NNNN.dat``),
      decompressed in memory. Nothing is written to disk, and the server never reads a file,
      so the load works whichever OS user runs PostgreSQL;
    * skips the ``COPY`` of the 21 tables whose data is not part of the partial dump
      (:data:`MISSING_DAT_FILES`) with a comment. Any *other* missing file is an error.

``atkis-addtables``
    ``addtables.sql`` from apano-on/atkis @ 6d58746, with two repairs:

    * the DLM250 release of the dump (2021-12-31) has no ``veg02_f.ntz`` column, which
      addtables.sql (a foreign key) and the mapping ``Forestry polygon_f`` both use. Without
      it addtables.sql raises one error and **Ontop refuses to start** ("Unable to find
      attribute ntz"). The column is added, empty (``ADD COLUMN IF NOT EXISTS``, so a release
      that has it is untouched): veg02_f holds no rows in the partial dump anyway;
    * the German name of ``gebaeudefunktion`` code 1000 (``Wohngebäude``) is restored; that
      revision omits it so that its definition lands in ``name_de`` (fixed upstream in daf001d).

``atkis-full-addtables``
    The same, preceded by a guard that fails with a clear message when the DLM250 layer
    tables are absent (``navqa datasets fetch atkis --full`` loads them).
"""

from __future__ import annotations

import gzip
import logging
import re
from pathlib import Path

from navqa.errors import DatasetError

logger = logging.getLogger(__name__)

#: ``NNNN.dat`` files named by ``restore.sql`` that dsa015 never committed (or that were too
#: large to recover): their 21 tables stay empty in the partial dump.
MISSING_DAT_FILES: frozenset[str] = frozenset({
    "4870", "4872", "4874", "4876",          # geb01_f, geb01_l, geb02_f, geb03_f
    "4878", "4882", "4884", "4940",          # gew01_l, gew02_p, gew03_l, gew01_f
    "4890", "4894",                          # sie01_f, sie02_f
    "4906", "4908",                          # veg02_f, veg03_f
    "4912", "4916", "4924", "4926",          # ver02_l, ver03_l, ver01_l, ver06_l
    "4938",                                  # rel01_l
    "4941", "4943", "4944", "4945",          # building_in_settlement, GN250_b, area_xy, area_xy2
})

_DROP_LINE = re.compile(
    r"^\s*(?:(?:DROP|CREATE|ALTER)\s+DATABASE\b|\\connect\b|\\c\s|COMMENT\s+ON\s+EXTENSION\b)",
    re.IGNORECASE,
)
_OWNER_LINE = re.compile(r"^\s*ALTER\s+\S+(?:\s+\S+)*?\s+OWNER\s+TO\s+[^;]+;\s*$", re.IGNORECASE)
_COPY_FILE = re.compile(
    r"^\s*(?:\\copy|COPY)\s+(?P<target>.+?)\s+FROM\s+'(?P<path>[^']*?(?P<num>\d+)\.dat)'\s*;?\s*$",
    re.IGNORECASE,
)


def _dat_rows(folder: Path, num: str) -> str | None:
    """The COPY rows of ``NNNN.dat(.gz)`` in ``folder`` without the ``\\.`` terminator."""
    gz, plain = folder / f"{num}.dat.gz", folder / f"{num}.dat"
    if gz.is_file():
        try:
            raw = gzip.decompress(gz.read_bytes())
        except (OSError, EOFError) as e:
            raise DatasetError(f"cannot decompress {gz.name}: {e}", path=gz) from e
    elif plain.is_file():
        raw = plain.read_bytes()
    else:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        src = gz if gz.is_file() else plain
        raise DatasetError(f"{num}.dat is not UTF-8: {e}", path=src) from e
    lines = text.split("\n")
    while lines and lines[-1].strip() == "":
        lines.pop()
    if lines and lines[-1] == "\\.":
        lines.pop()
    return "".join(line + "\n" for line in lines)


def rewrite_restore_script(sql: str, folder: Path) -> tuple[str, list[str]]:
    """Apply the ``atkis-restore`` rewrite; also return the ``NNNN`` numbers skipped.

    Args:
        sql: The text of ``restore.sql``.
        folder: The folder holding the ``NNNN.dat.gz`` (or ``NNNN.dat``) files.

    Raises:
        DatasetError: a data file is missing that is not one of :data:`MISSING_DAT_FILES`,
            or cannot be read.
    """
    out: list[str] = []
    skipped: list[str] = []
    unexpected: list[str] = []
    for line in sql.splitlines():
        if _DROP_LINE.match(line) or _OWNER_LINE.match(line):
            out.append(f"-- navqa: dropped: {line.strip()}")
            continue
        m = _COPY_FILE.match(line)
        if m is None:
            out.append(line)
            continue
        num, target = m.group("num"), m.group("target")
        rows = _dat_rows(folder, num)
        if rows is None:
            if num in MISSING_DAT_FILES:
                skipped.append(num)
                out.append(f"-- navqa: skipped {target}: {num}.dat is not part of the partial dump")
                continue
            unexpected.append(f"{num}.dat ({target})")
            continue
        out.append(f"COPY {target} FROM stdin;")
        out.append(rows + "\\.")
    if unexpected:
        raise DatasetError(
            "restore.sql names data files that are missing: " + ", ".join(unexpected),
            path=folder,
            hint="re-fetch the dataset (navqa datasets fetch atkis)",
        )
    return "\n".join(out) + "\n", skipped


def atkis_restore(sql: str, folder: Path) -> str:
    """Make the dsa015 ``restore.sql`` loadable into navqa's database (see module doc)."""
    text, skipped = rewrite_restore_script(sql, folder)
    if skipped:
        logger.info("ATKIS partial dump: %d tables have no data file and stay empty (%s)",
                    len(skipped), ", ".join(sorted(skipped)))
    return text


_GEBAEUDEFUNKTION_1000 = re.compile(
    r"INSERT INTO gebaeudefunktion VALUES \(1000, 'Residential building', "
    r"('''Wohngeb\u00e4ude'' ist ein Geb\u00e4ude, das zum Wohnen genutzt wird\.')\);"
)


#: Prepended to addtables.sql: the column the 2021 DLM250 veg02_f lacks (see module doc).
VEG02_NTZ_FIX = (
    "-- navqa: DLM250 2021-12-31 has no veg02_f.ntz; addtables.sql and the mapping need it\n"
    "ALTER TABLE veg02_f ADD COLUMN IF NOT EXISTS ntz VARCHAR(4);\n"
)


def fix_addtables(sql: str) -> str:
    """Add ``veg02_f.ntz`` if missing and restore ``name_de`` of gebaeudefunktion 1000."""
    return VEG02_NTZ_FIX + _GEBAEUDEFUNKTION_1000.sub(
        lambda m: "INSERT INTO gebaeudefunktion VALUES (1000, 'Residential building', "
        f"'Wohngeb\u00e4ude', {m.group(1)});",
        sql,
        count=1,
    )


def atkis_addtables(sql: str, folder: Path) -> str:
    """``addtables.sql`` with veg02_f.ntz added and the gebaeudefunktion 1000 row repaired."""
    return fix_addtables(sql)


FULL_DATA_GUARD = """DO $navqa$
BEGIN
  IF to_regclass('public.sie01_f') IS NULL OR to_regclass('public.ver01_l') IS NULL THEN
    RAISE EXCEPTION 'the ATKIS DLM250 layer tables are not loaded: %',
      'run `navqa datasets fetch atkis --full` first';
  END IF;
END
$navqa$;
"""


def atkis_full_addtables(sql: str, folder: Path) -> str:
    """``addtables.sql`` for the full DLM250 load, failing clearly when the layers are absent."""
    return FULL_DATA_GUARD + fix_addtables(sql)


#: The transforms this module provides, by the name a manifest's load step gives
#: (:mod:`navqa.runtime.load_fixes` registers them).
TRANSFORMS = {
    "atkis-restore": atkis_restore,
    "atkis-addtables": atkis_addtables,
    "atkis-full-addtables": atkis_full_addtables,
}
