"""Inter-process locks: one exclusive ``flock`` on a lock file, shared by every module.

navqa processes started together (four ``navqa ask`` in a shell loop, ``navqa eval``
threads beside ``navqa endpoint up``) must not create a PostgreSQL cluster, load a
database or build an index at the same time. Each of those steps holds
:func:`exclusive_lock` on a file next to what it creates, then checks again whether
another process has already done the work.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

__all__ = ["exclusive_lock"]


@contextlib.contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive lock on ``path`` (created if needed) for the ``with`` block.

    Blocks until other processes release it. The lock goes with the process: a process
    that dies holding it releases it.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
