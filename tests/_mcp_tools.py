"""Tools the MCP tests serve with ``tooling serve tests/_mcp_tools.py``.

Tools that must be observed from the test process write marker files at paths the test
passes as arguments.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel

from tooling import Blob, FileRef, ToolContext, ToolError, tool

PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360f8cf00000301010018dd8db00000000049454e44ae426082"
)


@tool(read_only=True, concurrency_safe=True, idempotent=True)
def add(a: int, b: int) -> int:
    """Add two numbers.

    Args:
        a: The first number.
        b: The second number.
    """
    return a + b


@tool(read_only=True, concurrency_safe=True)
def pixel() -> dict[str, object]:
    """A one-pixel PNG and a link to a file."""
    return {"image": Blob("image/png", PIXEL), "file": FileRef("file:///tmp/x.txt", "text/plain")}


@tool
def refuse(reason: str) -> str:
    """Always fails with the reason given."""
    raise ToolError(f"refused: {reason}", code="demo.refused")


@tool
async def chatty(steps: int, tool_context: ToolContext) -> dict[str, int]:
    """Reports each step as progress."""
    for i in range(steps):
        tool_context.emit_progress("stdout", f"step {i + 1} of {steps}")
        await asyncio.sleep(0)
    return {"steps": steps}


@tool(long_running=True)
def countdown(start: int) -> Iterator[dict[str, int]]:
    """Yields each number down to one."""
    for n in range(start, 0, -1):
        yield {"left": n}
    return {"left": 0}  # type: ignore[misc]


@tool(read_only=True, concurrency_safe=True)
async def wait_for(marker: str) -> str:
    """Waits until the file ``marker`` exists; writes ``marker.cancelled`` if cancelled."""
    path = Path(marker)
    Path(marker + ".started").write_text("started")
    try:
        while not path.exists():
            await asyncio.sleep(0.02)
    except asyncio.CancelledError:
        Path(marker + ".cancelled").write_text("cancelled")
        raise
    return "released"


@tool(require_confirmation=True)
def delete_record(record_id: str) -> dict[str, str]:
    """Deletes a record (asks for confirmation first)."""
    return {"deleted": record_id}


@tool(read_only=True)
def pid() -> int:
    """The server's process id."""
    return os.getpid()


def _ran(marker: str) -> int:
    with open(marker, "a", encoding="utf-8") as f:
        f.write("ran\n")
    return Path(marker).read_text(encoding="utf-8").count("ran")


@tool
def crash(marker: str) -> str:
    """Notes that it ran, then ends the server's process before answering."""
    _ran(marker)
    os._exit(3)


@tool(idempotent=True)
def crash_once(marker: str) -> int:
    """Notes that it ran; the first time, ends the server's process before answering."""
    if _ran(marker) == 1:
        os._exit(3)
    return Path(marker).read_text(encoding="utf-8").count("ran")


@tool
def explode() -> int:
    """Fails with an unexpected exception (a bug in the tool)."""
    raise RuntimeError("the tool broke")


class Point(BaseModel):
    """A point on the plane."""

    x: int
    y: int


@tool(read_only=True, concurrency_safe=True)
def place(point: Point, tags: list[str] | None = None) -> dict[str, object]:
    """Places a point, with optional tags."""
    return {"x": point.x, "y": point.y, "tags": tags or []}


@tool(read_only=True, concurrency_safe=True)
def hold(marker: str, index: int) -> int:
    """A sync call that holds its thread until the file ``marker`` exists."""
    Path(f"{marker}.started-{index}").write_text("started")
    deadline = time.monotonic() + 60
    while not Path(marker).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    return index
