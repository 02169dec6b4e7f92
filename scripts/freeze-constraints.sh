#!/usr/bin/env bash
# Rewrite requirements/constraints.txt from the current .venv (after `pip install -e '.[dev,docker,serve,st]'`,
# as `make test` installs it: the pins cover the optional `st` extra too).
set -euo pipefail
cd "$(dirname "$0")/.."
{
  echo "# Pinned versions of every Python package navqa installs (Linux x86_64, CPython 3.11)."
  echo "# Regenerate after changing dependencies: scripts/freeze-constraints.sh"
  .venv/bin/pip freeze --exclude-editable | grep -v -i '^navqa'
} > requirements/constraints.txt
echo "wrote requirements/constraints.txt ($(grep -vc '^#' requirements/constraints.txt) packages)"
