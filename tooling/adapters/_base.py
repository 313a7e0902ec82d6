"""What every adapter shares, in both directions.

In: :class:`ForeignTool`, a ``BaseTool`` over another framework's tool. Its arguments are
checked once against the schema the framework shows a model (unknown keys, an injected
argument named by the model included, are ``tool.invalid_arguments``; a strict model's
null for an optional parameter means its default); then the framework's own call path
runs, and what it returns becomes a response like any tool's (a ``ToolResult``'s
artifact apart, ``Blob`` parts lifted, what is not JSON ``tool.failed``). Timeouts, size
cuts and isolation are the scheduler's, as for our own tools.

Out: :func:`answer` runs one call of our tool the way a scheduler would (scopes,
validation, the tool's time limit, errors as error responses, a response too large cut)
and never raises for a failure of the tool: each framework's adapter turns the
``ToolResponse`` into what that framework expects.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import re
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .._base import BaseTool, CheckedArguments, ToolRuntime
from .._errors import FAILURES, ToolError, error_details_from_validation, failure, log_failure
from .._function.calling import in_thread
from .._function.tool import FunctionTool
from .._jsonschema import strip_titles
from .._results import split_result, to_response
from .._scheduling.response_size import cut_for_model
from .._types import ToolResponse

if TYPE_CHECKING:
    from .._context import ToolContext

__all__: list[str] = []

_DEFAULT_RUNTIME = ToolRuntime()
_NOT_A_NAME = re.compile(r"[^A-Za-z0-9_-]")


def require(module: str, extra: str, what: str) -> ModuleType:
    """Import a framework's module, or say which extra installs it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"{what} needs {module.split('.')[0]}: pip install 'agent-tooling[{extra}]'"
        ) from exc


def tool_name(name: str) -> str:
    """A framework's tool name made a valid one of ours (``"Search the web"`` ->
    ``"Search_the_web"``)."""
    cleaned = _NOT_A_NAME.sub("_", name.strip())[:64] or "tool"
    return cleaned if re.match(r"[A-Za-z_]", cleaned) else f"_{cleaned}"[:64]


def as_tool(tool: BaseTool | Callable[..., Any]) -> BaseTool:
    """Our tool, or a plain function made one."""
    return tool if isinstance(tool, BaseTool) else FunctionTool(tool)


def model_schema(model: Any) -> dict[str, Any]:
    """A pydantic model class's validation schema as tools show it: no titles, closed."""
    schema: dict[str, Any] = strip_titles(model.model_json_schema())
    schema.pop("description", None)  # the model's docstring: the tool's description says it
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    schema["additionalProperties"] = False
    return schema


