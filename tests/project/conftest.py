"""Fixtures of the own-VKG tests: the user's PostgreSQL and the user's VKG folder."""

from __future__ import annotations

import os
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from navqa.runtime.postgres import free_port, postgres_bindir

from .library_vkg import HERE, UserDb, as_postgres, tempfile_dir


@pytest.fixture(scope="module")
def user_db(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UserDb]:
    """The user's PostgreSQL: started and loaded by this test, never by navqa."""
    base = Path(tempfile_dir()) / f"navqa-userdb-{secrets.token_hex(4)}"
    base.mkdir(mode=0o700)
    kw = as_postgres()
    if kw:
        os.chown(base, kw["user"], kw["group"])  # type: ignore[arg-type]
    password = secrets.token_urlsafe(16)
    pwfile = base / "pw"
    pwfile.write_text(password)
    if kw:
        os.chown(pwfile, kw["user"], kw["group"])  # type: ignore[arg-type]
    bindir = postgres_bindir()
    data = base / "data"
    subprocess.run([str(bindir / "initdb"), "-D", str(data), "-U", "librarian", "--pwfile",
                    str(pwfile), "-A", "scram-sha-256", "--no-sync"], check=True,
                   capture_output=True, cwd="/", **kw)  # type: ignore[call-overload]
    port = free_port()
    subprocess.run([str(bindir / "pg_ctl"), "-D", str(data), "-o",
                    f"-p {port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=''",
                    "-l", str(base / "log"), "-w", "start"], check=True, capture_output=True,
                   cwd="/", **kw)  # type: ignore[call-overload]
    try:
        db = UserDb("127.0.0.1", port, "library", "librarian", password)
        with psycopg.connect(host=db.host, port=port, dbname="postgres", user=db.user,
                             password=password, autocommit=True) as c:
            c.execute("CREATE DATABASE library")
        with db.connect() as c:
            c.execute((HERE / "library.sql").read_text())
        yield db
    finally:
        subprocess.run([str(bindir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"],
                       capture_output=True, cwd="/", **kw)  # type: ignore[call-overload]
        shutil.rmtree(base, ignore_errors=True)



@pytest.fixture(scope="module")
def vkg_dir(tmp_path_factory: pytest.TempPathFactory, user_db: UserDb) -> Path:
    """The user's VKG folder: ontology, mapping and an Ontop .properties file."""
    d = tmp_path_factory.mktemp("library-vkg")
    shutil.copy(HERE / "library.ttl", d)
    shutil.copy(HERE / "library.obda", d)
    (d / "library.properties").write_text(
        f"jdbc.url=jdbc:postgresql://{user_db.host}:{user_db.port}/{user_db.dbname}\n"
        f"jdbc.user={user_db.user}\njdbc.password={user_db.password}\n"
        "jdbc.driver=org.postgresql.Driver\n")
    (d / "q.rq").write_text("PREFIX : <http://example.org/library#>\n"
                            "SELECT ?b ?m WHERE { ?b :recommendedBy ?m }\n")
    return d
