"""Named SQL rewrites applied while loading a dataset (the files on disk stay untouched).

A manifest's load step names a transform; it receives the SQL text (decoded from the
file) and the folder holding the dataset's files, and returns the SQL to run.
Register new ones with :func:`register`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from navqa.errors import DatasetError
from navqa.runtime import load_fixes_atkis

Transform = Callable[[str, Path], str]
_REGISTRY: dict[str, Transform] = {}


def register(name: str) -> Callable[[Transform], Transform]:
    """Decorator registering a transform under ``name``."""

    def deco(fn: Transform) -> Transform:
        _REGISTRY[name] = fn
        return fn

    return deco


def get_transform(name: str) -> Transform:
    """The transform called ``name``.

    Raises:
        DatasetError: when no transform has that name.
    """
    try:
        return _REGISTRY[name]
    except KeyError as e:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        raise DatasetError(f"unknown load transform {name!r} (known: {known})") from e


_REGISTRY.update(load_fixes_atkis.TRANSFORMS)
