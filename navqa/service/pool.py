"""A bounded pool of worker threads: blocking pipeline work off the event loop.

At most ``workers`` requests run at once and ``queue`` more may wait; a request beyond that
is refused at once (:class:`PoolFull`, answered 503) rather than piling up. A request
that does not finish within its timeout answers 504; its thread finishes the work it
started (a Python thread cannot be killed) and only then frees its slot, so the bound
holds.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


class PoolFull(Exception):
    """Every worker is busy and the queue is full."""


class WorkTimeout(Exception):
    """The work did not finish within the request's timeout."""


class WorkerPool:
    """``await pool.run(fn)`` runs ``fn`` on a worker thread, within the bounds."""

    def __init__(self, workers: int, queue: int) -> None:
        self.capacity = workers + queue
        self._executor = ThreadPoolExecutor(max_workers=workers,
                                            thread_name_prefix="navqa-serve")
        self._slots = threading.BoundedSemaphore(self.capacity)

    def submit(self, fn: Callable[[], T]) -> Future[T]:
        """Start ``fn`` on a worker, or raise :class:`PoolFull` at once."""
        if not self._slots.acquire(blocking=False):
            raise PoolFull
        try:
            fut = self._executor.submit(fn)
        except BaseException:
            self._slots.release()
            raise
        fut.add_done_callback(lambda _f: self._slots.release())
        return fut

    async def run(self, fn: Callable[[], T], *, timeout: float) -> T:
        """The result of ``fn``; :class:`PoolFull` or :class:`WorkTimeout` otherwise."""
        fut = self.submit(fn)
        try:
            return await asyncio.wait_for(asyncio.wrap_future(fut), timeout)
        except TimeoutError as e:
            raise WorkTimeout from e

    def shutdown(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