def _admits_null(schema: Mapping[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(
        isinstance(branch, Mapping) and _admits_null(branch)
        for key in ("anyOf", "oneOf")
        for branch in schema.get(key, ())
    )


# -- in: another framework's tool as ours --------------------------------------------------


class ForeignTool(BaseTool):
    """A tool of another framework. A subclass sets the schema and flags and implements
    :meth:`call_foreign`; ``sync_only`` tools are called on a worker thread."""

    #: The pydantic model that validates arguments as the framework would (None: none).
    arguments_model: Any = None
    #: Calls go through the framework's synchronous path, on a worker thread.
    sync_only: bool = False

    @property
    def runs_in_thread(self) -> bool:
        """True for a sync-only tool: its calls take a worker thread."""
        return self.sync_only

    def check_arguments(self, args: Mapping[str, Any] | str | bytes) -> CheckedArguments:
        """Parse, refuse unknown keys, drop a strict model's nulls, validate."""
        values = dict(super().check_arguments(args).values)
        properties: Mapping[str, Any] = self.parameters_json_schema.get("properties", {})
        required = set(self.parameters_json_schema.get("required", ()))
        unknown = [key for key in values if key not in properties]
        if unknown:
            valid = ", ".join(properties) or "(none)"
            raise ToolError(
                f"invalid arguments for tool {self.name!r}: unknown argument(s) "
                f"{', '.join(map(repr, unknown))}",
                code="tool.invalid_arguments",
                details=[
                    {
                        "loc": [key],
                        "msg": f"Unknown argument; the arguments are: {valid}",
                        "type": "extra_forbidden",
                    }
                    for key in unknown
                ],
            )
        for key in [k for k, v in values.items() if v is None]:
            # A strict model sends null for an optional parameter it leaves out.
            if key not in required and not _admits_null(properties[key]):
                del values[key]
        if self.arguments_model is not None:
            try:
                self.arguments_model.model_validate(values)
            except ValidationError as exc:
                raise ToolError(
                    f"invalid arguments for tool {self.name!r}: {exc.error_count()} problem(s)",
                    code="tool.invalid_arguments",
                    details=error_details_from_validation(exc.errors(), list(properties)),
                ) from None
        return CheckedArguments(values)

    async def run(
        self, args: Mapping[str, Any] | str, ctx: ToolContext | None = None
    ) -> dict[str, Any]:
        """Check ``args``, call the framework's tool, return the response dict."""
        return (await self.respond(self.check_arguments(args), ctx)).response

    async def respond(
        self,
        arguments: CheckedArguments,
        ctx: ToolContext | None = None,
        *,
        runtime: ToolRuntime = _DEFAULT_RUNTIME,
    ) -> ToolResponse:
        """Call the framework's tool; its answer as a response (artifact apart)."""
        call_id = ctx.function_call_id if ctx is not None else ""
        try:
            if self.sync_only:
                raw = await in_thread(
                    self.call_foreign_sync, [arguments.values, ctx], {}, runtime.executor
                )
            else:
                raw = await self.call_foreign(arguments.values, ctx)
        except ToolError:
            raise
        except FAILURES as exc:
            log_failure(self.name, exc)
            raise failure(self.name, exc) from exc
        content, artifact = split_result(raw)
        body, parts = to_response(content, self.name)
        return ToolResponse(
            id=call_id, name=self.name, response=body, parts=parts, artifact=artifact
        )

    async def call_foreign(self, args: dict[str, Any], ctx: ToolContext | None) -> Any:
        """Call the framework's tool on the event loop; its result (a ``ToolResult`` to
        keep an artifact). Raise ``ToolError`` for an answer that is an error."""
        raise NotImplementedError

    def call_foreign_sync(self, args: dict[str, Any], ctx: ToolContext | None) -> Any:
        """The same on a worker thread, for ``sync_only`` tools."""
        raise NotImplementedError


# -- out: our tool in another framework ----------------------------------------------------


async def answer(
    tool: BaseTool,
    args: Mapping[str, Any] | str,
    ctx: ToolContext | None,
    *,
    granted_scopes: frozenset[str] = frozenset(),
) -> ToolResponse:
    """One call of ``tool`` as a scheduler runs it; a failure is an error response."""
    call_id = ctx.function_call_id if ctx is not None else ""
    try:
        missing = sorted(set(tool.scopes) - granted_scopes)
        if missing:
            raise ToolError(
                f"tool {tool.name!r} needs the scope(s) {', '.join(missing)}, not granted",
                code="tool.forbidden",
            )
        checked = tool.check_arguments(args)
        if tool.timeout is None:
            response = await tool.respond(checked, ctx)
        else:
            try:
                async with asyncio.timeout(tool.timeout):
                    response = await tool.respond(checked, ctx)
            except TimeoutError:
                raise ToolError(
                    f"tool {tool.name!r} did not finish within {tool.timeout:g} s",
                    code="tool.timeout",
                ) from None
    except ToolError as raised:
        return ToolResponse(id=call_id, name=tool.name, response=raised.to_response(), error=raised)
    except FAILURES as exc:
        log_failure(tool.name, exc)
        told = failure(tool.name, exc)
        return ToolResponse(
            id=call_id, name=tool.name, response=told.to_response(), error=told, exception=exc
        )
    return cut_for_model(response)


def response_text(response: ToolResponse) -> str:
    """What a text-only framework shows the model: a plain string result as itself, any
    other response as its JSON."""
    body = response.response
    if len(body) == 1 and type(body.get("result")) is str:
        text: str = body["result"]
        return text
    return json.dumps(body, ensure_ascii=False, default=str)
