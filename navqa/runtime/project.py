"""Resolve which VKG a command works on, and read or write a ``navqa.toml`` project file.

:func:`resolve_source` turns what the user gave into one
:class:`~navqa.model.vkg_source.VkgSource`, in this order:

1. explicit Ontop-style files (``-t/--ontology``, ``-m/--mapping``, ``-p/--properties``,
   ``-x/--xml-catalog``, ``-l/--lenses``) or ``--endpoint URL`` (with ``-t/-m``);
2. ``--vkg NAME``: a bundled dataset manifest (a *bundled project*);
3. ``./navqa.toml``, searched upward from the working directory;
4. the bundled ``demo``.

An Ontop ``.properties`` file is read the way Ontop reads it: ``jdbc.url``,
``jdbc.user``, ``jdbc.password`` (or ``$ONTOP_DB_PASSWORD``) and ``jdbc.driver`` become a
:class:`~navqa.model.vkg_source.DatabaseAccess`; every other key (``ontop.*`` …) is passed
through to Ontop unchanged. The password is kept as a ``SecretStr`` and never written to
``navqa.toml``.
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, quote, unquote, urlencode

from pydantic import BaseModel, ConfigDict, SecretStr, ValidationError

from navqa.config import NavqaConfig
from navqa.errors import ConfigError, InputError
from navqa.model.vkg_source import DatabaseAccess, VkgKind, VkgSource
from navqa.runtime.jdbc_drivers import KNOWN_DATABASES, Artifact, known_database

PROJECT_FILE = "navqa.toml"
DEFAULT_VKG = "demo"
PASSWORD_ENV = "ONTOP_DB_PASSWORD"

#: JDBC driver classes navqa knows by URL prefix (others need ``jdbc.driver``).
KNOWN_DRIVERS = {k.prefix: k.driver for k in KNOWN_DATABASES}
#: navqa's own keys of a ``.properties`` file (never passed to Ontop).
DRIVER_ARTIFACT_KEY = "jdbc.driver-artifact"
DRIVER_JAR_KEY = "jdbc.driver-jar"
#: The ``jdbc.*`` keys navqa reads itself; every other ``jdbc.*`` key (``jdbc.property.*``,
#: ``jdbc.fetchSize``, ``jdbc.pool.*``) goes to Ontop unchanged.
_OWN_JDBC_KEYS = ("jdbc.url", "jdbc.user", "jdbc.password", "jdbc.driver", DRIVER_ARTIFACT_KEY,
                  DRIVER_JAR_KEY)


@dataclass(frozen=True)
class VkgFlags:
    """What the user gave on the command line (all optional).

    Attributes:
        vkg: ``--vkg NAME``.
        ontology: ``-t/--ontology``.
        mapping: ``-m/--mapping``.
        properties: ``-p/--properties``.
        catalog: ``-x/--xml-catalog``.
        lenses: ``-l/--lenses``.
        endpoint: ``--endpoint URL``.
        mapping_choice: ``--mapping-format obda|r2rml`` for bundled VKGs.
    """

    vkg: str | None = None
    ontology: Path | None = None
    mapping: Path | None = None
    properties: Path | None = None
    catalog: Path | None = None
    lenses: Path | None = None
    endpoint: str | None = None
    mapping_choice: str | None = None

    @property
    def explicit(self) -> bool:
        return any(v is not None for v in (self.ontology, self.mapping, self.properties,
                                           self.catalog, self.lenses))


@dataclass(frozen=True)
class Project:
    """A resolved VKG plus the configuration sections its ``navqa.toml`` sets.

    Attributes:
        source: The VKG.
        overrides: Config section → values (``llm``, ``pipeline``) from ``navqa.toml``.
    """

    source: VkgSource
    overrides: dict[str, dict[str, Any]] = field(default_factory=dict)

    def apply(self, config: NavqaConfig) -> NavqaConfig:
        """``config`` with the project's sections applied."""
        return config.with_overrides(**self.overrides) if self.overrides else config


