"""The index directory: build, warm load, stale-input detection, ensure_index, and the CLI.

Most tests use :class:`HashEmbedder`, a tiny deterministic bag-of-words embedder: the
indexer plumbing is under test, not the embedding model. One test uses the real
sentence-transformers model.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from navqa.backends.protocols import Embedder, Vectors
from navqa.config import NavqaConfig
from navqa.errors import IndexError_
from navqa.model.dataset import DatasetFile, DatasetManifest
from navqa.model.iri import split_words
from navqa.offline.artifacts import (
    FORMAT_VERSION,
    build_index,
    ensure_index,
    index_dir_for,
    load_index,
    sha256_file,
)
from navqa.runtime.datasets import LocalDataset
from navqa.runtime.paths import repo_root

RAIL = "http://example.org/navqa/rail#"


class HashEmbedder:
    """Hashed bag of words (camelCase split), L2-normalised; counts its ``embed`` calls."""

    name = "hash-bow-64"
    dim = 64

    def __init__(self) -> None:
        self.calls = 0

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.calls += 1
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for w in split_words(text):
                out[i, int(hashlib.sha1(w.encode()).hexdigest(), 16) % self.dim] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms


def test_hash_embedder_is_an_embedder() -> None:
    assert isinstance(HashEmbedder(), Embedder)


@pytest.fixture
def demo_copy(tmp_path: Path) -> tuple[Path, Path]:
    """A private copy of the demo VKG's ontology and mapping (tests modify them)."""
    root = repo_root()
    onto = tmp_path / "vkg" / "demo.ttl"
    maps = tmp_path / "vkg" / "demo.obda"
    onto.parent.mkdir()
    shutil.copy(root / "ontologies" / "demo.ttl", onto)
    shutil.copy(root / "mappings" / "demo.obda", maps)
    return onto, maps


@pytest.fixture
def config(tmp_path: Path) -> NavqaConfig:
    return NavqaConfig.model_validate({"runtime": {"cache_dir": str(tmp_path / "cache")},
                                       "llm": {"provider": "none"}})


def _build(config: NavqaConfig, demo: tuple[Path, Path], out: Path, **kw: object) -> object:
    return build_index(config, ontology_path=demo[0], mapping_path=demo[1], out_dir=out,
                       embedder=HashEmbedder(), **kw)  # type: ignore[arg-type]


