"""MCP both ways: serve tools as an MCP server, use an MCP server's tools as a toolset.

Needs the ``mcp`` extra (``pip install 'agent-tooling[mcp]'``, the official SDK);
``import tooling`` never imports it.
"""

from ._auth import McpAuth
from ._server import McpServer
from ._tool import McpTool
from ._toolset import McpToolset
from ._transports import HttpServer, StdioServer

__all__ = ["HttpServer", "McpAuth", "McpServer", "McpTool", "McpToolset", "StdioServer"]