# -- .properties ---------------------------------------------------------------------------


def read_properties_file(path: Path) -> dict[str, tuple[str, int]]:
    """Key → (value, line) of a Java ``.properties`` file (``=``/``:`` separators, ``#``/``!``
    comments, backslash continuations and escapes).

    Raises:
        InputError: the file is missing or unreadable.
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise InputError("properties file not found", path=path) from e
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read the properties file: {e}", path=path) from e
    out: dict[str, tuple[str, int]] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        start = i + 1
        line = lines[i].lstrip()
        i += 1
        if not line or line[0] in "#!":
            continue
        while _continued(line) and i < len(lines):
            line = line[:-1] + lines[i].lstrip()
            i += 1
        m = re.match(r"((?:\\.|[^=:\s\\])+)\s*[=:\s]\s*(.*)$", line)
        if m is None:
            out[_unescape(line.strip())] = ("", start)
            continue
        out[_unescape(m.group(1))] = (_unescape(m.group(2)), start)
    return out


def _continued(line: str) -> bool:
    n = len(line) - len(line.rstrip("\\"))
    return n % 2 == 1


def _unescape(s: str) -> str:
    def sub(m: re.Match[str]) -> str:
        c = m.group(1)
        if c.startswith("u"):
            return chr(int(c[1:], 16))
        return {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}.get(c, c)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", sub, s)


def read_properties(
    path: Path, env: Mapping[str, str] | None = None
) -> tuple[DatabaseAccess, dict[str, str]]:
    """The database access and the pass-through Ontop settings of a ``.properties`` file.

    Args:
        path: The file.
        env: Environment for ``ONTOP_DB_PASSWORD`` (default ``os.environ``).

    Raises:
        InputError: a required key is missing (named, with the file), or the driver of a
            non-PostgreSQL URL is not given.
    """
    env = os.environ if env is None else env
    props = read_properties_file(path)
    url = props.get("jdbc.url", ("", 0))[0].strip()
    if not url:
        raise InputError("missing key jdbc.url (the JDBC URL of your database, e.g. "
                         "jdbc:postgresql://localhost:5432/mydb)", path=path)
    known = known_database(url)
    if "jdbc.user" not in props and not (known is not None and known.file_database):
        raise InputError("missing key jdbc.user (the database user Ontop connects as)",
                         path=path)
    driver = props.get("jdbc.driver", ("", 0))[0].strip()
    if not driver:
        driver = next((d for p, d in KNOWN_DRIVERS.items() if url.startswith(p)), "")
        if not driver:
            kind = url.split("//")[0]
            raise InputError(f"missing key jdbc.driver (no default driver for {kind})",
                             path=path, line=props["jdbc.url"][1])
    password: str | None = props["jdbc.password"][0] if "jdbc.password" in props else None
    if password is None and env.get(PASSWORD_ENV) is not None:
        password = env[PASSWORD_ENV]
    artifact = props.get(DRIVER_ARTIFACT_KEY, ("", 0))[0].strip() or None
    if artifact is not None:
        try:
            Artifact.parse(artifact)
        except InputError as e:
            raise InputError(f"{DRIVER_ARTIFACT_KEY}: {e}", path=path,
                             line=props[DRIVER_ARTIFACT_KEY][1]) from e
    jar_text = props.get(DRIVER_JAR_KEY, ("", 0))[0].strip()
    jar = (Path(path).parent / jar_text).resolve() if jar_text else None
    if jar is not None and not jar.is_file():
        raise InputError(f"{DRIVER_JAR_KEY}: JDBC driver jar {jar} not found", path=path,
                         line=props[DRIVER_JAR_KEY][1])
    db = DatabaseAccess(jdbc_url=url, user=props.get("jdbc.user", ("", 0))[0] or None,
                        driver=driver, driver_artifact=artifact, driver_jar=jar,
                        password=SecretStr(password) if password is not None else None)
    extra = {k: v for k, (v, _line) in props.items() if k not in _OWN_JDBC_KEYS}
    return db, extra


# -- the read-only connection --------------------------------------------------------------


def read_only_jdbc_url(url: str, statement_timeout_s: float) -> str:
    """``url`` with sessions made read-only and given a statement timeout, where the
    database's driver can say so in the URL.

    PostgreSQL: the driver's ``options`` parameter (``-c default_transaction_read_only=on -c
    statement_timeout=…``), merged with any ``options`` the user already set. MariaDB and
    MySQL: ``sessionVariables`` (``tx_read_only=1,max_statement_time=…`` for MariaDB,
    ``transaction_read_only=1,max_execution_time=…`` for MySQL). H2: ``ACCESS_MODE_DATA=r``.
    Other URLs are returned unchanged (DuckDB: see :func:`read_only_properties`).
    """
    if url.startswith(("jdbc:mariadb:", "jdbc:mysql:")):
        if url.startswith("jdbc:mariadb:"):
            ours = f"tx_read_only=1,max_statement_time={max(0.001, statement_timeout_s):g}"
        else:
            ours = f"transaction_read_only=1,max_execution_time=" \
                   f"{max(1, int(statement_timeout_s * 1000))}"
        base, _, query = url.partition("?")
        params = parse_qsl(query, keep_blank_values=True)
        given = [v for k, v in params if k == "sessionVariables"]
        rest = [(k, v) for k, v in params if k != "sessionVariables"]
        variables = ",".join([*given, ours])  # raw: the drivers do not URL-decode it
        head = urlencode(rest, quote_via=quote)
        return f"{base}?{head + '&' if head else ''}sessionVariables={variables}"
    if url.startswith("jdbc:h2:"):
        return url if "access_mode_data" in url.lower() else f"{url};ACCESS_MODE_DATA=r"
    if not url.startswith("jdbc:postgresql:"):
        return url
    base, _, query = url.partition("?")
    params = parse_qsl(query, keep_blank_values=True)
    ms = max(1, int(statement_timeout_s * 1000))
    ours = f"-c default_transaction_read_only=on -c statement_timeout={ms}"
    merged = []
    seen = False
    for k, v in params:
        if k == "options":
            v = f"{unquote(v)} {ours}".strip()
            seen = True
        merged.append((k, v))
    if not seen:
        merged.append(("options", ours))
    return f"{base}?{urlencode(merged, quote_via=quote)}"


def read_only_properties(url: str) -> dict[str, str]:
    """Ontop properties that open the database read-only where the URL cannot say so.

    DuckDB: ``jdbc.property.duckdb.read_only=true`` (Ontop passes ``jdbc.property.*`` to
    the driver).
    """
    if url.startswith("jdbc:duckdb:"):
        return {"jdbc.property.duckdb.read_only": "true"}
    return {}


def libpq_conninfo(db: DatabaseAccess, statement_timeout_s: float) -> dict[str, Any]:
    """psycopg connection keywords for a PostgreSQL JDBC URL, read-only with a timeout.

    Raises:
        ConfigError: the URL is not a PostgreSQL one navqa can read.
    """
    m = re.match(r"jdbc:postgresql://([^/:?]*)(?::(\d+))?/([^?]*)(?:\?(.*))?$", db.jdbc_url)
    if m is None:
        raise ConfigError(f"navqa reads the schema of PostgreSQL only; cannot use {db.jdbc_url}")
    params = dict(parse_qsl(m.group(4) or ""))
    ms = max(1, int(statement_timeout_s * 1000))
    opts = f"{params.get('options', '')} -c default_transaction_read_only=on " \
           f"-c statement_timeout={ms}".strip()
    out: dict[str, Any] = {"host": m.group(1) or "localhost", "port": int(m.group(2) or 5432),
                           "dbname": m.group(3), "options": opts, "connect_timeout": 10}
    if db.user:
        out["user"] = db.user
    if db.password is not None:
        out["password"] = db.password.get_secret_value()
    return out


# -- navqa.toml ----------------------------------------------------------------------------


class _ProjectVkg(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str | None = None
    ontology: str
    mapping: str
    properties: str | None = None
    endpoint: str | None = None
    catalog: str | None = None
    lenses: str | None = None
    questions: list[str] = []


class _ProjectDatabase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    driver_artifact: str | None = None
    driver_jar: str | None = None


class _ProjectFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    vkg: _ProjectVkg
    database: _ProjectDatabase = _ProjectDatabase()
    ontop: dict[str, str] = {}
    llm: dict[str, Any] = {}
    pipeline: dict[str, Any] = {}


def find_project(start: Path | None = None) -> Path | None:
    """The nearest ``navqa.toml`` in ``start`` (default: the cwd) or a parent folder."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        p = d / PROJECT_FILE
        if p.is_file():
            return p
    return None


