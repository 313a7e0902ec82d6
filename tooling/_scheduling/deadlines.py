"""Deadlines that hold whatever a call does: cancel, wait briefly, then abandon."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    pass


__all__: list[str] = []


#: How long a call cancelled at its deadline may take to end before it is abandoned.
CANCEL_GRACE_S = 0.5

# Tasks that ignored their cancellation, kept referenced until they end on their own.
_abandoned_tasks: set[asyncio.Task[Any]] = set()


async def stop_within_grace(work: asyncio.Task[Any]) -> bool:
    """Cancel ``work`` and wait briefly for it to end; True if it did.

    A deadline holds whatever the call does: one that swallows its cancellation is
    abandoned (left running, its outcome discarded), like a hung thread.
    """
    work.cancel()
    await asyncio.wait((work,), timeout=CANCEL_GRACE_S)
    if not work.done():
        _abandoned_tasks.add(work)
        work.add_done_callback(forget)
        return False
    forget(work)
    return True


def forget(work: asyncio.Task[Any]) -> None:
    """Drop an abandoned task; its outcome is discarded (retrieved, so never logged)."""
    _abandoned_tasks.discard(work)
    if work.done() and not work.cancelled():
        work.exception()
