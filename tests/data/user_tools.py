"""A user's own module of tools, as the README shows them; type-checked with mypy --strict.

Each ``# type: ignore`` below must be needed: if ``@tool`` lost the function's types, the
wrong calls would pass, the ignores would be unused, and --strict would report them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

from tooling import Blob, SimpleToolContext, ToolContext, ToolError, tool


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool(read_only=True)
async def greet(name: str, tool_context: ToolContext) -> str:
    """Greet someone by name."""
    return f"hello {name} from {tool_context.agent_name}"


@tool(long_running=True)
def count(n: int) -> Iterator[dict[str, int]]:
    """Count up to n."""
    for i in range(n):
        yield {"i": i}


@tool
def picture() -> Blob:
    """A tiny picture."""
    return Blob("image/png", b"\x89PNG")


class Counter:
    def __init__(self) -> None:
        self.total = 0

    @tool
    def bump(self, by: int) -> int:
        """Add to the total."""
        self.total += by
        return self.total


total: int = add(1, 2)
bumped: int = Counter().bump(3)


def misuse() -> str:  # never called: only the type checker reads it
    Counter().bump("3")  # type: ignore[arg-type]
    Counter().bump(3, 4)  # type: ignore[call-arg]
    return add("1", 2)  # type: ignore[arg-type, return-value]


@tool
def lookup(sku: str) -> dict[str, Any]:
    """Look an item up (a dict result, typed as --strict wants it)."""
    return {"sku": sku}


async def main() -> None:
    greeting: str = await greet("ana", tool_context=SimpleToolContext())
    response: dict[str, Any] = await add.run({"a": 1, "b": 2})
    try:
        await add.run({"a": "x"})
    except ToolError as err:
        print(err.code, err.to_response())
    async with count.stream({"n": 2}) as updates:
        async for update in updates:
            print(update.response, update.final)
    print(greeting, response, total, bumped, picture.description)


if __name__ == "__main__":
    asyncio.run(main())
