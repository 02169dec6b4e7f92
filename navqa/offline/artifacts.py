"""The offline stage end to end, and the index directory it leaves on disk.

:func:`build_index` parses T and M, computes the active ontology, the class graph, the
descriptions and the two vector indices, and writes them to one directory::

    <cache>/index/<vkg>/
        manifest.json        format, navqa version, embedder, input checksums, stats
        stats.json           the figures of `navqa index --stats`
        model.pickle         Ontology, MappingSet, ActiveOntology, ClassGraph, descriptions
        classes/             I_C: index.faiss + ids.json
        properties/          I_P: index.faiss + ids.json

The directory is written next to its final place and renamed into it, so a crash never
leaves half an index. :func:`load_index` reads it back without parsing anything and
without loading the embedding model, and refuses a *stale* index — one whose recorded
input checksums differ from the files on disk — with an
:class:`~navqa.errors.IndexError_` that names the changed file and the command that
rebuilds it. ``model.pickle`` is only ever read from navqa's own cache: never load an
index directory you did not build.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import shutil
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Protocol

from rdflib import Graph

from navqa.backends.faiss_index import FaissIndex
from navqa.backends.protocols import LLM, Embedder
from navqa.config import NavqaConfig
from navqa.errors import ConfigError, IndexError_, InputError, OntologyParseError
from navqa.locks import exclusive_lock
from navqa.model.active import ActiveOntology
from navqa.model.graph import ClassGraph
from navqa.model.iri import IRI
from navqa.model.mapping import MappingSet
from navqa.model.ontology import Ontology
from navqa.model.vkg_source import VkgKind, VkgSource
from navqa.offline.class_graph import build_class_graph, typing_stats
from navqa.offline.closure import build_active_ontology
from navqa.offline.descriptions import Description, describe
from navqa.offline.indexer import build_vector_indexes
from navqa.offline.ontology_parser import (
    ontology_from_graph,
    parse_ontology,
    read_ontology_graph,
)
from navqa.offline.owl_crosscheck import crosscheck_with_owlready

logger = logging.getLogger(__name__)

__all__ = [
    "FORMAT_VERSION",
    "MANIFEST_FILE",
    "DatasetFiles",
    "IndexBundle",
    "IndexManifest",
    "InputFile",
    "build_index",
    "check_inputs",
    "compute_stats",
    "ensure_index",
    "index_dir_for",
    "input_files",
    "load_index",
    "navqa_version",
    "parse_mappings",
    "read_manifest",
    "sha256_file",
    "source_index_dir",
]

FORMAT_VERSION = 6  # 2: main file's own counts; 3: owlready2 check; 4: E as Ontop reasons;
# 5: entities' notes (every textual annotation) in the model and the descriptions;
# 6: MappingAssertion.whole_table
"""Version of the index directory layout and of ``model.pickle``."""

MANIFEST_FILE = "manifest.json"
STATS_FILE = "stats.json"
MODEL_FILE = "model.pickle"
CLASS_INDEX_DIR = "classes"
PROPERTY_INDEX_DIR = "properties"

ProgressFn = Callable[[str, int, int | None], None]
"""``progress(stage, done, total)``; stages: parse, closure, graph, describe, embed, save."""


def navqa_version() -> str:
    """The installed navqa version (``0+unknown`` when navqa is not installed)."""
    try:
        return metadata.version("navqa")
    except metadata.PackageNotFoundError:
        return "0+unknown"


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with Path(path).open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


class DatasetFiles(Protocol):
    """What :func:`ensure_index` needs of a dataset
    (:class:`~navqa.runtime.datasets.LocalDataset` has it)."""

    @property
    def name(self) -> str: ...

    @property
    def manifest(self) -> Any: ...

    def path(self, role: Any) -> Path: ...


# -- manifest ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class InputFile:
    """One input of the offline stage, as it was when the index was built."""

    path: str
    sha256: str


@dataclass
class IndexManifest:
    """What ``manifest.json`` records.

    Attributes:
        format_version: :data:`FORMAT_VERSION` of the writer.
        navqa_version: The navqa (offline code) version that built the index.
        name: The VKG name, when built for a dataset.
        embedder_model: The embedding model's name.
        dim: The vector dimension.
        inputs: Role (``ontology``, ``mapping``, ``catalog``, ``import:<IRI>``) → file.
        created: ISO-8601 UTC time of the build.
        rebuild: The command that rebuilds this index.
        stats: :func:`compute_stats` plus timings.
    """

    format_version: int
    navqa_version: str
    embedder_model: str
    dim: int
    inputs: dict[str, InputFile]
    created: str
    rebuild: str
    name: str | None = None
    stats: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["inputs"] = {k: asdict(v) for k, v in self.inputs.items()}
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> IndexManifest:
        """Read a manifest dictionary.

        Raises:
            KeyError, TypeError, ValueError: malformed content (the loader wraps them).
        """
        return cls(
            format_version=int(data["format_version"]),
            navqa_version=str(data["navqa_version"]),
            embedder_model=str(data["embedder_model"]),
            dim=int(data["dim"]),
            inputs={k: InputFile(str(v["path"]), str(v["sha256"]))
                    for k, v in dict(data["inputs"]).items()},
            created=str(data["created"]),
            rebuild=str(data["rebuild"]),
            name=data.get("name"),
            stats=dict(data.get("stats") or {}),
        )


@dataclass
class IndexBundle:
    """Everything the online stage loads: the model objects and the two vector indices.

    Attributes:
        ontology: T.
        mappings: M (annotated with the tables and columns their SQL reads).
        active: Ta.
        graph: Ga.
        descriptions: desc(e) per indexed element.
        class_index: I_C (ids are class IRIs).
        property_index: I_P (ids are property IRIs).
        manifest: The manifest.
        path: The index directory.
    """

    ontology: Ontology
    mappings: MappingSet
    active: ActiveOntology
    graph: ClassGraph
    descriptions: dict[IRI, Description]
    class_index: FaissIndex
    property_index: FaissIndex
    manifest: IndexManifest
    path: Path | None = None

    @property
    def stats(self) -> dict[str, Any]:
        return self.manifest.stats


# -- inputs -----------------------------------------------------------------------------------


def input_files(
    ontology_path: Path,
    mapping_path: Path,
    catalog: Path | None = None,
    ontology: Ontology | None = None,
) -> dict[str, Path]:
    """The files an index depends on, by role.

    Args:
        ontology_path: The ontology file.
        mapping_path: The mapping file.
        catalog: The XML catalog, if any.
        ontology: The parsed ontology; its followed imports are resolved through the
            catalog and added as ``import:<IRI>``.
    """
    out = {"ontology": Path(ontology_path), "mapping": Path(mapping_path)}
    if catalog is not None:
        out["catalog"] = Path(catalog)
        if ontology is not None and ontology.imports:
            from navqa.offline.ontology_parser import read_catalog

            entries = read_catalog(Path(catalog))
            for iri in ontology.imports:
                local = entries.get(iri) or entries.get(iri.rstrip("/"))
                if local is not None and local.is_file():
                    out[f"import:{iri}"] = local
    return out


def _rebuild_command(
    name: str | None, inputs: Mapping[str, Path], out_dir: Path
) -> str:
    if name:
        return f"navqa index --vkg {name} --force"
    cmd = f"navqa index --ontology {inputs['ontology']} --mapping {inputs['mapping']}"
    if "catalog" in inputs:
        cmd += f" --catalog {inputs['catalog']}"
    return cmd + f" --out {out_dir} --force"


def index_dir_for(config: NavqaConfig, vkg_name: str) -> Path:
    """The default index directory of a VKG: ``<runtime.cache_dir>/index/<name>/``."""
    return Path(config.runtime.cache_dir) / "index" / vkg_name


def parse_mappings(path: Path) -> MappingSet:
    """Parse a ``.obda`` or R2RML file and annotate its SQL with tables and columns.

    ``.obda`` files, and files of any name holding ``[MappingDeclaration]``, go to the
    native parser; anything else to the R2RML parser.

    Raises:
        MappingParseError: the file is malformed.
    """
    from navqa.offline.mapping_sql import annotate_sql

    path = Path(path)
    if path.suffix.lower() == ".obda" or _looks_native(path):
        from navqa.offline.obda_parser import parse_obda

        ms = parse_obda(path)
    else:
        from navqa.offline.r2rml_parser import parse_r2rml

        ms = parse_r2rml(path)
    return annotate_sql(ms)


def _looks_native(path: Path) -> bool:
    try:
        with path.open("r", encoding="utf-8", errors="replace") as f:
            return "[MappingDeclaration]" in f.read(20_000)
    except OSError:
        return False


# -- stats ------------------------------------------------------------------------------------


def compute_stats(
    ontology: Ontology, mappings: MappingSet, active: ActiveOntology, graph: ClassGraph
) -> dict[str, Any]:
    """The figures ``navqa index --stats`` reports, as a JSON-ready dictionary."""
    st = active.stats
    typing = typing_stats(graph, active, mappings)
    return {
        "ontology": {
            "classes": len(ontology.classes),
            "object_properties": len(ontology.object_properties),
            "data_properties": len(ontology.data_properties),
            "annotation_properties": len(ontology.annotation_properties),
            "triples": ontology.triple_count,
            "imports": list(ontology.imports),
        },
        "mappings": {
            "assertions": len(mappings),
            "atoms": sum(1 for _ in mappings.atoms()),
            "format": mappings.format,
        },
        "closure": {
            "seeds": dict(st.seeds) if st else {},
            "seeds_total": len(active.mapped),
            "active": dict(st.active) if st else {},
            "active_total": len(active.signature),
            "steps": st.steps if st else len(active.steps),
            "added_per_step": [len(s.added) for s in active.steps],
            "undeclared_mapped": sorted(active.undeclared_mapped),
            "unmapped_declared": len(active.unmapped),
        },
        "ta": {
            "full_triples": st.full_triples if st else None,
            "active_triples": st.active_triples if st else None,
            "full_axioms": st.full_axioms if st else None,
            "active_axioms": st.active_axioms if st else None,
        },
        "class_graph": {"classes": len(graph.classes), **typing.as_dict()},
    }


# -- build ------------------------------------------------------------------------------------


def build_index(
    config: NavqaConfig,
    *,
    ontology_path: Path,
    mapping_path: Path,
    catalog: Path | None = None,
    out_dir: Path,
    embedder: Embedder,
    llm: LLM | None = None,
    progress: ProgressFn | None = None,
    name: str | None = None,
    rebuild: str | None = None,
) -> IndexBundle:
    """Run the offline stage and write the index directory.

    Args:
        config: The configuration (``embedder.batch_size``).
        ontology_path: The ontology T.
        mapping_path: The mappings M (``.obda`` or R2RML).
        catalog: XML catalog; when given, ``owl:imports`` it resolves are followed.
        out_dir: The index directory (replaced if it exists).
        embedder: Embeds the descriptions.
        llm: Writes the descriptions when given (else they are deterministic only).
        progress: Called as ``progress(stage, done, total)``.
        name: The VKG name (recorded, and used in the rebuild hint).
        rebuild: The command that rebuilds the index (default: from ``name`` or the files).

    Returns:
        The bundle, as :func:`load_index` would return it.

    Raises:
        OntologyParseError, MappingParseError: an input is malformed.
        InputError: an input file is missing.
        LLMError: the LLM failed while describing.
        IndexError_: the directory cannot be written.
    """
    out_dir = Path(out_dir)
    for what, p in (("ontology", ontology_path), ("mapping", mapping_path),
                    ("catalog", catalog)):
        if p is not None and not Path(p).is_file():
            raise InputError(f"{what} file not found", path=p)

    def tick(stage: str, done: int = 1, total: int | None = 1) -> None:
        if progress is not None:
            progress(stage, done, total)

    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    follow = catalog is not None
    rdf = read_ontology_graph(Path(ontology_path), catalog=catalog, follow_imports=follow)
    ontology = ontology_from_graph(rdf)
    mappings = parse_mappings(Path(mapping_path))
    tick("parse")
    timings["parse_s"] = time.perf_counter() - t0

    t = time.perf_counter()
    owl_check = owlready_check(ontology, rdf.graph)
    timings["owlready2_s"] = time.perf_counter() - t

    t = time.perf_counter()
    active = build_active_ontology(ontology, mappings, graph=rdf.graph)
    del rdf
    tick("closure")
    timings["closure_s"] = time.perf_counter() - t

    t = time.perf_counter()
    graph = build_class_graph(active, mappings)
    tick("graph")
    timings["graph_s"] = time.perf_counter() - t

    t = time.perf_counter()
    descriptions = describe(active, mappings, graph, llm=llm, progress=progress)
    timings["describe_s"] = time.perf_counter() - t

    t = time.perf_counter()
    vecs = build_vector_indexes(
        descriptions, embedder, batch_size=config.embedder.batch_size, progress=progress
    )
    timings["embed_s"] = time.perf_counter() - t

    inputs = input_files(Path(ontology_path), Path(mapping_path), catalog, ontology)
    stats = compute_stats(ontology, mappings, active, graph)
    if follow and ontology.imports:
        # The published ontology file alone (what NaVQA's Table 2 and the dataset READMEs
        # count), next to T with its imports.
        main = parse_ontology(Path(ontology_path))
        stats["ontology"]["main_file"] = {
            "classes": len(main.classes),
            "object_properties": len(main.object_properties),
            "data_properties": len(main.data_properties),
            "triples": main.triple_count,
        }
    stats["owlready2"] = owl_check
    stats["index"] = {
        "elements": len(descriptions),
        "classes": len(vecs.classes),
        "properties": len(vecs.properties),
        "by_llm": sum(d.by_llm for d in descriptions.values()),
    }
    stats["timings"] = {k: round(v, 3) for k, v in timings.items()}
    manifest = IndexManifest(
        format_version=FORMAT_VERSION,
        navqa_version=navqa_version(),
        embedder_model=embedder.name,
        dim=embedder.dim,
        inputs={role: InputFile(str(p.resolve()), sha256_file(p)) for role, p in inputs.items()},
        created=datetime.now(UTC).isoformat(timespec="seconds"),
        rebuild=rebuild or _rebuild_command(name, inputs, out_dir),
        name=name,
        stats=stats,
    )
    bundle = IndexBundle(
        ontology=ontology,
        mappings=mappings,
        active=active,
        graph=graph,
        descriptions=descriptions,
        class_index=vecs.classes,
        property_index=vecs.properties,
        manifest=manifest,
        path=out_dir,
    )
    _write(bundle, out_dir)
    tick("save")
    logger.info("index written to %s in %.1f s", out_dir, time.perf_counter() - t0)
    return bundle


def _write(bundle: IndexBundle, out_dir: Path) -> None:
    """Write the directory beside ``out_dir`` and swap it into place."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = out_dir.with_name(f".{out_dir.name}.tmp-{os.getpid()}")
    old = out_dir.with_name(f".{out_dir.name}.old-{os.getpid()}")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        tmp.mkdir()
        model = {
            "format_version": FORMAT_VERSION,
            "ontology": bundle.ontology,
            "mappings": bundle.mappings,
            "active": bundle.active,
            "graph": bundle.graph,
            "descriptions": bundle.descriptions,
        }
        with (tmp / MODEL_FILE).open("wb") as f:
            pickle.dump(model, f, protocol=pickle.HIGHEST_PROTOCOL)
        bundle.class_index.save(tmp / CLASS_INDEX_DIR)
        bundle.property_index.save(tmp / PROPERTY_INDEX_DIR)
        _write_json(tmp / STATS_FILE, bundle.manifest.stats)
        _write_json(tmp / MANIFEST_FILE, bundle.manifest.to_json())
        if out_dir.exists():
            out_dir.rename(old)
        tmp.rename(out_dir)
    except OSError as e:
        raise IndexError_(f"cannot write the index directory {out_dir}: {e}") from e
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        shutil.rmtree(old, ignore_errors=True)


