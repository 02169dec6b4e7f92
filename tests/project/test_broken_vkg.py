"""A broken VKG of the user's own: the real Ontop 5.1.2 on each broken input, and what navqa
says about it (one line naming the culprit, the right exit code, no Java stack trace, no
password).

Each case breaks one file of the library VKG and runs ``navqa sparql`` (which starts Ontop
on the user's properties); the database of the user must stay unchanged throughout.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from navqa.runtime.postgres import free_port

from .library_vkg import UserDb, navqa

pytestmark = [pytest.mark.postgres, pytest.mark.ontop]

QUERY = "PREFIX : <http://example.org/library#> SELECT (COUNT(*) AS ?n) WHERE { ?b a :Book }"


def _props(db: UserDb, *, url: str | None = None, driver: str = "org.postgresql.Driver",
           password: str | None = None) -> str:
    url = url or f"jdbc:postgresql://{db.host}:{db.port}/{db.dbname}"
    return (f"jdbc.url={url}\njdbc.user={db.user}\njdbc.password={password or db.password}\n"
            f"jdbc.driver={driver}\n")


def _error_line(out: str) -> str:
    """The one line navqa's error is on (it must be the only ``error`` line)."""
    lines = [ln for ln in out.splitlines() if ln.lower().startswith("error")]
    assert len(lines) == 1, out
    return lines[0]


def _clean(out: str, password: str) -> None:
    assert "Traceback" not in out, out
    assert not re.search(r"^\s+at [\w$.]+\(", out, re.MULTILINE), f"Java stack trace:\n{out}"
    assert "Exception" not in out, out
    assert password not in out


def _case(vkg_dir: Path, tmp_path: Path, name: str) -> Path:
    d = tmp_path / name
    d.mkdir()
    for f in ("library.ttl", "library.obda", "library.properties"):
        shutil.copy(vkg_dir / f, d)
    return d


def _sparql(d: Path, db: UserDb, *, ok: tuple[int, ...], ontology: str = "library.ttl",
            extra: tuple[str, ...] = ()) -> str:
    out = navqa("sparql", "-t", ontology, "-m", "library.obda", "-p", "library.properties",
                *extra, QUERY, cwd=d, db=db, ok=ok)
    _clean(out, db.password)
    return out


def test_properties_file_missing_jdbc_url(vkg_dir: Path, user_db: UserDb,
                                          tmp_path: Path) -> None:
    d = _case(vkg_dir, tmp_path, "no-url")
    (d / "library.properties").write_text(f"jdbc.user={user_db.user}\n"
                                          f"jdbc.password={user_db.password}\n")
    line = _error_line(_sparql(d, user_db, ok=(2,)))
    assert "jdbc.url" in line and "library.properties" in line, line


def test_database_down(vkg_dir: Path, user_db: UserDb, tmp_path: Path) -> None:
    d = _case(vkg_dir, tmp_path, "down")
    port = free_port()  # nothing listens there
    (d / "library.properties").write_text(
        _props(user_db, url=f"jdbc:postgresql://127.0.0.1:{port}/library"))
    out = _sparql(d, user_db, ok=(1,))
    line = _error_line(out)
    assert f"jdbc:postgresql://127.0.0.1:{port}/library" in line, line
    assert "refused" in line.lower(), line  # the JDBC message, quoted
    assert out.lower().count("connection refused") == 1, out  # … once
    assert "hint" in out.lower()


def test_driver_not_on_the_class_path(vkg_dir: Path, user_db: UserDb, tmp_path: Path) -> None:
    # MySQL's old driver class: navqa resolves no jar for it, so it is not on the class path
    d = _case(vkg_dir, tmp_path, "driver")
    (d / "library.properties").write_text(_props(
        user_db, url=f"jdbc:mysql://127.0.0.1:{free_port()}/library",
        driver="com.mysql.jdbc.Driver"))
    out = _sparql(d, user_db, ok=(2,))
    line = _error_line(out)
    assert "com.mysql.jdbc.Driver" in line, line
    assert re.search(r"com\.mysql:mysql-connector-j:\d", out), out  # the Maven coordinates


def test_mapping_with_a_missing_table(vkg_dir: Path, user_db: UserDb, tmp_path: Path) -> None:
    d = _case(vkg_dir, tmp_path, "table")
    obda = d / "library.obda"
    obda.write_text(obda.read_text().replace("FROM member", "FROM members"))
    line = _error_line(_sparql(d, user_db, ok=(2,)))
    assert "members" in line and "mapping member" in line, line
    assert re.search(r"library\.obda:18\b", line), line


def test_mapping_with_a_missing_column(vkg_dir: Path, user_db: UserDb,
                                       tmp_path: Path) -> None:
    d = _case(vkg_dir, tmp_path, "column")
    obda = d / "library.obda"
    obda.write_text(obda.read_text().replace("SELECT id, name, city FROM branch",
                                             "SELECT id, name, town AS city FROM branch"))
    line = _error_line(_sparql(d, user_db, ok=(2,)))
    assert "town" in line and "mapping branch" in line, line
    assert re.search(r"library\.obda:6\b", line), line


def test_an_import_that_cannot_be_resolved(vkg_dir: Path, user_db: UserDb,
                                           tmp_path: Path) -> None:
    d = _case(vkg_dir, tmp_path, "import")
    iri = "http://ontologies.invalid/library/people.owl"
    ttl = d / "library.ttl"
    ttl.write_text(ttl.read_text().replace(
        "<http://example.org/library> a owl:Ontology ;",
        f"<http://example.org/library> a owl:Ontology ; owl:imports <{iri}> ;"))
    out = _sparql(d, user_db, ok=(2,))
    line = _error_line(out)
    assert iri in line, line
    assert "-x" in out, out
