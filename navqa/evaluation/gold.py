"""Gold answers: run each gold query once, keep its result on disk.

A cached answer is valid as long as neither the query text nor the VKG changed. The
cache key is the SHA-256 of

* the exact query text,
* the dataset's :meth:`~navqa.runtime.datasets.LocalDataset.database_checksum` (the
  load steps, their files and transforms: what is in PostgreSQL),
* the checksum of the files Ontop serves (ontology, imports, catalog, both mappings),
* the manifest's Ontop settings (stub imports, properties).

Entries live in ``<cache>/gold/<vkg>/<key>.json`` and hold the query, the two
checksums and the result in SPARQL JSON form. They are written atomically (temp file,
then rename), so concurrent runs can share the folder.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from navqa.backends.sparql_http import HttpSparqlEndpoint
from navqa.errors import EvaluationError
from navqa.model.resultio import result_from_json, result_to_json
from navqa.model.terms import QueryResult

if TYPE_CHECKING:
    from navqa.runtime.datasets import LocalDataset

log = logging.getLogger(__name__)

__all__ = ["GoldAnswer", "GoldCache", "served_files_checksum"]

_SERVED_ROLES = ("ontology", "import", "catalog", "mapping", "mapping-r2rml")


def served_files_checksum(dataset: LocalDataset) -> str:
    """Checksum of what Ontop serves: ontology, imports, catalog, mappings, Ontop settings."""
    h = hashlib.sha256(dataset.checksum(_SERVED_ROLES).encode())  # type: ignore[arg-type]
    h.update(json.dumps(dataset.manifest.ontop.model_dump(mode="json"), sort_keys=True)
             .encode())
    return h.hexdigest()


@dataclass(frozen=True)
class GoldAnswer:
    """A gold query's result.

    Attributes:
        result: The result.
        cached: It came from the cache.
        seconds: Execution time when it was computed.
    """

    result: QueryResult
    cached: bool
    seconds: float


class GoldCache:
    """The on-disk gold answers of one VKG.

    Args:
        root: The ``gold`` folder (normally ``<runtime.cache_dir>/gold``).
        vkg: The dataset name (a sub-folder).
        database_checksum: :meth:`LocalDataset.database_checksum`.
        mapping_checksum: :func:`served_files_checksum`.
    """

    def __init__(self, root: Path, vkg: str, database_checksum: str,
                 mapping_checksum: str) -> None:
        self.dir = Path(root) / vkg
        self.vkg = vkg
        self.database_checksum = database_checksum
        self.mapping_checksum = mapping_checksum

    @classmethod
    def for_dataset(cls, root: Path, dataset: LocalDataset) -> GoldCache:
        """The cache for a served dataset."""
        return cls(root, dataset.name, dataset.database_checksum(),
                   served_files_checksum(dataset))

    def key(self, sparql: str) -> str:
        h = hashlib.sha256()
        for part in (self.database_checksum, self.mapping_checksum, sparql):
            h.update(part.encode("utf-8"))
            h.update(b"\0")
        return h.hexdigest()

    def path(self, sparql: str) -> Path:
        return self.dir / f"{self.key(sparql)}.json"

    def get(self, sparql: str) -> GoldAnswer | None:
        """The cached answer, or ``None`` (a corrupt entry is dropped and logged)."""
        p = self.path(sparql)
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
            if data.get("query") != sparql:
                raise ValueError("entry holds another query")
            return GoldAnswer(result_from_json(data["result"]), True,
                              float(data.get("seconds", 0.0)))
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError, EvaluationError) as e:
            log.warning("dropping corrupt gold cache entry %s: %s", p, e)
            p.unlink(missing_ok=True)
            return None

    def put(self, sparql: str, result: QueryResult, seconds: float) -> None:
        """Store an answer atomically."""
        self.dir.mkdir(parents=True, exist_ok=True)
        entry: dict[str, Any] = {
            "query": sparql,
            "vkg": self.vkg,
            "database_checksum": self.database_checksum,
            "mapping_checksum": self.mapping_checksum,
            "seconds": seconds,
            "created": time.time(),
            "result": result_to_json(result),
        }
        fd, tmp = tempfile.mkstemp(dir=self.dir, prefix=".gold-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(entry, f, ensure_ascii=False)
            os.replace(tmp, self.path(sparql))
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

    def answer(self, endpoint: HttpSparqlEndpoint, sparql: str, *,
               timeout: float | None = None) -> GoldAnswer:
        """The gold answer: from the cache, else run on ``endpoint`` and cache it.

        Raises:
            EndpointError / QueryCheckError: the gold query failed (nothing is cached).
        """
        hit = self.get(sparql)
        if hit is not None:
            return hit
        t0 = time.monotonic()
        result = endpoint.query(sparql, timeout=timeout)
        seconds = time.monotonic() - t0
        self.put(sparql, result, seconds)
        return GoldAnswer(result, False, seconds)
