"""A local web page to look at tools: each provider's schema, diagnostics, scheduling, try-it.

``tooling inspect --web TARGET`` serves it for the tools in TARGET; :func:`serve_tools`
does the same from Python. ``agent_core.web`` adds the Sessions and Runs pages on the same
server. Only the standard library is used: a ``ThreadingHTTPServer`` on 127.0.0.1 by
default, a per-launch token on every API request, ``Host`` and ``Origin`` checked.
"""

from __future__ import annotations

import contextlib
import webbrowser
from collections.abc import Iterable
from typing import Any

from .._base import BaseTool
from .._cli.discovery import FoundTool
from ._server import EventStream, HttpError, Reply, Request, WebServer, is_loopback
from ._tools import ToolCatalogue, add_tool_routes

__all__ = [
    "EventStream",
    "HttpError",
    "Reply",
    "Request",
    "ToolCatalogue",
    "WebServer",
    "add_tool_routes",
    "is_loopback",
    "open_browser",
    "serve_tools",
]


def serve_tools(
    tools: Iterable[BaseTool | FoundTool] | ToolCatalogue,
    *,
    title: str = "tools",
    host: str = "127.0.0.1",
    port: int = 0,
    timeout: float | None = None,
) -> WebServer:
    """Serve the Tools page for ``tools``; the server runs until ``close()``.

    ``timeout`` bounds each try-it call (as ``tooling call --timeout``).
    """
    catalogue = tools if isinstance(tools, ToolCatalogue) else ToolCatalogue(tools, timeout=timeout)
    info: dict[str, Any] = {
        "title": title,
        "pages": ["tools"],
        "apps": [{"name": title, "model": None, "replay": False}],
    }
    server = WebServer(host=host, port=port, info=info)
    add_tool_routes(server, {title: catalogue})
    return server


def open_browser(url: str) -> None:
    """Open ``url`` in the user's browser, if there is one (never fails)."""
    with contextlib.suppress(Exception):
        webbrowser.open(url)


def serve_target(obj: object, label: str, *, host: str = "127.0.0.1", port: int = 0) -> WebServer:
    """Serve the Tools page for what ``tooling inspect`` finds in ``obj`` (a loaded target).

    Toolsets are listed on the server's own event loop (where their calls will run) and
    closed with the server.
    """
    from .._cli.discovery import CliError, discover_tools

    server = WebServer(host=host, port=port)
    try:
        found, toolsets = server.run(discover_tools(obj, label))
        if not found:
            raise CliError(f"no tools found in {label}", status=1)
        server.info.update(
            title=label, pages=["tools"], apps=[{"name": label, "model": None, "replay": False}]
        )
        add_tool_routes(server, {label: ToolCatalogue(found, toolsets=toolsets)})
    except BaseException:
        server.close()
        raise
    return server


def wait_until_interrupted(server: WebServer, prog: str, *, browser: bool) -> int:
    """Print the URL, open the browser if asked, serve until Ctrl-C; then close."""
    import sys
    import threading

    try:
        sys.stdout.write(f"{prog}: inspector at {server.url}\n")
        sys.stdout.write(f"{prog}: press Ctrl-C to stop\n")
        sys.stdout.flush()
        if browser:
            open_browser(server.url)
        threading.Event().wait()
    except KeyboardInterrupt:
        sys.stderr.write(f"\n{prog}: stopped\n")
    finally:
        server.close()
    return 0
