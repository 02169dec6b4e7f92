"""What a VKG *is*, wherever it comes from: one typed descriptor for every command.

A :class:`VkgSource` is built by :mod:`navqa.runtime.project` from Ontop-style flags
(``-t/-m/-p/-x/-l``), from ``--endpoint URL``, from a ``navqa.toml`` project file, or from
one of the bundled dataset manifests. Every command consumes the descriptor, so a user's
own VKG and the bundled ones go through the same code path.

The database password is a :class:`pydantic.SecretStr`: it prints as ``**********``, is
never serialised by :meth:`VkgSource.describe` and never part of a checksum.
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr


class VkgKind(StrEnum):
    """Where the descriptor came from, and therefore what navqa may do with the database.

    ``bundled``: a dataset of ``datasets/``; navqa owns its private database and loads it.
    ``user``: the user's ontology, mapping and database; navqa starts Ontop on their
    properties and never loads, alters or writes the database.
    ``endpoint``: a SPARQL endpoint that is already running; navqa starts nothing.
    """

    bundled = "bundled"
    user = "user"
    endpoint = "endpoint"


class DatabaseAccess(BaseModel):
    """How Ontop (and navqa's read-only probes) reach the user's database.

    Attributes:
        jdbc_url: ``jdbc.url``, e.g. ``jdbc:postgresql://host:5432/db``.
        user: ``jdbc.user``.
        password: ``jdbc.password`` or ``$ONTOP_DB_PASSWORD``; never printed.
        driver: ``jdbc.driver`` (the JDBC driver class).
        driver_artifact: ``jdbc.driver-artifact``: Maven coordinates of the driver
            (``group:artifact:version``); ``None``: the default for the URL's database.
        driver_jar: ``jdbc.driver-jar``: a driver jar of the user's (wins over the artifact).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    jdbc_url: str
    user: str | None = None
    password: SecretStr | None = None
    driver: str = "org.postgresql.Driver"
    driver_artifact: str | None = None
    driver_jar: Path | None = None

    @property
    def is_postgresql(self) -> bool:
        return self.jdbc_url.startswith("jdbc:postgresql:")


class VkgSource(BaseModel):
    """One VKG: its files, how to reach its data, and who owns the database.

    Attributes:
        name: A short name (dataset name, project name, or the ontology's stem).
        kind: See :class:`VkgKind`.
        ontology: The OWL ontology (``-t``).
        mapping: The mapping, ``.obda`` or R2RML by content (``-m``).
        catalog: XML catalog resolving ``owl:imports`` (``-x``).
        lenses: Ontop lenses file (``-l``).
        properties_file: The Ontop ``.properties`` file it was read from (``-p``).
        database: JDBC access (``user`` VKGs; ``None`` for bundled and endpoint VKGs).
        endpoint: A running SPARQL endpoint URL (``endpoint`` VKGs).
        ontop_properties: ``ontop.*`` (and other non-``jdbc.*``) settings passed to Ontop.
        question_files: Question sets of the project (``navqa eval``).
        project_file: The ``navqa.toml`` it was read from, if any.
        mapping_choice: For bundled VKGs, ``obda`` or ``r2rml`` (``None``: the manifest's).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    kind: VkgKind
    ontology: Path
    mapping: Path
    catalog: Path | None = None
    lenses: Path | None = None
    properties_file: Path | None = None
    database: DatabaseAccess | None = None
    endpoint: str | None = None
    ontop_properties: dict[str, str] = Field(default_factory=dict)
    question_files: tuple[Path, ...] = ()
    project_file: Path | None = None
    mapping_choice: str | None = None

    @property
    def owns_database(self) -> bool:
        """Whether navqa may load the database (only its own, for bundled VKGs)."""
        return self.kind is VkgKind.bundled

    def index_inputs(self) -> dict[str, Path]:
        """The files an index of this VKG is built from, by role."""
        out = {"ontology": self.ontology, "mapping": self.mapping}
        if self.catalog is not None:
            out["catalog"] = self.catalog
        return out

    def describe(self) -> str:
        """A one-line description without secrets (for messages and ``--explain``)."""
        parts = [f"{self.name} ({self.kind.value}): ontology {self.ontology}, "
                 f"mapping {self.mapping}"]
        if self.endpoint:
            parts.append(f"endpoint {self.endpoint}")
        elif self.database is not None:
            parts.append(f"database {self.database.jdbc_url}")
        return ", ".join(parts)

    def flags(self) -> str:
        """The Ontop-style flags that select this VKG again (for hints like ``--force``)."""
        if self.kind is VkgKind.bundled:
            return f"--vkg {self.name}"
        out = f"-t {self.ontology} -m {self.mapping}"
        if self.endpoint:
            out = f"--endpoint {self.endpoint} " + out
        elif self.properties_file is not None:
            out += f" -p {self.properties_file}"
        if self.catalog is not None:
            out += f" -x {self.catalog}"
        return out
