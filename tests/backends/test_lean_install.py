"""The lean install: the index and the queries on the numpy encoder, no torch.

sentence-transformers is the optional ``st`` extra. The suite has it installed (``make
test``), so it is both the reference the numpy index is compared with and, made
unimportable in a subprocess, the missing package a lean install lacks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import navqa.backends.embedder_factory as embedder_factory
from navqa.backends.embedder_numpy import NumpyBertEmbedder
from navqa.backends.embedder_st import INSTALL_ST
from navqa.backends.protocols import Embedder
from navqa.config import EmbedderConfig, NavqaConfig
from navqa.offline.artifacts import IndexBundle, ensure_index
from navqa.runtime.datasets import LocalDataset

MENTION = "company"  # what the pipeline encodes: a question's mentions
#: What a lean install lacks: sys.modules[name] = None makes ``import name`` fail.
ST_MODULES = ("sentence_transformers", "torch", "transformers")


def without_sentence_transformers(tmp_path: Path) -> dict[str, str]:
    """The environment of a subprocess in which sentence-transformers cannot be imported."""
    block = tmp_path / "no-st"
    block.mkdir(exist_ok=True)
    (block / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in ST_MODULES))
    env = {k: v for k, v in os.environ.items() if k not in ("NAVQA_CONFIG", "NAVQA_LLM",
                                                            "NAVQA_LLM_MODEL")}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(block), env.get("PYTHONPATH")) if p)
    return env


def _rows(bundle: IndexBundle) -> tuple[list[str], np.ndarray]:
    ids = bundle.class_index.ids + bundle.property_index.ids
    return ids, np.vstack([bundle.class_index.vectors(), bundle.property_index.vectors()])


def test_the_numpy_index_equals_the_sentence_transformers_index(
        navqa_config: NavqaConfig, shared_dataset: Callable[[str], LocalDataset],
        embedder: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    demo = shared_dataset("demo")
    built: list[Embedder] = []
    real = embedder_factory.make_embedder

    def recording(cfg: EmbedderConfig) -> Embedder:
        built.append(real(cfg))
        return built[-1]

    monkeypatch.setattr(embedder_factory, "make_embedder", recording)
    ours = ensure_index(navqa_config, demo, out_dir=tmp_path / "numpy", force=True)
    assert [type(e) for e in built] == [NumpyBertEmbedder]  # the default build: numpy
    theirs = ensure_index(navqa_config, demo, out_dir=tmp_path / "st", force=True,
                          embedder=embedder)
    assert ours.manifest.embedder_model == theirs.manifest.embedder_model == embedder.name

    ids, vectors = _rows(ours)
    st_ids, st_vectors = _rows(theirs)
    assert ids == st_ids and len(ids) >= 50
    cosine = np.sum(vectors * st_vectors, axis=1)
    worst = int(np.argmin(cosine))
    assert cosine[worst] >= 1 - 1e-4, f"{ids[worst]}: cosine {cosine[worst]}"
    # the descriptions themselves, embedded now by sentence-transformers
    texts = [ours.descriptions[i].text for i in ids]
    direct = np.sum(vectors * embedder.embed(texts), axis=1)
    assert float(direct.min()) >= 1 - 1e-4


PROBE = textwrap.dedent("""
    import importlib.util, json, sys
    from pathlib import Path
    from navqa.backends.embedder_factory import make_embedder
    from navqa.backends.rerankers import make_reranker
    from navqa.config import load_config
    from navqa.errors import ConfigError
    from navqa.offline.artifacts import ensure_index
    from navqa.runtime.datasets import fetch_dataset

    out, model_dir, mention = Path(sys.argv[1]), sys.argv[2], sys.argv[3]
    cfg = load_config()
    bundle = ensure_index(cfg, fetch_dataset("demo", cfg), out_dir=out, force=True)
    emb = make_embedder(cfg.embedder)
    vec = emb.embed([mention])
    report = {
        "blocked": importlib.util.find_spec("sentence_transformers") is None,
        "embedder": type(emb).__name__,
        "model": bundle.manifest.embedder_model,
        "classes": len(bundle.class_index),
        "top": [i for i, _ in bundle.class_index.search(vec, 3)[0]],
        "query": vec[0].tolist(),
    }
    try:
        make_reranker(cfg.with_overrides(reranker={"model_path": model_dir}), emb, None)
    except ConfigError as e:
        report["reranker"] = [e.message, e.hint]
    report["loaded"] = sorted(m for m in sys.modules
                              if m.split(".")[0] in ("sentence_transformers", "torch",
                                                     "transformers")
                              and sys.modules[m] is not None)
    print(json.dumps(report))
