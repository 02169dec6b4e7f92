"""Dataset manifests: which files make up a VKG, where they come from, how to load them.

A manifest lives at ``datasets/<name>/manifest.toml`` in the repository. The dataset
files themselves are never committed: :mod:`navqa.runtime.datasets` downloads them
from ``url`` (or copies them from ``$NAVQA_DATASETS_MIRROR/<name>/<path>``) into the
cache and verifies ``sha256``. Files marked ``in_repo`` (the demo VKG) are used in place.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from navqa.model.answers import EntityAnswer

FileRole = Literal[
    "ontology",
    "import",
    "catalog",
    "mapping",
    "mapping-r2rml",
    "schema",
    "data",
    "constraints",
    "queries",
    "doc",
]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DatasetFile(_Strict):
    """One file of a dataset.

    Attributes:
        role: What the file is for.
        path: Path inside the dataset folder (cache and mirror), or inside the repository
            when ``in_repo`` is true.
        url: Public upstream download URL; ``None`` when the file only exists in mirrors.
        sha256: Expected SHA-256 of the bytes (required unless ``in_repo``).
        size: Expected size in bytes, for progress bars.
        in_repo: The file is part of this repository (the demo VKG).
        origin: Free-text provenance (commit, conversion applied).
    """

    role: FileRole
    path: str
    url: str | None = None
    sha256: str | None = None
    size: int | None = None
    in_repo: bool = False
    origin: str | None = None


class LoadStep(_Strict):
    """One step of loading the database, run in order with ``psql -v ON_ERROR_STOP=1``.

    Attributes:
        file: The ``path`` of a :class:`DatasetFile` (``.sql`` or ``.sql.gz``).
        transform: Name of a registered SQL rewrite applied on the fly (see
            :mod:`navqa.runtime.load_fixes`); the file on disk is never edited.
        tolerate: Error substrings that are expected and ignored (the step then runs
            without ``ON_ERROR_STOP``, and any *other* error still fails the load).
    """

    file: str
    transform: str | None = None
    tolerate: tuple[str, ...] = ()


class OntopSettings(_Strict):
    """How Ontop is started for this dataset.

    Attributes:
        mapping: Which mapping role to serve by default (``mapping`` = native .obda).
        stub_imports: ``owl:imports`` IRIs that cannot be resolved offline and are
            answered with an empty ontology through a generated XML catalog.
        properties: Extra Ontop properties (``ontop.*`` keys).
        geosparql: The VKG uses GeoSPARQL (needs PostGIS).
    """

    mapping: Literal["mapping", "mapping-r2rml"] = "mapping"
    stub_imports: tuple[str, ...] = ()
    properties: dict[str, str] = Field(default_factory=dict)
    geosparql: bool = False


class DatasetManifest(_Strict):
    """Everything navqa needs to know to fetch, load and serve a VKG."""

    name: str
    title: str
    description: str = ""
    homepage: str | None = None
    license: str | None = None
    database: str
    partial: bool = False
    partial_note: str | None = None
    extensions: tuple[str, ...] = ()
    files: tuple[DatasetFile, ...]
    load: tuple[LoadStep, ...] = ()
    ontop: OntopSettings = Field(default_factory=OntopSettings)
    questions: tuple[str, ...] = ()
    answers: dict[str, EntityAnswer] = Field(default_factory=dict)
    """The answer convention each question split (``dev``, ``validation``, ``test``,
    ``dev-blind``, ``validation-blind``) was written in (:mod:`navqa.model.answers`); a split
    not listed uses the default."""

    def file(self, role: FileRole) -> DatasetFile:
        """The first file with ``role``.

        Raises:
            KeyError: when the manifest has none.
        """
        for f in self.files:
            if f.role == role:
                return f
        raise KeyError(role)

    def files_with(self, role: FileRole) -> list[DatasetFile]:
        return [f for f in self.files if f.role == role]

    def has(self, role: FileRole) -> bool:
        return any(f.role == role for f in self.files)
