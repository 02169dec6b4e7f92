"""Typed events of the online stage, and the :class:`Answer` they end in.

The pipeline (and the SAGA agent) *yield* these; ``navqa ask --explain``, the evaluation
harness and the Python API all read the same stream. Every event is a frozen dataclass
with a ``stage`` name and the wall time the step took.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import ClassVar, Literal

from navqa.model.graph import Edge
from navqa.model.iri import IRI
from navqa.model.rules import GrammarRule
from navqa.model.terms import QueryResult

Method = Literal["llm", "offline"]


class AnswerKind(StrEnum):
    """What kind of answer the question expects (SAGA's answer-type prior)."""

    ENTITY = "entity"
    QUANTITY = "quantity"
    DATE = "date"
    BOOLEAN = "boolean"
    COUNT = "count"
    TEXT = "text"


class ErrorKind(StrEnum):
    """Why an :class:`Answer` has no result, named after the exception class that said so.

    The values are the class names of :mod:`navqa.errors` (what ``Answer.error_kind`` has
    always carried in ``ask --json``, evaluation records and the service), plus
    ``AgentNoQuery`` for an agent that never executed a query. Set it with :meth:`of`
    from the exception, never from its message.
    """

    LLM = "LLMError"
    LLM_TIMEOUT = "LLMTimeoutError"
    LLM_RATE_LIMIT = "LLMRateLimitError"
    LLM_RESPONSE = "LLMResponseError"
    LLM_UNAVAILABLE = "LLMUnavailableError"
    QUERY_CHECK = "QueryCheckError"
    SPARQL_SYNTAX = "SparqlSyntaxError"
    UPDATE_REFUSED = "UpdateRefusedError"
    UNMAPPED_TERM = "UnmappedTermError"
    ENDPOINT = "EndpointError"
    ENDPOINT_TIMEOUT = "EndpointTimeoutError"
    QUERY_REJECTED = "QueryRejectedError"
    QUERY_FAILED = "QueryFailedError"
    AGENT_NO_QUERY = "AgentNoQuery"

    @classmethod
    def of(cls, exc: BaseException) -> ErrorKind:
        """The kind of ``exc``: its class, or the nearest base class that has a kind.

        Raises:
            ValueError: ``exc`` is none of the errors an answer can carry.
        """
        names = {k.value: k for k in cls}
        for klass in type(exc).__mro__:
            if klass.__name__ in names:
                return names[klass.__name__]
        raise ValueError(f"no error kind for {type(exc).__name__}: {exc}")


class StringMatch(StrEnum):
    """How a string value constrains the stored one: the whole value, or a part of it
    ("a name starting with 'Cec'", "ending in 'hausen'", "'wing' in their name")."""

    EXACT = "exact"
    PREFIX = "prefix"
    SUFFIX = "suffix"
    CONTAINS = "contains"


@dataclass(frozen=True, slots=True)
class ValueMention:
    """A literal value mentioned in the question.

    Attributes:
        text: As written (without quotes).
        kind: ``string``, ``number``, ``date``, ``year`` or ``time``.
        comparator: ``=``, ``>``, ``<``, ``>=``, ``<=`` (from "after", "more than", …), or
            ``decade`` for "the 1850s".
        match: For a string: whether it is the whole stored value (``EXACT``) or a
            pattern on it (prefix, suffix, substring).
        match_property: For a pattern: the phrase naming the property it applies to
            ("name", "description"), or ``None`` (the answer's name).
        case_sensitive: For a pattern: match the case as written (a quoted pattern with
            capitals, copied verbatim), rather than ignoring case.
        written: The words the value was read from, when ``text`` is not them (a date
            bound of "between October and December 2012"); ``None``: ``text`` is.
    """

    text: str
    kind: Literal["string", "number", "date", "year", "time"] = "string"
    comparator: str = "="
    match: StringMatch = StringMatch.EXACT
    match_property: str | None = None
    case_sensitive: bool = False
    written: str | None = None


@dataclass(frozen=True, slots=True)
class QuestionCues:
    """Surface cues of the question's form."""

    wh: str | None = None
    how_many: bool = False
    yes_no: bool = False
    superlative: Literal["max", "min"] | None = None
    superlative_word: str | None = None
    list_all: bool = False


@dataclass(frozen=True, slots=True)
class Mentions:
    """What the question talks about: W_C, W_P and values (NaVQA §3.2)."""

    classes: tuple[str, ...] = ()
    properties: tuple[str, ...] = ()
    values: tuple[ValueMention, ...] = ()
    cues: QuestionCues = field(default_factory=QuestionCues)


@dataclass(frozen=True, slots=True)
class ScoredTerm:
    """An ontology element with a relevance score."""

    iri: IRI
    score: float
    label: str = ""


@dataclass(frozen=True, slots=True)
class Candidate:
    """A property considered at one node of the expansion.

    Attributes:
        prop: The property.
        direction: ``out`` (node is the subject) or ``in`` (node is the object).
        neighbour: The class (or datatype) at the other end.
        score: Relevance to the question.
        listing: The compact, schema-annotated line shown to a judge.
    """

    prop: IRI
    direction: Literal["out", "in"]
    neighbour: IRI
    score: float
    listing: str = ""


@dataclass(frozen=True, slots=True)
class ValueGrounding:
    """Where a value mention was found in the data, and in what stored form.

    ``classes`` lists every class the value's IRI template allows (a template shared by
    several classes, e.g. companies that operate and companies that build, gives several);
    ``cls`` is the first of them.
    """

    mention: str
    cls: IRI | None
    prop: IRI | None
    stored: str | None
    probes: int = 0
    classes: tuple[IRI, ...] = ()


class UngroundedWhy(StrEnum):
    """Why a value mention is not grounded: the probes ran and found no such value
    (``not-found``), or its probe failed (``probe-failed``: timed out or errored, so it is
    not known whether the data holds it)."""

    NOT_FOUND = "not-found"
    PROBE_FAILED = "probe-failed"


@dataclass(frozen=True, slots=True)
class UngroundedValue:
    """A value mention the probes did not find in the data.

    The query keeps the constraint with the value as written (an empty answer with this
    reason is honest; dropping the constraint would answer a different question).

    Attributes:
        mention: The value as mentioned.
        nearest: The most similar stored values the probes saw (best first).
        prop: The property of the nearest value, where the constraint is kept.
        kept: Whether the query keeps the constraint (``False`` for a name that may not
            be a value at all, e.g. one capitalised word).
        why: Not found, or not known because its probe failed.
    """

    mention: str
    nearest: tuple[str, ...] = ()
    prop: IRI | None = None
    kept: bool = True
    why: UngroundedWhy = UngroundedWhy.NOT_FOUND


class ValueProbe(StrEnum):
    """A kind of value-grounding probe: a mention's exact or substring match, the nearest
    stored values of an unmatched mention, a property's categorical values, a code
    list's labels and the classes that have a code."""

    EXACT = "exact"
    SUBSTRING = "substring"
    NEAREST = "nearest"
    CATEGORICAL = "categorical"
    CODE_LIST = "code-list"


@dataclass(frozen=True, slots=True)
class ValueProbeFailure:
    """A value-grounding probe that timed out or failed; grounding went on without it.

    Attributes:
        probe: Which probe.
        mention: The value mention it was for (``None``: not one mention's probe).
        error: The endpoint's error, one line.
    """

    probe: ValueProbe
    mention: str | None
    error: str


@dataclass(frozen=True)
class Event:
    """Base of every pipeline event."""

    stage: ClassVar[str] = "event"
    seconds: float = field(default=0.0, kw_only=True)


@dataclass(frozen=True)
class MentionsExtracted(Event):
    stage: ClassVar[str] = "mentions"
    mentions: Mentions
    method: Method


@dataclass(frozen=True)
class AnswerTypePredicted(Event):
    stage: ClassVar[str] = "answer-type"
    kind: AnswerKind
    cls: IRI | None
    label: str
    method: Method


@dataclass(frozen=True)
class Linked(Event):
    stage: ClassVar[str] = "linking"
    classes: tuple[ScoredTerm, ...]
    properties: tuple[ScoredTerm, ...]


@dataclass(frozen=True)
class PropertiesJudged(Event):
    """One judge decision at one node (batched: all its candidates at once)."""

    stage: ClassVar[str] = "judge"
    root: IRI
    node: IRI
    depth: int
    candidates: tuple[Candidate, ...]
    selected: tuple[IRI, ...]
    filtered_out: tuple[IRI, ...]
    available: int
    method: Method


@dataclass(frozen=True)
class SubgraphExpanded(Event):
    stage: ClassVar[str] = "expansion"
    root: IRI
    edges: tuple[Edge, ...]
    depth: int


@dataclass(frozen=True)
class SubgraphVerbalized(Event):
    stage: ClassVar[str] = "verbalization"
    root: IRI
    text: str


@dataclass(frozen=True)
class SubgraphsReranked(Event):
    """The subgraphs' scores and the root taken. ``passed_over``: better-scored roots the
    offline pipeline did not take because their query only restated a value of the
    question (grammar rule ``restated-value``), best first."""

    stage: ClassVar[str] = "rerank"
    scores: tuple[ScoredTerm, ...]
    chosen: IRI
    method: str
    passed_over: tuple[IRI, ...] = ()


@dataclass(frozen=True)
class ValuesGrounded(Event):
    stage: ClassVar[str] = "values"
    groundings: tuple[ValueGrounding, ...]
    enabled: bool = True
    ungrounded: tuple[UngroundedValue, ...] = ()
    failures: tuple[ValueProbeFailure, ...] = ()


@dataclass(frozen=True)
class QuerySynthesized(Event):
    """The query written; ``rules``: the switchable grammar rules that shaped it (offline
    synthesis; see :mod:`navqa.model.rules`)."""

    stage: ClassVar[str] = "synthesis"
    sparql: str
    method: Method
    rules: tuple[GrammarRule, ...] = ()
    unplaced_columns: tuple[str, ...] = ()
    """Phrases of the question that ask for a column ("… and their depth") which the
    offline synthesizer found no property, relation or entity for: not projected."""


@dataclass(frozen=True)
class QueryChecked(Event):
    """Static checks before execution; ``sparql`` is the (possibly repaired) query."""

    stage: ClassVar[str] = "check"
    sparql: str
    ok: bool
    issues: tuple[str, ...] = ()
    unmapped_terms: tuple[IRI, ...] = ()
    repaired: bool = False


@dataclass(frozen=True)
class QueryCostChecked(Event):
    """The cost guard's verdict before execution (:mod:`navqa.online.cost`).

    ``summary`` states the estimate, the threshold and the exploding join; ``suggestion``
    the fix, for a costly query.
    """

    stage: ClassVar[str] = "cost"
    sparql: str
    verdict: str
    summary: str
    total_cost: float | None = None
    suggestion: str | None = None


@dataclass(frozen=True)
class QueryExecuted(Event):
    stage: ClassVar[str] = "execution"
    sparql: str
    rows: int
    empty: bool


@dataclass(frozen=True)
class AggregateVacuous(Event):
    """An aggregate-only query's one row (0, empty or unbound) aggregates nothing: a
    bounded ``ask`` of its WHERE clause found no solution (:mod:`navqa.online.saga.vacuous`)."""

    stage: ClassVar[str] = "execution"
    sparql: str
    ask: str


@dataclass(frozen=True)
class QueryRepaired(Event):
    """An empty or failed result was repaired (SAGA-style agent loop)."""

    stage: ClassVar[str] = "repair"
    attempt: int
    before: str
    after: str
    reason: str
    method: Method


@dataclass(frozen=True)
class AgentStep(Event):
    """One ReAct step of the agent strategy."""

    stage: ClassVar[str] = "agent"
    step: int
    thought: str
    action: str
    argument: str
    observation: str


@dataclass(frozen=True)
class TypeStateUpdated(Event):
    stage: ClassVar[str] = "type-state"
    entity: str
    types: tuple[IRI, ...]
    source: str


class ConfidenceLevel(StrEnum):
    """How far an answer can be trusted: ``none`` when there is no result at all."""

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    NONE = "none"


class ConfidenceReason(StrEnum):
    """Why an answer's confidence is below ``high`` (one value per kind of doubt)."""

    NO_RESULT = "no-result"
    EMPTY_RESULT = "empty-result"
    EMPTY_AGGREGATE = "empty-aggregate"
    RESTATED_ANSWER = "restated-answer"
    VALUE_NOT_FOUND = "value-not-found"
    VALUE_PROBE_FAILED = "value-probe-failed"
    UNPLACED_VALUE = "unplaced-value"
    UNPLACED_CONSTRAINT = "unplaced-constraint"
    UNPLACED_COLUMN = "unplaced-column"
    UNPLACED_TERM = "unplaced-term"
    QUERY_REPAIRED = "query-repaired"
    CLOSE_SUBGRAPHS = "close-subgraphs"
    CLOSE_CLASSES = "close-classes"
    COSTLY_QUERY = "costly-query"


@dataclass(frozen=True, slots=True)
class Reason:
    """One reason for doubt: its kind and a sentence naming what it is about."""

    kind: ConfidenceReason
    text: str


@dataclass(frozen=True, slots=True)
class Confidence:
    """How far an answer can be trusted (:mod:`navqa.online.confidence`).

    Attributes:
        level: ``high`` (no doubt), ``medium``, ``low`` or ``none`` (no result).
        score: In ``[0, 1]``: 1 less a penalty per reason.
        reasons: Every reason for doubt, most serious first.
    """

    level: ConfidenceLevel
    score: float
    reasons: tuple[Reason, ...] = ()


class PartKind(StrEnum):
    """What a part of the question is: a value, a class or property phrase, a constraint,
    or an asked column (one part of a coordinated request: "… and their depth")."""

    VALUE = "value"
    CLASS = "class"
    PROPERTY = "property"
    CONSTRAINT = "constraint"
    COLUMN = "column"


class UnplacedWhy(StrEnum):
    """Why a part of the question is not (fully) placed in the answer's query.

    ``not-grounded``: a value no probe found in the data, and the query does not use it.
    ``not-in-query``: the query does not use the part (a grounded value, a phrase, a
    comparison or superlative). ``not-in-data``: the query keeps it as written, but the
    data holds no such value (placed, not found: an empty answer is then expected).
    ``probe-failed``: the value's probe timed out or failed, so it was not placed.
    """

    NOT_GROUNDED = "not-grounded"
    NOT_IN_QUERY = "not-in-query"
    NOT_IN_DATA = "not-in-data"
    PROBE_FAILED = "probe-failed"


@dataclass(frozen=True, slots=True)
class UnplacedPart:
    """A part of the question the answer could not place.

    Attributes:
        text: The part as written in the question.
        kind: Value, class/property phrase, or constraint.
        why: Why it is not placed.
        span: Its ``(start, end)`` character offsets in the question, when found there.
        nearest: For a value not found: the most similar stored values, best first.
    """

    text: str
    kind: PartKind
    why: UnplacedWhy
    span: tuple[int, int] | None = None
    nearest: tuple[str, ...] = ()


class AlternativeKind(StrEnum):
    """What an alternative is: a linked class, a linked property, or a ranked subgraph."""

    CLASS = "class"
    PROPERTY = "property"
    SUBGRAPH = "subgraph"


@dataclass(frozen=True, slots=True)
class Alternative:
    """Another term or subgraph the pipeline considered, with its score.

    Attributes:
        kind: Linked class or property, or a subgraph (by its root) from the rerank.
        iri: The term (the subgraph's root for a subgraph).
        score: Its score at that step.
        margin: How far below the best of that step it scored (``0`` for a tie).
        label: Its label.
    """

    kind: AlternativeKind
    iri: IRI
    score: float
    margin: float
    label: str = ""


@dataclass
class Answer:
    """The outcome of one question.

    Attributes:
        question: The question as asked.
        sparql: The query that was executed (``None`` when none could be produced).
        result: Its result (``None`` when it was refused or failed).
        events: Every event, in order.
        timings: Seconds per stage (sums over repeated stages).
        llm_calls / prompt_tokens / completion_tokens: LLM accounting.
        error: Why no result exists, when one does not.
        error_kind: Why, as an :class:`ErrorKind` (its value is the error's class name:
            ``QueryRejectedError``, ``EndpointTimeoutError``, ``UnmappedTermError`` …), so
            consumers need not parse ``error``.
        strategy: ``navqa`` or ``agent`` (or a baseline name).
        confidence: How far the answer can be trusted, and why (``None`` only for an
            answer no pipeline produced, e.g. the evaluation's gold strategy).
        unplaced: The parts of the question the query does not place (values not found,
            phrases, comparisons the query does not use); never silently dropped.
        alternatives: The other classes, properties and subgraphs it considered.
    """

    question: str
    sparql: str | None
    result: QueryResult | None
    events: tuple[Event, ...] = ()
    timings: dict[str, float] = field(default_factory=dict)
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None
    error_kind: ErrorKind | None = None
    strategy: str = "navqa"
    confidence: Confidence | None = None
    unplaced: tuple[UnplacedPart, ...] = ()
    alternatives: tuple[Alternative, ...] = ()

    @property
    def empty(self) -> bool:
        """True when the query ran and returned nothing (a silent failure, if unexpected)."""
        return self.result is not None and self.result.is_empty

    def of(self, kind: type[Event]) -> list[Event]:
        """Events of one type."""
        return [e for e in self.events if isinstance(e, kind)]


@dataclass(frozen=True)
class Answered(Event):
    """The last event of a stream."""

    stage: ClassVar[str] = "answer"
    answer: Answer


@dataclass(frozen=True)
class CheaperQueryTried(Event):
    """The cost guard found the query costly, and the offline synthesizer wrote it again
    without the properties mapped by the exploding join (:func:`navqa.online.cost.avoid_costly`).

    ``sparql`` is the query that runs next: the cheaper one when ``kept_cheaper`` (its
    ``total_cost`` under the threshold, ``without`` the properties left out), else the
    original, unchanged. ``tried`` counts the rewrites estimated.
    """

    stage: ClassVar[str] = "cost"
    original: str
    original_cost: float | None
    sparql: str
    total_cost: float | None
    kept_cheaper: bool
    without: tuple[IRI, ...] = ()
    tried: int = 0
    summary: str = ""
