"""The bad-input suite: a user's mistakes on ``index``, ``ask``, ``sparql``, ``lint``, ``eval``
and ``endpoint``, each answered with one line naming the input and the documented exit code
(README, "Exit codes"): 2 for usage and bad input, 1 for a command that ran and failed.

Every case runs :func:`navqa.cli.main.run` — what the console script runs — with the heavy
entry points guarded (see ``conftest.py``): a bad input must be refused before the index,
the embedding model, PostgreSQL or Ontop start. The files under ``bad_inputs/`` are the
broken inputs (not UTF-8, not JSON, an UPDATE, not YAML, invalid question lines, a mapping
with a target line inside its SQL, with a tiny valid ontology to go with it).

Placeholders in the arguments: ``{BAD}`` the ``bad_inputs`` folder, ``{TMP}`` a fresh
temporary folder, ``{NOPE}`` a path that does not exist, ``{DIR}`` an existing folder,
``{FILE}`` an existing file that is not what the option wants.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_harness import assert_clean

BAD = Path(__file__).parent / "bad_inputs"
SELECT = "SELECT * WHERE { ?s ?p ?o }"
LATIN1 = 'SELECT ?x WHERE { ?x ?p "caf\xe9" }'.encode("latin-1")


@dataclass(frozen=True)
class Case:
    args: tuple[str, ...]
    code: int
    names: tuple[str, ...]
    stdin: bytes = b""


def c(code: int, names: tuple[str, ...] | str, *args: str, stdin: bytes = b"") -> Case:
    return Case(args=args, code=code, names=(names,) if isinstance(names, str) else names,
                stdin=stdin)


RUN = ("--vkg", "demo", "--out", "{TMP}/run")

CASES: dict[str, list[Case]] = {
    "index": [
        c(2, ("--vkg", "nosuch"), "index", "--vkg", "nosuch"),
        c(2, ("--vkg", "../demo"), "index", "--vkg", "../demo"),
        c(2, "--vkg", "index", "--vkg", ""),
        c(2, "--vkg", "index", "--vkg"),
        c(2, "--bogus", "index", "--bogus"),
        c(2, "extra-arg", "index", "--vkg", "demo", "extra-arg"),
        c(2, ("--vkg", "-t"), "index", "--vkg", "demo", "-t", "{FILE}", "-m", "{FILE}"),
        c(2, "{NOPE}.ttl", "index", "-t", "{NOPE}.ttl", "-m", "{FILE}", "--out", "{TMP}/ix"),
        c(2, "{NOPE}.obda", "index", "-t", "{FILE}", "-m", "{NOPE}.obda", "--out", "{TMP}/ix"),
        c(2, "{DIR}", "index", "--ontology", "{DIR}", "-m", "{FILE}", "--out", "{TMP}/ix"),
        c(2, "{DIR}", "index", "-t", "{FILE}", "--mapping", "{DIR}", "--out", "{TMP}/ix"),
        c(2, "{NOPE}.xml", "index", "-t", "{FILE}", "-m", "{FILE}", "--catalog", "{NOPE}.xml",
          "--out", "{TMP}/ix"),
        c(2, "{FILE}", "index", "-t", "{FILE}", "-m", "{FILE}", "--out", "{FILE}"),
        c(2, "{DIR}", "index", "-t", "{FILE}", "-m", "{FILE}", "--catalog", "{DIR}"),
        c(2, ("--vkg", "nosuch"), "index", "--vkg", "nosuch", "--stats", "--json"),
        c(2, "{NOPE}.yaml", "--config", "{NOPE}.yaml", "index", "--vkg", "demo"),
        c(2, "config-not-yaml.yaml", "--config", "{BAD}/config-not-yaml.yaml", "index"),
        c(2, "config-list.yaml", "--config", "{BAD}/config-list.yaml", "index"),
        c(2, "{DIR}", "--config", "{DIR}", "index", "--vkg", "demo"),
        c(2, ("config-latin1.yaml", "offset 17"), "--config", "{BAD}/config-latin1.yaml",
          "index", "--vkg", "demo"),
        c(2, "-q", "-q", "index"),
    ],
    "ask": [
        c(2, "question", "ask"),
        c(2, "question", "ask", ""),
        c(2, "question", "ask", "   "),
        c(2, ("--vkg", "nosuch"), "ask", "--vkg", "nosuch", "Which lines?"),
        c(2, ("--vkg", "[/x]"), "ask", "--vkg", "[/x]", "Which lines?"),
        c(2, ("--vkg", "[link=http://x]y[/link]"), "ask", "--vkg", "[link=http://x]y[/link]",
          "q"),
        c(2, ("--vkg", "nosuch"), "ask", "--vkg", "nosuch", "[/x] and [bold]"),
        c(2, ("--llm", "gpt"), "ask", "--llm", "gpt", "Which lines?"),
        c(2, ("--strategy", "magic"), "ask", "--strategy", "magic", "Which lines?"),
        c(2, ("--top-k", "abc"), "ask", "--top-k", "abc", "Which lines?"),
        c(2, ("--top-k", "0"), "ask", "--top-k", "0", "Which lines?"),
        c(2, ("--top-k", "-3"), "ask", "--top-k", "-3", "Which lines?"),
        c(2, ("--max-depth", "deep"), "ask", "--max-depth", "deep", "Which lines?"),
        c(2, ("--max-depth", "-1"), "ask", "--max-depth", "-1", "Which lines?"),
        c(2, "--bogus", "ask", "--bogus", "Which lines?"),
        c(2, "extra", "ask", "Which lines?", "extra"),
        c(2, "--vkg", "ask", "Which lines?", "--vkg"),
        c(2, ("--endpoint", "ftp://x"), "ask", "--endpoint", "ftp://x", "Which lines?"),
        c(2, ("--endpoint", "http://"), "ask", "--endpoint", "http://", "Which lines?"),
        c(2, ("--endpoint", "99999"), "ask", "--endpoint", "http://h:99999/sparql", "q"),
        c(2, "{NOPE}.ttl", "ask", "-t", "{NOPE}.ttl", "-m", "{FILE}", "Which lines?"),
        c(2, "{DIR}", "ask", "-t", "{DIR}", "-m", "{FILE}", "Which lines?"),
        c(2, ("--vkg", "-t"), "ask", "--vkg", "demo", "-t", "{FILE}", "Which lines?"),
        c(2, "{NOPE}.yaml", "--config", "{NOPE}.yaml", "ask", "Which lines?"),
        c(2, ("--llm", "nope"), "ask", "--json", "--llm", "nope", "Which lines?"),
        c(2, "--explain", "ask", "--explain=yes", "Which lines?"),
    ],
    "sparql": [
        c(2, "query", "sparql"),
        c(2, "query", "sparql", ""),
        c(2, "{NOPE}.rq", "sparql", "{NOPE}.rq"),
        c(2, "missing.sparql", "sparql", "missing.sparql"),
        c(2, "{DIR}", "sparql", "{DIR}"),
        c(2, ("latin1.rq", "offset"), "sparql", "{BAD}/latin1.rq"),
        c(2, ("<stdin>", "offset"), "sparql", "-", stdin=LATIN1),
        c(2, ("UPDATE", "INSERT DATA"), "sparql", "{BAD}/update.rq"),
        c(2, ("UPDATE", "INSERT DATA"), "sparql", "INSERT DATA { <a:b> <a:c> <a:d> }"),
        c(2, ("UPDATE", "DELETE"), "sparql", "DELETE WHERE { ?s ?p ?o }"),
        c(2, ("UPDATE", "DROP ALL"), "sparql", "-", stdin=b"DROP ALL"),
        c(2, "hello world", "sparql", "hello world, what is this"),
        c(2, "hello world", "sparql", "{BAD}/not-a-query.rq"),
        c(2, ("--json", "--csv"), "sparql", "--json", "--csv", SELECT),
        c(2, ("--endpoint", "ftp://x"), "sparql", "--endpoint", "ftp://x", SELECT),
        c(2, ("--endpoint", "not a url"), "sparql", "--endpoint", "not a url", SELECT),
        c(2, ("--vkg", "nosuch"), "sparql", "--vkg", "nosuch", SELECT),
        c(2, ("--vkg", "[/x]"), "sparql", "--vkg", "[/x]", SELECT),
        c(2, "--bogus", "sparql", "--bogus", SELECT),
        c(2, "extra", "sparql", SELECT, "extra"),
        c(2, "{NOPE}.ttl", "sparql", "-t", "{NOPE}.ttl", "-m", "{FILE}", SELECT),
        # a command that ran and failed: exit 1, and "[endpoint …]" is printed, not eaten
        c(1, ("[endpoint http://127.0.0.1:9/sparql]",), "sparql", "--endpoint",
          "http://127.0.0.1:9/sparql", SELECT),
    ],
    "lint": [
        c(2, "query", "lint"),
        c(2, "query", "lint", "  "),
        c(2, "{NOPE}.rq", "lint", "{NOPE}.rq"),
        c(2, "nested/dir/q.sparql", "lint", "nested/dir/q.sparql"),
        c(2, "missing.jsonl", "lint", "missing.jsonl"),
        c(2, "{DIR}", "lint", "{DIR}"),
        c(2, ("latin1.rq", "offset 28", "0xe9"), "lint", "{BAD}/latin1.rq"),
        c(2, ("latin1.jsonl", "offset"), "lint", "{BAD}/latin1.jsonl"),
        c(2, ("<stdin>", "offset 28"), "lint", "-", stdin=LATIN1),
        c(2, ("not-json.jsonl:2",), "lint", "{BAD}/not-json.jsonl"),
        c(2, "{NOPE}.rq", "lint", SELECT, "{NOPE}.rq"),
        c(2, ("--format", "xml"), "lint", "--format", "xml", SELECT),
        c(2, "--format", "lint", SELECT, "--format"),
        c(2, ("--vkg", "nosuch"), "lint", "--vkg", "nosuch", SELECT),
        c(2, ("--vkg", "[/x]"), "lint", "--vkg", "[/x]", SELECT),
        c(2, "--embedder", "lint", "--embedder=maybe", SELECT),
        c(2, "--bogus", "lint", "--bogus", SELECT),
        c(2, "{NOPE}.ttl", "lint", "-t", "{NOPE}.ttl", "-m", "{FILE}", SELECT),
        c(2, "{NOPE}.yaml", "--config", "{NOPE}.yaml", "lint", SELECT),
    ],
    "eval": [
        c(2, "--vkg", "eval", "run", "--out", "{TMP}/run"),
        c(2, "--out", "eval", "run", "--vkg", "demo"),
        c(2, ("--vkg", "nosuch"), "eval", "run", "--vkg", "nosuch", "--out", "{TMP}/run"),
        c(2, ("--vkg", "nosuch"), "eval", "--vkg", "nosuch", "--out", "{TMP}/run"),
        c(2, ("--strategy", "magic"), "eval", "run", *RUN, "--strategy", "magic"),
        c(2, ("--llm", "gpt"), "eval", "run", *RUN, "--llm", "gpt"),
        c(2, ("--split", "train"), "eval", "run", *RUN, "--split", "train"),
        c(2, ("--split", "--dataset"), "eval", "run", *RUN, "--split", "dev", "--dataset",
          "{BAD}/questions-invalid.jsonl"),
        c(2, ("--ablate", "no-such"), "eval", "run", *RUN, "--ablate", "no-such"),
        c(2, ("--ablate", "nope"), "eval", "run", *RUN, "--ablate", "no-aoc,nope"),
        c(2, ("--concurrency", "0"), "eval", "run", *RUN, "--concurrency", "0"),
        c(2, ("--concurrency", "x"), "eval", "run", *RUN, "--concurrency", "x"),
        c(2, "{NOPE}.jsonl", "eval", "run", *RUN, "--dataset", "{NOPE}.jsonl"),
        c(2, "{DIR}", "eval", "run", *RUN, "--dataset", "{DIR}"),
        c(2, ("latin1.jsonl",), "eval", "run", *RUN, "--dataset", "{BAD}/latin1.jsonl"),
        c(2, "{FILE}", "eval", "run", "--vkg", "demo", "--out", "{FILE}"),
        c(2, ("--endpoint", "ftp://x"), "eval", "run", *RUN, "--endpoint", "ftp://x"),
        c(2, ("--mapping", "xml"), "eval", "run", *RUN, "--mapping", "xml"),
        c(2, "{NOPE}", "eval", "report", "{NOPE}"),
        c(2, "{FILE}", "eval", "report", "{FILE}"),
        c(2, "run_dir", "eval", "report"),
        c(2, ("{DIR}", "not a run directory"), "eval", "report", "{DIR}"),
        c(2, ("{DIR}", "not a run directory"), "eval", "compare", "{DIR}", "{DIR}"),
        c(2, "{NOPE}", "eval", "compare", "{NOPE}", "{DIR}"),
        c(2, "run_b", "eval", "compare", "{DIR}"),
        c(2, "{DIR}", "eval", "compare", "{DIR}", "{DIR}", "--out", "{DIR}"),
        c(2, "no-such-subcommand", "eval", "no-such-subcommand"),
        c(2, "run", "eval", "--vkg", "demo", "run"),
        c(2, "--bogus", "eval", "run", "--bogus"),
    ],
    "endpoint": [
        c(2, "no-such-subcommand", "endpoint", "no-such-subcommand"),
        c(2, ("--vkg", "nosuch"), "endpoint", "up", "--vkg", "nosuch"),
        c(2, ("--vkg", "[/x]"), "endpoint", "up", "--vkg", "[/x]"),
        c(2, ("--port", "abc"), "endpoint", "up", "--port", "abc"),
        c(2, ("--port", "70000"), "endpoint", "up", "--port", "70000"),
        c(2, ("--port", "-1"), "endpoint", "up", "--port", "-1"),
        c(2, "--bogus", "endpoint", "up", "--bogus"),
        c(2, "{NOPE}.ttl", "endpoint", "up", "-t", "{NOPE}.ttl", "-m", "{FILE}"),
        c(2, "{DIR}", "endpoint", "up", "-t", "{DIR}", "-m", "{FILE}"),
        c(2, ("--vkg", "-t"), "endpoint", "up", "--vkg", "demo", "-t", "{FILE}"),
        c(2, "--bogus", "endpoint", "status", "--bogus"),
        c(2, "extra", "endpoint", "status", "extra"),
        c(2, ("--port", "abc"), "endpoint", "down", "--port", "abc"),
        c(2, "--dev", "endpoint", "up", "--dev=maybe"),
    ],
}

# the other commands, briefly (their usage errors are all in test_usage_errors.py)
CASES["others"] = [
    c(2, ("latin1.rq", "offset 28"), "suggest", "--log", "{BAD}/latin1.rq"),
    c(2, "{DIR}", "suggest", "--log", "{DIR}"),
    c(2, ("--vkg", "nosuch"), "suggest", "--log", "{FILE}", "--vkg", "nosuch"),
    c(2, ("--out", "{DIR}"), "audit", "--vkg", "demo", "--out", "{DIR}"),
    c(2, ("--fail-under", "200"), "audit", "--fail-under", "200"),
    c(2, ("--vkg", "nosuch"), "audit", "--vkg", "nosuch"),
    c(2, ("NAME", "nosuch"), "datasets", "info", "nosuch"),
    c(2, ("NAME", "nosuch"), "datasets", "fetch", "nosuch"),
    c(2, ("config-latin1.yaml", "offset 17"), "--config", "{BAD}/config-latin1.yaml",
      "datasets", "list"),
    c(2, "-x", "-vvx", "datasets", "list"),
]

PARAMS = [pytest.param(case, id=f"{cmd}-{i:02d}-{'_'.join(case.args[1:3])[:40]}")
          for cmd, cases in CASES.items() for i, case in enumerate(cases)]


def _fill(text: str, tmp: Path) -> str:
    return (text.replace("{BAD}", str(BAD)).replace("{TMP}", str(tmp))
            .replace("{NOPE}", str(tmp / "nope")).replace("{DIR}", str(tmp / "adir"))
            .replace("{FILE}", str(tmp / "afile.txt")))


def test_the_suite_covers_at_least_100_cases_across_the_commands() -> None:
    assert len(PARAMS) >= 100
    assert all(len(cases) >= 10 for cases in CASES.values())


@pytest.mark.parametrize("case", PARAMS)
def test_bad_input(case: Case, navqa_cli, tmp_path: Path) -> None:
    (tmp_path / "adir").mkdir()
    (tmp_path / "afile.txt").write_text("not what the option wants\n", encoding="utf-8")
    args = [_fill(a, tmp_path) for a in case.args]
    res = navqa_cli(*args, stdin=case.stdin)
    names = [_fill(n, tmp_path) for n in case.names]
    assert_clean(res, case.code)
    low = res.err.lower()
    for name in names:
        assert name.lower() in low, f"{name!r} not named in:\n{res.err}"


def test_a_target_line_inside_a_mapping_source_is_refused(navqa_cli, tmp_path: Path) -> None:
    """The mapping is only parsed after the embedding model loads, so this case runs unguarded."""
    res = navqa_cli("index", "-t", str(BAD / "tiny.ttl"), "-m", str(BAD / "source-not-sql.obda"),
                    "--out", str(tmp_path / "ix"), heavy_guard=False)
    assert_clean(res, 2)
    assert "source-not-sql.obda:8" in res.err and "'things'" in res.err
    assert "is not SQL" in res.err
