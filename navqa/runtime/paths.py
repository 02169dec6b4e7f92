"""Where navqa finds its repository data and keeps its caches."""

from __future__ import annotations

import os
from pathlib import Path

from navqa.errors import ConfigError

_PACKAGE_DIR = Path(__file__).resolve().parents[1]


def repo_root() -> Path:
    """The checkout that holds ``datasets/``, ``ontologies/`` and ``mappings/``.

    ``$NAVQA_HOME`` wins; otherwise the parent of the installed ``navqa`` package
    (an editable install, which is how the README installs navqa).

    Raises:
        ConfigError: when no such folder can be found.
    """
    env = os.environ.get("NAVQA_HOME")
    root = Path(env).expanduser() if env else _PACKAGE_DIR.parent
    if not (root / "datasets").is_dir():
        raise ConfigError(
            f"cannot find navqa's datasets/ folder under {root}",
            hint="run navqa from a checkout installed with `pip install -e .`, or set NAVQA_HOME",
        )
    return root


def datasets_dir() -> Path:
    """The folder holding one sub-folder (with a ``manifest.toml``) per dataset."""
    env = os.environ.get("NAVQA_DATASETS_DIR")
    return Path(env).expanduser() if env else repo_root() / "datasets"


def package_file(*parts: str) -> Path:
    """A file shipped inside the ``navqa`` package."""
    return _PACKAGE_DIR.joinpath(*parts)