def _write_json(path: Path, data: Any) -> None:
    path.write_text(json.dumps(data, indent=2, ensure_ascii=False, sort_keys=False) + "\n",
                    encoding="utf-8")


# -- load -------------------------------------------------------------------------------------


def read_manifest(index_dir: Path) -> IndexManifest:
    """Read ``manifest.json`` of an index directory.

    Raises:
        IndexError_: no index there, or an unreadable manifest.
    """
    path = Path(index_dir) / MANIFEST_FILE
    if not path.is_file():
        raise IndexError_(f"no index at {index_dir} ({MANIFEST_FILE} is missing)",
                          hint="build it with `navqa index`")
    try:
        return IndexManifest.from_json(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise IndexError_(f"the index manifest {path} is unreadable: {e}",
                          hint="rebuild the index with `navqa index --force`") from e


def check_inputs(
    manifest: IndexManifest,
    index_dir: Path,
    expected_inputs: Mapping[str, Path] | None = None,
) -> None:
    """Raise when the index is stale: an input's checksum differs from the file on disk.

    Args:
        manifest: The index manifest.
        index_dir: The index directory (for the message).
        expected_inputs: Role → the file the index should have been built from. Roles
            not given are checked at the path the manifest recorded.

    Raises:
        IndexError_: naming the first changed, missing or unexpected input, with the
            command that rebuilds the index as its hint.
    """
    expected = {k: Path(v) for k, v in (expected_inputs or {}).items()}
    hint = f"rebuild it: {manifest.rebuild}"
    for role in expected:
        if role not in manifest.inputs:
            raise IndexError_(
                f"index {index_dir} is stale: it was built without a {role} file "
                f"({expected[role]})", hint=hint)
    for role, recorded in manifest.inputs.items():
        path = expected.get(role, Path(recorded.path))
        if not path.is_file():
            raise IndexError_(
                f"index {index_dir} is stale: its {_role_text(role)} file {path} is missing",
                hint=hint)
        now = sha256_file(path)
        if now != recorded.sha256:
            raise IndexError_(
                f"index {index_dir} is stale: the {_role_text(role)} file {path} changed "
                f"since the index was built (sha256 {recorded.sha256[:12]}… → {now[:12]}…)",
                hint=hint)


def _role_text(role: str) -> str:
    return f"import {role[7:]}" if role.startswith("import:") else role


def load_index(
    index_dir: Path,
    *,
    expected_inputs: Mapping[str, Path] | None = None,
    verify: bool = True,
) -> IndexBundle:
    """Load an index directory written by :func:`build_index`.

    Args:
        index_dir: The directory.
        expected_inputs: Role → the input file the caller will use (``ontology``,
            ``mapping``, ``catalog``); see :func:`check_inputs`.
        verify: Check the inputs' checksums (``False`` only for an index whose inputs
            are knowingly elsewhere, e.g. copied from another machine).

    Raises:
        IndexError_: missing, corrupt, from another format or navqa version, or stale.
    """
    index_dir = Path(index_dir)
    manifest = read_manifest(index_dir)
    rebuild = f"rebuild it: {manifest.rebuild}"
    if manifest.format_version != FORMAT_VERSION:
        raise IndexError_(
            f"index {index_dir} has format {manifest.format_version}, this navqa reads "
            f"format {FORMAT_VERSION}", hint=rebuild)
    if manifest.navqa_version != navqa_version():
        raise IndexError_(
            f"index {index_dir} is stale: built by navqa {manifest.navqa_version}, this is "
            f"navqa {navqa_version()}", hint=rebuild)
    if verify:
        check_inputs(manifest, index_dir, expected_inputs)
    try:
        with (index_dir / MODEL_FILE).open("rb") as f:
            model = pickle.load(f)  # noqa: S301 - navqa's own cache, see module docstring
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError) as e:
        raise IndexError_(f"the index model {index_dir / MODEL_FILE} is unreadable: {e}",
                          hint=rebuild) from e
    if not isinstance(model, dict) or model.get("format_version") != FORMAT_VERSION:
        raise IndexError_(f"the index model {index_dir / MODEL_FILE} has another format",
                          hint=rebuild)
    bundle = IndexBundle(
        ontology=model["ontology"],
        mappings=model["mappings"],
        active=model["active"],
        graph=model["graph"],
        descriptions=model["descriptions"],
        class_index=FaissIndex.load(index_dir / CLASS_INDEX_DIR),
        property_index=FaissIndex.load(index_dir / PROPERTY_INDEX_DIR),
        manifest=manifest,
        path=index_dir,
    )
    for idx, what in ((bundle.class_index, "class"), (bundle.property_index, "property")):
        if idx.dim != manifest.dim:
            raise IndexError_(f"the {what} index of {index_dir} has dimension {idx.dim}, "
                              f"the manifest says {manifest.dim}", hint=rebuild)
    return bundle


