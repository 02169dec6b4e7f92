"""Console output for the CLI: the one place that configures logging and progress bars."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, TypeVar

from rich.console import Console
from rich.logging import RichHandler
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
    handler = RichHandler(console=err_console, show_path=False, rich_tracebacks=False)
    handler.addFilter(_RedactFilter(secrets))
    logging.basicConfig(level=level, handlers=[handler], format="%(message)s", force=True)
    for noisy in ("urllib3", "httpx", "httpcore", "openai", "sentence_transformers",
                  "transformers", "filelock", "faiss"):
        logging.getLogger(noisy).setLevel(max(level, logging.WARNING))


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
