"""Bad input to the runtime fails fast, names the culprit, and shows no Java stack trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from navqa.errors import InputError, OntologyParseError, OntopStartupError
from navqa.runtime.ontop import OntopProcess, OntopSpec, check_driver_matches_url
from navqa.runtime.postgres import free_port, recreate_database

pytestmark = [pytest.mark.ontop, pytest.mark.postgres]

ONTOLOGY = """@prefix : <http://example.org/tiny#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
<http://example.org/tiny> a owl:Ontology .
:Thing2 a owl:Class ; rdfs:label "thing" .
:name a owl:DatatypeProperty .
"""

GOOD_OBDA = """[PrefixDeclaration]
:	http://example.org/tiny#

[MappingDeclaration] @collection [[
mappingId	things
target		:thing/{id} a :Thing2 ; :name {name} .
source		SELECT id, name FROM thing
]]
"""

BROKEN_OBDA = GOOD_OBDA.replace(":name {name} .", ":name {name .")


@pytest.fixture(scope="module")
def tiny_db(pg) -> str:
    recreate_database(pg, "navqa_tiny")
    with pg.connect("navqa_tiny", autocommit=True) as c:
        c.execute("CREATE TABLE thing (id int primary key, name text)")
        c.execute("INSERT INTO thing VALUES (1, 'one'), (2, 'two')")
    return "navqa_tiny"


def _spec(tmp_path: Path, pg, db: str, mapping: str, **kw) -> OntopSpec:
    onto = tmp_path / "tiny.ttl"
    onto.write_text(ONTOLOGY)
    mp = tmp_path / "tiny.obda"
    mp.write_text(mapping)
    base = {"ontology": onto, "mapping": mp, "jdbc_url": pg.jdbc_url(db), "user": pg.user,
            "password": pg.password}
    base.update(kw)
    return OntopSpec(**base)


def _assert_no_stack_trace(message: str) -> None:
    assert "\tat " not in message
    assert "at it.unibz" not in message
    assert "at java." not in message


def test_good_tiny_vkg_answers(tmp_path, pg, tiny_db, ontop_install) -> None:
    """The control case: the same files without the defect do serve."""
    spec = _spec(tmp_path, pg, tiny_db, GOOD_OBDA)
    with OntopProcess(ontop_install, spec, log_path=tmp_path / "ok.log").start(timeout=120) as p:
        assert p.probe()


def test_mapping_syntax_error_names_the_file(tmp_path, pg, tiny_db, ontop_install) -> None:
    spec = _spec(tmp_path, pg, tiny_db, BROKEN_OBDA)
    proc = OntopProcess(ontop_install, spec, log_path=tmp_path / "bad.log")
    with pytest.raises(OntopStartupError) as ei:
        proc.start(timeout=120)
    msg = str(ei.value)
    assert "tiny.obda" in msg
    assert "mapping" in msg.lower()
    _assert_no_stack_trace(msg)
    assert proc.proc is not None and proc.proc.poll() is not None, "the JVM must be gone"


def test_dead_database_port_names_the_endpoint(tmp_path, pg, tiny_db, ontop_install) -> None:
    dead = free_port()
    spec = _spec(tmp_path, pg, tiny_db, GOOD_OBDA,
                 jdbc_url=f"jdbc:postgresql://127.0.0.1:{dead}/{tiny_db}")
    proc = OntopProcess(ontop_install, spec, log_path=tmp_path / "dead.log")
    with pytest.raises(OntopStartupError) as ei:
        proc.start(timeout=120)
    msg = str(ei.value)
    assert f"127.0.0.1:{dead}" in msg
    assert "unreachable" in msg or "refused" in msg.lower()
    _assert_no_stack_trace(msg)


def test_missing_ontology_fails_before_launch(tmp_path, pg, tiny_db, ontop_install) -> None:
    spec = _spec(tmp_path, pg, tiny_db, GOOD_OBDA)
    spec.ontology = tmp_path / "no-such-ontology.owl"
    proc = OntopProcess(ontop_install, spec, log_path=tmp_path / "missing.log")
    with pytest.raises(OntologyParseError) as ei:
        proc.start(timeout=30)
    assert "no-such-ontology.owl" in str(ei.value)
    assert "does not exist" in str(ei.value)
    assert proc.proc is None, "nothing may be launched for a missing file"


def test_port_taken_is_reported(tmp_path, pg, tiny_db, ontop_install) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        spec = _spec(tmp_path, pg, tiny_db, GOOD_OBDA, port=port)
        proc = OntopProcess(ontop_install, spec, log_path=tmp_path / "port.log")
        with pytest.raises(OntopStartupError) as ei:
            proc.start(timeout=60)
    assert "port is already taken" in str(ei.value)
    _assert_no_stack_trace(str(ei.value))


def test_url_driver_mismatch_fails_before_launch(tmp_path, pg, tiny_db, ontop_install) -> None:
    """A PostgreSQL URL with the MariaDB driver is refused up front, naming both."""
    spec = _spec(tmp_path, pg, tiny_db, GOOD_OBDA,
                 properties={"jdbc.driver": "org.mariadb.jdbc.Driver"})
    proc = OntopProcess(ontop_install, spec, log_path=tmp_path / "mismatch.log")
    with pytest.raises(InputError) as ei:
        proc.start(timeout=120)
    msg = str(ei.value)
    assert "jdbc:postgresql:" in msg and "org.mariadb.jdbc.Driver" in msg
    assert "\n" not in msg
    assert proc.proc is None, "nothing may be launched for a mismatched driver"


@pytest.mark.parametrize(("url", "driver", "ok"), [
    ("jdbc:postgresql://h/db", "org.postgresql.Driver", True),
    ("jdbc:mariadb://h/db", "org.mariadb.jdbc.Driver", True),
    ("jdbc:postgresql://h/db", "com.example.WrappingDriver", True),
    ("jdbc:oracle:thin:@h:1521/x", "oracle.jdbc.OracleDriver", True),
    ("jdbc:mariadb://h/db", "org.postgresql.Driver", False),
    ("jdbc:duckdb:/tmp/x.db", "org.h2.Driver", False),
    ("jdbc:oracle:thin:@h:1521/x", "org.postgresql.Driver", False),
])
def test_driver_url_check(url: str, driver: str, ok: bool) -> None:
    if ok:
        check_driver_matches_url(url, driver)
    else:
        with pytest.raises(InputError, match=driver.replace(".", r"\.")):
            check_driver_matches_url(url, driver)
