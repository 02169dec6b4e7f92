"""JDBC drivers for other databases: properties keys, navqa.toml, read-only URLs, the lock."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from navqa.errors import InputError, OntopStartupError, SetupError
from navqa.model.vkg_source import DatabaseAccess
from navqa.runtime.diagnose import explain_user_startup
from navqa.runtime.jdbc_drivers import (
    JDBC_LOCK_PATH,
    KNOWN_DATABASES,
    Artifact,
    driver_jars,
    resolve_driver,
    sha256_file,
)
from navqa.runtime.project import (
    VkgFlags,
    load_project,
    read_only_jdbc_url,
    read_only_properties,
    read_properties,
    user_source,
)

REPO = Path(__file__).resolve().parents[2]
NAVQA = str(Path(sys.executable).with_name("navqa"))


def props(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "db.properties"
    p.write_text(text, encoding="utf-8")
    return p


def test_a_mariadb_url_alone_picks_the_driver_class_and_its_artifact(tmp_path: Path) -> None:
    db, extra = read_properties(props(tmp_path, "jdbc.url=jdbc:mariadb://h:3306/d\n"
                                                "jdbc.user=u\njdbc.password=s\n"), env={})
    assert db.driver == "org.mariadb.jdbc.Driver"
    assert db.driver_artifact is None and db.driver_jar is None  # the default applies later
    assert extra == {}


def test_file_databases_need_no_user(tmp_path: Path) -> None:
    db, _ = read_properties(props(tmp_path, "jdbc.url=jdbc:duckdb:/x/y.duckdb\n"), env={})
    assert db.driver == "org.duckdb.DuckDBDriver" and db.user is None
    with pytest.raises(InputError, match="jdbc.user"):
        read_properties(props(tmp_path, "jdbc.url=jdbc:mariadb://h/d\n"), env={})


def test_ontops_own_jdbc_keys_pass_through_and_navqas_do_not(tmp_path: Path) -> None:
    jar = tmp_path / "drv.jar"
    jar.write_bytes(b"PK")
    db, extra = read_properties(props(tmp_path, (
        "jdbc.url=jdbc:trino://t:8080/hive/web\njdbc.user=u\n"
        "jdbc.driver-artifact=io.trino:trino-jdbc:476\njdbc.driver-jar=drv.jar\n"
        "jdbc.property.SSL=true\njdbc.fetchSize=1000\nontop.inferDefaultDatatype=true\n")),
        env={})
    assert db.driver == "io.trino.jdbc.TrinoDriver"
    assert db.driver_artifact == "io.trino:trino-jdbc:476"
    assert db.driver_jar == jar.resolve()  # relative to the properties file
    assert extra == {"jdbc.property.SSL": "true", "jdbc.fetchSize": "1000",
                     "ontop.inferDefaultDatatype": "true"}


def test_bad_driver_keys_are_named_with_their_line(tmp_path: Path) -> None:
    p = props(tmp_path, "jdbc.url=jdbc:mariadb://h/d\njdbc.user=u\n"
                        "jdbc.driver-artifact=mariadb-3.5\n")
    with pytest.raises(InputError, match="jdbc.driver-artifact") as e:
        read_properties(p, env={})
    assert e.value.line == 3 and e.value.path == p
    p = props(tmp_path, "jdbc.url=jdbc:mariadb://h/d\njdbc.user=u\njdbc.driver-jar=nope.jar\n")
    with pytest.raises(InputError, match="nope.jar not found"):
        read_properties(p, env={})


def test_a_bad_artifact_is_a_one_line_usage_error_of_the_cli(tmp_path: Path) -> None:
    p = props(tmp_path, "jdbc.url=jdbc:mariadb://h/d\njdbc.user=u\n"
                        "jdbc.driver-artifact=not-maven\n")
    proc = subprocess.run([NAVQA, "audit", "-t", str(REPO / "ontologies" / "demo.ttl"),
                           "-m", str(REPO / "mappings" / "demo.obda"), "-p", str(p)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "jdbc.driver-artifact" in proc.stderr and "Traceback" not in proc.stderr


def test_navqa_toml_database_section_sets_the_driver(tmp_path: Path) -> None:
    (tmp_path / "rail.ttl").write_text((REPO / "ontologies" / "demo.ttl").read_text())
    (tmp_path / "rail.obda").write_text((REPO / "mappings" / "demo.obda").read_text())
    props(tmp_path, "jdbc.url=jdbc:mariadb://h/d\njdbc.user=u\n")
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "m.jar").write_bytes(b"PK")
    toml = tmp_path / "navqa.toml"
    toml.write_text('[vkg]\nontology = "rail.ttl"\nmapping = "rail.obda"\n'
                    'properties = "db.properties"\n[database]\n'
                    'driver_artifact = "org.mariadb.jdbc:mariadb-java-client:3.5.5"\n'
                    'driver_jar = "lib/m.jar"\n')
    db = load_project(toml, env={}).source.database
    assert db is not None
    assert db.driver_artifact == "org.mariadb.jdbc:mariadb-java-client:3.5.5"
    assert db.driver_jar == (tmp_path / "lib" / "m.jar").resolve()
    toml.write_text(toml.read_text().replace(":3.5.5", ""))
    with pytest.raises(InputError, match="database.driver_artifact"):
        load_project(toml, env={})


def test_sessions_are_read_only_and_bounded_on_every_known_database() -> None:
    assert read_only_jdbc_url("jdbc:mariadb://h:3306/d?useSSL=false", 30) == \
        "jdbc:mariadb://h:3306/d?useSSL=false&sessionVariables=tx_read_only=1," \
        "max_statement_time=30"
    assert read_only_jdbc_url("jdbc:mysql://h/d?sessionVariables=sql_mode=ANSI", 2.5) == \
        "jdbc:mysql://h/d?sessionVariables=sql_mode=ANSI,transaction_read_only=1," \
        "max_execution_time=2500"
    assert read_only_jdbc_url("jdbc:h2:/data/x", 5) == "jdbc:h2:/data/x;ACCESS_MODE_DATA=r"
    assert read_only_properties("jdbc:duckdb:/x.duckdb") == \
        {"jdbc.property.duckdb.read_only": "true"}
    assert read_only_properties("jdbc:mariadb://h/d") == {}
    assert "default_transaction_read_only%3Don" in read_only_jdbc_url("jdbc:postgresql://h/d", 1)


def test_the_committed_lock_covers_the_default_drivers_navqa_tests() -> None:
    locked = json.loads(JDBC_LOCK_PATH.read_text())["drivers"]
    defaults = {k.prefix: k.artifact for k in KNOWN_DATABASES}
    for prefix in ("jdbc:mariadb:", "jdbc:duckdb:", "jdbc:h2:"):
        assert defaults[prefix] in locked, prefix


def test_artifact_coordinates() -> None:
    a = Artifact.parse("org.duckdb:duckdb_jdbc:1.4.4.0")
    assert a.home(Path("/c")) == Path("/c/jdbc/org.duckdb/duckdb_jdbc/1.4.4.0")
    for bad in ("duckdb", "a:b", "a:b:c:d", "a::c", "a:b c:1"):
        with pytest.raises(InputError):
            Artifact.parse(bad)


def test_postgresql_needs_no_extra_jar_and_a_given_jar_wins(tmp_path: Path) -> None:
    assert driver_jars(tmp_path, DatabaseAccess(jdbc_url="jdbc:postgresql://h/d")) == ()
    jar = tmp_path / "x.jar"
    jar.write_bytes(b"PK")
    db = DatabaseAccess(jdbc_url="jdbc:mariadb://h/d", driver="org.mariadb.jdbc.Driver",
                        driver_jar=jar, driver_artifact="g:a:1")
    assert driver_jars(tmp_path, db) == (jar,)
    # an unknown database without artifact: nothing to add (Ontop's error names the fix)
    assert driver_jars(tmp_path, DatabaseAccess(jdbc_url="jdbc:foo:x", driver="x.Y")) == ()


@pytest.mark.slow
def test_a_resolved_driver_must_match_the_lock(tmp_path: Path) -> None:
    coords = "com.h2database:h2:2.3.232"  # in the committed lock; Maven resolves it
    lock = tmp_path / "lock.json"
    lock.write_text(json.dumps({"drivers": {coords: {"h2-2.3.232.jar": "0" * 64}}}))
    with pytest.raises(SetupError, match="do not match"):
        resolve_driver(tmp_path / "cache", coords, lock_path=lock)
    jars = resolve_driver(tmp_path / "cache", coords)  # the committed lock verifies
    assert [j.name for j in jars] == ["h2-2.3.232.jar"]
    assert jars[0].parent == tmp_path / "cache/jdbc/com.h2database/h2/2.3.232/jars"


@pytest.mark.slow
def test_a_driver_outside_the_lock_is_recorded_in_the_cache_and_verified(
        tmp_path: Path) -> None:
    coords = "com.h2database:h2:2.3.232"
    empty = tmp_path / "empty.json"
    empty.write_text('{"drivers": {}}')
    cache = tmp_path / "cache"
    (jar,) = resolve_driver(cache, coords, lock_path=empty)
    record = json.loads((cache / "jdbc" / "lock.json").read_text())["drivers"]
    assert record == {coords: {jar.name: sha256_file(jar)}}
    # the record is trusted next time; a jar that no longer matches it is an error
    jar.write_bytes(b"tampered")
    (cache / "jdbc" / "lock.json").write_text(json.dumps(
        {"drivers": {coords: {jar.name: "1" * 64}}}))
    with pytest.raises(SetupError, match="do not match"):
        resolve_driver(cache, coords, lock_path=empty)


def test_a_driver_not_on_the_class_path_names_its_coordinates(tmp_path: Path) -> None:
    src = user_source(VkgFlags(ontology=REPO / "ontologies" / "demo.ttl",
                               mapping=REPO / "mappings" / "demo.obda",
                               properties=props(tmp_path, "jdbc.url=jdbc:mysql://h/d\n"
                                                          "jdbc.user=u\n")), env={})
    e = OntopStartupError("Ontop exited", log_excerpt="navqa-ontop: CAUSE: "
                          "ClassNotFoundException: com.mysql.cj.jdbc.Driver")
    out = explain_user_startup(e, src)
    assert "com.mysql.cj.jdbc.Driver" in str(out)
    assert out.hint is not None
    assert "jdbc.driver-artifact=com.mysql:mysql-connector-j:9.4.0" in out.hint