def load_project(path: Path, env: Mapping[str, str] | None = None) -> Project:
    """Read a ``navqa.toml``; relative paths are relative to its folder.

    Raises:
        InputError: not TOML, an unknown or missing key, or a file it names is missing.
    """
    path = Path(path).resolve()
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read the project file: {e}", path=path) from e
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"not valid TOML: {e}", path=path) from e
    try:
        pf = _ProjectFile.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise InputError(f"{err['msg'].lower()}: {where}", path=path) from e
    root = path.parent

    def rel(p: str | None) -> Path | None:
        return None if p is None else (root / p).resolve()

    v = pf.vkg
    flags = VkgFlags(ontology=rel(v.ontology), mapping=rel(v.mapping),
                     properties=rel(v.properties), catalog=rel(v.catalog), lenses=rel(v.lenses),
                     endpoint=v.endpoint)
    source = user_source(flags, name=v.name or root.name, env=env,
                         questions=tuple(root / q for q in v.questions), project_file=path,
                         extra_ontop=pf.ontop)
    source = _with_driver(source, pf.database, rel(pf.database.driver_jar), path)
    overrides = {k: dict(val) for k, val in (("llm", pf.llm), ("pipeline", pf.pipeline)) if val}
    return Project(source=source, overrides=overrides)


