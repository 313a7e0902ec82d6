"""Proof that a sync tool ran on a worker thread, without timing: the tool waits for the
event loop to release it; run on the loop itself, it would wait in vain."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable
from typing import Any, TypeVar

T = TypeVar("T")


class Rendezvous:
    def __init__(self) -> None:
        self.started = threading.Event()
        self.release = threading.Event()

    def reset(self) -> None:
        self.started.clear()
        self.release.clear()

    def wait_in_tool(self) -> str:
        """Called by the tool: 'released' when the loop went on while it waited."""
        self.started.set()
        return "released" if self.release.wait(10) else "the event loop was blocked"

    async def run(self, call: Awaitable[T]) -> T:
        """Await ``call`` while the loop releases the tool once it has started."""
        self.reset()

        async def releaser() -> None:
            while not self.started.is_set():
                await asyncio.sleep(0.005)
            self.release.set()

        helper = asyncio.ensure_future(releaser())
        try:
            return await call
        finally:
            helper.cancel()


def text_of(value: Any) -> str:
    return value if isinstance(value, str) else str(value)
