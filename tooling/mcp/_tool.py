"""``McpTool``: one tool of an MCP server, run like any other tool.

``run()`` validates the arguments against the server's ``inputSchema`` (nothing is sent
when they do not match), calls the server with the toolset's timeout, forwards progress
to ``ctx.emit_progress("progress", ...)`` and maps the result (see ``_content``).

A call whose answer was lost with the connection is sent again only when the tool is
idempotent by a trusted annotation; otherwise the model is told it may or may not have
run. A call an HTTP server refused because it no longer knows the session (it
restarted) never ran, and is sent again on a new session. Past the timeout the call is
``tool.timeout`` and the server is told to cancel it.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp import Client
from mcp.shared.exceptions import MCPError
from pydantic import ValidationError

from .. import _jsonschema as ops
from .._base import BaseTool, CheckedArguments, ToolRuntime
from .._context import progress_is_read
from .._errors import ToolError
from .._results import to_response
from .._schema_errors import invalid_arguments, schema_problems
from .._types import ToolResponse
from ._asking import SAMPLING_REFUSED
from ._connection import Connection, ConnectionLost, SessionExpired
from ._content import artifact_from_result, error_from_result, response_from_result
from ._meta import call_meta

if TYPE_CHECKING:
    from jsonschema.protocols import Validator

    from .._context import ToolContext

__all__ = ["McpTool"]


class _TimedOut(Exception):
    """The server did not answer within the call's own time limit."""


def _flags_from(annotations: types.ToolAnnotations | None) -> dict[str, Any]:
    """The tool flags a trusted server's annotations give."""
    if annotations is None:
        return {}
    read_only = bool(annotations.read_only_hint)
    return {
        "read_only": read_only,
        # A read-only remote tool may run beside other safe calls; that is the point of
        # trusting the hint (and why an untrusted one must not set it).
        "concurrency_safe": read_only,
        "idempotent": bool(annotations.idempotent_hint),
        "destructive": annotations.destructive_hint,
    }


def _wants_progress(ctx: ToolContext | None) -> bool:
    """Whether anyone reads this call's progress (else no progress token is sent, and the
    server need not stream the call)."""
    return ctx is not None and progress_is_read(ctx)


