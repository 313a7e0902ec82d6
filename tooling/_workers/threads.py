"""Worker threads for sync tools: daemon threads whose hung calls can be abandoned.

A sync call cannot be killed. When its caller stops waiting (a timeout, a cancelled
dispatch), the thread running it is *abandoned*: it no longer counts against the pool, a
fresh thread takes its slot, its late result is discarded, and, being a daemon thread, it
never delays ``asyncio.run()`` shutdown or interpreter exit.
"""

from __future__ import annotations

import functools
import itertools
import os
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any, TypeVar

from .._errors import PoolSaturated

__all__ = [
    "WorkerPool",
]

_T = TypeVar("_T")
_counter = itertools.count(1)


class _CallFuture(Future[Any]):
    """A future that, when cancelled while running, abandons the thread running it."""

    __slots__ = ("_pool", "_worker")

    def __init__(self, pool: WorkerPool) -> None:
        super().__init__()
        self._pool = pool
        self._worker: _Worker | None = None

    def cancel(self) -> bool:
        if super().cancel():
            return True
        worker = self._worker
        if worker is not None and not self.done():
            self._pool._abandon(worker)
        return False


class _Worker:
    __slots__ = ("abandoned", "thread")

    def __init__(self) -> None:
        self.abandoned = False
        self.thread: threading.Thread | None = None


class WorkerPool(Executor):
    """Up to ``max_threads`` daemon threads; at most ``max_abandoned`` abandoned ones.

    ``submit`` refuses work (:class:`PoolSaturated`) once ``max_abandoned`` abandoned
    threads are still stuck, and an abandoned thread is replaced only while they are
    fewer, so the pool never has more than ``max_threads + max_abandoned`` threads.
    """

    def __init__(
        self, max_threads: int = 64, *, max_abandoned: int | None = None, name: str = "tooling"
    ) -> None:
        if max_threads < 1:
            raise ValueError("max_threads must be at least 1")
        self.max_threads = max_threads
        self.max_abandoned = max_abandoned if max_abandoned is not None else max_threads
        self._name = f"{name}-{next(_counter)}"
        self._work: queue.SimpleQueue[
            tuple[_CallFuture, Callable[..., Any], tuple[Any, ...]] | None
        ]
        self._work = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._live = 0  # threads counting against max_threads
        self._idle = 0
        self._abandoned = 0  # abandoned threads still running their call
        self._shutdown = False

    @property
    def abandoned(self) -> int:
        """How many abandoned threads are still running a call."""
        return self._abandoned

    def saturated(self) -> bool:
        """True when no more work is accepted because too many threads are abandoned."""
        return self._abandoned >= self.max_abandoned

    def submit(self, fn: Callable[..., _T], /, *args: Any, **kwargs: Any) -> Future[_T]:
        if kwargs:
            fn = functools.partial(fn, **kwargs)
        future = _CallFuture(self)
        with self._lock:
            if self._shutdown:
                raise RuntimeError("the worker pool is shut down")
            if self._abandoned >= self.max_abandoned:
                raise PoolSaturated(
                    f"{self._abandoned} hung calls (timed out or cancelled) are still "
                    "running in their threads; no more sync work starts until some finish"
                )
            self._work.put((future, fn, args))
            if self._idle > 0:
                self._idle -= 1  # an idle thread will take it
            elif self._live < self.max_threads:
                self._start_worker()
        return future

    def _start_worker(self) -> None:
        worker = _Worker()
        thread = threading.Thread(
            target=self._serve, args=(worker,), name=f"{self._name}-{self._live}", daemon=True
        )
        worker.thread = thread
        self._live += 1
        thread.start()

    def _serve(self, worker: _Worker) -> None:
        work = self._work
        while True:
            item = work.get()
            if item is None:
                return
            future, fn, args = item
            if not future.set_running_or_notify_cancel():
                with self._lock:
                    self._idle += 1
                continue
            future._worker = worker
            try:
                result = fn(*args)
            except BaseException as exc:
                future._worker = None
                if not worker.abandoned:
                    future.set_exception(exc)
            else:
                future._worker = None
                if not worker.abandoned:
                    future.set_result(result)
            with self._lock:
                if worker.abandoned:
                    self._abandoned -= 1
                    if self._shutdown or self._live >= self.max_threads:
                        return
                    # The pool is short of threads (no replacement was started for this
                    # one, the cap being reached): this thread takes its place again.
                    worker.abandoned = False
                    self._live += 1
                self._idle += 1

    def _abandon(self, worker: _Worker) -> None:
        with self._lock:
            if worker.abandoned:
                return
            worker.abandoned = True
            self._abandoned += 1
            self._live -= 1
            # Queued work may be waiting for this slot: a fresh thread takes it, unless
            # the abandoned threads are at their cap (then live + abandoned threads stay
            # within max_threads + max_abandoned, however many calls hang; an abandoned
            # thread that ends comes back in its place).
            if (
                not self._shutdown
                and self._live < self.max_threads
                and self._abandoned <= self.max_abandoned
            ):
                self._start_worker()
                self._idle += 1

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Stop idle threads; running calls finish on their own (never waited for here)."""
        with self._lock:
            if self._shutdown:
                return
            self._shutdown = True
            for _ in range(self._live):
                self._work.put(None)


_default_lock = threading.Lock()
_default: WorkerPool | None = None


def default_executor() -> WorkerPool:
    """The process-wide pool used by ``tool.run()`` when no scheduler supplies one."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = WorkerPool(
                    min(64, (os.cpu_count() or 1) * 4 + 4), name="tooling-default"
                )
    return _default
