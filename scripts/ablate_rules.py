#!/usr/bin/env python3
"""Ablate the offline synthesizer's grammar rules, one at a time, on a split.

A rule that helps the dev split and not the validation split is overfitting
(docs/evaluation.md, "Ablations"); the test split decides nothing, so it is not offered.
Switching a rule off only changes the questions where it fired, and a whole run records
them (``rules`` in ``results.jsonl``), so this script answers again only those questions,
once per rule, with ``--ablate no-rule-NAME``, and prints the split's Acc and
F1 with and without each rule. It prints figures only: no question, id or answer.

    python scripts/ablate_rules.py --vkg npd --split validation --base runs/npd-val \\
        --out runs/npd-val-ablations [--endpoint URL] [--rules count-rank,spatial]

``--base`` is a whole run of the same split and code (``navqa eval --split S --out DIR``);
the per-rule runs go to ``--out/<rule>``, so an interrupted ablation resumes.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from navqa.errors import NavqaError
from navqa.evaluation.dataset import default_question_files, split_convention
from navqa.model.answers import EntityAnswer
from navqa.model.rules import GrammarRule


def _usage(message: str) -> None:
    """Bad input: one line on stderr, exit 2 (as navqa's usage errors)."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _records(run: Path) -> dict[str, dict]:
    path = run / "results.jsonl"
    if not path.is_file():
        _usage(f"{path} does not exist (is --base a run directory?)")
    out = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            out[r["id"]] = r
    return out


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--vkg", required=True)
    ap.add_argument("--split", required=True, choices=["dev", "validation"])
    ap.add_argument("--base", required=True, type=Path, help="a whole run of the split")
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--endpoint", help="a running endpoint of the VKG (navqa endpoint up)")
    ap.add_argument("--rules", help="comma-separated rule names (default: every rule)")
    ap.add_argument("--concurrency", type=int, default=2)
    args = ap.parse_args()

    try:
        rules = [GrammarRule(r.strip()) for r in args.rules.split(",")] if args.rules \
            else list(GrammarRule)
    except ValueError as e:
        _usage(f"--rules: {e}; known: {', '.join(r.value for r in GrammarRule)}")
    base = _records(args.base)
    if any("rules" not in r for r in base.values()):
        _usage(f"{args.base} predates rule tracing: run the split again")
    lines = {}
    try:
        files = default_question_files(args.vkg, args.split)
        convention = (split_convention(args.vkg, args.split) or EntityAnswer.ENTITY).value
    except NavqaError as e:
        _usage(f"--vkg {args.vkg}: {e}")
    for f in files:
        for line in f.read_text(encoding="utf-8").splitlines():
            if line.strip():
                lines[json.loads(line)["id"]] = line
    missing = set(lines) - set(base)
    if missing:
        _usage(f"{args.base} lacks {len(missing)} of the split's questions")
    n = len(lines)
    acc0 = _mean([float(base[i]["acc"]) for i in lines])
    f10 = _mean([float(base[i]["f1"]) for i in lines])
    nr0 = _mean([float(base[i]["nonempty"]) for i in lines])
    print(f"{args.vkg} {args.split}: n={n}, with every rule Acc {100 * acc0:.1f}, "
          f"F1 {100 * f10:.1f}, NR {100 * nr0:.1f}")
    print("| rule | fired | Acc off | ΔAcc | F1 off | ΔF1 | NR off | ΔNR |")
    print("|---|---|---|---|---|---|---|---|")
    args.out.mkdir(parents=True, exist_ok=True)
    for rule in rules:
        fired = [i for i in lines if rule.value in base[i]["rules"]]
        if not fired:
            print(f"| {rule.value} | 0 | | | | | | |")
            continue
        subset = args.out / f"{rule.value}.jsonl"
        subset.write_text("".join(lines[i] + "\n" for i in fired), encoding="utf-8")
        run = args.out / rule.value
        cmd = [sys.executable, "-m", "navqa.cli", "eval", "--vkg", args.vkg, "--strategy",
               "navqa", "--llm", "none", "--dataset", str(subset), "--ablate",
               f"no-rule-{rule.value}", "--concurrency", str(args.concurrency), "--out",
               str(run), "--entity-answer", convention]
        if args.endpoint:
            cmd += ["--endpoint", args.endpoint]
        if (run / "results.jsonl").is_file():
            cmd.append("--resume")
        done = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True, check=False)
        if done.returncode != 0:
            print(f"| {rule.value} | {len(fired)} | run failed (exit {done.returncode}): "
                  f"{done.stderr.strip().splitlines()[-1:]} |")
            continue
        off = _records(run)
        after = {i: off.get(i, base[i]) for i in fired}

        def whole(key: str, after: dict[str, dict] = after) -> float:
            return _mean([float(after[i][key]) if i in after else float(base[i][key])
                          for i in lines])

        acc, f1, nr = whole("acc"), whole("f1"), whole("nonempty")
        print(f"| {rule.value} | {len(fired)} | {100 * acc:.1f} | {100 * (acc - acc0):+.1f} | "
              f"{100 * f1:.1f} | {100 * (f1 - f10):+.1f} | {100 * nr:.1f} | "
              f"{100 * (nr - nr0):+.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
