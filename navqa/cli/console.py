"""Console output for the CLI: the one place that configures logging and progress bars."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

from rich.console import Console
from rich.logging import RichHandler
from rich.markup import escape
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    SpinnerColumn,
    TextColumn,
    TimeElapsedColumn,
)

T = TypeVar("T")

# emoji=False: "rail:Station:" must not become a train emoji.
console = Console(highlight=False, emoji=False)
err_console = Console(stderr=True, highlight=False, emoji=False)


def setup_logging(verbose: int, secrets: list[str]) -> None:
    """Route library logs to stderr; ``-v`` shows INFO, ``-vv`` DEBUG. Secrets are scrubbed."""
    level = logging.WARNING if verbose == 0 else logging.INFO if verbose == 1 else logging.DEBUG
    handler: logging.Handler
    if verbose == 0:
        handler = _LineHandler()
    else:
        handler = RichHandler(console=err_console, show_path=False, rich_tracebacks=False)
    handler.addFilter(_RedactFilter(secrets))
    if verbose < 2:
        handler.addFilter(_OneLineFilter())
    logging.basicConfig(level=level, handlers=[handler], format="%(message)s", force=True)
    # library ``warnings.warn`` calls go through the same handler (one line each)
    logging.captureWarnings(True)
    for noisy in ("urllib3", "httpx", "httpcore", "openai", "sentence_transformers",
                  "transformers", "filelock", "faiss"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))


class _LineHandler(logging.Handler):
    """Default verbosity: ``warning: text`` on one line of stderr (no columns, no wrap)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            level = record.levelname.lower()
            colour = "red" if record.levelno >= logging.ERROR else "yellow"
            err_console.print(f"[{colour}]{level}:[/] {escape(self.format(record))}",
                              soft_wrap=True)
        except Exception:  # noqa: BLE001 - logging must never raise
            self.handleError(record)


class _OneLineFilter(logging.Filter):
    """Below ``-vv``: a library record is one line — no traceback, no repeats.

    rdflib, for one, logs ``Failed to convert Literal lexical form`` *with* the traceback
    for every ill-typed literal (``"2025-13-45"^^xsd:date``); ``-vv`` shows them in full.
    """

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[tuple[str, str]] = set()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.exc_info or record.exc_text or record.stack_info:
            record.exc_info = None
            record.exc_text = None
            record.stack_info = None
        text = record.getMessage()
        if record.name == "py.warnings":
            # "file.py:12: UserWarning: text\n  source line" -> "UserWarning: text"
            first = text.strip().splitlines()[0] if text.strip() else text
            text = first.split(": ", 1)[1] if ": " in first else first
        lines = text.strip().splitlines()
        one = lines[0] if lines else ""
        if len(lines) > 1:
            one += " …"
        key = (record.name, one)
        if key in self.seen:
            return False
        self.seen.add(key)
        record.msg = one
        record.args = ()
        return True


class _RedactFilter(logging.Filter):
    def __init__(self, secrets: list[str]) -> None:
        super().__init__()
        self.secrets = [s for s in secrets if s]

    def filter(self, record: logging.LogRecord) -> bool:
        if self.secrets:
            from navqa.config import redact

            record.msg = redact(record.getMessage(), self.secrets)
            record.args = ()
        return True


@contextmanager
def status(message: str) -> Iterator[Callable[[str], None]]:
    """A spinner on stderr whose text the caller can update; yields ``update(text)``."""
    with err_console.status(message) as st:

        def update(text: str) -> None:
            st.update(text)
            err_console.print(f"[dim]{text}[/]")

        yield update


@contextmanager
def starting(message: str, factory: Callable[..., AbstractContextManager[T]], *args: Any,
             **kwargs: Any) -> Iterator[T]:
    """Enter ``factory(*args, status=update, **kwargs)`` under a spinner, then drop the spinner.

    The spinner only covers start-up, so results printed inside the block stay clean.
    """
    sp = err_console.status(message)
    sp.start()

    def update(text: str) -> None:
        sp.update(text)
        err_console.print(f"[dim]{text}[/]")

    try:
        cm = factory(*args, status=update, **kwargs)
        value = cm.__enter__()
    finally:
        sp.stop()
    try:
        yield value
    except BaseException as e:
        if not cm.__exit__(type(e), e, e.__traceback__):
            raise
    else:
        cm.__exit__(None, None, None)


def progress_bar(*, bytes_: bool = False) -> Progress:
    """A rich progress bar (bytes or items)."""
    cols = [SpinnerColumn(), TextColumn("{task.description}"), BarColumn()]
    cols.append(DownloadColumn() if bytes_ else TextColumn("{task.completed}/{task.total}"))
    cols.append(TimeElapsedColumn())
    return Progress(*cols, console=err_console, transient=False)