def source_index_dir(config: NavqaConfig, source: VkgSource) -> Path:
    """Where the index of a VKG lives in the cache.

    Bundled VKGs: ``<cache>/index/<name>/``. Any other VKG:
    ``<cache>/index/own/<name>-<key>/``, where ``key`` is a SHA-256 over the checksums of
    its ontology, mapping and catalog — a changed file gives a new key, hence a rebuild.

    Raises:
        InputError: an input file is missing.
    """
    if source.kind is VkgKind.bundled:
        return index_dir_for(config, source.name)
    h = hashlib.sha256()
    for role, p in sorted(source.index_inputs().items()):
        if not Path(p).is_file():
            raise InputError(f"{role} file not found", path=p)
        h.update(f"{role}:{sha256_file(p)}\n".encode())
    return Path(config.runtime.cache_dir) / "index" / "own" / f"{source.name}-{h.hexdigest()[:16]}"


def _prune_superseded(out: Path, source: VkgSource) -> None:
    """Remove older indices of the same VKG (same ontology path, other checksums)."""
    for other in out.parent.glob(f"{source.name}-*"):
        if other == out or not (other / MANIFEST_FILE).is_file():
            continue
        try:
            recorded = read_manifest(other).inputs.get("ontology")
        except IndexError_:
            continue
        if recorded is not None and Path(recorded.path) == source.ontology.resolve():
            shutil.rmtree(other, ignore_errors=True)