class McpTool(BaseTool):
    """A tool of an MCP server (made by ``McpToolset.get_tools``).

    ``parameters_json_schema`` is the server's ``inputSchema`` and
    ``response_json_schema`` its ``outputSchema``; ``remote_name`` is the name on the
    server (``name`` may carry the toolset's prefix). The flags follow the server's
    annotations only when the toolset trusts them; otherwise the tool is not read-only.
    """

    #: How a trace names this kind of tool (``gen_ai.tool.type``): one served elsewhere.
    _trace_tool_type = "extension"

    def __init__(
        self,
        definition: types.Tool,
        connection: Connection,
        *,
        timeout: float | None,
        trust_annotations: bool,
    ) -> None:
        self.name = definition.name
        self.remote_name = definition.name
        self.description = definition.description or ""
        self.parameters_json_schema = dict(definition.input_schema)
        self.response_json_schema = (
            dict(definition.output_schema) if definition.output_schema is not None else None
        )
        self.definition = definition
        """The server's definition of the tool, annotations included (as hints)."""
        self.call_timeout = timeout
        """Seconds the server has to answer a call (None: no limit)."""
        if trust_annotations:
            for key, value in _flags_from(definition.annotations).items():
                setattr(self, key, value)
        self._connection = connection
        self._validator: Validator | None = None

    # -- arguments -----------------------------------------------------------------------

    def _schema_validator(self) -> Validator:
        if self._validator is None:
            from jsonschema.validators import validator_for

            schema = self.parameters_json_schema
            self._validator = validator_for(schema)(schema)
        return self._validator

    def check_arguments(self, args: Mapping[str, Any] | str | bytes) -> CheckedArguments:
        """The arguments, valid against ``inputSchema`` (or ``tool.invalid_arguments``).

        A null for a property that may be left out and whose schema takes no null (what a
        model following the strict OpenAI declaration sends for "the default") is left
        out, at any depth, as for this package's own tools.
        """
        arguments = copy.deepcopy(super().check_arguments(args).values)
        ops.drop_default_nulls(self.parameters_json_schema, arguments)
        errors = sorted(
            self._schema_validator().iter_errors(arguments), key=lambda e: list(e.absolute_path)
        )
        if errors:
            raise invalid_arguments(
                self.name,
                [problem for e in errors for problem in schema_problems(e)],
                list(self.parameters_json_schema.get("properties", {})),
            )
        return CheckedArguments(arguments)

    # -- running ---------------------------------------------------------------------------

    async def run(
        self, args: Mapping[str, Any] | str, ctx: ToolContext | None = None
    ) -> dict[str, Any]:
        """Validate ``args`` against the input schema, call the server, map its answer."""
        result = await self._call_server(self.check_arguments(args).values, ctx)
        return response_from_result(result)

    async def respond(
        self,
        arguments: CheckedArguments,
        ctx: ToolContext | None = None,
        *,
        runtime: ToolRuntime | None = None,
    ) -> ToolResponse:
        """Call the server with arguments already checked against the input schema."""
        result = await self._call_server(arguments.values, ctx)
        body, parts = to_response(response_from_result(result), self.name)
        call_id = ctx.function_call_id if ctx is not None else ""
        return ToolResponse(
            id=call_id,
            name=self.name,
            response=body,
            parts=parts,
            artifact=artifact_from_result(result),
        )

    async def _call_server(
        self, arguments: dict[str, Any], ctx: ToolContext | None
    ) -> types.CallToolResult:
        """Send the call; the server's successful result (an error result raises)."""
        connection = self._connection

        async def progress(progress: float, total: float | None, message: str | None) -> None:
            if ctx is not None:
                if message is None:
                    message = f"{progress:g}/{total:g}" if total else f"{progress:g}"
                ctx.emit_progress("progress", message)

        on_progress = progress if _wants_progress(ctx) else None

        async def send(client: Client) -> types.CallToolResult:
            return await client.call_tool(
                self.remote_name, arguments, progress_callback=on_progress, meta=call_meta()
            )

        async def call() -> types.CallToolResult:
            return await connection.request(send)

        answer = ctx.tool_confirmation if ctx is not None else None
        try:
            with connection.questions.call(answer) as asking:
                result = await self._send_within_limit(connection, call)
        except _TimedOut:
            raise ToolError(
                f"tool {self.name!r} did not answer within {self.call_timeout:g} s; the MCP "
                "server was told to cancel it",
                code="tool.timeout",
            ) from None
        if asking.asked and answer is None:  # the server wants the user's yes first
            hint = asking.asked[-1]
            if ctx is None:
                raise ToolError(
                    f"tool {self.name!r} waits for the user's confirmation: {hint}",
                    code="tool.confirmation_required",
                )
            ctx.request_confirmation(hint)  # the call ends waiting for the user
            return types.CallToolResult(content=[], structured_content={})
        if result.is_error:
            raise error_from_result(result)
        return result

    async def _send_within_limit(
        self, connection: Connection, call: Callable[[], Awaitable[types.CallToolResult]]
    ) -> types.CallToolResult:
        """The server's result within ``call_timeout`` (``_TimedOut`` past it); a lost
        connection, a refusal or a bad answer is told as a ``ToolError``."""
        try:
            async with asyncio.timeout(self.call_timeout) as deadline:
                try:
                    return await connection.on_loop(call)
                except ConnectionLost as lost:
                    # A refused session never ran the call; an idempotent one may run twice.
                    if not self.idempotent and not isinstance(lost, SessionExpired):
                        raise ToolError(
                            f"the connection to the MCP server was lost before tool "
                            f"{self.name!r} answered: the call may or may not have run. It was "
                            "not sent again; the next call reconnects.",
                            code="tool.failed",
                        ) from lost
                    return await connection.on_loop(call)  # safe to send again
        except TimeoutError:
            if not deadline.expired():
                raise
            raise _TimedOut from None
        except ConnectionLost as lost:
            raise ToolError(
                f"the connection to the MCP server was lost again while tool {self.name!r} "
                "was sent a second time: the call may or may not have run",
                code="tool.failed",
            ) from lost
        except MCPError as exc:
            if exc.error.message == SAMPLING_REFUSED:
                raise ToolError(
                    f"tool {self.name!r} asked for a completion from the client's model "
                    f"(sampling), and {SAMPLING_REFUSED}",
                    code="tool.failed",
                ) from exc
            raise ToolError(
                f"the MCP server refused the call to {self.name!r}: {exc.error.message}",
                code="tool.failed",
            ) from exc
        except ValidationError as exc:
            raise ToolError(
                f"the MCP server's answer for {self.name!r} does not match its schema: "
                f"{exc.error_count()} problem(s)",
                code="tool.failed",
            ) from exc
        except OSError as exc:
            raise ToolError(
                f"cannot reach the MCP server for tool {self.name!r}: {exc}", code="tool.failed"
            ) from exc
