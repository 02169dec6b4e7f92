"""Where a running ``navqa serve`` is recorded, so that ``navqa ask`` can use it.

``navqa serve`` writes one JSON record per process under ``<cache>/services/`` and
removes it when it stops. :func:`find_service` returns the record of a live service for
the same VKG (same files and settings, by :func:`source_key`) that answers its health
check. The record holds no secret: whether the service needs a token, not the token.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from navqa.config import NavqaConfig
from navqa.model.vkg_source import VkgSource


@dataclass(frozen=True)
class ServiceRecord:
    """One running ``navqa serve``.

    Attributes:
        name: The VKG's name.
        url: The service's base URL (``http://127.0.0.1:8765``).
        pid: Its process id.
        key: :func:`source_key` of the VKG it serves.
        auth: Whether it needs a bearer token.
        started_at: Unix time.
    """

    name: str
    url: str
    pid: int
    key: str
    auth: bool
    started_at: float


def source_key(source: VkgSource) -> str:
    """One SHA-256 over what a service of ``source`` answers from (never the password)."""
    from navqa.runtime.serve import source_checksum

    h = hashlib.sha256(source_checksum(source).encode())
    h.update(f"{source.kind.value}:{source.name}:{source.endpoint}:{source.mapping_choice}"
             .encode())
    return h.hexdigest()


def _dir(config: NavqaConfig) -> Path:
    return config.runtime.cache_dir / "services"


def record_service(config: NavqaConfig, rec: ServiceRecord) -> Path:
    """Write ``rec`` atomically; returns its path (give it to :func:`clear_service`)."""
    d = _dir(config)
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{rec.name}-{rec.pid}.json"
    tmp = p.with_name(f".{p.name}.tmp")
    tmp.write_text(json.dumps(asdict(rec), indent=1), encoding="utf-8")
    tmp.replace(p)
    return p


def clear_service(path: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        path.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def find_service(config: NavqaConfig, source: VkgSource, *,
                 timeout: float = 2.0) -> ServiceRecord | None:
    """A live service for ``source`` that answers ``/api/health``, or ``None``.

    Records of dead processes are removed.
    """
    import requests

    d = _dir(config)
    key = source_key(source)
    for p in sorted(d.glob("*.json"), key=lambda q: q.stat().st_mtime, reverse=True) \
            if d.is_dir() else []:
        try:
            rec = ServiceRecord(**json.loads(p.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            continue
        if not _alive(rec.pid):
            clear_service(p)
            continue
        if rec.key != key:
            continue
        try:
            r = requests.get(f"{rec.url}/api/health", timeout=timeout)
        except requests.RequestException:
            continue
        if r.status_code == 200 and source.name in r.json().get("vkgs", []):
            return rec
    return None


def new_record(name: str, url: str, source: VkgSource, *, auth: bool) -> ServiceRecord:
    return ServiceRecord(name=name, url=url, pid=os.getpid(), key=source_key(source),
                         auth=auth, started_at=time.time())
