"""The bounded channel that carries one dispatch's progress and responses to its consumer.

Bounds, per dispatch and per call:

- at most ``capacity`` progress items wait in the queue; responses are never dropped
  (intermediate ones wait for room, final ones always go in);
- a call delivers at most ``budget`` bytes of progress; past it, one final marker and
  then nothing more for that call;
- a producer on a worker thread may wait up to ``max_wait`` once per run of drops; on the
  event-loop thread it never waits;
- each run of dropped chunks reaches the consumer as one marker whose ``dropped`` counts
  them; the marker's slot is reserved when the run starts, so it cannot itself be lost.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import AsyncIterator
from typing import Any

from .._context import PROGRESS_TRUNCATED
from .._types import ToolProgress, ToolResponse

__all__: list[str] = []

DEFAULT_CAPACITY = 256
DEFAULT_BUDGET = 1024 * 1024
DEFAULT_MAX_WAIT = 0.05

Item = ToolProgress | ToolResponse


class _NoRoom:
    """Stands in for the condition of a channel nobody reads (never waited on)."""

    def notify(self, n: int = 1) -> None:
        pass

    def notify_all(self) -> None:
        pass


_NO_ROOM: Any = _NoRoom()


class CallProgress:
    """One call's side of the channel: its budget and its current run of drops."""

    __slots__ = ("_channel", "budget", "closed", "dropped", "id", "name", "stream", "waited")

    def __init__(self, channel: ProgressChannel, call_id: str, name: str) -> None:
        self._channel = channel
        self.id = call_id
        self.name = name
        self.budget = channel.budget
        self.dropped = 0  # chunks lost in the current run of drops (0: no run)
        self.stream = ""  # the stream of the first chunk of that run
        self.waited = False  # whether this run has already waited for room
        self.closed = False  # budget spent and final marker queued

    def __call__(self, item: ToolProgress) -> None:
        """A ``ToolContext`` progress sink."""
        self._channel.offer(self, item)

    def skip(self) -> bool:
        """Count the next chunk as dropped at once, if it would be (nobody reads, the
        budget is spent, or a run of drops goes on): the caller then need not build it."""
        return self._channel.skip(self)