""")


def test_without_sentence_transformers_the_index_and_queries_work(
        navqa_config: NavqaConfig, embedder: Any, tmp_path: Path) -> None:
    env = without_sentence_transformers(tmp_path)
    env["NAVQA_CACHE_DIR"] = str(navqa_config.runtime.cache_dir)
    reranker_dir = tmp_path / "reranker"
    reranker_dir.mkdir()
    proc = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path / "index"),
                           str(reranker_dir), MENTION],
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.splitlines()[-1])
    assert report["blocked"] and report["loaded"] == []
    assert report["embedder"] == "NumpyBertEmbedder"
    assert report["model"] == embedder.name and report["classes"] >= 10
    assert "http://example.org/navqa/rail#Company" in report["top"]
    cosine = float(np.dot(np.asarray(report["query"], dtype=np.float32),
                          embedder.embed([MENTION])[0]))
    assert cosine >= 1 - 1e-4
    message, hint = report["reranker"]
    assert "sentence-transformers is not installed" in message
    assert "cross-encoder" in message
    assert INSTALL_ST in hint and INSTALL_ST == "pip install 'navqa[st]'"


def _cls_pooling_model(tmp_path: Path) -> Path:
    """A copy of the default model with CLS pooling: only sentence-transformers runs it."""
    from navqa.backends.embedder_st import default_model_path

    src, dst = default_model_path(), tmp_path / "cls-model"
    dst.mkdir()
    for f in src.rglob("*"):
        target = dst / f.relative_to(src)
        if f.is_dir():
            target.mkdir(exist_ok=True)
        elif f.name == "model.safetensors":
            target.symlink_to(f)
        else:
            target.write_bytes(f.read_bytes())
    pooling = dst / "1_Pooling" / "config.json"
    cfg = json.loads(pooling.read_text())
    cfg.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    pooling.write_text(json.dumps(cfg))
    return dst


def test_a_model_that_needs_sentence_transformers_is_one_line_and_exit_2(
        navqa_config: NavqaConfig, tmp_path: Path) -> None:
    model = _cls_pooling_model(tmp_path)
    config = tmp_path / "navqa.yaml"
    config.write_text(f"embedder:\n  model: {model}\n")
    env = without_sentence_transformers(tmp_path)
    env.update(NAVQA_CONFIG=str(config), NAVQA_CACHE_DIR=str(tmp_path / "cache"),
               COLUMNS="300")
    proc = subprocess.run([sys.executable, "-m", "navqa.cli", "index", "--vkg", "demo"],
                          env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: sentence-transformers is not installed")
    assert str(model) in lines[0] and "mean pooling" in lines[0]
    assert "pip install 'navqa[st]'" in lines[0]


def test_with_sentence_transformers_that_model_runs_on_it(tmp_path: Path) -> None:
    model = _cls_pooling_model(tmp_path)
    cfg = EmbedderConfig(model=str(model))
    choice = embedder_factory.explain_runtime(cfg)
    assert choice.runtime is embedder_factory.EmbedderRuntime.SENTENCE_TRANSFORMERS
    emb = embedder_factory.make_embedder(cfg)
    assert type(emb).__name__ == "SentenceTransformerEmbedder"
    assert emb.embed(["wellbore"]).shape == (1, 384)


def test_the_runtime_can_be_asked_for_in_the_config() -> None:
    assert embedder_factory.choose_runtime(EmbedderConfig()) is \
        embedder_factory.EmbedderRuntime.NUMPY
    forced = EmbedderConfig(runtime="sentence-transformers")
    assert embedder_factory.explain_runtime(forced) == embedder_factory.RuntimeChoice(
        embedder_factory.EmbedderRuntime.SENTENCE_TRANSFORMERS,
        "embedder.runtime is sentence-transformers")
    assert type(embedder_factory.make_embedder(forced)).__name__ == \
        "SentenceTransformerEmbedder"
