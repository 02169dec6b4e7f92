"""What a cold ``navqa`` process imports: no heavy library before it needs one.

Each test runs the real entry point in a fresh interpreter and reads ``sys.modules`` at
exit, so whatever any module imports, at any depth, is seen.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass

import pytest

#: Never needed to answer a question with the offline backend.
HEAVY = {"torch", "transformers", "sentence_transformers", "matplotlib", "owlready2", "sqlglot",
         "pandas", "openai", "scipy", "sklearn"}
#: Needed by ``ask`` (the index and the query-time encoder), by nothing that ends earlier.
MODEL = {"faiss", "tokenizers", "safetensors", "threadpoolctl"}

PROBE = r"""
import atexit, json, sys

@atexit.register
def _report():
    top = sorted({name.split(".")[0] for name in list(sys.modules)})
    sys.stderr.write("\nPROBE-MODULES " + json.dumps(top) + "\n")

sys.argv = ["navqa", *sys.argv[1:]]
from navqa.cli.main import run
run()
"""


@dataclass(frozen=True)
class Cold:
    code: int
    out: str
    err: str
    modules: set[str]


def run_cold(*args: str) -> Cold:
    env = dict(os.environ, COLUMNS="200")
    for var in ("NAVQA_CONFIG", "NAVQA_LLM", "NAVQA_LLM_MODEL", "OPENAI_API_KEY"):
        env.pop(var, None)
    proc = subprocess.run([sys.executable, "-c", PROBE, *args], env=env, capture_output=True,
                          text=True, timeout=600)
    marker = "PROBE-MODULES "
    lines = [ln for ln in proc.stderr.splitlines() if ln.startswith(marker)]
    assert lines, f"the probe did not report (exit {proc.returncode}): {proc.stderr[-2000:]}"
    return Cold(proc.returncode, proc.stdout, proc.stderr,
                set(json.loads(lines[-1][len(marker):])))


def test_help_imports_neither_heavy_libraries_nor_the_model() -> None:
    cold = run_cold("--help")
    assert cold.code == 0 and "ask" in cold.out
    assert cold.modules & (HEAVY | MODEL) == set()


@pytest.mark.parametrize("args", [
    ("ask", "--vkg", "no-such-vkg", "How many stations are there?"),
    ("ask", "--vkg", "demo", "   "),
    ("ask", "--vkg", "demo", "--top-k", "0", "How many stations are there?"),
])
def test_a_refused_question_loads_no_model(args: tuple[str, ...]) -> None:
    cold = run_cold(*args)
    assert cold.code == 2, cold.err[-2000:]
    assert "Traceback" not in cold.err
    assert cold.modules & (HEAVY | MODEL) == set()


@pytest.mark.ontop
@pytest.mark.postgres
@pytest.mark.slow
def test_ask_with_the_endpoint_up_imports_only_what_it_uses(navqa_config, vkg) -> None:
    from navqa.backends.embedder_factory import make_embedder
    from navqa.offline.artifacts import ensure_index

    served = vkg("demo")
    (expected,) = served.sql("SELECT count(*) FROM rolling_stock WHERE kind = 'electric_loco'")[0]
    # The index exists (as after `navqa index`): the cold path only loads it.
    ensure_index(navqa_config, served.dataset, embedder=make_embedder(navqa_config.embedder))
    cold = run_cold("ask", "--vkg", "demo", "--endpoint", served.running.url, "--llm", "none",
                    "--json", "How many electric locomotives are there?")
    assert cold.code == 0, cold.err[-3000:]
    answer = json.loads(cold.out)
    [row] = answer["result"]["results"]["bindings"]
    assert int(row["count"]["value"]) == expected  # the question was really answered
    assert cold.modules >= MODEL  # the probe sees lazy imports: these happened when needed
    assert cold.modules & HEAVY == set()