class ProgressChannel:
    """A queue a dispatch's calls write to (from any thread) and its consumer reads.

    ``consumer=False`` (a plain ``dispatch()``): progress is dropped at once, without
    waiting or queueing; only final responses are kept.
    """

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        *,
        consumer: bool,
        capacity: int = DEFAULT_CAPACITY,
        budget: int = DEFAULT_BUDGET,
        max_wait: float = DEFAULT_MAX_WAIT,
    ) -> None:
        self.consumer = consumer
        self.capacity = capacity
        self.budget = budget
        self.max_wait = max_wait
        self._loop = loop
        self._loop_thread = threading.get_ident()
        self._lock = threading.Lock()
        # Without a consumer nothing waits for room: skip building the condition.
        self._room = threading.Condition(self._lock) if consumer else _NO_ROOM
        self._items: deque[Item] = deque()
        self._progress_queued = 0  # progress items (markers included) in the queue
        self._reserved = 0  # marker slots held by runs of drops
        self._waiter: asyncio.Future[None] | None = None
        self._wake_pending = False
        self._closed = False
        self._async_room: asyncio.Event | None = None
        self._silent: CallProgress | None = None

    def for_call(self, call_id: str, name: str) -> CallProgress:
        """The progress sink of one call (one shared do-nothing sink without a consumer)."""
        if not self.consumer:
            if self._silent is None:
                self._silent = CallProgress(self, "", "")
            return self._silent
        return CallProgress(self, call_id, name)

    # -- producers ---------------------------------------------------------------------

    def skip(self, call: CallProgress) -> bool:
        """See :meth:`CallProgress.skip`."""
        if not self.consumer or call.closed:
            return True
        if not call.dropped:
            return False
        with self._lock:
            if (
                call.dropped
                and not self._closed
                and not self._has_room()
                and (call.waited or self._on_loop_thread())
            ):
                call.dropped += 1  # the run of drops goes on: no wait, no marker yet
                return True
        return False

    def offer(self, call: CallProgress, item: ToolProgress) -> None:
        """Queue ``item`` if the bounds allow, else count it in the call's run of drops."""
        if not self.consumer or call.closed:
            return
        with self._lock:
            if self._closed:
                return
            if call.dropped and call.waited and not self._has_room():
                call.dropped += 1  # the run of drops goes on: no wait, no marker yet
                return
            chunk = item.chunk
            size = len(chunk) if chunk.isascii() else len(chunk.encode("utf-8", "surrogatepass"))
            if size > call.budget:
                self._drop(call, item)
                self._queue_marker(call)  # the final marker: nothing more for this call
                call.closed = True
                self._wake()
                return
            if not self._has_room() and not call.waited and not self._on_loop_thread():
                self._room.wait_for(self._has_room, self.max_wait)
                call.waited = True
            if not self._has_room():
                self._drop(call, item)
                return
            if call.dropped:
                self._queue_marker(call)
            call.waited = False
            call.budget -= size
            self._items.append(item)
            self._progress_queued += 1
            self._wake()

    async def put_update(self, response: ToolResponse) -> None:
        """Queue an intermediate response, waiting (on the loop) while the queue is full."""
        if not self.consumer:
            return
        while True:
            with self._lock:
                if self._closed:
                    return
                if self._has_room():
                    self._items.append(response)
                    self._progress_queued += 1
                    self._wake()
                    return
                if self._async_room is None:
                    self._async_room = asyncio.Event()
                room = self._async_room
                room.clear()
            await room.wait()

    def put_final(self, response: ToolResponse, call: CallProgress | None = None) -> None:
        """Queue a final response (never dropped), after the call's pending marker."""
        if not self.consumer:
            return
        with self._lock:
            if call is not None:
                self._queue_marker(call)
                call.closed = True
            if self.consumer and not self._closed:
                self._items.append(response)
                self._wake()

    def finish(self) -> None:
        """No more items will come: the consumer stops once the queue is empty."""
        if not self.consumer:
            self._closed = True
            return
        with self._lock:
            self._closed = True
            self._room.notify_all()
            self._wake()

    def _has_room(self) -> bool:
        return self._progress_queued + self._reserved < self.capacity

    def _on_loop_thread(self) -> bool:
        return threading.get_ident() == self._loop_thread

    def _drop(self, call: CallProgress, item: ToolProgress) -> None:
        if call.dropped == 0:
            self._reserved += 1  # the run's marker now has a slot, whatever happens
            call.stream = item.stream
        call.dropped += 1
        call.waited = True  # no more waiting in this run, from any thread

    def _queue_marker(self, call: CallProgress) -> None:
        if call.dropped == 0:
            return
        self._items.append(
            ToolProgress(
                id=call.id,
                name=call.name,
                stream=call.stream,
                chunk=PROGRESS_TRUNCATED,
                dropped=call.dropped,
            )
        )
        self._reserved -= 1
        self._progress_queued += 1
        call.dropped = 0
        call.waited = False

    def _wake(self) -> None:
        # Called with the lock held; wakes the consumer on the loop thread.
        waiter = self._waiter
        if waiter is None or self._wake_pending:
            return
        if self._on_loop_thread():
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)
        else:
            self._wake_pending = True
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody is listening
                self._loop.call_soon_threadsafe(self._release, waiter)

    def _release(self, waiter: asyncio.Future[None]) -> None:
        with self._lock:
            self._wake_pending = False
            if self._waiter is waiter:
                self._waiter = None
        if not waiter.done():
            waiter.set_result(None)

    # -- consumer ----------------------------------------------------------------------

    # A plain async iterator, not an async generator: a consumer that stops early leaves
    # nothing for the event loop to finalize later (no stray ``aclose()`` task).

    def __aiter__(self) -> AsyncIterator[Item]:
        return self

    async def __anext__(self) -> Item:
        while True:
            with self._lock:
                if self._items:
                    item = self._items.popleft()
                    if isinstance(item, ToolProgress) or not item.final:
                        self._progress_queued -= 1
                        self._room.notify()
                        room: Any = self._async_room
                    else:
                        room = None
                    waiter = None
                elif self._closed:
                    raise StopAsyncIteration
                else:
                    item = None
                    waiter = self._waiter = self._loop.create_future()
                    room = None
            if room is not None:
                room.set()
            if item is not None:
                return item
            assert waiter is not None
            await waiter