def ensure_index(
    config: NavqaConfig,
    dataset: DatasetFiles | VkgSource,
    *,
    embedder: Embedder | Callable[[], Embedder] | None = None,
    llm: LLM | None = None,
    force: bool = False,
    out_dir: Path | None = None,
    progress: ProgressFn | None = None,
) -> IndexBundle:
    """Load the index of a dataset, building it first when missing, stale or forced.

    The index is built from the dataset's ontology, its default (native ``.obda``)
    mapping and, when it has one, its XML catalog (imports are then followed).

    Args:
        config: The configuration (cache directory, embedder).
        dataset: A :class:`~navqa.runtime.datasets.LocalDataset`, or any VKG's
            :class:`~navqa.model.vkg_source.VkgSource` (see :func:`source_index_dir`).
        embedder: The embedder to build with, or a factory for it; by default one is
            made from ``config.embedder`` — only when a build is needed.
        llm: Passed to :func:`build_index` (descriptions written by the LLM).
        force: Rebuild even when the index is fresh.
        out_dir: Where the index lives (default :func:`index_dir_for`).
        progress: Build progress callback.

    Raises:
        IndexError_, InputError, LLMError: see :func:`build_index` and :func:`load_index`.
    """
    rebuild: str | None = None
    if isinstance(dataset, VkgSource):
        default_out = source_index_dir(config, dataset)
        expected = dataset.index_inputs()
        catalog = dataset.catalog
        rebuild = f"navqa index {dataset.flags()} --force"
    else:
        default_out = index_dir_for(config, dataset.name)
        catalog = dataset.path("catalog") if dataset.manifest.has("catalog") else None
        expected = {"ontology": dataset.path("ontology"), "mapping": dataset.path("mapping")}
        if catalog is not None:
            expected["catalog"] = catalog
    out = Path(out_dir) if out_dir is not None else default_out

    def fresh() -> IndexBundle | None:
        if force or not (out / MANIFEST_FILE).is_file():
            return None
        try:
            found = load_index(out, expected_inputs=expected)
        except IndexError_ as e:
            logger.info("rebuilding index of %s: %s", dataset.name, e.message)
            return None
        wanted = _wanted_model(config, embedder)
        if wanted is None or wanted == found.manifest.embedder_model:
            return found
        logger.info("rebuilding index of %s: built with %s, configured %s",
                    dataset.name, found.manifest.embedder_model, wanted)
        return None

    ready = fresh()
    if ready is not None:
        return ready
    # Processes that find no fresh index build it one at a time; whoever waited for the
    # lock looks again, since the process before it has usually just built it.
    with exclusive_lock(out.with_name(f".{out.name}.lock")):
        ready = None if force else fresh()
        if ready is not None:
            return ready
        return _build_locked(config, dataset, out, out_dir, expected, catalog, rebuild,
                             embedder, llm, progress)


