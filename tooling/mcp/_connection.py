"""One MCP client connection, living on the event loop that first used it.

The SDK's client holds task groups and a subprocess that must be entered and left in
one task, on one loop. So each connection is owned by a task of its own (the holder) on
its "home" loop, the loop of the use that opened it, and callers on that loop use it
directly. A caller on another loop while the home loop runs (another thread) has its
work done there. When the home loop has stopped, the connection went with it and the
next use opens a new one on the caller's loop.

A loop that shuts down closes its connection: an async generator (the sentinel) is
registered with the home loop when the connection opens, and the loop's
``shutdown_asyncgens()`` (``asyncio.run`` and ``Runner.run`` call it) ends the holder
there, so a stdio server does not outlive the loop that started it.

When the server's stream has ended (the server exited or the HTTP session went away)
the next use opens a new connection, once: if that fails, the use fails. A server that
does not answer the opening handshake within the toolset's timeout fails the use with a
``TimeoutError`` (an ``OSError``) naming it.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar

import anyio
import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError
from mcp.shared.subscriptions import ToolsListChanged
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ._asking import Questions
from ._transports import HttpServer, StdioServer, WatchedStream, open_transport

__all__: list[str] = []

logger = logging.getLogger("tooling")

_T = TypeVar("_T")


class ConnectionLost(Exception):
    """The connection to the server ended while a request waited for its answer."""


class SessionExpired(ConnectionLost):
    """The HTTP server no longer knows the session (it restarted, or dropped it).

    It refused the request without running it, so the request may be sent again on a
    new session.
    """


def _session_expired(exc: BaseException) -> bool:
    """An HTTP 404 for the session, as the SDK's client reports it."""
    if not isinstance(exc, MCPError) or exc.code != types.INVALID_REQUEST:
        return False
    message = exc.error.message.lower()
    return "session" in message and ("not found" in message or "terminated" in message)


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
        self.sentinel: AsyncGenerator[None, None] | None = None


class Connection:
    """The client side of one server: open on first use, reopened once after a loss."""

    def __init__(
        self,
        server: StdioServer | HttpServer,
        on_tools_changed: Callable[[], None],
        *,
        timeout: float | None = None,
    ) -> None:
        self.server = server
        #: Seconds the server has to answer the opening handshake (None: no limit).
        self.timeout = timeout
        #: The calls in flight, whose questions (elicitations) the client answers.
        self.questions = Questions()
        self._on_tools_changed = on_tools_changed
        self._home: asyncio.AbstractEventLoop | None = None
        # Below: touched only on the home loop.
        self._open: _Open | None = None
        self._opening: asyncio.Lock | None = None
        self._opened_before = False

    async def on_loop(self, work: Callable[[], Awaitable[_T]]) -> _T:
        """Await ``work()`` on the connection's home loop (cancelled with the caller)."""
        loop = asyncio.get_running_loop()
        home = self._home
        if home is not loop:
            if home is not None and home.is_running() and not home.is_closed():
                future = asyncio.run_coroutine_threadsafe(_as_coroutine(work), home)
                return await asyncio.wrap_future(future)
            self._move_home(loop)
        return await work()

    def _move_home(self, loop: asyncio.AbstractEventLoop) -> None:
        """Make ``loop`` the home; what was open on a stopped home loop is gone with it."""
        self._home = loop
        self._open = None
        self._opening = None

    def drop(self) -> None:
        """Give up the open connection (a server that stopped answering): the next use
        closes it and opens a new one."""
        if self._open is not None:
            self._open.stream.ended = True

    @property
    def usable(self) -> bool:
        """Whether an open connection exists whose server has not gone (approximate)."""
        current = self._open
        return current is not None and not current.stream.ended

    async def client(self) -> Client:
        """The open client, opening (or reopening, once) when there is none usable.

        Raises ``OSError`` when the server cannot be started or reached.
        """
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
            expired = isinstance(self.server, HttpServer) and _session_expired(exc)
            if not expired and not _is_lost(exc):
                raise
            if current is not None:
                current.stream.ended = True  # the next use opens a new connection
            lost = SessionExpired if expired else ConnectionLost
            raise lost(f"{type(exc).__name__}: {exc}") from exc

    async def _connect(self) -> _Open:
        ready: asyncio.Future[_Open] = asyncio.get_running_loop().create_future()
        release = asyncio.Event()
        holder = asyncio.create_task(self._hold(ready, release))
        try:
            async with asyncio.timeout(self.timeout) as limit:
                opened = await asyncio.shield(ready)
        except BaseException as exc:
            holder.cancel()
            await asyncio.gather(holder, return_exceptions=True)
            if isinstance(exc, TimeoutError) and limit.expired():
                raise TimeoutError(
                    f"the MCP server {self.server.describe()} did not answer the opening "
                    f"handshake within {self.timeout:g} s"
                ) from None
            if isinstance(exc, Exception) and not isinstance(exc, OSError):
                raise OSError(
                    f"cannot connect to the MCP server {self.server.describe()}: "
                    f"{type(exc).__name__}: {exc}"
                ) from exc
            raise
        opened.holder = holder
        sentinel = self._sentinel(opened)
        await anext(sentinel)  # registered with this loop: its shutdown ends the holder
        opened.sentinel = sentinel
        if self._opened_before:
            self._on_tools_changed()  # a restarted server may offer other tools
        self._opened_before = True
        self._open = opened
        return opened

    @staticmethod
    async def _sentinel(opened: _Open) -> AsyncGenerator[None, None]:
        """Suspended while the connection is open; closing it ends the holder."""
        try:
            yield
        finally:
            opened.release.set()
            if opened.holder is not None:
                await asyncio.gather(opened.holder, return_exceptions=True)

    async def _hold(self, ready: asyncio.Future[_Open], release: asyncio.Event) -> None:
        """Owns one ``Client`` from its opening to its closing, in one task."""
        watched: list[WatchedStream] = []
        client = Client(
            open_transport(self.server, watched),
            mode="auto",
            cache=None,
            client_info=_client_info(),
            message_handler=self._on_message,
            elicitation_callback=self.questions.on_elicit,
            sampling_callback=self.questions.on_sampling,
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
        if current.sentinel is not None:
            await current.sentinel.aclose()
        else:  # pragma: no cover - the sentinel is set as soon as the holder is
            current.release.set()

    # -- closing ---------------------------------------------------------------------------

    async def close(self) -> None:
        """End the session (a stdio server is stopped), on whichever loop it lives."""
        home = self._home
        if home is None:
            return
        if home is asyncio.get_running_loop():
            await self._close_open()
        elif home.is_running() and not home.is_closed():
            future = asyncio.run_coroutine_threadsafe(self._close_open(), home)
            await asyncio.wrap_future(future)
        # else: the home loop has stopped, and its shutdown closed the connection.
        self._home = None
        self._open = None
        self._opening = None


async def _as_coroutine(work: Callable[[], Awaitable[_T]]) -> _T:
    return await work()
