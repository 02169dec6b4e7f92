"""Fetch dataset files into the cache and verify them against their manifest.

Sources, in order: the cache (if the checksum verifies), the mirror folder
``$NAVQA_DATASETS_MIRROR/<name>/<path>`` when set, the upstream ``url``. Nothing is
ever written outside the cache, and a file only lands there once its SHA-256 matched.
"""

from __future__ import annotations

import hashlib
import shutil
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import requests
from pydantic import ValidationError

from navqa.config import NavqaConfig
from navqa.errors import DatasetError
from navqa.model.dataset import DatasetFile, DatasetManifest, FileRole
from navqa.runtime.paths import datasets_dir, repo_root

ProgressFn = Callable[[str, int, int | None], None]
"""Called as ``progress(file_path, bytes_done, bytes_total)`` while fetching."""

_CHUNK = 1 << 16


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def list_manifests() -> list[DatasetManifest]:
    """Every dataset manifest in ``datasets/``, sorted by name."""
    out = []
    for p in sorted(datasets_dir().glob("*/manifest.toml")):
        out.append(_read_manifest(p))
    return out


def load_manifest(name: str) -> DatasetManifest:
    """The manifest of dataset ``name``.

    Raises:
        DatasetError: unknown name (the message lists the known ones) or invalid manifest.
    """
    path = datasets_dir() / name / "manifest.toml"
    if not path.is_file():
        known = ", ".join(m.name for m in list_manifests()) or "none"
        raise DatasetError(f"unknown dataset {name!r}; known datasets: {known}")
    return _read_manifest(path)


def _read_manifest(path: Path) -> DatasetManifest:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as e:
        raise DatasetError(f"manifest is not valid TOML: {e}", path=path) from e
    try:
        return DatasetManifest.model_validate(data)
    except ValidationError as e:
        raise DatasetError(f"invalid manifest: {e.errors()[0]['msg']} at "
                           f"{'.'.join(str(x) for x in e.errors()[0]['loc'])}", path=path) from e


@dataclass(frozen=True)
class LocalDataset:
    """A dataset whose files are all present locally and verified.

    Attributes:
        manifest: Its manifest.
        root: The folder its (non-repo) files live in.
        files: Local path of every file, keyed by its manifest ``path``.
        sha256: SHA-256 of every file, keyed the same way.
    """

    manifest: DatasetManifest
    root: Path
    files: dict[str, Path] = field(default_factory=dict)
    sha256: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.manifest.name

    def path(self, role: FileRole) -> Path:
        """Local path of the first file with ``role``.

        Raises:
            DatasetError: when the dataset has no such file.
        """
        try:
            return self.files[self.manifest.file(role).path]
        except KeyError as e:
            raise DatasetError(f"dataset {self.name!r} has no {role} file") from e

    def paths(self, role: FileRole) -> list[Path]:
        return [self.files[f.path] for f in self.manifest.files_with(role)]

    def local(self, manifest_path: str) -> Path:
        """Local path of a file given by its manifest ``path``."""
        return self.files[manifest_path]

    def checksum(self, roles: tuple[FileRole, ...] | None = None) -> str:
        """One SHA-256 over the files with ``roles`` (all when ``None``), in manifest order."""
        h = hashlib.sha256()
        for f in self.manifest.files:
            if roles is None or f.role in roles:
                h.update(f"{f.role}:{f.path}:{self.sha256[f.path]}\n".encode())
        return h.hexdigest()

    def database_checksum(self) -> str:
        """Checksum of what ends up in the database: load steps, their files and transforms."""
        h = hashlib.sha256()
        for step in self.manifest.load:
            h.update(f"{step.file}:{self.sha256[step.file]}:{step.transform}:"
                     f"{','.join(step.tolerate)}\n".encode())
        h.update(",".join(self.manifest.extensions).encode())
        return h.hexdigest()


