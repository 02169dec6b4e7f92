"""The state one question accumulates on its way through the online stage.

Every strategy (NaVQA's pipeline, the SAGA agent, the baselines) and the repair hook
read and extend one :class:`AskState`; it is created per question by
:meth:`navqa.online.pipeline.Pipeline.stream` and never shared, so questions answered
concurrently by one pipeline never see each other's state.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from navqa.errors import EndpointError
from navqa.model.events import ErrorKind, Event, Mentions
from navqa.model.iri import IRI
from navqa.model.rules import GrammarRule
from navqa.model.terms import QueryResult
from navqa.online.check import CheckResult
from navqa.online.expansion import Subgraph
from navqa.online.linking import Linking
from navqa.online.reading.answer_type import AnswerType
from navqa.online.reading.mentions import AnswerHint
from navqa.online.synthesis.offline import Plan
from navqa.online.values import GroundedValue, UnmatchedValue

__all__ = ["AskState"]


@dataclass
class AskState:
    """Everything one question accumulates; strategies and repairs read and extend it.

    Attributes:
        question: The question (stripped).
        events: Every event so far, in order.
        mentions / linking: Extracted mentions and the classes/properties linked to them.
        answer_hint: The LLM's answer-type hint (``None`` offline).
        answer_type: SAGA's answer-type prior (``None`` when switched off).
        groundings / ungrounded: Question values found / not found in the VKG.
        subgraphs / verbalized: One expanded subgraph (and its text) per candidate root.
        chosen: The root the reranker chose.
        plan: The offline synthesizer's plan of the last query it wrote.
        sparql / result / check: The current query, its result and its static check.
        error / error_kind: Why there is no result, when there is none.
        execution_error: The endpoint's error when the query failed to run.
        repair_probes: ASK probes the deterministic repairs spent.
        rules: Grammar rules that shaped the answer outside the synthesizer (value
            grounding, the choice of root); the query records them with its own.
    """

    question: str
    events: list[Event] = field(default_factory=list)
    mentions: Mentions | None = None
    linking: Linking | None = None
    answer_hint: AnswerHint | None = None
    answer_type: AnswerType | None = None
    groundings: list[GroundedValue] = field(default_factory=list)
    ungrounded: list[UnmatchedValue] = field(default_factory=list)
    subgraphs: dict[IRI, Subgraph] = field(default_factory=dict)
    verbalized: dict[IRI, str] = field(default_factory=dict)
    chosen: IRI | None = None
    plan: Plan | None = None
    sparql: str | None = None
    result: QueryResult | None = None
    error: str | None = None
    error_kind: ErrorKind | None = None
    check: CheckResult | None = None
    execution_error: EndpointError | None = None
    repair_probes: int = 0
    rules: set[GrammarRule] = field(default_factory=set)
