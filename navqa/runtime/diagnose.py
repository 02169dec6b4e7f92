"""Say why Ontop could not start on a user's VKG, in the user's terms.

Ontop's log names Java exceptions; a maintainer needs to know which key, which driver,
which mapping id and line, which import. :func:`explain_user_startup` reads the log
excerpt of an :class:`~navqa.errors.OntopStartupError` and returns a new one whose first
line says that, with a hint, quoting the JDBC message once. The password never appears:
it is redacted from everything quoted.
"""

from __future__ import annotations

import re

from navqa.config import redact
from navqa.errors import InputError, NavqaError, OntopStartupError
from navqa.model.vkg_source import VkgSource

#: Maven coordinates of the JDBC drivers people use with Ontop, by driver class.
DRIVER_ARTIFACTS = {
    "org.postgresql.Driver": "org.postgresql:postgresql",
    "com.mysql.cj.jdbc.Driver": "com.mysql:mysql-connector-j",
    "com.mysql.jdbc.Driver": "com.mysql:mysql-connector-j",
    "org.mariadb.jdbc.Driver": "org.mariadb.jdbc:mariadb-java-client",
    "com.microsoft.sqlserver.jdbc.SQLServerDriver": "com.microsoft.sqlserver:mssql-jdbc",
    "oracle.jdbc.OracleDriver": "com.oracle.database.jdbc:ojdbc11",
    "oracle.jdbc.driver.OracleDriver": "com.oracle.database.jdbc:ojdbc11",
    "org.h2.Driver": "com.h2database:h2",
    "com.ibm.db2.jcc.DB2Driver": "com.ibm.db2:jcc",
    "io.trino.jdbc.TrinoDriver": "io.trino:trino-jdbc",
    "org.duckdb.DuckDBDriver": "org.duckdb:duckdb_jdbc",
    "org.sqlite.JDBC": "org.xerial:sqlite-jdbc",
}

_JDBC_FAILURE = ("connection refused", "connection attempt failed", "password authentication",
                 "no pg_hba.conf", "unknownhost", "unknown host", "could not connect",
                 "communications link failure", "timed out", "database \"")


def _first_cause(excerpt: str, needles: tuple[str, ...]) -> str | None:
    for line in excerpt.splitlines():
        low = line.lower()
        if any(n in low for n in needles):
            text = re.sub(r"^\s*(navqa-ontop: )?(CAUSE|ERROR): ", "", line).strip()
            return re.sub(r"^[A-Za-z]+(Exception|Error): ", "", text)
    return None


def _triples_map_id(excerpt: str) -> str | None:
    """The mapping id Ontop names in ``Problem location: … triplesMap [id: ID …``."""
    m = re.search(r"triplesMap\s*\[id: ([^\s\]]+)", excerpt)
    return m.group(1) if m is not None else None


def _mapping_for(source: VkgSource, name: str, mapping_id: str | None = None) -> str | None:
    """``mapping id (file:line)`` of the assertion ``mapping_id`` (Ontop names it), else of
    the first assertion whose SQL names ``name``."""
    from navqa.errors import MappingParseError
    from navqa.offline.artifacts import parse_mappings

    try:
        ms = parse_mappings(source.mapping)
    except MappingParseError:
        return None
    bare = name.strip('"').split(".")[-1].strip('"').lower()
    for a in sorted(ms, key=lambda a: a.id != mapping_id):
        names = {t.split(".")[-1].strip('"').lower() for t in a.tables}
        names |= {c.split(".")[-1].strip('"').lower() for c in a.columns}
        if a.id == mapping_id or bare in names or \
                re.search(rf"\b{re.escape(bare)}\b", a.source, re.IGNORECASE):
            where = f"{source.mapping}"
            if a.location is not None and a.location.line is not None:
                where += f":{a.location.line}"
            return f"mapping {a.id} ({where})"
    return None


