"""One MCP client connection, kept on its own event-loop thread.

The SDK's client holds task groups and a subprocess that must be entered and left in
one task, on one loop; an agent may call its toolset from several loops in turn
(``Runner.run`` drives a fresh loop per run) and close it from yet another. So the
connection lives on a private loop in a daemon thread, and callers on any loop await
its work there; cancelling a caller cancels that work (and the SDK then tells the
server to cancel the request).

The connection is opened on first use. When the server's stream has ended (the server
exited or the HTTP session went away) the next use opens a new one, once: if that
fails, the use fails.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Awaitable, Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ._transports import HttpServer, StdioServer, WatchedStream, open_transport

__all__ = ["Connection", "ConnectionLost"]

logger = logging.getLogger("tooling")

_T = TypeVar("_T")


class ConnectionLost(Exception):
    """The connection to the server ended while a request waited for its answer."""


def _client_info() -> types.Implementation:
    try:
        ours = version("agent-tooling")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        ours = "0"
    return types.Implementation(name="agent-tooling", version=ours)


def _is_lost(exc: BaseException) -> bool:
    if isinstance(exc, MCPError):
        return exc.code == types.CONNECTION_CLOSED
    if isinstance(exc, anyio.ClosedResourceError | anyio.BrokenResourceError | OSError):
        return True
    return type(exc).__module__.startswith("httpx")  # a transport error of the HTTP client


class _Open:
    """An open client and what ends it."""

    def __init__(self, client: Client, stream: WatchedStream, release: asyncio.Event) -> None:
        self.client = client
        self.stream = stream
        self.release = release
        self.holder: asyncio.Task[None] | None = None


class Connection:
    """The client side of one server: open on first use, reopened once after a loss."""

    def __init__(
        self, server: StdioServer | HttpServer, on_tools_changed: Callable[[], None]
    ) -> None:
        self.server = server
        self._on_tools_changed = on_tools_changed
        self._guard = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        # Below: touched only on the connection's own loop.
        self._open: _Open | None = None
        self._opening: asyncio.Lock | None = None
        self._opened_before = False

    # -- the loop thread -----------------------------------------------------------------

    def _ensure_loop(self) -> asyncio.AbstractEventLoop:
        with self._guard:
            if self._loop is None:
                loop = asyncio.new_event_loop()
                started = threading.Event()

                def serve() -> None:
                    asyncio.set_event_loop(loop)
                    loop.call_soon(started.set)
                    loop.run_forever()

                thread = threading.Thread(
                    target=serve, name=f"mcp-client {self.server.describe()}", daemon=True
                )
                thread.start()
                started.wait()
                self._loop, self._thread = loop, thread
            return self._loop

    async def on_loop(self, work: Callable[[], Awaitable[_T]]) -> _T:
        """Await ``work()`` run on the connection's loop (cancelled with the caller)."""
        loop = self._ensure_loop()
        future = asyncio.run_coroutine_threadsafe(_as_coroutine(work), loop)
        return await asyncio.wrap_future(future)

    # -- on the connection's loop --------------------------------------------------------

    @property
    def usable(self) -> bool:
        """Whether an open connection exists whose server has not gone (approximate)."""
        current = self._open
        return current is not None and not current.stream.ended

    async def client(self) -> Client:
        """The open client, opening (or reopening, once) when there is none usable."""
        current = self._open
        if current is not None and not current.stream.ended:
            return current.client
        if self._opening is None:
            self._opening = asyncio.Lock()
        async with self._opening:
            current = self._open
            if current is not None and not current.stream.ended:
                return current.client
            if current is not None:
                await self._close_open()
            return (await self._connect()).client

    async def request(self, send: Callable[[Client], Awaitable[_T]]) -> _T:
        """``send(client)``; a connection that ends meanwhile raises ``ConnectionLost``."""
        client = await self.client()
        current = self._open
        try:
            return await send(client)
        except Exception as exc:
            if not _is_lost(exc):
                raise
            if current is not None:
                current.stream.ended = True  # the next use opens a new connection
            raise ConnectionLost(f"{type(exc).__name__}: {exc}") from exc

    async def _connect(self) -> _Open:
        ready: asyncio.Future[_Open] = asyncio.get_running_loop().create_future()
        release = asyncio.Event()
        holder = asyncio.create_task(self._hold(ready, release))
        try:
            opened = await asyncio.shield(ready)
        except BaseException:
            holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)
            raise
        opened.holder = holder
        if self._opened_before:
            self._on_tools_changed()  # a restarted server may offer other tools
        self._opened_before = True
        self._open = opened
        return opened

    async def _hold(self, ready: asyncio.Future[_Open], release: asyncio.Event) -> None:
        """Owns one ``Client`` from its opening to its closing, in one task."""
        watched: list[WatchedStream] = []
        client = Client(
            open_transport(self.server, watched),
            mode="auto",
            cache=None,
            client_info=_client_info(),
            message_handler=self._on_message,
        )
        try:
            async with client:
                listener = self._start_listening(client)
                ready.set_result(_Open(client, watched[0], release))
                try:
                    await release.wait()
                finally:
                    if listener is not None:
                        listener.cancel()
                        await asyncio.gather(listener, return_exceptions=True)
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
            elif not isinstance(exc, asyncio.CancelledError):
                logger.debug("MCP connection to %s ended: %r", self.server.describe(), exc)
            if isinstance(exc, asyncio.CancelledError | KeyboardInterrupt | SystemExit):
                raise

    def _start_listening(self, client: Client) -> asyncio.Task[None] | None:
        """On 2026-07-28 connections list changes come through ``subscriptions/listen``."""
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            return None  # the handshake era sends notifications/tools/list_changed unasked
        tools = client.server_capabilities.tools
        if tools is None or not tools.list_changed:
            return None

        async def listen() -> None:
            try:
                async with client.listen(tools_list_changed=True) as events:
                    async for event in events:
                        if isinstance(event, ToolsListChanged):
                            self._on_tools_changed()
            except Exception as exc:  # the server went away or does not serve it after all
                logger.debug("MCP list-change subscription to %s ended: %r", self.server, exc)
            # A subscription that ended may have missed a change.
            self._on_tools_changed()

        return asyncio.create_task(listen())

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self._on_tools_changed()

    async def _close_open(self) -> None:
        current, self._open = self._open, None
        if current is None:
            return
        current.release.set()
        if current.holder is not None:
            await asyncio.gather(current.holder, return_exceptions=True)

    # -- closing ---------------------------------------------------------------------------

    async def close(self) -> None:
        """End the session (a stdio server is stopped) and the loop thread."""
        with self._guard:
            loop, thread = self._loop, self._thread
            self._loop = self._thread = None
        if loop is None or thread is None:
            return
        try:
            await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self._close_open(), loop))
        finally:
            loop.call_soon_threadsafe(loop.stop)
            await asyncio.to_thread(thread.join)
            loop.close()
            self._opening = None


async def _as_coroutine(work: Callable[[], Awaitable[_T]]) -> _T:
    return await work()
