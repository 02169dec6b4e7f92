"""Checks of what the user typed, run before anything heavy starts.

Each check is cheap (no model, no index, no service) and raises
:class:`typer.BadParameter` — a usage error, exit code 2 — or an
:class:`~navqa.errors.InputError` naming the input, so a mistake costs a fraction of a
second instead of loading an embedding model or starting Ontop first.
"""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from navqa.errors import InputError

#: File suffixes that make an argument a file name rather than query text.
QUERY_FILE_SUFFIXES = (".rq", ".sparql", ".txt", ".jsonl", ".json")


def vkg_name(name: str, param_hint: str = "--vkg") -> str:
    """``name`` when a dataset manifest of that name exists; a usage error otherwise."""
    from navqa.runtime.datasets import datasets_dir, list_manifests

    if not name or "/" in name or "\\" in name or name.startswith(".") or \
            not (datasets_dir() / name / "manifest.toml").is_file():
        known = ", ".join(m.name for m in list_manifests()) or "none"
        raise typer.BadParameter(f"unknown dataset {name!r}; known datasets: {known}",
                                 param_hint=param_hint)
    return name


def read_text_file(path: Path, *, what: str = "file") -> str:
    """The UTF-8 text of ``path``; an :class:`InputError` naming it and the first bad byte."""
    try:
        data = path.read_bytes()
    except IsADirectoryError as e:
        raise InputError(f"{what} is a directory", path=path) from e
    except OSError as e:
        raise InputError(f"cannot read {what}: {e.strerror or e}", path=path) from e
    return decode_utf8(data, source=path)


def decode_utf8(data: bytes, *, source: Path | str) -> str:
    """``data`` decoded as UTF-8; an :class:`InputError` with the byte offset otherwise."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise InputError(f"not UTF-8 text: byte 0x{data[e.start]:02x} at offset {e.start} "
                         f"(line {line})", path=source) from e


def read_stdin() -> str:
    """Standard input as UTF-8 text (an :class:`InputError` naming ``<stdin>`` otherwise)."""
    return decode_utf8(sys.stdin.buffer.read(), source="<stdin>")


def looks_like_path(arg: str) -> bool:
    """Whether an argument that is not an existing file was meant as one.

    Query text always holds whitespace or braces; a single word ending in a query-file
    suffix, or holding a path separator, is a file name.
    """
    if not arg or len(arg) >= 4096 or any(c.isspace() for c in arg) or "{" in arg:
        return False
    return arg.lower().endswith(QUERY_FILE_SUFFIXES) or "/" in arg or "\\" in arg


def query_argument(arg: str, param_hint: str = "QUERY") -> tuple[str, str | None]:
    """(text, source) of a query argument: ``-`` (stdin), a file, or the query itself.

    Raises:
        typer.BadParameter: the argument names a directory or a file that does not exist.
        InputError: the file cannot be read or is not UTF-8.
    """
    if arg == "-":
        return read_stdin(), "<stdin>"
    if not arg.strip():
        raise typer.BadParameter("empty query", param_hint=param_hint)
    p = Path(arg)
    kind = _path_kind(p) if len(arg) < 4096 and "\n" not in arg else None
    if kind == "dir":
        raise typer.BadParameter(f"{arg} is a directory, not a query file",
                                 param_hint=param_hint)
    if kind == "file":
        return read_text_file(p, what="query file"), arg
    if looks_like_path(arg):
        raise typer.BadParameter(f"no such file: {arg}", param_hint=param_hint)
    return arg, None


def _path_kind(p: Path) -> str | None:
    """"file", "dir" or None (missing, or not even a possible path: too long, NUL...)."""
    try:
        return "dir" if p.is_dir() else "file" if p.is_file() else None
    except (OSError, ValueError):
        return None


def existing_file(path: Path, param_hint: str) -> Path:
    """``path`` when it is an existing file; a usage error naming it otherwise."""
    if path.is_dir():
        raise typer.BadParameter(f"{path} is a directory, not a file", param_hint=param_hint)
    if not path.is_file():
        raise typer.BadParameter(f"no such file: {path}", param_hint=param_hint)
    return path


def writable_dir(path: Path, param_hint: str) -> Path:
    """``path`` when it is (or can become) a directory; a usage error naming it otherwise."""
    if path.exists() and not path.is_dir():
        raise typer.BadParameter(f"{path} exists and is not a directory",
                                 param_hint=param_hint)
    parent = next((p for p in (path, *path.parents) if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise typer.BadParameter(f"{path}: {parent} is not a directory", param_hint=param_hint)
    return path


def writable_file(path: Path, param_hint: str) -> Path:
    """``path`` when it can be written as a file; a usage error naming it otherwise."""
    if path.is_dir():
        raise typer.BadParameter(f"{path} is a directory, not a file", param_hint=param_hint)
    parent = next((p for p in path.parents if p.exists()), None)
    if parent is not None and not parent.is_dir():
        raise typer.BadParameter(f"{path}: {parent} is not a directory", param_hint=param_hint)
    return path


def endpoint_url(url: str, param_hint: str = "--endpoint") -> str:
    """``url`` when it is an http(s) URL with a host; a usage error otherwise."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError on a bad port
    except ValueError as e:
        raise typer.BadParameter(f"not a valid URL: {url!r} ({e})", param_hint=param_hint) from e
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise typer.BadParameter(f"not an http(s) URL: {url!r}", param_hint=param_hint)
    return url


def mapping_choice(mapping: str | None, param_hint: str = "--mapping") -> str | None:
    """``obda``, ``r2rml`` or None; a usage error for anything else."""
    if mapping is not None and mapping not in ("obda", "r2rml"):
        raise typer.BadParameter(f"{mapping!r} is not one of 'obda', 'r2rml'",
                                 param_hint=param_hint)
    return mapping