def _with_driver(source: VkgSource, section: _ProjectDatabase, jar: Path | None,
                 path: Path) -> VkgSource:
    """``source`` with ``navqa.toml``'s ``[database]`` driver settings (they win)."""
    if section.driver_artifact is None and jar is None:
        return source
    if source.database is None:
        raise InputError("[database] driver_artifact/driver_jar need vkg.properties (the "
                         "database Ontop connects to)", path=path)
    if section.driver_artifact is not None:
        try:
            Artifact.parse(section.driver_artifact)
        except InputError as e:
            raise InputError(f"database.driver_artifact: {e}", path=path) from e
    if jar is not None and not jar.is_file():
        raise InputError(f"database.driver_jar: JDBC driver jar {jar} not found", path=path)
    update: dict[str, object] = {}
    if section.driver_artifact is not None:
        update["driver_artifact"] = section.driver_artifact
    if jar is not None:
        update["driver_jar"] = jar
    return source.model_copy(update={"database": source.database.model_copy(update=update)})


def user_source(
    flags: VkgFlags,
    *,
    name: str | None = None,
    env: Mapping[str, str] | None = None,
    questions: tuple[Path, ...] = (),
    project_file: Path | None = None,
    extra_ontop: Mapping[str, str] | None = None,
) -> VkgSource:
    """A user VKG from Ontop-style files (or an endpoint with ``-t/-m``).

    Raises:
        InputError: a file is missing, or the properties file lacks a key.
        ConfigError: neither properties nor endpoint, or both.
    """
    if flags.ontology is None or flags.mapping is None:
        raise ConfigError("a VKG of your own needs -t/--ontology FILE and -m/--mapping FILE "
                          "(navqa reads them offline)")
    for what, p in (("ontology", flags.ontology), ("mapping", flags.mapping),
                    ("XML catalog", flags.catalog), ("lenses", flags.lenses)):
        if p is not None and not Path(p).is_file():
            raise InputError(f"{what} file not found", path=p)
    if flags.endpoint is not None and flags.properties is not None:
        raise ConfigError("give either -p/--properties (navqa starts Ontop on your database) "
                          "or --endpoint URL (your running endpoint), not both")
    ontop: dict[str, str] = {}
    db: DatabaseAccess | None = None
    if flags.properties is not None:
        db, ontop = read_properties(flags.properties, env)
    ontop.update(extra_ontop or {})
    kind = VkgKind.endpoint if flags.endpoint else VkgKind.user
    return VkgSource(
        name=_safe_name(name or Path(flags.ontology).stem),
        kind=kind,
        ontology=Path(flags.ontology).resolve(),
        mapping=Path(flags.mapping).resolve(),
        catalog=Path(flags.catalog).resolve() if flags.catalog else None,
        lenses=Path(flags.lenses).resolve() if flags.lenses else None,
        properties_file=Path(flags.properties).resolve() if flags.properties else None,
        database=db,
        endpoint=flags.endpoint,
        ontop_properties=ontop,
        question_files=questions,
        project_file=project_file,
    )


