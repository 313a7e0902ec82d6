"""``McpServer``: tools served over MCP, every call run by a ``Scheduler``.

Built on the official SDK's low-level ``Server`` (its runner speaks both the handshake
era and the 2026-07-28 per-request era); this module only maps tools to MCP and back:

* ``tools/list``: one MCP tool per tool, from ``to_mcp()`` plus a ``title`` (the first
  line of the description). Toolsets are asked at each list.
* ``tools/call``: one ``Scheduler`` dispatch per request (validation, scopes, timeouts and
  confirmation behave as there). Progress chunks and a generator's intermediate yields
  become ``notifications/progress`` when the client sent a progress token. A cancel
  notification, the session's end (an HTTP ``DELETE``) or a closed stdio stream cancels
  the dispatch; a dropped HTTP stream does not (the MCP specification says so). Each call
  has a time limit (60 s unless set), and each session's sync calls their own threads.
* Confirmation: asked by elicitation (see ``_confirm``); a client that cannot answer gets
  the ``tool.confirmation_required`` error response.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import weakref
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler, ToolsListChanged

from .._base import BaseTool, BaseToolset
from .._context import ReadonlyContext
from .._errors import ToolError
from .._export.mcp import structured_kind
from .._scheduling.scheduler import ExecutionStrategy, Scheduler
from .._types import Confirmation, ToolCall, ToolProgress, ToolResponse
from .._workers.threads import WorkerPool
from . import _confirm
from ._content import to_call_result
from ._meta import serving_call

if TYPE_CHECKING:
    from starlette.applications import Starlette

    from ._auth import McpAuth

__all__ = ["McpServer"]

logger = logging.getLogger("tooling")

Transport = Literal["stdio", "streamable-http"]

#: How many times one call may be confirmed and run again (a tool that keeps asking).
_MAX_CONFIRMATION_ROUNDS = 3
#: How long an async ``available=`` check may take before its tool is left unlisted.
_AVAILABLE_TIMEOUT = 5.0


async def _available(tool: BaseTool, readonly: ReadonlyContext) -> bool:
    """A tool's ``available`` answer for the server (False if it raises or hangs)."""
    check: Any = tool.available
    try:
        answer = check(readonly)
        if inspect.isawaitable(answer):
            answer = await asyncio.wait_for(_awaited(answer), _AVAILABLE_TIMEOUT)
    except Exception as exc:  # a timeout too
        logger.warning("tool %r not listed: its available= check failed", tool.name, exc_info=exc)
        return False
    return bool(answer)


async def _awaited(value: Any) -> Any:
    return await value


#: Worker threads one session's sync calls may hold at once (and as many abandoned by a
#: timeout): one client's hung calls never hold up another session's.
SESSION_THREADS = 16


def _title(tool: BaseTool) -> str | None:
    first = tool.description.strip().split("\n", 1)[0].strip() if tool.description else ""
    return first or None


def mcp_tool(tool: BaseTool) -> types.Tool:
    """The SDK's ``Tool`` for ``tool`` (its ``to_mcp()`` export plus a title)."""
    exported = dict(tool.to_mcp())
    title = _title(tool)
    if title is not None:
        exported["title"] = title
    return types.Tool.model_validate(exported, by_alias=True)