def fetch_dataset(
    name: str,
    config: NavqaConfig,
    *,
    progress: ProgressFn | None = None,
    offline: bool = False,
) -> LocalDataset:
    """Make every file of dataset ``name`` available locally, verified.

    Args:
        name: Dataset name (a folder of ``datasets/``).
        config: Supplies ``runtime.cache_dir`` and ``runtime.datasets_mirror``.
        progress: Optional progress callback.
        offline: Never download; use only the cache and the mirror.

    Raises:
        DatasetError: unknown dataset, missing source, download failure, checksum mismatch.
    """
    manifest = load_manifest(name)
    root = config.runtime.cache_dir / "datasets" / name
    mirror = config.runtime.datasets_mirror
    files: dict[str, Path] = {}
    sums: dict[str, str] = {}
    for f in manifest.files:
        if f.in_repo:
            local = repo_root() / f.path
            if not local.is_file():
                raise DatasetError(f"dataset {name!r}: file {f.path} is missing from the checkout",
                                   path=local)
            files[f.path] = local
            sums[f.path] = sha256_file(local)
            continue
        if not f.sha256:
            raise DatasetError(f"dataset {name!r}: file {f.path} has no sha256 in its manifest")
        target = root / f.path
        files[f.path] = _ensure_file(name, f, target, mirror, progress, offline)
        sums[f.path] = f.sha256
    return LocalDataset(manifest=manifest, root=root, files=files, sha256=sums)


def _ensure_file(
    name: str,
    f: DatasetFile,
    target: Path,
    mirror: Path | None,
    progress: ProgressFn | None,
    offline: bool,
) -> Path:
    assert f.sha256 is not None
    if target.is_file() and sha256_file(target) == f.sha256:
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(target.name + ".part")
    try:
        if mirror is not None:
            src = Path(mirror) / name / f.path
            if not src.is_file():
                raise DatasetError(
                    f"dataset {name!r}: {f.path} is not in the mirror",
                    path=src,
                    hint="check NAVQA_DATASETS_MIRROR, or unset it to download from upstream",
                )
            _copy(src, tmp, f, progress)
        elif f.url is None:
            raise DatasetError(
                f"dataset {name!r}: {f.path} has no public download ({f.origin or 'mirror-only'})",
                hint="set NAVQA_DATASETS_MIRROR to a folder holding <name>/<path> copies",
            )
        elif offline:
            raise DatasetError(f"dataset {name!r}: {f.path} is not cached and offline mode is on")
        else:
            _download(f.url, tmp, f, progress)
        actual = sha256_file(tmp)
        if actual != f.sha256:
            raise DatasetError(
                f"dataset {name!r}: checksum mismatch for {f.path}: expected {f.sha256}, "
                f"got {actual}",
                hint="the upstream file changed or the mirror holds another version",
            )
        tmp.replace(target)
        return target
    finally:
        tmp.unlink(missing_ok=True)


def _copy(src: Path, dst: Path, f: DatasetFile, progress: ProgressFn | None) -> None:
    total = src.stat().st_size
    done = 0
    with src.open("rb") as r, dst.open("wb") as w:
        for block in iter(lambda: r.read(_CHUNK), b""):
            w.write(block)
            done += len(block)
            if progress:
                progress(f.path, done, total)
    shutil.copystat(src, dst, follow_symlinks=True)


def _download(url: str, dst: Path, f: DatasetFile, progress: ProgressFn | None) -> None:
    try:
        with requests.get(url, stream=True, timeout=(10, 60)) as r:
            r.raise_for_status()
            total = int(r.headers.get("Content-Length") or f.size or 0) or None
            done = 0
            with dst.open("wb") as w:
                for block in r.iter_content(_CHUNK):
                    w.write(block)
                    done += len(block)
                    if progress:
                        progress(f.path, done, total)
    except requests.RequestException as e:
        raise DatasetError(f"download of {url} failed: {e}",
                           hint="set NAVQA_DATASETS_MIRROR to use a local copy") from e