def _safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "vkg"


def bundled_source(config: NavqaConfig, name: str, mapping: str | None = None) -> VkgSource:
    """The bundled dataset ``name`` as a descriptor (fetching and verifying its files).

    ``mapping`` is the mapping to *serve* (``obda``/``r2rml``); the index is always built
    from the native mapping, as before.

    Raises:
        DatasetError: unknown dataset, missing or corrupt file.
    """
    from navqa.runtime.datasets import fetch_dataset

    ds = fetch_dataset(name, config)
    catalog = ds.path("catalog") if ds.manifest.has("catalog") else None
    return VkgSource(name=name, kind=VkgKind.bundled, ontology=ds.path("ontology"),
                     mapping=ds.path("mapping"), catalog=catalog,
                     ontop_properties=dict(ds.manifest.ontop.properties),
                     mapping_choice=mapping)


def resolve_project(
    config: NavqaConfig,
    flags: VkgFlags,
    *,
    cwd: Path | None = None,
    env: Mapping[str, str] | None = None,
) -> Project:
    """The VKG a command works on (see the module docstring for the order).

    Raises:
        ConfigError: contradictory flags (``--vkg`` with files, ``--endpoint`` alone).
        InputError, DatasetError: see :func:`user_source`, :func:`bundled_source`.
    """
    if flags.vkg is not None and flags.explicit:
        raise ConfigError("--vkg NAME cannot be combined with -t/-m/-p/-x/-l")
    if flags.explicit:
        return Project(user_source(flags, env=env))
    if flags.vkg is not None:
        src = bundled_source(config, flags.vkg, flags.mapping_choice)
        if flags.endpoint is not None:  # the bundled files, served by someone else
            src = src.model_copy(update={"endpoint": flags.endpoint})
        return Project(src)
    found = find_project(cwd)
    if found is not None:
        project = load_project(found, env)
        if flags.endpoint is not None:
            src = project.source.model_copy(update={"endpoint": flags.endpoint,
                                                    "kind": VkgKind.endpoint})
            project = Project(src, project.overrides)
        return project
    if flags.endpoint is not None:
        raise ConfigError("--endpoint URL needs -t/--ontology and -m/--mapping (what navqa "
                          "reads offline), a navqa.toml, or --vkg NAME")
    return Project(bundled_source(config, DEFAULT_VKG, flags.mapping_choice))


# -- navqa init ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Discovered:
    """What ``navqa init`` found in a folder (paths relative to it)."""

    ontology: Path | None = None
    mapping: Path | None = None
    properties: Path | None = None
    catalog: Path | None = None
    lenses: Path | None = None
    questions: tuple[Path, ...] = ()
    notes: tuple[str, ...] = ()


_R2RML = "http://www.w3.org/ns/r2rml#"


