"""Tools made from other tools or from a schema: ``tool.bind(...)``,
``tool.transform(...)`` and ``FunctionTool.from_schema(...)``.

A derived tool shows the model a schema without the bound and hidden parameters (and
with renamed or redescribed ones); a value the model sends for a parameter it was not
shown is an unknown argument (``tool.invalid_arguments``), so a bound value cannot be
spoofed. The bound values join the model's arguments before the original tool checks
them all; a bound callable is given the call's ``ToolContext`` and may be async; one
that raises makes the call ``tool.failed``.
"""

from __future__ import annotations

import copy
import inspect
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from .._base import (
    _DEFAULT_RUNTIME,
    BaseTool,
    CheckedArguments,
    Responses,
    ToolRuntime,
    parse_arguments,
)
from .._errors import FAILURES, ToolError, error_details_from_validation, failure, log_failure
from .._results import split_result, to_response
from .._schema_errors import invalid_arguments
from .._types import ToolResponse

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from .._context import ToolContext

__all__: list[str] = []

#: The flags and policies a derived tool keeps from its original.
_KEPT = (
    "read_only",
    "concurrency_safe",
    "long_running",
    "idempotent",
    "destructive",
    "require_confirmation",
    "timeout",
    "scopes",
    "conflict_key",
    "isolation",
    "auth",
    "retries",
    "retry_on",
    "max_calls_per_run",
    "max_result_tokens",
    "available",
    "guardrails",
    "output_guardrails",
)


class Derivable:
    """``bind`` and ``transform``: new tools from this one (the original is untouched)."""

    def bind(self, **values: Any) -> DerivedTool:
        """A tool whose schema lacks these parameters: each gets the value given, or (a
        callable) what it returns given the call's ``ToolContext``. A value the model
        sends for a bound parameter is refused as an unknown argument."""
        assert isinstance(self, BaseTool)
        return DerivedTool(self, bound=values)

    def transform(
        self,
        *,
        name: str | None = None,
        description: str | None = None,
        rename: Mapping[str, str] | None = None,
        describe: Mapping[str, str] | None = None,
        hide: Mapping[str, Any] | Iterable[str] = (),
    ) -> DerivedTool:
        """A tool shown another way: another ``name`` or ``description``, parameters
        renamed (``rename={"q": "query"}``) or redescribed (``describe={"q": "..."}``),
        and hidden ones (``hide={"limit": 10}``, or names of parameters with defaults)."""
        assert isinstance(self, BaseTool)
        return transformed(
            self,
            name=name,
            description=description,
            rename=rename or {},
            describe=describe or {},
            hide=hide,
        )

    @classmethod
    def from_schema(
        cls,
        name: str,
        description: str,
        parameters_json_schema: Mapping[str, Any],
        func: Callable[..., Any],
    ) -> SchemaTool:
        """A tool from a JSON Schema and a function given the arguments as keywords
        (validated with ``jsonschema``, which comes with the ``mcp`` extra)."""
        return SchemaTool(name, description, parameters_json_schema, func)