def explain_user_startup(e: OntopStartupError, source: VkgSource) -> NavqaError:
    """``e`` restated for a user VKG (``e`` itself when nothing more specific is known).

    A fault of the user's files (a driver not on the class path, a mapping naming a missing
    table or column, an import that cannot be resolved) is an :class:`InputError` (exit
    2); an unreachable database stays an :class:`OntopStartupError` (exit 1).
    """
    secret = [source.database.password.get_secret_value()] \
        if source.database is not None and source.database.password is not None else []
    excerpt = redact(e.log_excerpt, secret)
    low = excerpt.lower()
    db = source.database
    props = f" in {source.properties_file}" if source.properties_file else ""

    def make(message: str, hint: str) -> OntopStartupError:
        return OntopStartupError(redact(message, secret), log_path=e.log_path, hint=hint)

    def bad_input(message: str, hint: str) -> InputError:
        log = f"; Ontop's log: {e.log_path}" if e.log_path is not None else ""
        return InputError(redact(message, secret), hint=redact(hint + log, secret))

    # Ontop 5.1.2: 'MetadataExtractionException: java.sql.SQLException: Cannot load the
    # driver: com.mysql.jdbc.Driver'
    if db is not None and ("classnotfoundexception" in low or "no suitable driver" in low
                           or "cannot load the driver" in low
                           or "driver class" in low and "not found" in low):
        from navqa.runtime.jdbc_drivers import artifact_for_driver

        coords = artifact_for_driver(db.driver) or DRIVER_ARTIFACTS.get(db.driver)
        if coords is not None and coords.count(":") == 1:  # the version navqa knows, if any
            from navqa.runtime.jdbc_drivers import KNOWN_DATABASES

            coords = next((k.artifact for k in KNOWN_DATABASES
                           if (k.artifact or "").startswith(coords + ":")),
                          coords + ":VERSION")
        add = f"add jdbc.driver-artifact={coords}{props} (navqa resolves it from Maven " \
              "Central)" if coords else "add jdbc.driver-artifact=group:artifact:version " \
              f"(the Maven coordinates of your database's JDBC driver){props}"
        where = f"the jar {db.driver_jar}" if db.driver_jar is not None else \
            f"the artifact {db.driver_artifact}" if db.driver_artifact is not None else None
        if where is not None:
            add = f"{where} does not contain {db.driver}: fix jdbc.driver or {add}"
        return bad_input(f"the JDBC driver {db.driver} (jdbc.driver{props}) is not on Ontop's "
                    f"class path", f"{add}, or jdbc.driver-jar=/path/driver.jar; or check "
                    "jdbc.driver")
    # Ontop 5.1.2: 'Cannot find relation "public".members (available choices: …) …
    # Problem location: source query of triplesMap [id: member …'
    m = re.search(r"(?:relation|table|view) \"?([\w.\"]+?)\"? (?:does not exist|not found)",
                  excerpt, re.IGNORECASE) or \
        re.search(r"cannot find relation (?:id:? )?(\"?[\w\"]+\"?(?:\.\"?[\w\"]+\"?)*)", excerpt,
                  re.IGNORECASE)
    if m is not None:
        table = m.group(1).replace('"', "")
        where = _mapping_for(source, table, _triples_map_id(excerpt)) or \
            f"a mapping of {source.mapping}"
        return bad_input(f"{where} reads the table {table}, which the database does not have",
                    "fix the mapping's SQL, or check jdbc.url points at the right database "
                    "and schema")
    # Ontop 5.1.2: 'Unable to find attribute town (available attributes are …) … [id: branch'
    m = re.search(r"column \"?([\w.\"]+?)\"? (?:does not exist|not found)", excerpt,
                  re.IGNORECASE) or \
        re.search(r"unable to find attribute \"?([\w.]+)\"?", excerpt, re.IGNORECASE)
    if m is not None:
        col = m.group(1).strip('"')
        where = _mapping_for(source, col, _triples_map_id(excerpt)) or \
            f"a mapping of {source.mapping}"
        return bad_input(f"{where} reads the column {col}, which the database does not have",
                    "fix the column name in the mapping's SQL")
    # Ontop 5.1.2: 'UnloadableImportException: Could not load imported ontology: <IRI> Cause: …'
    m = re.search(r"(?:could not load imported ontology|cannot resolve import|"
                  r"imported ontology):?\s*<?([^\s<>,]+)>?", excerpt, re.IGNORECASE)
    if m is not None or "unloadableimportexception" in low:
        iri = m.group(1) if m is not None else "an owl:imports IRI"
        return bad_input(f"the ontology {source.ontology.name} imports {iri}, which cannot be "
                    "resolved", "give an XML catalog mapping it to a local file with "
                    "-x/--xml-catalog FILE")
    if db is not None and any(k in low for k in _JDBC_FAILURE):
        quoted = _first_cause(excerpt, _JDBC_FAILURE) or "connection failed"
        return make(f"cannot connect to the database {db.jdbc_url} (jdbc.url{props}): "
                    f"{quoted}", "check that the database is running and reachable, and "
                    f"jdbc.url, jdbc.user and jdbc.password{props} (or $ONTOP_DB_PASSWORD)")
    return e
