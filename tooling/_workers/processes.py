"""Worker processes for ``isolation="process"`` tools: calls that can really be stopped.

A thread cannot be killed; a process can. A :class:`ProcessPool` keeps up to
``max_processes`` worker processes, started on first use and reused. Each call borrows
one worker: the request goes over a pipe as JSON, and a reader thread per worker turns
what comes back (progress, generator items, the result) into items on the caller's event
loop. When the caller stops waiting (a timeout, a cancelled dispatch) the worker gets
SIGTERM, then SIGKILL after :data:`KILL_GRACE_S`, and a fresh one is started in its slot; a
worker that dies by itself (a segfault, the OOM killer, ``os._exit``) fails only the
call it was running. Each worker leads a process group of its own, and those signals go
to the whole group: a tool's child processes never outlive its worker, and a forked child
that holds the worker's pipe cannot keep a dead worker's call open.

A call's time limit starts when the worker says the tool is imported and starting
(``worker_ready``); waiting for a worker, starting one and importing the tool's module
have their own bound, ``start_timeout``.

Workers are fresh interpreters (``python -c`` booting :mod:`tooling._worker`), talking
over a socket pair of their own (a tool may print to stdout freely). Deliberately not
``multiprocessing``: plain ``fork`` copies a threaded host mid-flight (a lock another
thread held stays locked forever in the child), and its ``spawn`` and ``forkserver``
methods re-run the host's main script in every child, which breaks scripts without an
``if __name__ == "__main__"`` guard. A warm call costs a pipe round trip either way; a
cold worker costs an interpreter start and the imports of the tool's module.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import signal
import socket
import subprocess
import sys
import threading
from collections import deque
from collections.abc import AsyncGenerator, Callable
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from pydantic_core import from_json

__all__ = [
    "ProcessPool",
]

#: How long a worker has to exit after SIGTERM before it gets SIGKILL.
KILL_GRACE_S = 1.0

# A worker's first lines: the host's import path, then the serving loop (argv: the socket's
# file descriptor, the host's pid, the host's sys.path as JSON).
_BOOT = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[3]); "
    "from tooling._worker import main; main(int(sys.argv[1]), int(sys.argv[2]))"
)

#: Messages that end a call.
TERMINAL = frozenset({"result", "tool_error", "exception", "died"})

_counter = itertools.count(1)

#: Called (in the caller's context) once the call's tool starts in its worker: the
#: scheduler starts the call's time limit there, so waiting for a worker, starting one or
#: importing the tool's module is not counted (``ProcessPool.start_timeout`` bounds those).
worker_ready: ContextVar[Callable[[], None] | None] = ContextVar("worker_ready", default=None)


class WorkerDied(RuntimeError):
    """The worker process running a call ended before answering it."""


@dataclass(eq=False, slots=True)
class _Call:
    """The caller's side of one call: where its messages go."""

    loop: asyncio.AbstractEventLoop
    inbox: asyncio.Queue[dict[str, Any]]
    progress: Callable[[str, str], None] | None

    def deliver(self, message: dict[str, Any]) -> None:
        with contextlib.suppress(RuntimeError):  # the caller's loop is gone
            self.loop.call_soon_threadsafe(self.inbox.put_nowait, message)


class _Worker:
    __slots__ = ("call", "conn", "killed", "process")

    def __init__(self, process: subprocess.Popen[bytes], conn: Connection) -> None:
        self.process = process
        self.conn = conn
        self.call: _Call | None = None
        self.killed = False

    @property
    def pid(self) -> int:
        return int(self.process.pid)


