"""The one exception tree of navqa.

Every error navqa raises on purpose derives from :class:`NavqaError`. Each carries
the context a user needs to act on it (a file and line, an IRI, a query, an
endpoint), and wraps its cause with ``raise ... from e``. The CLI turns any
``NavqaError`` into one red line and a non-zero exit code; anything else is a bug.

::

    NavqaError
    ├── ConfigError                  bad or missing configuration value
    ├── InputError                   a file given by the user cannot be used
    │   ├── OntologyParseError       malformed OWL / RDF
    │   ├── MappingParseError        malformed .obda or R2RML (file, line, mapping id)
    │   └── DatasetError             unknown dataset, checksum mismatch, missing file
    ├── IndexError_                  index artifacts missing, stale or corrupt
    ├── RuntimeServiceError          a service navqa starts or talks to
    │   ├── SetupError               resolving Java / Maven / Ontop jars failed
    │   ├── PostgresError            starting, loading or reaching PostgreSQL failed
    │   ├── OntopStartupError        Ontop did not come up (quotes its log lines)
    │   ├── DockerUnavailableError   no Docker daemon answers
    │   ├── ServiceError             a running `navqa serve` refused or failed a request
    │   └── CostUnavailableError     no cost estimate can be had (no dev-mode Ontop, no database)
    ├── EndpointError                a SPARQL endpoint failed a request
    │   ├── EndpointUnreachableError connection refused / DNS / reset: the endpoint cannot serve
    │   │   ├── EndpointUnresponsiveError  no answer, not even to a trivial probe (paused, hung)
    │   │   └── DatabaseUnavailableError   the endpoint answers, its database does not (JDBC)
    │   ├── EndpointTimeoutError     the request timed out
    │   ├── QueryRejectedError       the endpoint said 400 (malformed query), carries its message
    │   └── QueryFailedError         the endpoint said 5xx, carries its message
    ├── QueryCheckError              a generated or given query is unsafe or not runnable
    │   ├── SparqlSyntaxError        does not parse
    │   ├── UpdateRefusedError       SPARQL UPDATE is never sent
    │   └── UnmappedTermError        uses a term with no mapping (silent-failure risk)
    ├── LLMError                     the language-model seam failed
    │   ├── LLMTimeoutError
    │   ├── LLMRateLimitError        still rate-limited after the retries
    │   ├── LLMResponseError         output that does not validate, even after one repair
    │   └── LLMUnavailableError      no LLM configured where one is required
    └── EvaluationError              a dataset file or run directory is unusable
        └── EvaluationAbortedError   the endpoint or database kept failing mid-run (resumable)

Messages never contain secrets: :func:`navqa.config.redact` is applied where
configuration values could leak into them.
"""

from __future__ import annotations

from pathlib import Path


class NavqaError(Exception):
    """Root of every error navqa raises on purpose.

    Args:
        message: What went wrong, in one sentence a user can act on.
        hint: Optional next step ("run `navqa setup`", "check NAVQA_PG_DSN").
    """

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        if self.hint:
            return f"{self.message} (hint: {self.hint})"
        return self.message


class ConfigError(NavqaError):
    """A configuration value is missing, malformed or contradictory."""


