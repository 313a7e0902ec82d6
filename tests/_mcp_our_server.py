"""``McpServer`` over stdio with the test tools, plus a toolset that can grow.

``grow`` adds a tool to the toolset and tells connected clients that the list changed.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests import _mcp_tools as tools
from tooling import BaseTool, BaseToolset, FunctionTool, ReadonlyContext
from tooling.mcp import McpServer


def hello() -> str:
    """Says hello."""
    return "hello"


class Growing(BaseToolset):
    def __init__(self) -> None:
        super().__init__()
        self.tools: list[BaseTool] = []

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        return list(self.tools)


growing = Growing()


async def grow() -> int:
    """Adds the tool ``hello`` and announces the change."""
    if not growing.tools:
        growing.tools.append(FunctionTool(hello))
    await server.notify_tools_changed()
    return len(growing.tools)


served = [
    tools.add,
    tools.pixel,
    tools.refuse,
    tools.chatty,
    tools.wait_for,
    tools.delete_record,
    tools.pid,
    tools.crash,
    tools.crash_once,
    tools.place,
    grow,
    growing,
]
server = McpServer(served, name="ours")

if __name__ == "__main__":
    server.run()