class DerivedTool(Derivable, BaseTool):
    """A tool shown under another schema, running the original with bound values."""

    def __init__(
        self,
        original: BaseTool,
        *,
        name: str | None = None,
        description: str | None = None,
        bound: Mapping[str, Any] | None = None,
        rename: Mapping[str, str] | None = None,
        describe: Mapping[str, str] | None = None,
    ) -> None:
        schema = original.parameters_json_schema
        properties: dict[str, Any] = dict(schema.get("properties", {}))
        bound = dict(bound or {})
        rename = dict(rename or {})
        describe = dict(describe or {})
        for label, names in (("bind", bound), ("rename", rename), ("describe", describe)):
            unknown = [n for n in names if n not in properties]
            if unknown:
                raise ValueError(
                    f"tool {original.name!r}: cannot {label} {unknown}: its parameters are "
                    f"{list(properties) or 'none'}"
                )
        clash = set(rename) & set(bound)
        if clash:
            raise ValueError(f"tool {original.name!r}: {sorted(clash)} are bound and renamed")
        for attr in _KEPT:
            setattr(self, attr, getattr(original, attr))
        self.name = original.name
        if name is not None:
            from .._base import validate_tool_name

            self.name = validate_tool_name(name, wide=True)
        self.description = original.description if description is None else description
        self.response_json_schema = original.response_json_schema
        self.original = original
        self.bound = bound
        self._to_original = {rename.get(n, n): n for n in properties if n not in bound}
        if len(self._to_original) != len(properties) - len(bound):
            raise ValueError(f"tool {original.name!r}: rename gives two parameters one name")
        shown: dict[str, Any] = {}
        for new, old in self._to_original.items():
            prop = copy.deepcopy(properties[old])
            if old in describe:
                prop["description"] = describe[old]
            shown[new] = prop
        required = [rename.get(n, n) for n in schema.get("required", ()) if n not in bound]
        self.parameters_json_schema = {
            **{k: v for k, v in schema.items() if k not in ("properties", "required")},
            "properties": shown,
            "required": required,
        }
        self._dynamic = any(callable(v) for v in bound.values())

    # -- arguments -------------------------------------------------------------------------

    def _original_args(self, args: Mapping[str, Any] | str | bytes) -> dict[str, Any]:
        given = parse_arguments(self.name, args)
        unknown = [k for k in given if k not in self._to_original]
        if unknown:
            details = error_details_from_validation(
                [
                    {"loc": [k], "type": "extra_forbidden", "msg": "", "input": given[k]}
                    for k in unknown
                ],
                list(self._to_original),
            )
            raise ToolError(
                f"invalid arguments for tool {self.name!r}: unknown {unknown}",
                code="tool.invalid_arguments",
                details=details,
            )
        return {self._to_original[k]: v for k, v in given.items()}

    def check_arguments(self, args: Mapping[str, Any] | str | bytes) -> CheckedArguments:
        """The model's arguments renamed back, bound values joined, checked by the original
        (with a bound callable: checked when the call runs and its context is known)."""
        values = self._original_args(args)
        if self._dynamic:
            return CheckedArguments(values, native=_Pending(values))
        return self.original.check_arguments({**values, **self.bound})

    async def _complete(
        self, arguments: CheckedArguments, ctx: ToolContext | None
    ) -> CheckedArguments:
        if not isinstance(arguments.native, _Pending):
            return arguments
        values = dict(arguments.native.values)
        for key, value in self.bound.items():
            if not callable(value):
                values[key] = value
                continue
            try:
                result = value(ctx)
                if inspect.isawaitable(result):
                    result = await result
            except ToolError:
                raise
            except FAILURES as exc:
                log_failure(self.name, exc)
                raise failure(self.name, exc) from exc
            values[key] = result
        return self.original.check_arguments(values)

    # -- running ---------------------------------------------------------------------------

    @property
    def takes_context(self) -> bool:
        return self._dynamic or self.original.takes_context

    @property
    def streams(self) -> bool:
        return self.original.streams

    @property
    def runs_in_thread(self) -> bool:
        return self.original.runs_in_thread

    async def run(
        self, args: Mapping[str, Any] | str, ctx: ToolContext | None = None
    ) -> dict[str, Any]:
        """Check ``args`` as the model sends them, then run the original."""
        return (await self.respond(self.check_arguments(args), ctx)).response

    async def respond(
        self,
        arguments: CheckedArguments,
        ctx: ToolContext | None = None,
        *,
        runtime: ToolRuntime = _DEFAULT_RUNTIME,
    ) -> ToolResponse:
        checked = await self._complete(arguments, ctx)
        response = await self.original.respond(checked, ctx, runtime=runtime)
        response.name = self.name
        return response

    def stream_responses(
        self,
        arguments: CheckedArguments,
        ctx: ToolContext | None = None,
        *,
        runtime: ToolRuntime = _DEFAULT_RUNTIME,
    ) -> Responses:
        return self._streaming(arguments, ctx, runtime)

    @asynccontextmanager
    async def _streaming(
        self, arguments: CheckedArguments, ctx: ToolContext | None, runtime: ToolRuntime
    ) -> AsyncIterator[AsyncIterator[ToolResponse]]:
        checked = await self._complete(arguments, ctx)
        async with self.original.stream_responses(checked, ctx, runtime=runtime) as updates:
            yield updates


class _Pending:
    """Arguments still waiting for bound callables' values (known once the call runs)."""

    __slots__ = ("values",)

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values