class InputError(NavqaError):
    """A file or argument supplied by the user cannot be used.

    Args:
        message: What is wrong with it.
        path: The file concerned, when there is one.
        line: 1-based line number inside ``path``, when known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        hint: str | None = None,
    ) -> None:
        self.path = Path(path) if path is not None else None
        self.line = line
        where = ""
        if self.path is not None:
            where = f"{self.path}"
            if line is not None:
                where += f":{line}"
            where += ": "
        super().__init__(f"{where}{message}", hint=hint)
        self.reason = message


class OntologyParseError(InputError):
    """An ontology file is missing or is not valid OWL/RDF."""


class MappingParseError(InputError):
    """A mapping file (.obda or R2RML) is malformed.

    Args:
        message: The reason.
        path: The mapping file.
        line: The 1-based line where the problem was found.
        mapping_id: The id of the mapping assertion concerned, if known.
    """

    def __init__(
        self,
        message: str,
        *,
        path: Path | str | None = None,
        line: int | None = None,
        mapping_id: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.mapping_id = mapping_id
        text = f"mapping {mapping_id!r}: {message}" if mapping_id else message
        super().__init__(text, path=path, line=line, hint=hint)


class DatasetError(InputError):
    """A dataset is unknown, incomplete, or fails its checksum."""


class IndexError_(NavqaError):  # noqa: N801 - avoid shadowing the builtin IndexError
    """Index artifacts are missing, stale (inputs changed) or corrupt."""


class RuntimeServiceError(NavqaError):
    """A service navqa starts or manages (Ontop, PostgreSQL, containers) failed."""


class SetupError(RuntimeServiceError):
    """Resolving Java, Maven or the Ontop jars failed, or the jar lock does not verify."""


class PostgresError(RuntimeServiceError):
    """Starting, loading or connecting to PostgreSQL failed."""


class OntopStartupError(RuntimeServiceError):
    """Ontop exited or never became ready.

    Args:
        message: The reason, usually derived from the log.
        log_path: Where the full JVM log was written.
        log_excerpt: The relevant log lines (no Java stack frames).
    """

    def __init__(
        self,
        message: str,
        *,
        log_path: Path | None = None,
        log_excerpt: str = "",
        hint: str | None = None,
    ) -> None:
        self.log_path = log_path
        self.log_excerpt = log_excerpt
        text = message
        if log_excerpt:
            text += "\n" + "\n".join("  | " + ln for ln in log_excerpt.splitlines())
        if log_path is not None:
            text += f"\n  full log: {log_path}"
        super().__init__(text, hint=hint)


class DockerUnavailableError(RuntimeServiceError):
    """No Docker daemon answers, so the container path cannot run."""


class ServiceError(RuntimeServiceError):
    """A running ``navqa serve`` refused or failed a request (busy, auth, its own error)."""


class CostUnavailableError(RuntimeServiceError):
    """The cost guard cannot estimate a query: the endpoint has no ``/ontop/reformulate``
    (not in dev mode) or navqa cannot reach the database behind it."""


class EndpointError(NavqaError):
    """A SPARQL endpoint failed a request.

    Args:
        message: What failed.
        endpoint: The endpoint URL.
        query: The query that was sent, if any.
        status: The HTTP status code, if a response arrived.
        server_message: The body the endpoint returned (Ontop's own error text).
    """

    def __init__(
        self,
        message: str,
        *,
        endpoint: str,
        query: str | None = None,
        status: int | None = None,
        server_message: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.query = query
        self.status = status
        self.server_message = server_message
        text = f"{message} [endpoint {endpoint}]"
        if status is not None:
            text += f" HTTP {status}"
        if server_message:
            text += f": {server_message.strip()[:2000]}"
        super().__init__(text, hint=hint)


class EndpointUnreachableError(EndpointError):
    """The endpoint could not be reached at all (refused, reset, DNS)."""


class EndpointUnresponsiveError(EndpointUnreachableError):
    """The endpoint accepted the request but answered neither it nor a trivial probe."""


class DatabaseUnavailableError(EndpointUnreachableError):
    """The endpoint answers, but its database connection failed (a 5xx quoting JDBC)."""


class EndpointTimeoutError(EndpointError):
    """The endpoint did not answer within the timeout."""


class QueryRejectedError(EndpointError):
    """The endpoint rejected the query as malformed (HTTP 400)."""


class QueryFailedError(EndpointError):
    """The endpoint failed while evaluating the query (HTTP 5xx or 501)."""


class QueryCheckError(NavqaError):
    """A query is not safe or not runnable as written.

    Args:
        message: The reason.
        query: The offending query text.
    """

    def __init__(self, message: str, *, query: str | None = None, hint: str | None = None):
        self.query = query
        super().__init__(message, hint=hint)


class SparqlSyntaxError(QueryCheckError):
    """The query does not parse as SPARQL 1.1.

    Args:
        message: The parser's reason.
        query: The offending query text.
        line / column: 1-based position of the error, when the parser knows it.
        unknown_prefix: The prefix used without a declaration, when that is the error.
    """

    def __init__(self, message: str, *, query: str | None = None, hint: str | None = None,
                 line: int | None = None, column: int | None = None,
                 unknown_prefix: str | None = None) -> None:
        self.line = line
        self.column = column
        self.unknown_prefix = unknown_prefix
        super().__init__(message, query=query, hint=hint)


class UpdateRefusedError(QueryCheckError):
    """navqa never sends SPARQL UPDATE to an endpoint."""


class UnmappedTermError(QueryCheckError):
    """The query uses ontology terms that no mapping populates.

    Args:
        message: The reason.
        terms: The unmapped IRIs.
        query: The query text.
    """

    def __init__(
        self,
        message: str,
        *,
        terms: tuple[str, ...],
        query: str | None = None,
        hint: str | None = None,
    ) -> None:
        self.terms = terms
        super().__init__(message, query=query, hint=hint)


class LLMError(NavqaError):
    """The language-model seam failed (never raised with an API key in the text)."""


class LLMTimeoutError(LLMError):
    """The LLM server did not answer in time."""


class LLMRateLimitError(LLMError):
    """The LLM server kept answering 429 after all retries."""


class LLMResponseError(LLMError):
    """The LLM answered with output that does not validate, even after one repair."""


class LLMUnavailableError(LLMError):
    """An LLM is required for this step but none is configured."""


class EvaluationError(NavqaError):
    """A question file, gold cache or run directory cannot be used."""


class EvaluationAbortedError(EvaluationError):
    """The endpoint or its database kept failing after the retries; the run stopped.

    Attributes:
        pending: Ids of the questions not done (``--resume`` runs them).
    """

    def __init__(self, message: str, *, pending: tuple[str, ...] = (),
                 hint: str | None = None) -> None:
        super().__init__(message, hint=hint)
        self.pending = pending


__all__ = [
    "ConfigError",
    "DatabaseUnavailableError",
    "DatasetError",
    "DockerUnavailableError",
    "EndpointError",
    "EndpointTimeoutError",
    "EndpointUnreachableError",
    "EndpointUnresponsiveError",
    "EvaluationAbortedError",
    "EvaluationError",
    "IndexError_",
    "InputError",
    "LLMError",
    "LLMRateLimitError",
    "LLMResponseError",
    "LLMTimeoutError",
    "LLMUnavailableError",
    "MappingParseError",
    "NavqaError",
    "OntologyParseError",
    "OntopStartupError",
    "PostgresError",
    "QueryCheckError",
    "QueryFailedError",
    "QueryRejectedError",
    "RuntimeServiceError",
    "ServiceError",
    "SetupError",
    "SparqlSyntaxError",
    "UnmappedTermError",
    "UpdateRefusedError",
]