def _build_locked(
    config: NavqaConfig,
    dataset: DatasetFiles | VkgSource,
    out: Path,
    out_dir: Path | None,
    expected: dict[str, Path],
    catalog: Path | None,
    rebuild: str | None,
    embedder: Embedder | Callable[[], Embedder] | None,
    llm: LLM | None,
    progress: ProgressFn | None,
) -> IndexBundle:
    """The build half of :func:`ensure_index`, run under its lock."""
    if embedder is None:
        # the configured runtime (numpy by default: the same vectors to 1e-4 cosine as
        # sentence-transformers, without torch's import and ~0.8 GB)
        from navqa.backends.embedder_factory import make_embedder

        emb: Embedder = make_embedder(config.embedder)
    elif isinstance(embedder, Embedder):
        emb = embedder
    else:
        emb = embedder()
    bundle = build_index(
        config,
        ontology_path=expected["ontology"],
        mapping_path=expected["mapping"],
        catalog=catalog,
        out_dir=out,
        embedder=emb,
        llm=llm,
        progress=progress,
        name=dataset.name,
        rebuild=rebuild,
    )
    if isinstance(dataset, VkgSource) and dataset.kind is not VkgKind.bundled \
            and out_dir is None:
        _prune_superseded(out, dataset)
    return bundle


