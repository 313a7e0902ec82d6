"""``McpToolset``: an MCP server's tools as a toolset.

The list is fetched (every page) on first use and kept until the server says it changed
(``notifications/tools/list_changed``, or a ``subscriptions/listen`` event on 2026-07-28
connections), the connection is reopened, or ``invalidate()`` is called: a warm
``get_tools()`` sends nothing.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from .._base import BaseTool, BaseToolset, ToolFilter, validate_tool_name
from ._connection import Connection, ConnectionLost
from ._tool import McpTool
from ._transports import HttpServer, StdioServer

if TYPE_CHECKING:
    import mcp_types as types
    from mcp import Client

    from .._context import ReadonlyContext

__all__ = ["McpToolset"]

logger = logging.getLogger("tooling")

#: A server that keeps giving cursors is cut off after this many pages.
_MAX_PAGES = 1000


class McpToolset(BaseToolset):
    """The tools of one MCP server (``StdioServer`` or ``HttpServer``), as ``McpTool``s.

    One connection per toolset, opened on first use and reopened once on the next use
    after it dropped. ``timeout`` bounds each call (the server is told to cancel past
    it), the opening handshake and the listing of the tools. The server's annotations
    set the tools' flags only with ``trust_annotations=True``. ``close()`` ends the
    session and stops a stdio server.
    """

    def __init__(
        self,
        server: StdioServer | HttpServer,
        *,
        tool_filter: ToolFilter | None = None,
        tool_name_prefix: str | None = None,
        timeout: float | None = 60.0,
        trust_annotations: bool = False,
    ) -> None:
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        if not isinstance(server, StdioServer | HttpServer):
            raise TypeError(f"server must be a StdioServer or HttpServer, not {server!r}")
        self.server = server
        self.timeout = timeout
        self.trust_annotations = trust_annotations
        self._connection = Connection(server, self.invalidate, timeout=timeout)
        self._tools: list[BaseTool] | None = None
        self._generation = 0

    def invalidate(self) -> None:
        """Forget the cached list: the next ``get_tools()`` asks the server again."""
        self._tools = None
        self._generation += 1

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        """The server's tools (cached; see the class docs)."""
        tools = self._tools
        if tools is not None:
            return list(tools)
        generation = self._generation
        definitions = await self._connection.on_loop(self._list_all)
        fresh: list[BaseTool] = []
        for definition in definitions:
            try:
                validate_tool_name(definition.name, wide=True)
            except ValueError as exc:
                logger.warning("MCP server %s: tool skipped: %s", self.server.describe(), exc)
                continue
            execution = definition.execution
            if execution is not None and execution.task_support == "required":
                # Every call of it would fail (-32601) until tasks are supported here.
                logger.warning(
                    "MCP server %s: tool %r skipped: it can only run as a task, and tasks "
                    "are not supported",
                    self.server.describe(),
                    definition.name,
                )
                continue
            fresh.append(
                McpTool(
                    definition,
                    self._connection,
                    timeout=self.timeout,
                    trust_annotations=self.trust_annotations,
                )
            )
        if generation == self._generation:  # no change was announced meanwhile
            self._tools = fresh
        return list(fresh)

    async def _list_all(self) -> list[types.Tool]:
        """Every page of ``tools/list`` (asked again once if the connection dropped),
        within the toolset's timeout: a server that does not answer is given up."""
        try:
            async with asyncio.timeout(self.timeout) as limit:
                try:
                    return await self._pages()
                except ConnectionLost:
                    return await self._pages()
        except TimeoutError:
            if not limit.expired():
                raise
            self._connection.drop()  # the next use opens a new connection
            raise TimeoutError(
                f"the MCP server {self.server.describe()} did not answer tools/list within "
                f"{self.timeout:g} s"
            ) from None

    async def _pages(self) -> list[types.Tool]:
        found: list[types.Tool] = []
        cursor: str | None = None
        for _ in range(_MAX_PAGES):

            async def page(client: Client, cursor: str | None = cursor) -> types.ListToolsResult:
                return await client.list_tools(cursor=cursor)

            result = await self._connection.request(page)
            found.extend(result.tools)
            cursor = result.next_cursor
            if not cursor:
                return found
        logger.warning("MCP server %s: tools/list cut at %d pages", self.server, _MAX_PAGES)
        return found

    async def close(self) -> None:
        """End the session; a stdio server's process is stopped (killed if it lingers)."""
        await self._connection.close()
        self.invalidate()

    def __repr__(self) -> str:
        return f"<McpToolset {self.server.describe()!r}>"