class ProcessPool:
    """Up to ``max_processes`` worker processes (default: the number of CPUs).

    Nothing starts until the first call. :meth:`shutdown` stops every worker.
    ``start_timeout`` bounds how long a call with a time limit may wait for its tool to
    start: for a free worker, a worker's start and the import of the tool's module.
    """

    def __init__(
        self,
        max_processes: int | None = None,
        *,
        name: str = "tooling",
        start_timeout: float = 60.0,
    ) -> None:
        if max_processes is None:
            max_processes = os.cpu_count() or 1
        if max_processes < 1:
            raise ValueError("max_processes must be at least 1")
        self.max_processes = max_processes
        self.start_timeout = start_timeout
        self._name = f"{name}-processes-{next(_counter)}"
        self._lock = threading.Lock()
        self._idle: list[_Worker] = []
        self._workers: set[_Worker] = set()
        self._starting = 0
        self._waiters: deque[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = deque()
        self._closed = False
        self._spawner = ThreadPoolExecutor(1, thread_name_prefix=f"{self._name}-spawner")

    @property
    def pids(self) -> list[int]:
        """The process ids of the live workers (busy and idle)."""
        with self._lock:
            return sorted(w.pid for w in self._workers)

    # -- a call ----------------------------------------------------------------------------

    async def messages(
        self, request: bytes, progress: Callable[[str, str], None] | None = None
    ) -> AsyncGenerator[dict[str, Any], None]:
        """Run ``request`` (JSON) on a worker; give its messages up to the terminal one.

        ``progress(stream, chunk)`` is called on the worker's reader thread for each
        progress chunk. Closing the generator before the terminal message (the caller
        was cancelled or timed out) kills the worker.
        """
        worker = await self._acquire()
        ready = worker_ready.get()
        loop = asyncio.get_running_loop()
        call = _Call(loop, asyncio.Queue(), progress)
        worker.call = call
        healthy = False
        try:
            worker.conn.send_bytes(request)
            while True:
                message = await call.inbox.get()
                kind = message["t"]
                if kind == "started":
                    if ready is not None:
                        ready()
                    continue
                if kind in TERMINAL:
                    # A MemoryError may leave the worker's heap in a bad way: retire it.
                    healthy = kind != "died" and not (
                        kind == "exception" and message.get("type") == "MemoryError"
                    )
                    yield message
                    return
                yield message
        finally:
            worker.call = None
            if healthy:
                self._release(worker)
            else:
                self._kill(worker)

    # -- workers ---------------------------------------------------------------------------

    async def _acquire(self) -> _Worker:
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                if self._closed:
                    raise RuntimeError("the process pool is shut down")
                if self._idle:
                    return self._idle.pop()
                if len(self._workers) + self._starting < self.max_processes:
                    self._starting += 1
                    break
                waiter: asyncio.Future[None] = loop.create_future()
                self._waiters.append((loop, waiter))
            try:
                await waiter
            except BaseException:
                with self._lock, contextlib.suppress(ValueError):
                    self._waiters.remove((loop, waiter))
                if waiter.done() and not waiter.cancelled():
                    self._wake_one()  # pass on a wake-up this caller will not use
                raise
        # Starting a process blocks: the pool's spawner thread does it (one long-lived
        # thread: Linux's parent-death signal follows the thread that started a child),
        # and a worker whose caller gave up meanwhile joins the idle ones.
        started = loop.run_in_executor(self._spawner, self._start)
        try:
            return await asyncio.shield(started)
        except BaseException:
            started.add_done_callback(self._adopt)
            raise

    def _adopt(self, started: asyncio.Future[_Worker]) -> None:
        if not started.cancelled() and started.exception() is None:
            self._release(started.result())

    def _start(self) -> _Worker:
        try:
            ours, theirs = socket.socketpair()
            with ours, theirs:
                process = subprocess.Popen(
                    [
                        sys.executable,
                        "-c",
                        _BOOT,
                        str(theirs.fileno()),
                        str(os.getpid()),
                        json.dumps(sys.path),
                    ],
                    pass_fds=(theirs.fileno(),),
                    stdin=subprocess.DEVNULL,
                    # A session and process group of its own: the terminal's Ctrl-C is
                    # the host's to handle, and the worker's children can be stopped with it.
                    start_new_session=True,
                )
                conn = Connection(ours.detach())
        except BaseException:
            with self._lock:
                self._starting -= 1
            self._wake_one()
            raise
        worker = _Worker(process, conn)
        with self._lock:
            self._starting -= 1
            self._workers.add(worker)
        threading.Thread(
            target=self._read, args=(worker,), name=f"{self._name}-reader", daemon=True
        ).start()
        threading.Thread(
            target=_watch, args=(worker,), name=f"{self._name}-watcher", daemon=True
        ).start()
        return worker

    def _read(self, worker: _Worker) -> None:
        """The worker's reader thread: route each message to the call it belongs to."""
        conn = worker.conn
        while True:
            try:
                data = conn.recv_bytes()
            except (EOFError, OSError):
                break
            call = worker.call
            if call is None:
                continue
            message = from_json(data)
            if message["t"] == "progress":
                if call.progress is not None:
                    with contextlib.suppress(Exception):
                        call.progress(message["s"], message["c"])
                continue
            call.deliver(message)
        # The pipe closed: the worker exited (killed by us, or it died by itself).
        with contextlib.suppress(OSError):
            conn.close()  # only this thread reads or closes a worker's pipe
        call = worker.call
        with self._lock:
            if worker.killed:
                return
            worker.killed = True
            self._workers.discard(worker)
            with contextlib.suppress(ValueError):
                self._idle.remove(worker)
        self._wake_one()
        self._replace()
        with contextlib.suppress(subprocess.TimeoutExpired):
            worker.process.wait(KILL_GRACE_S)
        if call is not None:
            call.deliver({"t": "died", "how": _exit_description(worker.process.returncode)})
        _reap(worker)

    def _release(self, worker: _Worker) -> None:
        with self._lock:
            if self._closed or worker.killed or worker not in self._workers:
                closing = True
            else:
                closing = False
                self._idle.append(worker)
        if closing:
            self._kill(worker)
        else:
            self._wake_one()

    def _kill(self, worker: _Worker) -> None:
        """SIGTERM now, SIGKILL after the grace period; the slot is free at once."""
        with self._lock:
            if worker.killed:
                return
            worker.killed = True
            self._workers.discard(worker)
            with contextlib.suppress(ValueError):
                self._idle.remove(worker)
        _signal_group(worker, signal.SIGTERM)
        reaper = threading.Thread(
            target=_reap, args=(worker,), name=f"{self._name}-reaper", daemon=True
        )
        reaper.start()
        self._wake_one()
        self._replace()

    def _replace(self) -> None:
        """Start a worker in the background for the slot a stopped one left, so the next
        call finds it warm (unless a waiting caller is already taking that slot)."""
        with self._lock:
            if self._closed or self._waiters:
                return
            if len(self._workers) + self._starting >= self.max_processes:
                return
            self._starting += 1
        try:
            self._spawner.submit(self._start_idle)
        except RuntimeError:  # shut down meanwhile
            with self._lock:
                self._starting -= 1

    def _start_idle(self) -> None:
        with contextlib.suppress(Exception):  # a failed start is retried by the next call
            self._release(self._start())

    def _wake_one(self) -> None:
        """Tell the longest-waiting caller that a worker or a slot may be free."""
        with self._lock:
            while self._waiters:
                loop, waiter = self._waiters.popleft()
                try:
                    loop.call_soon_threadsafe(_wake, waiter, self)
                except RuntimeError:  # that caller's loop is closed
                    continue
                return

    def shutdown(self) -> None:
        """Stop every worker, idle or busy. Later calls fail with ``RuntimeError``."""
        with self._lock:
            self._closed = True
            workers = list(self._workers)
        for worker in workers:
            self._kill(worker)
        self._spawner.shutdown(wait=False)


def _wake(waiter: asyncio.Future[None], pool: ProcessPool) -> None:
    if waiter.done():  # cancelled meanwhile: the wake-up goes to the next caller
        pool._wake_one()
    else:
        waiter.set_result(None)


def _reap(worker: _Worker) -> None:
    """Wait for a stopped worker to exit; after the grace period SIGKILL what is left of
    its process group (the worker, if it lingers, and its children)."""
    process = worker.process
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(KILL_GRACE_S)
    _signal_group(worker, signal.SIGKILL)
    process.wait()


def _watch(worker: _Worker) -> None:
    """Once the worker has exited, however it ended, stop its children: one that holds
    the worker's pipe would keep the reader from seeing that the worker is gone."""
    worker.process.wait()
    _signal_group(worker, signal.SIGKILL)


def _signal_group(worker: _Worker, signum: int) -> None:
    """Send ``signum`` to the worker's process group (it leads one: ``start_new_session``).

    The group's id stays the worker's pid, and is not given to another process, while
    any member lives; once none does, there is nothing to signal.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
        os.killpg(worker.pid, signum)


def _exit_description(code: int | None) -> str:
    if code is None:
        return "it stopped answering"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"it was killed by {name}"
    return f"it exited with status {code}"


_default_lock = threading.Lock()
_default: ProcessPool | None = None


def default_process_pool() -> ProcessPool:
    """The process-wide pool used by ``tool.run()`` when no scheduler supplies one."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                _default = ProcessPool(name="tooling-default")
    return _default
