"""Run a sync function or generator on a worker thread.

All ``next()`` calls of one generator happen on the same thread (thread-local state in
the generator stays valid), one item at a time, only when the consumer asks for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import queue
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import Any

__all__: list[str] = []


_STOP = object()

#: How long leaving a stream waits for a sync generator's cleanup before giving up on it.
CLOSE_GRACE_S = 1.0


class _StopAndTell:
    """A stop request whose sender waits until the generator has been closed."""

    __slots__ = ("future",)

    def __init__(self, future: asyncio.Future[None]) -> None:
        self.future = future


class SyncGeneratorDriver:
    """Drives a sync generator function from async code.

    ``executor=None`` runs it on the calling (event-loop) thread instead.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        args: list[Any],
        kwargs: dict[str, Any],
        *,
        executor: Executor | None,
    ) -> None:
        self._func = func
        self._args = args
        self._kwargs = kwargs
        self._executor = executor
        self._requests: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._started = False
        self._finished = False
        self._in_flight = False
        self._job: Future[None] | None = None
        self._inline: Any = None

    async def next(self) -> tuple[bool, Any]:
        """``(False, item)`` for a yield, ``(True, value)`` when the generator returned."""
        if self._finished:
            raise RuntimeError("the generator has finished")
        if self._executor is None:
            return self._step_inline()
        loop = asyncio.get_running_loop()
        reply: asyncio.Future[tuple[bool, Any]] = loop.create_future()
        if not self._started:
            self._started = True
            context = contextvars.copy_context()
            self._job = self._executor.submit(context.run, self._pump, loop)
        self._in_flight = True
        self._requests.put(reply)
        try:
            done, item = await reply
        except BaseException:
            self._finished = True
            raise
        self._in_flight = False
        self._finished = done
        return done, item

    def _step_inline(self) -> tuple[bool, Any]:
        try:
            if self._inline is None:
                self._inline = self._func(*self._args, **self._kwargs)
            return False, next(self._inline)
        except StopIteration as stop:
            self._finished = True
            return True, stop.value

    def _pump(self, loop: asyncio.AbstractEventLoop) -> None:
        generator = None
        while True:
            reply = self._requests.get()
            if reply is _STOP or isinstance(reply, _StopAndTell):
                try:
                    if generator is not None:
                        generator.close()  # runs its finally blocks, on this thread
                finally:
                    if isinstance(reply, _StopAndTell):
                        _reply(loop, reply.future, None, None)  # type: ignore[arg-type]
                return
            try:
                if generator is None:
                    generator = self._func(*self._args, **self._kwargs)
                outcome: tuple[bool, Any] = (False, next(generator))
            except StopIteration as stop:
                _reply(loop, reply, (True, stop.value), None)
                return
            except BaseException as exc:  # delivered to the awaiting side, which decides
                _reply(loop, reply, None, exc)
                return
            _reply(loop, reply, outcome, None)

    async def aclose(self) -> None:
        """Stop the generator and wait until it has stopped (its ``finally`` blocks ran).

        Waits only when the generator is suspended at a yield; if a step is still running
        (the consumer was cancelled mid-step), it is asked to stop and left to finish.
        """
        if self._executor is None or not self._started or self._finished:
            self.close()
            return
        self._finished = True
        stopped: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._requests.put(_StopAndTell(stopped))
        try:
            # A finally block that hangs must not hang the caller: past the grace period
            # the thread is given up on, like a call past its timeout.
            await asyncio.wait_for(asyncio.shield(stopped), CLOSE_GRACE_S)
        except TimeoutError:
            if self._job is not None:
                self._job.cancel()

    def close(self) -> None:
        """Stop the generator (``generator.close()`` on its own thread) if still running."""
        if self._executor is None:
            if self._inline is not None:
                self._inline.close()
        elif self._started:
            self._requests.put(_STOP)
            if self._in_flight and self._job is not None:
                # Stuck inside next(): give up on the thread (a pool may replace it).
                self._job.cancel()
        self._finished = True


def _reply(
    loop: asyncio.AbstractEventLoop,
    reply: asyncio.Future[tuple[bool, Any]],
    value: tuple[bool, Any] | None,
    exc: BaseException | None,
) -> None:
    def deliver() -> None:
        if reply.done():
            return
        if exc is not None:
            reply.set_exception(exc)
        else:
            reply.set_result(value)  # type: ignore[arg-type]

    with contextlib.suppress(RuntimeError):  # the loop has closed: nobody is waiting
        loop.call_soon_threadsafe(deliver)
