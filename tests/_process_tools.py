"""Tools for the process-isolation tests: importable by module and name in a worker."""

from __future__ import annotations

import ctypes
import os
import resource
import time
from collections.abc import Iterator
from typing import Any

from tooling import Blob, ToolContext, ToolError, ToolResult, tool


class CustomError(Exception):
    """An exception type the caller's process does not know by name."""


@tool(isolation="process")
def pid() -> int:
    """The worker's process id."""
    return os.getpid()


@tool(isolation="process", read_only=True, concurrency_safe=True)
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


@tool(isolation="process", timeout=1)
def spin_with_timeout(tool_context: ToolContext) -> None:
    """Say which process runs the call, then never finish."""
    tool_context.emit_progress("pid", str(os.getpid()))
    while True:
        pass


@tool(isolation="process")
def spin(tool_context: ToolContext) -> None:
    """Say which process runs the call, then never finish."""
    tool_context.emit_progress("pid", str(os.getpid()))
    while True:
        pass


@tool(isolation="process")
def exit_now() -> None:
    """End the worker process without a word."""
    os._exit(1)


@tool(isolation="process")
def segfault() -> None:
    """Read address 0."""
    ctypes.string_at(0)


@tool(isolation="process")
def out_of_memory() -> None:
    """Raise MemoryError."""
    raise MemoryError("no more memory")


@tool(isolation="process")
def hog(limit_mb: int) -> int:
    """Allocate until an address-space limit set in the worker stops it."""
    usage_kb = int(open("/proc/self/status").read().split("VmSize:")[1].split()[0])
    cap = (usage_kb + limit_mb * 1024) * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, resource.RLIM_INFINITY))
    chunks = []
    while True:
        chunks.append(bytearray(16 * 1024 * 1024))


@tool(isolation="process")
def count(step: int, tool_context: ToolContext) -> dict[str, Any]:
    """Add ``step`` to the state's counter, reporting progress."""
    before = tool_context.state.get("count", 0)
    tool_context.emit_progress("log", f"adding {step} to {before}")
    tool_context.state["count"] = before + step
    tool_context.actions.skip_summarization = True
    return {"call": tool_context.function_call_id, "count": before + step}


@tool(isolation="process", long_running=True)
def steps(n: int) -> Iterator[dict[str, int]]:
    """Yield n steps, then say how many."""
    for i in range(n):
        yield {"step": i}
    return {"done": n}  # type: ignore[misc]


@tool(isolation="process")
def save(tool_context: ToolContext) -> int:
    """Try to save an artifact (not available in a worker)."""
    import asyncio

    return asyncio.run(tool_context.save_artifact("a.txt", "text"))


@tool(isolation="process")
def custom_failure(text: str) -> None:
    """Raise an exception of a type of this module."""
    raise CustomError(text)


@tool(isolation="process")
def refuse(reason: str) -> None:
    """Raise a ToolError with a code of its own."""
    raise ToolError(f"refused: {reason}", code="demo.refused")


@tool(isolation="process")
def picture() -> dict[str, Any]:
    """Return an image next to some text."""
    return {"caption": "dot", "image": Blob("image/png", b"\x89PNG...")}


def plain_square(x: int) -> int:
    """A plain function, decorated elsewhere."""
    return x * x


square = tool(isolation="process", name="square")(plain_square)


@tool(isolation="process")
def with_artifact(n: int) -> ToolResult:
    """The count for the model; the squares for the application."""
    return ToolResult(n, artifact={"squares": [i * i for i in range(n)]})


@tool(isolation="process")
def unsendable() -> Any:
    """Return a value that cannot be sent to the model."""
    return object()


@tool(isolation="process", timeout=1)
def fork_and_spin(tool_context: ToolContext) -> None:
    """Start a child (a fork: it shares the worker's pipe) that sleeps, say its pid, spin."""
    child = os.fork()
    if child == 0:  # the child: sleeps long, then leaves without cleaning up
        time.sleep(120)
        os._exit(0)
    tool_context.emit_progress("child", f"{os.getpid()} {child}")
    while True:
        pass


@tool(isolation="process")
def fork_and_wait(tool_context: ToolContext) -> None:
    """Like ``fork_and_spin`` with no time limit (the test kills the worker itself)."""
    child = os.fork()
    if child == 0:
        time.sleep(120)
        os._exit(0)
    tool_context.emit_progress("child", f"{os.getpid()} {child}")
    time.sleep(120)


@tool(isolation="process")
def nap(seconds: float) -> float:
    """Sleep ``seconds`` in the worker."""
    time.sleep(seconds)
    return seconds