def test_build_writes_the_directory_and_loads_back(
        config: NavqaConfig, demo_copy: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "idx"
    stages: list[str] = []
    built = build_index(config, ontology_path=demo_copy[0], mapping_path=demo_copy[1],
                        out_dir=out, embedder=HashEmbedder(), name="demo",
                        progress=lambda s, d, t: stages.append(s))
    assert {p.name for p in out.iterdir()} == {"manifest.json", "stats.json", "model.pickle",
                                               "classes", "properties"}
    assert {p.name for p in (out / "classes").iterdir()} == {"index.faiss", "ids.json"}
    assert stages[0] == "parse" and stages[-1] == "save" and "embed" in stages

    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["format_version"] == FORMAT_VERSION
    assert manifest["embedder_model"] == "hash-bow-64" and manifest["dim"] == 64
    assert manifest["inputs"]["mapping"]["sha256"] == sha256_file(demo_copy[1])
    assert manifest["inputs"]["ontology"]["sha256"] == sha256_file(demo_copy[0])
    assert manifest["rebuild"] == "navqa index --vkg demo --force"
    assert manifest["stats"]["closure"]["seeds_total"] > 0
    assert json.loads((out / "stats.json").read_text(encoding="utf-8")) == manifest["stats"]

    loaded = load_index(out)
    assert loaded.descriptions == built.descriptions  # type: ignore[attr-defined]
    assert loaded.active.signature == built.active.signature  # type: ignore[attr-defined]
    assert loaded.graph.edges == built.graph.edges  # type: ignore[attr-defined]
    n_cls = sum(not d.kind.is_property for d in loaded.descriptions.values())
    assert len(loaded.class_index) == n_cls
    assert len(loaded.property_index) == len(loaded.descriptions) - n_cls
    assert set(loaded.class_index.ids) <= loaded.active.signature
    # the unmapped demo elements are not indexed
    for unmapped in ("Train", "operatesLine", "stopsAt", "stationRegion", "openingYear"):
        assert RAIL + unmapped not in loaded.descriptions
    hits = loaded.class_index.search(HashEmbedder().embed(["operator company"]), 3)[0]
    assert RAIL + "OperatorCompany" in [i for i, _ in hits]


@pytest.mark.parametrize("role", ["mapping", "ontology"])
def test_stale_input_is_refused_with_the_file_and_the_command(
        config: NavqaConfig, demo_copy: tuple[Path, Path], tmp_path: Path, role: str) -> None:
    out = tmp_path / "idx"
    _build(config, demo_copy, out)
    changed = demo_copy[1] if role == "mapping" else demo_copy[0]
    with changed.open("a", encoding="utf-8") as f:
        f.write("\n# edited after the build\n" if role == "ontology" else "\n")
    with pytest.raises(IndexError_) as err:
        load_index(out)
    msg = str(err.value)
    assert "stale" in msg and f"{role} file {changed}" in msg and "changed" in msg
    assert err.value.hint is not None
    assert err.value.hint.startswith("rebuild it: navqa index --ontology ")
    assert f"--out {out} --force" in err.value.hint


def test_expected_inputs_are_compared_by_content(
        config: NavqaConfig, demo_copy: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "idx"
    _build(config, demo_copy, out)
    same = tmp_path / "elsewhere.obda"
    shutil.copy(demo_copy[1], same)
    load_index(out, expected_inputs={"mapping": same})  # same bytes: fresh
    other = tmp_path / "r2rml.ttl"
    shutil.copy(repo_root() / "mappings" / "demo.r2rml.ttl", other)
    with pytest.raises(IndexError_, match=r"mapping file .*r2rml\.ttl changed"):
        load_index(out, expected_inputs={"mapping": other})
    with pytest.raises(IndexError_, match="built without a catalog file"):
        load_index(out, expected_inputs={"catalog": other})
    load_index(out, expected_inputs={"mapping": other}, verify=False)


def test_missing_corrupt_and_foreign_indexes(
        config: NavqaConfig, demo_copy: tuple[Path, Path], tmp_path: Path) -> None:
    with pytest.raises(IndexError_, match="no index at"):
        load_index(tmp_path / "nothing")
    out = tmp_path / "idx"
    _build(config, demo_copy, out)
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    (out / "manifest.json").write_text(json.dumps({**manifest, "navqa_version": "0.0.1"}),
                                       encoding="utf-8")
    with pytest.raises(IndexError_, match="built by navqa 0.0.1"):
        load_index(out)
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    (out / "model.pickle").write_bytes(b"not a pickle")
    with pytest.raises(IndexError_, match="model.pickle is unreadable"):
        load_index(out)
    (out / "manifest.json").write_text("{", encoding="utf-8")
    with pytest.raises(IndexError_, match="unreadable"):
        load_index(out)


def _dataset(onto: Path, maps: Path) -> LocalDataset:
    manifest = DatasetManifest(
        name="railcopy", title="demo copy", database="none",
        files=(DatasetFile(role="ontology", path="demo.ttl", in_repo=True),
               DatasetFile(role="mapping", path="demo.obda", in_repo=True)))
    return LocalDataset(manifest=manifest, root=onto.parent,
                        files={"demo.ttl": onto, "demo.obda": maps},
                        sha256={"demo.ttl": sha256_file(onto), "demo.obda": sha256_file(maps)})


def test_ensure_index_builds_loads_and_rebuilds_when_stale(
        config: NavqaConfig, demo_copy: tuple[Path, Path]) -> None:
    ds = _dataset(*demo_copy)
    made: list[HashEmbedder] = []

    def factory() -> HashEmbedder:
        made.append(HashEmbedder())
        return made[-1]

    first = ensure_index(config, ds, embedder=factory)
    assert first.path == index_dir_for(config, "railcopy")
    assert first.path == Path(config.runtime.cache_dir) / "index" / "railcopy"
    assert len(made) == 1
    second = ensure_index(config, ds, embedder=factory)
    assert len(made) == 1  # loaded, nothing embedded
    assert second.descriptions == first.descriptions
    with demo_copy[1].open("a", encoding="utf-8") as f:
        f.write("\n")
    ensure_index(config, ds, embedder=factory)
    assert len(made) == 2  # stale mapping: rebuilt
    ensure_index(config, ds, embedder=factory, force=True)
    assert len(made) == 3
    # an index built with another embedder is rebuilt for the one asked for
    other = HashEmbedder()
    other.name = "another-model"
    assert ensure_index(config, ds, embedder=other).manifest.embedder_model == "another-model"


def test_processes_that_find_no_index_build_it_once(
        config: NavqaConfig, demo_copy: tuple[Path, Path]) -> None:
    """Four callers at once (e.g. four `navqa ask` on a fresh cache): one builds, all load.

    Each thread opens the lock file itself, so ``flock`` serialises them as it does
    processes.
    """
    import threading
    from concurrent.futures import ThreadPoolExecutor

    ds = _dataset(*demo_copy)
    made: list[HashEmbedder] = []
    start = threading.Barrier(4)

    def factory() -> HashEmbedder:
        made.append(HashEmbedder())
        return made[-1]

    def one(_: int) -> str:
        start.wait()
        return ensure_index(config, ds, embedder=factory).manifest.created

    with ThreadPoolExecutor(4) as pool:
        built = list(pool.map(one, range(4)))
    assert len(made) == 1, "the index was built more than once"
    assert len(set(built)) == 1


@pytest.mark.slow
def test_real_embedder_finds_the_operator_property(
        config: NavqaConfig, demo_copy: tuple[Path, Path], tmp_path: Path) -> None:
    from navqa.backends.embedder_st import SentenceTransformerEmbedder

    emb = SentenceTransformerEmbedder.from_config(config.embedder)
    bundle = build_index(config, ontology_path=demo_copy[0], mapping_path=demo_copy[1],
                         out_dir=tmp_path / "idx", embedder=emb)
    assert bundle.manifest.embedder_model == "all-MiniLM-L6-v2"
    hits = bundle.property_index.search(emb.embed(["which company operates it"]), 5)[0]
    assert RAIL + "operatedBy" in [i for i, _ in hits]
    hits = bundle.class_index.search(emb.embed(["railway station"]), 3)[0]
    assert hits[0][0] == RAIL + "Station"


@pytest.mark.npd
def test_npd_warm_load_is_fast(config: NavqaConfig, tmp_path: Path,
                               shared_dataset: Callable[[str], LocalDataset]) -> None:
    ds = shared_dataset("npd")
    out = tmp_path / "npd"
    build_index(config, ontology_path=ds.path("ontology"), mapping_path=ds.path("mapping"),
                out_dir=out, embedder=HashEmbedder(), name="npd")
    t = time.perf_counter()
    bundle = load_index(out, expected_inputs={"ontology": ds.path("ontology"),
                                              "mapping": ds.path("mapping")})
    elapsed = time.perf_counter() - t
    assert elapsed <= 2.0, f"warm load took {elapsed:.2f} s"
    assert len(bundle.class_index) + len(bundle.property_index) == 516
    assert bundle.stats["ta"]["active_triples"] == 12_067
    assert bundle.stats["owlready2"] == {"disagreements": 0, "examples": []}


# -- the CLI ------------------------------------------------------------------------------------


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Callable[..., object]:
    from navqa.backends import embedder_factory, embedder_st
    from navqa.cli.main import app

    monkeypatch.setenv("NAVQA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NAVQA_LLM", "none")
    monkeypatch.delenv("NAVQA_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(embedder_st.SentenceTransformerEmbedder, "from_config",
                        classmethod(lambda cls, cfg: HashEmbedder()))
    monkeypatch.setattr(embedder_factory, "make_embedder",
                        lambda cfg, runtime=None: HashEmbedder())
    runner = CliRunner()

    def run(*args: str) -> object:
        return runner.invoke(app, list(args), catch_exceptions=False)

    return run


def test_cli_index_stats_and_json(cli: Callable[..., object], demo_copy: tuple[Path, Path],
                                  tmp_path: Path) -> None:
    out = tmp_path / "cli-idx"
    args = ("index", "--ontology", str(demo_copy[0]), "--mapping", str(demo_copy[1]),
            "--out", str(out))
    res = cli(*args, "--stats")
    assert res.exit_code == 0, res.output  # type: ignore[attr-defined]
    text = res.output  # type: ignore[attr-defined]
    assert "index built" in text
    for needle in ("|E0| (mapped)", "Ta: T restricted", "class graph", "mapping-template",
                   "owlready2 reads T the same way"):
        assert needle in text
    res = cli(*args, "--json")
    assert res.exit_code == 0  # type: ignore[attr-defined]
    report = json.loads(res.output)  # type: ignore[attr-defined]
    assert report["embedder"] == "hash-bow-64"
    assert report["stats"]["closure"]["active_total"] > report["stats"]["closure"]["seeds_total"]
    res = cli(*args)
    assert "index loaded" in res.output  # type: ignore[attr-defined]


def test_cli_index_usage_errors(cli: Callable[..., object]) -> None:
    res = cli("index")
    assert res.exit_code == 2  # type: ignore[attr-defined]
    assert "--vkg" in res.output  # type: ignore[attr-defined]
    res = cli("index", "--ontology", "a.ttl", "--mapping", "b.obda")
    assert res.exit_code == 2  # type: ignore[attr-defined]


@pytest.mark.atkis
def test_atkis_stats_report_the_published_ontology_next_to_t_with_imports(
        navqa_config, shared_dataset) -> None:
    """The Bgee/ATKIS issue: --stats on ATKIS reports the published ontology's counts."""
    from navqa.offline.artifacts import ensure_index

    bundle = ensure_index(navqa_config, shared_dataset("atkis"), embedder=HashEmbedder(),
                          out_dir=navqa_config.runtime.cache_dir / "index-test" / "atkis")
    o = bundle.stats["ontology"]
    assert o["main_file"] == {"classes": 108, "object_properties": 33, "data_properties": 38,
                              "triples": 662}
    assert o["classes"] > 108 and o["imports"]
