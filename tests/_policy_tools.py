"""Tools with guardrails, for serving over MCP in the policy tests (``tooling serve``)."""

from __future__ import annotations

from typing import Any

from tooling import Reject, ToolContext, tool


def no_root(args: dict[str, Any], ctx: ToolContext | None) -> Reject | None:
    """Refuse paths under /root."""
    if str(args.get("path", "")).startswith("/root"):
        return Reject("paths under /root are off limits; use /tmp")
    return None


@tool(guardrails=[no_root])
def read_file(path: str) -> str:
    """Read a file (a stand-in: answers with the path).

    Args:
        path: The file's path.
    """
    return f"contents of {path}"


@tool(scopes=["admin"])
def drop_table(name: str) -> str:
    """Drop a table (needs the admin scope, which ``tooling serve`` never grants)."""
    return name


def never(ctx: object) -> bool:
    """Not available now."""
    return False


@tool(available=never)
def maintenance() -> str:
    """A tool that is not available now."""
    return "done"