def lenient_arguments(tool: BaseTool | None, arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` with JSON text parsed for object and array parameters.

    MCP's lenient rule: clients that send every value as text (the MCP Inspector's CLI
    for a property it does not see typed) send an object or an array as its JSON. A
    string is parsed only for a parameter that takes no string, and kept only when it
    gives the kind the parameter takes; anything else goes on to validation unchanged.
    """
    if tool is None:
        return arguments
    schema = tool.parameters_json_schema
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return arguments
    defs = schema.get("$defs")
    defs = defs if isinstance(defs, dict) else {}
    fixed = dict(arguments)
    for name, value in arguments.items():
        if not isinstance(value, str) or name not in properties:
            continue
        kind, _ = structured_kind(properties[name], defs)
        if kind is None:
            continue
        try:
            parsed = json.loads(value)
        except ValueError:
            continue
        if isinstance(parsed, dict if kind == "object" else list):
            fixed[name] = parsed
    return fixed


def _session_ended(
    sessions: dict[int, tuple[Scheduler, Scheduler]], key: int, pool: WorkerPool
) -> None:
    sessions.pop(key, None)
    pool.shutdown()


def _pending(response: ToolResponse) -> dict[str, Any] | None:
    """The confirmation request a response carries, when the call waits for one."""
    if response.waiting_for != "confirmation":
        return None  # nothing to ask, or a credential request: MCP has no way to ask for one
    confirmation = response.response.get("confirmation")
    return confirmation if isinstance(confirmation, dict) else None


def _unanswered(response: ToolResponse) -> dict[str, Any] | None:
    """What a client that cannot be asked is told about a call waiting for the user."""
    if response.waiting_for is None or response.error is None:
        return None
    body = response.error.to_response()
    for key in ("confirmation", "credential"):
        if key in response.response:
            body[key] = response.response[key]
    return body


class McpServer:
    """Serves tools over MCP (stdio or streamable HTTP), each call run by a ``Scheduler``.

    ``tools`` is what a ``Scheduler`` takes (tools and plain functions) plus toolsets,
    which are asked for their tools at each ``tools/list``. ``strategy``, ``timeout`` (60 s
    per call unless set; None: no limit) and ``expose_errors`` configure the scheduler;
    ``granted_scopes`` are granted to every call. ``auth`` (a :class:`McpAuth`) has
    streamable HTTP accept only verified bearer tokens: a token's scopes are added to the
    call's granted scopes, and ``tools/list`` shows only the tools they allow. Each
    ``tools/call`` request is one dispatch: requests the client sends concurrently run
    concurrently. Each session's sync calls run on threads of its own
    (``SESSION_THREADS`` at once), so one client's hung calls never hold up another's.
    """

    def __init__(
        self,
        tools: Iterable[BaseTool | BaseToolset | Callable[..., Any]],
        *,
        name: str,
        version: str | None = None,
        instructions: str | None = None,
        strategy: ExecutionStrategy = ExecutionStrategy.AUTO,
        timeout: float | None = 60.0,
        expose_errors: bool = False,
        granted_scopes: frozenset[str] | set[str] = frozenset(),
        auth: McpAuth | None = None,
    ) -> None:
        items = list(tools)
        self._toolsets = [t for t in items if isinstance(t, BaseToolset)]
        self._fixed = [t for t in items if not isinstance(t, BaseToolset)]
        self._options: dict[str, Any] = {
            "strategy": strategy,
            "timeout": timeout,
            "expose_errors": expose_errors,
        }
        self.granted_scopes = frozenset(granted_scopes)
        self._readonly = ReadonlyContext(agent_name=name)
        self._shown: tuple[str, ...] = ()
        self.auth = auth
        # Built now, so a broken tool or a duplicate name fails here.
        self._scheduler = Scheduler(self._fixed, **self._options)
        self._listed: tuple[tuple[str, int], ...] = ()
        # By the id of each session's initialize parameters (the SDK makes a ServerSession
        # per HTTP request, but one session's requests share those): the scheduler it was
        # made from, and the session's own over its threads. Dropped with the session.
        self._sessions: dict[int, tuple[Scheduler, Scheduler]] = {}
        self._bus = InMemorySubscriptionBus()
        self._handshake_sessions: dict[int, ServerSession] = {}
        self.server: Server[Any] = Server(
            name,
            version=version or "",
            instructions=instructions,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_subscriptions_listen=ListenHandler(self._bus),
        )
        """The SDK's low-level ``Server`` underneath (to add resources or prompts)."""

    # -- tools ---------------------------------------------------------------------------

    async def _current_scheduler(self) -> Scheduler:
        """The scheduler over the fixed tools and what the toolsets give now."""
        if not self._toolsets:
            return self._scheduler
        tools: list[BaseTool | Callable[..., Any]] = list(self._fixed)
        for toolset in self._toolsets:
            tools.extend(await toolset.get_tools_with_prefix(None))
        key = tuple((getattr(t, "name", ""), id(t)) for t in tools)
        if key != self._listed:
            old, self._scheduler = self._scheduler, Scheduler(tools, **self._options)
            self._listed = key
            old.close()
        return self._scheduler

    async def _scheduler_for(self, name: str) -> Scheduler:
        if name in self._scheduler.tools or not self._toolsets:
            return self._scheduler
        return await self._current_scheduler()  # a tool a toolset gave since the last list

    def _session_scheduler(self, ctx: ServerRequestContext[Any, Any], base: Scheduler) -> Scheduler:
        """``base``'s tools on the session's own bounded pool of worker threads.

        A 2026-07-28 request carries no session (each stands alone): those run on
        ``base``'s shared pool.
        """
        session = None if _confirm.uses_retry(ctx) else ctx.session.client_params
        if session is None:
            return base
        key = id(session)
        entry = self._sessions.get(key)
        if entry is not None and entry[0] is base:
            return entry[1]
        if entry is not None:
            pool = entry[1].pool  # the tools changed: the session keeps its threads
        else:
            pool = WorkerPool(
                SESSION_THREADS, max_abandoned=SESSION_THREADS, name="tooling-mcp-session"
            )
            weakref.finalize(session, _session_ended, self._sessions, key, pool)
        scheduler = Scheduler(
            list(base.tools.values()),
            pool=pool,
            processes=base.processes,
            credential_service=base.credential_service,
            **self._options,
        )
        self._sessions[key] = (base, scheduler)
        return scheduler

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        self._remember(ctx)
        scheduler = await self._current_scheduler()
        visible = await self._visible(scheduler, self._granted(ctx))
        self._shown = tuple(t.name for t in visible)
        return types.ListToolsResult(tools=[mcp_tool(t) for t in visible])

    async def _visible(
        self, scheduler: Scheduler, granted: frozenset[str] | None = None
    ) -> list[BaseTool]:
        """What a session may call: tools whose scopes are granted (the server's, and with
        ``auth`` the token's) and that are ``available`` now (a check that raises or hangs
        hides its tool)."""
        granted = self.granted_scopes if granted is None else granted
        shown = []
        for t in scheduler.tools.values():
            if t.scopes and not set(t.scopes) <= granted:
                continue
            if t.available is not None and not await _available(t, self._readonly):
                continue
            shown.append(t)
        return shown

    async def set_granted_scopes(self, scopes: frozenset[str] | set[str]) -> None:
        """Grant ``scopes`` to every call from now on; clients hear ``list_changed`` when
        that changes the tools they may call. Call it on the serving event loop."""
        self.granted_scopes = frozenset(scopes)
        visible = tuple(t.name for t in await self._visible(await self._current_scheduler()))
        if visible != self._shown:
            self._shown = visible
            await self.notify_tools_changed()

    def _granted(self, ctx: ServerRequestContext[Any, Any]) -> frozenset[str]:
        """The scopes granted to this request: the server's, and its token's."""
        if self.auth is None:
            return self.granted_scopes
        from ._auth import token_scopes

        return self.granted_scopes | token_scopes(ctx.request)

    # -- calls ---------------------------------------------------------------------------

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        with serving_call(ctx.meta):
            self._remember(ctx)
            scheduler = self._session_scheduler(ctx, await self._scheduler_for(params.name))
            arguments = lenient_arguments(scheduler.tools.get(params.name), params.arguments or {})
            call = ToolCall(id=f"mcp-{ctx.request_id}", name=params.name, args=arguments)
            confirmations: dict[str, Confirmation] = {}
            answer = _confirm.retry_answer(params)
            if answer is not None:
                confirmations[call.id] = answer
            response = await self._dispatch(ctx, scheduler, call, confirmations)
            for _ in range(_MAX_CONFIRMATION_ROUNDS):
                pending = _pending(response)
                if pending is None or not _confirm.can_ask(ctx):
                    break
                if _confirm.uses_retry(ctx):
                    return _confirm.ask_by_retry(pending)
                confirmations = {call.id: await _confirm.ask_now(ctx, pending)}
                response = await self._dispatch(ctx, scheduler, call, confirmations)
            return to_call_result(response, _unanswered(response))

    async def _dispatch(
        self,
        ctx: ServerRequestContext[Any, Any],
        scheduler: Scheduler,
        call: ToolCall,
        confirmations: Mapping[str, Confirmation],
    ) -> ToolResponse:
        meta = ctx.meta
        if not meta or meta.get("progress_token") is None:
            (response,) = await scheduler.dispatch(
                [call], confirmations=confirmations, granted_scopes=self._granted(ctx)
            )
            return response
        final: ToolResponse | None = None
        step = 0
        async with scheduler.stream(
            [call], confirmations=confirmations, granted_scopes=self._granted(ctx)
        ) as items:
            async for item in items:
                if isinstance(item, ToolProgress):
                    message = item.chunk
                elif not item.final:
                    message = json.dumps(item.response, ensure_ascii=False, default=str)
                else:
                    final = item
                    continue
                step += 1
                await ctx.session.report_progress(step, None, message)
        if final is None:  # pragma: no cover - a dispatch always answers every call
            raise ToolError(f"tool {call.name!r} gave no final response")
        return final

    # -- list changes ----------------------------------------------------------------------

    def _remember(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Keep a handshake-era connection's session, to tell it when the tools change."""
        if _confirm.uses_retry(ctx):
            return  # 2026-07-28 clients hear of changes through subscriptions/listen
        client = ctx.session.client_params
        if client is not None:
            self._handshake_sessions.setdefault(id(client), ctx.session)

    async def notify_tools_changed(self) -> None:
        """Tell connected clients that the list of tools changed (``list_changed``).

        Call it on the serving event loop after a toolset's tools changed.
        """
        await self._bus.publish(ToolsListChanged())
        for key, session in list(self._handshake_sessions.items()):
            try:
                await session.send_tool_list_changed()
            except Exception:  # the client went away
                self._handshake_sessions.pop(key, None)

    # -- running ---------------------------------------------------------------------------

    def initialization_options(self) -> Any:
        """The SDK's initialization options (tools, with ``listChanged``)."""
        return self.server.create_initialization_options(NotificationOptions(tools_changed=True))

    def streamable_http_app(
        self, *, host: str = "127.0.0.1", path: str = "/mcp", served_at: str | None = None
    ) -> Starlette:
        """The streamable-HTTP ASGI app (serving at ``path``) to mount in another server.

        Bound to loopback (``host`` ``127.0.0.1``, ``localhost`` or ``::1``), it refuses
        requests whose ``Host`` or ``Origin`` is not local. The app can be run once. With
        ``auth``, requests without a valid bearer token get a 401 pointing to the
        protected resource metadata (``served_at``: this server's URL, when
        ``McpAuth.resource_url`` does not say).
        """
        if self.auth is None:
            return self.server.streamable_http_app(streamable_http_path=path, host=host)
        return self.server.streamable_http_app(
            streamable_http_path=path,
            host=host,
            auth=self.auth.settings(served_at),
            token_verifier=self.auth.token_verifier(),
        )

    async def run_async(
        self, transport: Transport = "stdio", *, host: str = "127.0.0.1", port: int = 8000
    ) -> None:
        """Serve until the client leaves (stdio) or the task is cancelled (HTTP)."""
        if transport == "stdio":
            if self.auth is not None:
                raise ValueError("auth= applies to streamable HTTP; stdio has no bearer tokens")
            from mcp.server.stdio import stdio_server

            async with stdio_server() as (read_stream, write_stream):
                await self.server.run(read_stream, write_stream, self.initialization_options())
        elif transport == "streamable-http":
            import uvicorn

            shown = f"[{host}]" if ":" in host else host
            config = uvicorn.Config(
                self.streamable_http_app(host=host, served_at=f"http://{shown}:{port}/mcp"),
                host=host,
                port=port,
                log_config=None,
                access_log=False,
                lifespan="on",
                # Clients may hold response streams open; don't wait on them forever.
                timeout_graceful_shutdown=5,
            )
            await uvicorn.Server(config).serve()
        else:
            raise ValueError(f"unknown transport {transport!r}: use 'stdio' or 'streamable-http'")

    def run(
        self, transport: Transport = "stdio", *, host: str = "127.0.0.1", port: int = 8000
    ) -> None:
        """Serve over ``transport`` (``"stdio"`` or ``"streamable-http"``), blocking."""
        asyncio.run(self.run_async(transport, host=host, port=port))

    def __repr__(self) -> str:
        return f"<McpServer {self.server.name!r}>"
