"""Leases: one writer per session.

A run holds its session's lease from reading the session to storing its last event.
Within one process that is a lock per session (:func:`local_lease`), usable from any
event loop or thread (a sync ``Runner.run`` drives its own loop in a worker thread).
Services that other processes share add their own lease on top of it (a Postgres
advisory lock, a SQLite lease row); :func:`poll_until` is the waiting both share.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable
from contextlib import asynccontextmanager

from .errors import SessionBusyError, SessionStoreError

__all__ = ["LeaseLostError", "busy_message", "local_lease", "poll_until"]


class LeaseLostError(SessionStoreError):
    """A run's lease was taken over (it lapsed: its holder did not renew it in time);
    the write that found out stored nothing."""

    code = "session.lease_lost"


# The first wait between two tries, and the longest.
_FIRST_WAIT = 0.002
_LONGEST_WAIT = 0.05


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0  # holders and waiters: the entry is dropped when none is left


_guard = threading.Lock()
_entries: dict[Hashable, _Entry] = {}


def busy_message(key: tuple[str, ...], timeout: float) -> str:
    app_name, user_id, session_id = key[-3:]
    return (
        f"session {session_id!r} of user {user_id!r} of app {app_name!r} is in use by "
        f"another run (waited {timeout:g} s for it)"
    )


async def poll_until(
    try_once: Callable[[], Awaitable[bool]], deadline: float, on_timeout: Callable[[], Exception]
) -> None:
    """Call ``try_once`` until it returns True, waiting a little longer each time;
    past ``deadline`` (``time.monotonic()``) raise ``on_timeout()``."""
    wait = _FIRST_WAIT
    while not await try_once():
        left = deadline - time.monotonic()
        if left <= 0:
            raise on_timeout()
        await asyncio.sleep(min(wait, left))
        wait = min(wait * 2, _LONGEST_WAIT)


@asynccontextmanager
async def local_lease(key: tuple[Hashable, ...], timeout: float) -> AsyncIterator[None]:
    """Hold the lock of ``key`` within this process; wait up to ``timeout`` seconds for it,
    then raise :class:`SessionBusyError`. ``key`` ends with (app, user, session id)."""
    with _guard:
        entry = _entries.get(key)
        if entry is None:
            entry = _entries[key] = _Entry()
        entry.users += 1
    try:

        async def try_once() -> bool:
            return entry.lock.acquire(blocking=False)

        names = tuple(str(k) for k in key)
        await poll_until(
            try_once,
            time.monotonic() + timeout,
            lambda: SessionBusyError(busy_message(names, timeout)),
        )
        try:
            yield
        finally:
            entry.lock.release()
    finally:
        with _guard:
            entry.users -= 1
            if entry.users == 0:
                del _entries[key]