def _wanted_model(
    config: NavqaConfig, embedder: Embedder | Callable[[], Embedder] | None
) -> str | None:
    """The embedder name a fresh index must have (``None``: cannot tell cheaply)."""
    if isinstance(embedder, Embedder):
        return embedder.name
    if embedder is not None:
        return None
    from navqa.backends.embedder_st import resolve_model

    try:
        return resolve_model(config.embedder.model)[1]
    except ConfigError:  # reported when the embedder is actually built
        return None


OWLREADY_MAX_TRIPLES = 200_000
"""Above this many triples the owlready2 cross-check is skipped (and says so in the stats):
owlready2 loads into SQLite at about 10 µs a triple and several times the graph's memory."""


def owlready_check(ontology: Ontology, graph: Graph) -> dict[str, Any]:
    """owlready2's independent reading of T, compared with ours (for ``index --stats``)."""
    if len(graph) > OWLREADY_MAX_TRIPLES:
        return {"skipped": f"{len(graph):,} triples, more than the {OWLREADY_MAX_TRIPLES:,} "
                           "the cross-check reads"}
    try:
        found = crosscheck_with_owlready(ontology, graph)
    except OntologyParseError as e:
        return {"error": str(e)}
    return {
        "disagreements": len(found),
        "examples": [f"{d.aspect} {d.iri}: navqa {sorted(d.ours)}, owlready2 {sorted(d.theirs)}"
                     for d in found[:5]],
    }
