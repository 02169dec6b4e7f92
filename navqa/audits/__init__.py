"""Maintainers' tools: mapping-coverage audit, silent-failure lint, mapping suggestions.

::

    shapes.py       which RDF terms each query position can produce (templates + OWL 2 QL)
    coverage.py     navqa audit: coverage, unmapped elements, mismatches, overlaps, --live
    report.py       the audit as Markdown, self-contained HTML, JSON
    sparql.py       where terms are written in a query; the query as conjunctive branches
    lint.py         navqa lint: findings with positions and suggestions
    lint_report.py  lint results as text, JSON, SARIF 2.1.0
    schema.py       the database schema through information_schema
    suggest.py      navqa suggest: demand, candidates, .obda drafts, validation by Ontop

The CLI commands live in :mod:`navqa.cli.cmd_audit`, :mod:`navqa.cli.cmd_lint` and
:mod:`navqa.cli.cmd_suggest`; see ``docs/audits.md``.
"""

from navqa.audits.coverage import AuditReport, audit, probe_live
from navqa.audits.lint import Finding, Linter, LintResult, Severity
from navqa.audits.shapes import Shape, ShapeIndex
from navqa.audits.suggest import (
    Demand,
    Draft,
    ScratchVkg,
    SuggestReport,
    Validation,
    build_suggestions,
    compute_demand,
    read_log,
    validate_drafts,
)

__all__ = [
    "AuditReport",
    "Demand",
    "Draft",
    "Finding",
    "LintResult",
    "Linter",
    "ScratchVkg",
    "Severity",
    "Shape",
    "ShapeIndex",
    "SuggestReport",
    "Validation",
    "audit",
    "build_suggestions",
    "compute_demand",
    "probe_live",
    "read_log",
    "validate_drafts",
]