def transformed(
    original: BaseTool,
    *,
    name: str | None,
    description: str | None,
    rename: Mapping[str, str],
    describe: Mapping[str, str],
    hide: Mapping[str, Any] | Iterable[str],
) -> DerivedTool:
    """``original.transform(...)``: hidden parameters keep a given value, or their default."""
    if isinstance(hide, Mapping):
        values = dict(hide)
    else:
        properties = original.parameters_json_schema.get("properties", {})
        values = {}
        for key in hide:
            prop = properties.get(key)
            if not isinstance(prop, dict) or "default" not in prop:
                raise ValueError(
                    f"tool {original.name!r}: cannot hide {key!r} without a value: it has no "
                    "default (pass hide={name: value})"
                )
            values[key] = prop["default"]
    return DerivedTool(
        original,
        name=name,
        description=description,
        bound=values,
        rename=rename,
        describe=describe,
    )


class SchemaTool(Derivable, BaseTool):
    """A tool from a JSON Schema and a function: ``FunctionTool.from_schema(...)``.

    The arguments are validated against the schema with ``jsonschema`` (its
    ``jsonschema`` package is needed: it comes with the ``mcp`` extra) and passed to
    ``func`` as keyword arguments (``tool_context`` too, if it takes one). A sync
    ``func`` runs on a worker thread.
    """

    def __init__(
        self,
        name: str,
        description: str,
        parameters_json_schema: Mapping[str, Any],
        func: Callable[..., Any],
    ) -> None:
        from jsonschema.exceptions import SchemaError
        from jsonschema.validators import validator_for

        from .._base import validate_tool_name

        schema = dict(parameters_json_schema)
        if schema.get("type", "object") != "object":
            raise ValueError(f"tool {name!r}: the parameters schema must be an object schema")
        schema.setdefault("type", "object")
        kind = validator_for(schema)
        try:
            kind.check_schema(schema)
        except SchemaError as exc:
            raise ValueError(
                f"tool {name!r}: the parameters schema is not valid: {exc.message}"
            ) from None
        self.name = validate_tool_name(name, wide=True)
        self.description = description
        self.parameters_json_schema = schema
        self._validator = kind(schema)
        self._func = func
        self._wants_context = "tool_context" in inspect.signature(func).parameters

    @property
    def takes_context(self) -> bool:
        return self._wants_context

    def check_arguments(self, args: Mapping[str, Any] | str | bytes) -> CheckedArguments:
        """The arguments, valid against the schema (or ``tool.invalid_arguments``)."""
        values = parse_arguments(self.name, args)
        errors = sorted(self._validator.iter_errors(values), key=lambda e: list(e.absolute_path))
        if errors:
            names = list(self.parameters_json_schema.get("properties", {}))
            problems = [
                {
                    "loc": list(e.absolute_path),
                    "type": str(e.validator),
                    "msg": e.message,
                    "input": e.instance,
                }
                for e in errors
            ]
            raise invalid_arguments(self.name, problems, names)
        return CheckedArguments(values)

    async def run(
        self, args: Mapping[str, Any] | str, ctx: ToolContext | None = None
    ) -> dict[str, Any]:
        """Validate ``args`` against the schema, call the function, give its response."""
        return (await self.respond(self.check_arguments(args), ctx)).response

    async def respond(
        self,
        arguments: CheckedArguments,
        ctx: ToolContext | None = None,
        *,
        runtime: ToolRuntime = _DEFAULT_RUNTIME,
    ) -> ToolResponse:
        result = await self._call(dict(arguments.values), ctx, runtime.executor)
        content, artifact = split_result(result)
        body, parts = to_response(content, self.name)
        call_id = ctx.function_call_id if ctx is not None else ""
        return ToolResponse(
            id=call_id, name=self.name, response=body, parts=parts, artifact=artifact
        )

    async def _call(
        self, kwargs: dict[str, Any], ctx: ToolContext | None, executor: Executor | None
    ) -> Any:
        if self._wants_context:
            kwargs["tool_context"] = ctx
        try:
            if inspect.iscoroutinefunction(self._func):
                return await self._func(**kwargs)
            import asyncio  # when a tool first runs: declaring one stays light
            import contextvars

            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(
                executor, contextvars.copy_context().run, lambda: self._func(**kwargs)
            )
        except ToolError:
            raise
        except FAILURES as exc:
            log_failure(self.name, exc)
            raise failure(self.name, exc) from exc
