"""The function the process-isolation benchmark runs: importable by name in a worker."""

from __future__ import annotations

from tooling import tool


def square(x: int) -> int:
    """Square a number."""
    return x * x


square_tool = tool(square, name="square", isolation="process")