def _head(p: Path, n: int = 200_000) -> str:
    try:
        with p.open("r", encoding="utf-8", errors="replace") as f:
            return f.read(n)
    except OSError:
        return ""


def is_native_mapping(path: Path) -> bool:
    """Whether a mapping file is Ontop's native syntax (by suffix, else by content)."""
    return Path(path).suffix.lower() == ".obda" or "[MappingDeclaration]" in _head(Path(path),
                                                                                   20_000)


def discover(folder: Path, skip: tuple[Path, ...] = ()) -> Discovered:
    """Find an Ontop VKG's files in ``folder`` (not recursive).

    Raises:
        ConfigError: several candidates for one role (they are listed; pass the right one
            with its flag).
    """
    folder = Path(folder)
    files = sorted(p for p in folder.iterdir() if p.is_file() and p not in skip)
    ontologies, mappings, props, catalogs, lenses, questions = [], [], [], [], [], []
    for p in files:
        suf = p.suffix.lower()
        if suf == ".obda":
            mappings.append(p)
        elif suf == ".properties":
            props.append(p)
        elif suf == ".xml" and "catalog" in p.name.lower():
            catalogs.append(p)
        elif suf == ".json" and "lens" in p.name.lower():
            lenses.append(p)
        elif suf == ".jsonl":
            questions.append(p)
        elif suf in (".owl", ".ttl", ".rdf", ".owx", ".nt", ".xml"):
            head = _head(p)
            if _R2RML in head or "rr:TriplesMap" in head:
                mappings.append(p)
            elif suf in (".owl", ".owx", ".rdf") or "owl:Ontology" in head or \
                    "http://www.w3.org/2002/07/owl#Ontology" in head or "owl:Class" in head:
                ontologies.append(p)
    props = [p for p in props if "jdbc.url" in _head(p)] or props

    def one(role: str, flag: str, cands: list[Path]) -> Path | None:
        if len(cands) > 1:
            names = ", ".join(c.name for c in cands)
            raise ConfigError(f"{folder}: several {role} files ({names}); choose one with "
                              f"navqa init {flag} FILE")
        return cands[0] if cands else None

    return Discovered(
        ontology=one("ontology", "-t", ontologies),
        mapping=one("mapping", "-m", mappings),
        properties=one("properties", "-p", props),
        catalog=one("XML catalog", "-x", catalogs),
        lenses=one("lenses", "-l", lenses),
        questions=tuple(questions),
    )


def render_project(
    folder: Path,
    *,
    name: str,
    ontology: Path,
    mapping: Path,
    properties: Path | None = None,
    endpoint: str | None = None,
    catalog: Path | None = None,
    lenses: Path | None = None,
    questions: tuple[Path, ...] = (),
) -> str:
    """The text of a ``navqa.toml`` for ``folder`` (paths written relative to it)."""
    folder = Path(folder).resolve()

    def rel(p: Path) -> str:
        p = Path(p).resolve()
        try:
            return str(p.relative_to(folder))
        except ValueError:
            return str(p)

    def q(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'

    lines = ["# navqa project file, written by `navqa init`; see docs/own-vkg.md",
             "[vkg]", f"name = {q(name)}", f"ontology = {q(rel(ontology))}",
             f"mapping = {q(rel(mapping))}"]
    if properties is not None:
        lines.append(f"properties = {q(rel(properties))}   # jdbc.* and ontop.* settings; "
                     f"the password may also come from ${PASSWORD_ENV}")
    if endpoint is not None:
        lines.append(f"endpoint = {q(endpoint)}")
    if catalog is not None:
        lines.append(f"catalog = {q(rel(catalog))}")
    if lenses is not None:
        lines.append(f"lenses = {q(rel(lenses))}")
    lines.append("questions = [" + ", ".join(q(rel(p)) for p in questions) + "]")
    lines += ["", "# [llm]", '# provider = "openai"', '# base_url = "http://localhost:8000/v1"',
              '# model = "Qwen/Qwen3-30B-A3B"', ""]
    return "\n".join(lines)
