#!/usr/bin/env bash
# Set up navqa on a fresh Debian/Ubuntu machine that has Java 17+ and Maven:
#   1. system packages: PostgreSQL server + client (+ PostGIS for ATKIS), a JDK, Maven
#   2. a virtualenv in .venv with navqa and its pinned dependencies (requirements/constraints.txt)
#   3. Ontop from Maven Central, verified against navqa/runtime/ontop-lock.json
# Idempotent: a second run only checks. Needs root or sudo for step 1 when packages are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\033[1;34m[navqa bootstrap]\033[0m %s\n' "$*" >&2; }

# --- 1. system packages --------------------------------------------------------------------
missing=()
command -v psql >/dev/null 2>&1 || missing+=(postgresql-client)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null 2>&1 || missing+=(postgresql)
command -v mvn >/dev/null 2>&1 || missing+=(maven)
command -v javac >/dev/null 2>&1 || missing+=(openjdk-17-jdk-headless)
if [ "${NAVQA_SKIP_POSTGIS:-0}" != 1 ]; then
  pgver=$(ls /usr/lib/postgresql 2>/dev/null | sort -n | tail -1 || true)
  if [ -n "$pgver" ] && [ ! -f "/usr/share/postgresql/$pgver/extension/postgis.control" ]; then
    missing+=("postgresql-$pgver-postgis-3")
  fi
fi
if [ ${#missing[@]} -gt 0 ]; then
  log "installing system packages: ${missing[*]}"
  if [ "$(id -u)" = 0 ]; then SUDO=""; elif command -v sudo >/dev/null; then SUDO="sudo"; else
    log "need root or sudo to install: ${missing[*]}"; exit 1; fi
  export DEBIAN_FRONTEND=noninteractive
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  # PostGIS only matches the server version once postgresql itself is installed.
  pgver=$(ls /usr/lib/postgresql | sort -n | tail -1)
  if [ "${NAVQA_SKIP_POSTGIS:-0}" != 1 ] && [ ! -f "/usr/share/postgresql/$pgver/extension/postgis.control" ]; then
    $SUDO apt-get install -y -qq --no-install-recommends "postgresql-$pgver-postgis-3" >/dev/null
  fi
fi

# --- 2. Python environment -----------------------------------------------------------------
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  log "creating .venv with $($PY --version)"
  $PY -m venv .venv
fi
stamp=.venv/.navqa-install-stamp
want=$(cat pyproject.toml requirements/constraints.txt | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  log "installing navqa and its pinned dependencies (torch is large: a few minutes)"
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -c requirements/constraints.txt -e '.[dev,docker]'
  echo "$want" > "$stamp"
fi

# --- 3. Ontop ------------------------------------------------------------------------------
log "checking Ontop (first run resolves ~30 MB of jars from Maven Central)"
.venv/bin/navqa setup >&2
log "ready"
