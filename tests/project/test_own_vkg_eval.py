"""``navqa eval`` and ``navqa suggest`` on a VKG of the user's own (the library VKG).

Both through ``-t/-m/-p`` and through a ``navqa.toml`` whose question files ``eval`` uses
by default. After every command the user's database is unchanged and the password is in
no output and no file under the cache directory or the run directories.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from .library_vkg import HERE, UserDb, files_holding, navqa

pytestmark = [pytest.mark.postgres, pytest.mark.ontop]

QUESTIONS = "library-questions.jsonl"


@pytest.fixture(scope="module")
def project(vkg_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("library-eval")
    for f in ("library.ttl", "library.obda", "library.properties"):
        shutil.copy(vkg_dir / f, d)
    shutil.copy(HERE / QUESTIONS, d)
    return d


def _summary(run: Path) -> dict[str, object]:
    data = json.loads((run / "summary.json").read_text())
    assert isinstance(data, dict)
    return data


def test_eval_on_a_vkg_of_ones_own(project: Path, user_db: UserDb) -> None:
    files = ("-t", "library.ttl", "-m", "library.obda", "-p", "library.properties")
    out = navqa("eval", *files, "--dataset", QUESTIONS, "--strategy", "navqa", "--llm", "none",
                "--out", "runs/flags", cwd=project, db=user_db)
    s = _summary(project / "runs/flags")
    assert s["vkg"] == "library" and s["n"] == 7, s
    assert not s.get("gold_errors"), s  # every gold query ran on the user's database
    assert "F1" in out
    print(f"navqa --llm none on library (-t/-m/-p): F1 {s['f1']} Acc {s['acc']} EM {s['em']}")
    gold_dir = project / "runs/flags/gold"
    assert len(list(gold_dir.glob("*.json"))) == 7  # the gold answers stay with the run

    # a navqa.toml project: its question files are what eval uses by default
    navqa("init", cwd=project, db=user_db)
    assert QUESTIONS in (project / "navqa.toml").read_text()
    navqa("eval", "--strategy", "gold", "--out", "runs/toml", cwd=project, db=user_db)
    s = _summary(project / "runs/toml")
    assert s["n"] == 7 and s["f1"] == 1.0 and s["acc"] == 1.0, s
    print(f"gold on library (navqa.toml): F1 {s['f1']} Acc {s['acc']}")
    assert not files_holding(project / "runs", user_db.password)

    # questions naming another VKG are refused before anything starts
    other = project / "other.jsonl"
    other.write_text(json.dumps({"id": "x", "question": "?", "vkg": "demo",
                                 "sparql": "SELECT * WHERE { ?s ?p ?o } LIMIT 1"}) + "\n")
    navqa("eval", "--dataset", "other.jsonl", "--out", "runs/other", cwd=project, db=user_db,
          ok=(1, 2))


def test_suggest_on_a_vkg_of_ones_own(project: Path, user_db: UserDb) -> None:
    # questions with the queries written for them (as a `navqa ask --json` log holds)
    rec = "PREFIX : <http://example.org/library#> SELECT ?m WHERE {{ ?b :title {t!r} ; " \
          ":recommendedBy ?m }}"
    log = project / "asked.jsonl"
    log.write_text("".join(json.dumps({"question": f"Who recommended {t}?",
                                       "sparql": rec.format(t=t).replace("'", '"')}) + "\n"
                           for t in ("The Silent Lighthouse", "Kindred")))
    files = ("-t", "library.ttl", "-m", "library.obda", "-p", "library.properties")
    out = navqa("suggest", *files, "--log", "asked.jsonl", "--format", "json", "--limit", "2",
                "--out", "suggest.json", cwd=project, db=user_db)
    report = json.loads((project / "suggest.json").read_text())
    needed = json.dumps(report)
    assert "recommendedBy" in needed, out
    assert user_db.password not in (project / "suggest.json").read_text()
    # the mapping file is only read
    assert (project / "library.obda").read_text() == (HERE / "library.obda").read_text()
