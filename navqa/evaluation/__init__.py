"""Evaluation: question sets, gold answers, metrics, the runner and its reports.

::

    from navqa.evaluation import load_questions, run_eval

    summary = run_eval(config, vkg=running, questions="datasets/demo/questions.jsonl",
                       strategy="navqa", out_dir="runs/demo-navqa")
    summary["f1"], summary["acc"], summary["nr"]

Definitions of every number are in ``docs/evaluation.md`` and in the docstrings of
:mod:`~navqa.evaluation.metrics`, :mod:`~navqa.evaluation.outcomes`,
:mod:`~navqa.evaluation.shape` and :mod:`~navqa.evaluation.diagnostics`.
"""

from __future__ import annotations

from navqa.evaluation.dataset import (
    Question,
    QuestionFileError,
    QuestionSet,
    Split,
    default_question_files,
    load_questions,
    load_split,
)
from navqa.evaluation.diagnostics import Grounding, grounding_of
from navqa.evaluation.gold import GoldAnswer, GoldCache
from navqa.evaluation.metrics import Score, canonical_row, canonical_term, score
from navqa.evaluation.outcomes import (
    OUTCOMES,
    Execution,
    Fault,
    Outcome,
    execute_prediction,
    fault_of,
)
from navqa.evaluation.report import compare_runs, render_report
from navqa.evaluation.runner import (
    ABLATIONS,
    STRATEGIES,
    RetryPolicy,
    effective_config,
    finish_run,
    read_results,
    run_eval,
)
from navqa.evaluation.shape import FEATURES, HOP_BUCKETS, QueryShape, analyse_query, hop_bucket
from navqa.evaluation.summary import summarize

__all__ = [
    "ABLATIONS",
    "FEATURES",
    "HOP_BUCKETS",
    "OUTCOMES",
    "STRATEGIES",
    "Execution",
    "Fault",
    "GoldAnswer",
    "GoldCache",
    "Grounding",
    "Outcome",
    "QueryShape",
    "Question",
    "QuestionFileError",
    "QuestionSet",
    "RetryPolicy",
    "Score",
    "Split",
    "analyse_query",
    "canonical_row",
    "canonical_term",
    "compare_runs",
    "default_question_files",
    "effective_config",
    "execute_prediction",
    "fault_of",
    "finish_run",
    "grounding_of",
    "hop_bucket",
    "load_questions",
    "load_split",
    "read_results",
    "render_report",
    "run_eval",
    "score",
    "summarize",
]

