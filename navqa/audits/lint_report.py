"""Render lint results as text, JSON or SARIF 2.1.0 (for code-scanning tools)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from navqa.audits.lint import RULES, Finding, LintResult, Severity

__all__ = ["SARIF_SCHEMA", "render_lint_json", "render_lint_text", "render_sarif"]

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}
_DEFAULT_LEVEL = {
    "unmapped-term": "error", "unknown-term": "error", "term-kind": "error",
    "template-join": "error", "constant-iri": "error", "literal-datatype": "error",
    "filter-datatype": "error", "time-ordering": "warning", "exists-unsupported": "warning",
    "undeclared-prefix": "error", "syntax-error": "error", "costly-query": "error",
}


def _where(res: LintResult, f: Finding) -> tuple[str, int, int]:
    """(artifact, line, column) of a finding; queries read from JSONL keep their line."""
    src = res.source or "<query>"
    if "#L" in src:
        path, _, line = src.rpartition("#L")
        return path, int(line), 1
    return src, f.line, f.column


def render_lint_text(results: Sequence[LintResult]) -> str:
    """``file:line:col: severity [rule] message`` plus the suggestion, one block each."""
    lines: list[str] = []
    for res in results:
        for f in res.findings:
            src, line, col = _where(res, f)
            inner = f" (query line {f.line}, column {f.column})" if "#L" in (res.source or "") \
                else ""
            lines.append(f"{src}:{line}:{col}: {f.severity} [{f.rule}] {f.message}{inner}")
            lines.append(f"    suggestion: {f.suggestion}")
    n_err = sum(len(r.errors) for r in results)
    n_warn = sum(len(r.warnings) for r in results)
    lines.append(f"{len(results)} quer{'y' if len(results) == 1 else 'ies'}: {n_err} error(s), "
                 f"{n_warn} warning(s)")
    return "\n".join(lines) + "\n"


def render_lint_json(results: Sequence[LintResult], *, vkg: str) -> str:
    return json.dumps({
        "vkg": vkg,
        "queries": len(results),
        "errors": sum(len(r.errors) for r in results),
        "warnings": sum(len(r.warnings) for r in results),
        "results": [r.as_dict() for r in results],
    }, indent=1, ensure_ascii=False)


def render_sarif(results: Sequence[LintResult], *, vkg: str, version: str = "0") -> str:
    """One SARIF 2.1.0 run: the tool with its rules, one result per finding."""
    rule_ids = list(RULES)
    rules = [{
        "id": rid,
        "name": "".join(w.capitalize() for w in rid.split("-")),
        "shortDescription": {"text": RULES[rid]},
        "defaultConfiguration": {"level": _DEFAULT_LEVEL.get(rid, "warning")},
    } for rid in rule_ids]
    out: list[dict[str, Any]] = []
    for res in results:
        for f in res.findings:
            src, line, col = _where(res, f)
            region: dict[str, int] = {"startLine": max(1, line), "startColumn": max(1, col)}
            if "#L" not in (res.source or ""):
                region["endLine"] = max(region["startLine"], f.end_line)
                region["endColumn"] = max(1, f.end_column)
            item: dict[str, Any] = {
                "ruleId": f.rule,
                "ruleIndex": rule_ids.index(f.rule) if f.rule in rule_ids else -1,
                "level": _LEVEL[f.severity],
                "message": {"text": f"{f.message}. Suggestion: {f.suggestion}"},
                "locations": [{"physicalLocation": {
                    "artifactLocation": {"uri": src},
                    "region": region,
                }}],
                "properties": {"suggestion": f.suggestion, "term": f.term,
                               "alternatives": list(f.alternatives), "vkg": vkg},
            }
            if item["ruleIndex"] < 0:
                del item["ruleIndex"]
            out.append(item)
    doc = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "navqa-lint",
                "version": version,
                "rules": rules,
            }},
            "results": out,
        }],
    }
    return json.dumps(doc, indent=1, ensure_ascii=False)
