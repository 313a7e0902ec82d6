"""Tools that run in worker processes, so a timeout really stops them.

Run it with ``python -m examples.isolated_tools``. ``count_primes`` is ordinary CPU work
done outside the host's process (and its GIL); ``search_forever`` never finishes: its
one-second timeout kills the worker running it, and the next call gets a fresh one.
"""

from __future__ import annotations

import asyncio
import math
import os

from tooling import Scheduler, ToolCall, ToolContext, tool


@tool(isolation="process", read_only=True, concurrency_safe=True, idempotent=True)
def count_primes(below: int) -> int:
    """Count the prime numbers below a bound.

    Args:
        below: The exclusive upper bound.
    """
    return sum(1 for n in range(2, below) if all(n % d for d in range(2, math.isqrt(n) + 1)))


@tool(isolation="process", timeout=1)
def search_forever(start: int, tool_context: ToolContext) -> int:
    """Look for a Collatz sequence that never reaches 1 (it will not find one).

    Args:
        start: The first number to try.
    """
    tool_context.emit_progress("log", f"searching from {start} in process {os.getpid()}")
    n = start
    while True:
        n += 1
        m = n
        while m != 1:
            m = m // 2 if m % 2 == 0 else 3 * m + 1


async def main() -> None:
    scheduler = Scheduler([count_primes, search_forever])
    try:
        calls = [
            ToolCall("c1", "count_primes", {"below": 10_000}),
            ToolCall("c2", "search_forever", {"start": 1}),
            ToolCall("c3", "count_primes", {"below": 100}),
        ]
        async with scheduler.stream(calls) as updates:
            async for item in updates:
                print(item)
    finally:
        scheduler.close()


if __name__ == "__main__":
    asyncio.run(main())
