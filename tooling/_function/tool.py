"""``FunctionTool``: a typed Python callable as a tool, still callable (and bindable, as a
method) like the original; its spec is built on first use.

Checking arguments is in ``arguments.py``, calling the function and the generator of its
responses in ``calling.py``, the ``@tool`` decorator in ``decorator.py``.
"""

from __future__ import annotations

import contextlib
import copy
import time
import types
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from pydantic import BaseModel

from .._base import (
    _DEFAULT_RUNTIME,
    BaseTool,
    CheckedArguments,
    ConfirmationPredicate,
    ConflictKeyRule,
    Responses,
    ToolRuntime,
    validate_tool_name,
)
from .._errors import FAILURES, ToolError
from .._jobs import JobOptions, job_options
from .._policy import checked_policies
from .._results import split_result, to_response
from .._types import Diagnostic, ToolResponse, ToolResult
from .arguments import Args, validate_arguments
from .calling import Callee, call_once, closing, failed, in_thread, responses
from .cells import SpecCell
from .derived import Derivable
from .options import checked_auth, checked_conflict_key
from .target import Isolation, analyze_target, process_reference

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from .._context import ToolContext
    from .._policy import Availability, Guardrail, OutputGuardrail
    from ..auth._credentials import AuthConfig
    from .spec import ToolSpec

__all__ = ["FunctionTool"]

_NOTHING = object()

P = ParamSpec("P")
R = TypeVar("R")
_BoundP = ParamSpec("_BoundP")
_Receiver = TypeVar("_Receiver")


class FunctionTool(Derivable, BaseTool, Generic[P, R]):
    """A Python callable as a tool; still callable exactly like the original.

    ``FunctionTool(func, **options)`` is ``@tool(**options)`` without the decorator. The
    options are the flags documented on :func:`tool`. Cheap checks happen here; the spec
    (types, schema, descriptions) is built on first use and cached.
    """

    def __init__(
        self,
        func: Callable[P, R],
        *,
        name: str | None = None,
        description: str | None = None,
        read_only: bool = False,
        concurrency_safe: bool = False,
        long_running: bool = False,
        idempotent: bool = False,
        destructive: bool | None = None,
        require_confirmation: bool | ConfirmationPredicate = False,
        timeout: float | None = None,
        scopes: tuple[str, ...] | list[str] = (),
        run_in_thread: bool = True,
        conflict_key: ConflictKeyRule | None = None,
        isolation: Isolation = "thread",
        auth: AuthConfig | None = None,
        retries: int = 0,
        retry_on: Sequence[type[BaseException]] | type[BaseException] = (),
        max_calls_per_run: int | None = None,
        max_result_tokens: int | None = None,
        available: Availability | None = None,
        guardrails: Sequence[Guardrail] = (),
        output_guardrails: Sequence[OutputGuardrail] = (),
        durable: bool | JobOptions | None = None,
    ) -> None:
        target = analyze_target(func)
        self.durable = job_options(durable)
        if self.durable is not None:
            long_running = True  # a durable call answers "pending" and finishes later
        if name is None and target.name == "<lambda>":
            raise TypeError("a lambda has no name: pass name= to @tool or FunctionTool")
        self.name = validate_tool_name(
            target.name if name is None else name, where=f"tool {target.qualname}:"
        )
        self.read_only = read_only
        self.concurrency_safe = concurrency_safe
        self.long_running = long_running
        self.idempotent = idempotent
        self.destructive = destructive
        self.require_confirmation = require_confirmation
        self.timeout = timeout
        self.scopes = tuple(scopes)
        self.run_in_thread = run_in_thread
        self.conflict_key = checked_conflict_key(conflict_key, target)
        if isolation not in ("thread", "process"):
            raise ValueError(f"isolation must be 'thread' or 'process', not {isolation!r}")
        if isolation == "process" and not run_in_thread:
            raise ValueError(
                f"tool {target.qualname}: run_in_thread=False runs on the event loop, "
                "isolation='process' in a worker process: choose one"
            )
        self.isolation: Isolation = isolation
        self.auth = checked_auth(auth, target, isolation)
        self.set_policies(
            checked_policies(
                f"tool {target.qualname}:",
                retries=retries,
                retry_on=retry_on,
                max_calls_per_run=max_calls_per_run,
                max_result_tokens=max_result_tokens,
                available=available,
                guardrails=guardrails,
                output_guardrails=output_guardrails,
            )
        )
        # Where a worker process finds the function: (module, qualname), checked here.
        self._process_ref = process_reference(target) if isolation == "process" else None
        #: One call, one response, in this process (not a generator, not isolated).
        self._plain = target.kind in ("sync", "async") and self._process_ref is None
        self._target = target
        self._cell = SpecCell(target, description, long_running)
        self._func: Callable[..., Any] = target.call
        # A method tool must be bound (through an instance) before it can run.
        self._unbound_method: Any = target.call if target.binding != "none" else _NOTHING
        self._attr_name: str | None = None

        # Look like the wrapped function: introspection, iscoroutinefunction, help().
        self.__wrapped__ = func
        self.__name__ = target.name
        self.__qualname__ = target.qualname
        self.__doc__ = target.doc
        self.__module__ = getattr(target.source, "__module__", None) or __name__
        code = getattr(target.source, "__code__", None)
        if code is not None:
            self.__code__ = code
            self.__defaults__ = None
            self.__kwdefaults__ = None

    # -- the spec ------------------------------------------------------------------------

    @property
    def spec(self) -> ToolSpec:
        """The tool's spec, built on first access (errors name function and parameter)."""
        return self._cell.spec or self._cell.build()

    @property
    def description(self) -> str:  # type: ignore[override]
        """What the model is told the tool does: from the docstring or ``description=``."""
        return self.spec.description

    @property
    def parameters_json_schema(self) -> dict[str, Any]:  # type: ignore[override]
        """The arguments' JSON Schema (draft 2020-12); shared and read-only."""
        return self.spec.parameters_json_schema

    @property
    def response_json_schema(self) -> dict[str, Any] | None:  # type: ignore[override]
        """The schema of the response the model receives, or None without a return type."""
        return self.spec.response_json_schema

    @property
    def args_model(self) -> type[BaseModel]:
        """The pydantic model the arguments are validated with."""
        return self.spec.args_model

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """What was noticed building the spec, then by exports so far."""
        return [*self.spec.diagnostics, *super().diagnostics]

    # -- calling like the original ---------------------------------------------------------

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        return self._func(*args, **kwargs)  # type: ignore[no-any-return]

    def __set_name__(self, owner: type, name: str) -> None:
        self._attr_name = name
        self._cell.owner = owner  # what ``typing.Self`` in the signature means

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> FunctionTool[P, R]: ...
    @overload
    def __get__(
        self: FunctionTool[Concatenate[_Receiver, _BoundP], R],
        instance: _Receiver,
        owner: type | None = None,
    ) -> FunctionTool[_BoundP, R]: ...  # a method from an instance: ``self`` is bound
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> FunctionTool[..., R]: ...
    def __get__(self, instance: object | None, owner: type | None = None) -> FunctionTool[..., R]:
        binding = self._target.binding
        if binding == "none" or (binding == "instance" and instance is None):
            return self
        receiver = instance if binding == "instance" else (owner or type(instance))
        bound = copy.copy(self)
        bound._func = types.MethodType(self._target.call, receiver)
        bound.__wrapped__ = bound._func
        if binding == "instance" and self._attr_name is not None:
            # Later lookups find the bound tool in the instance, as a plain attribute.
            with contextlib.suppress(AttributeError, TypeError):
                instance.__dict__[self._attr_name] = bound
        return bound

    def check_callable(self, *, where: str = "") -> None:
        """Raise ``TypeError`` if the tool cannot be called as it is: a method tool taken
        from its class (``Store.add``) rather than from an instance (``store.add``)."""
        if self._func is self._unbound_method and self._target.binding == "instance":
            owner, _, method = self.__qualname__.rpartition(".")
            raise TypeError(
                f"{where}tool {self.name!r} is the method {self.__qualname__} taken from its "
                f"class: pass it from an instance ({owner or 'obj'}(...).{method}, e.g. "
                f"store.{method} with store = {owner or 'TheClass'}(...))"
            )

    @property
    def streams(self) -> bool:
        """True for a generator or async generator function: it streams its updates."""
        return self._target.kind in ("gen", "asyncgen")

    @property
    def is_generator(self) -> bool:
        """True for a generator or async generator function (the same as :attr:`streams`)."""
        return self._target.kind in ("gen", "asyncgen")

    @property
    def runs_in_thread(self) -> bool:
        """True when calls run on a worker thread (a sync function or generator)."""
        return (
            self.run_in_thread
            and self._process_ref is None
            and self._target.kind in ("sync", "gen")
        )

    @property
    def takes_context(self) -> bool:
        """Whether the function has a ``ToolContext`` parameter."""
        return (self._cell.spec or self._cell.build()).context_parameter is not None

    def check_arguments(self, args: Args) -> CheckedArguments:
        """Validate ``args`` once: the pydantic model the function is called with, and
        (on first use) its JSON values with defaults filled in."""
        spec = self._cell.spec or self._cell.build()
        model = validate_arguments(self.name, spec, args)
        return CheckedArguments(
            native=model, dump=lambda: model.model_dump(mode="json", by_alias=True)
        )

    # -- running ---------------------------------------------------------------------------
    #
    # Every way in (``run``, ``stream``, a scheduler's ``respond``/``stream_responses``)
    # checks the arguments once, then ends in ``call_once`` (one call of a plain
    # function) or ``_responses`` (the one generator of a call's responses, for every
    # kind). The one shortcut: ``run`` of a plain function without a context validates,
    # calls and makes the response dict itself (no ``ToolResponse`` to throw away).

    async def run(self, args: Args, ctx: ToolContext | None = None) -> dict[str, Any]:
        """Validate ``args``, run the function, return the response dict for the model.

        Raises ``ToolError``: ``tool.invalid_arguments`` for bad arguments, the tool's own
        ``ToolError`` as is, ``tool.failed`` (chained to the cause) for anything else.
        """
        spec = self._cell.spec or self._cell.build()
        if not self._plain or spec.context_parameter is not None:
            return (await self.respond(self.check_arguments(args), ctx)).response
        # A plain function without a context: validate, call, respond (no steps between).
        validated = validate_arguments(self.name, spec, args)
        func = self._func
        if func is self._unbound_method:
            self._call_args(spec, validated)  # raises the TypeError that says so
        call_args, call_kwargs = spec.to_call_args(validated)
        try:
            if self._target.kind == "async":
                result = await func(*call_args, **call_kwargs)
            elif self.run_in_thread:
                result = await in_thread(func, call_args, call_kwargs, None)
            else:
                result = func(*call_args, **call_kwargs)
        except ToolError:
            raise
        except FAILURES as exc:
            raise failed(self.name, exc) from exc
        if type(result) is ToolResult:  # the model sees the content only
            result = result.content
        return to_response(result, self.name)[0]

    @asynccontextmanager
    async def stream(
        self, args: Args, ctx: ToolContext | None = None
    ) -> AsyncIterator[AsyncIterator[ToolResponse]]:
        """Responses as they happen, as an async context manager.

        A generator tool gives one ``final=False`` response per yield, then the final one
        (a sync generator's ``return`` value, else the last yield again). Other tools give
        one final response. Leaving the block stops the tool.
        """
        async with self.stream_responses(self.check_arguments(args), ctx) as updates:
            yield updates

    async def respond(
        self,
        arguments: CheckedArguments,
        ctx: ToolContext | None = None,
        *,
        runtime: ToolRuntime = _DEFAULT_RUNTIME,
    ) -> ToolResponse:
        """Run a call whose arguments were checked; its final response."""
        if not self._plain:
            final: ToolResponse | None = None
            async with self.stream_responses(arguments, ctx, runtime=runtime) as updates:
                async for update in updates:
                    final = update
            assert final is not None
            return final
        spec = self._cell.spec or self._cell.build()
        if spec.context_parameter is not None:
            ctx = self._with_context(spec, ctx)
        started = time.perf_counter()
        call_args, call_kwargs = self._call_args(spec, arguments.native, ctx)
        result = await call_once(
            self.name,
            self._func,
            self._target.kind,
            self.run_in_thread,
            call_args,
            call_kwargs,
            runtime.executor,
        )
        content, artifact = split_result(result)
        body, parts = to_response(content, self.name)
        return ToolResponse(
            id=ctx.function_call_id if ctx is not None else "",
            name=self.name,
            response=body,
            duration_s=time.perf_counter() - started,
            parts=parts,
            artifact=artifact,
        )

    def stream_responses(
        self,
        arguments: CheckedArguments,
        ctx: ToolContext | None = None,
        *,
        runtime: ToolRuntime = _DEFAULT_RUNTIME,
    ) -> Responses:
        """Run a call whose arguments were checked, giving its responses as they happen."""
        spec = self._cell.spec or self._cell.build()
        ctx = self._with_context(spec, ctx)
        if self._process_ref is not None:
            from .._workers.process_calls import process_updates

            given = ctx if spec.context_parameter is not None else None
            return closing(
                process_updates(self, self._process_ref, arguments.values, given, runtime.processes)
            )
        call_args, call_kwargs = self._call_args(spec, arguments.native, ctx)
        callee = Callee(self.name, self._func, self._target.kind, self.run_in_thread)
        call_id = ctx.function_call_id if ctx is not None else ""
        return closing(responses(callee, call_args, call_kwargs, call_id, runtime.executor))

    # -- helpers -----------------------------------------------------------------------------

    def _with_context(self, spec: ToolSpec, ctx: ToolContext | None) -> ToolContext | None:
        """The context the call gets: one is made when the function takes one and the
        caller gave none."""
        if spec.context_parameter is None:
            return ctx
        if ctx is None:
            from .._context import SimpleToolContext

            ctx = SimpleToolContext(caller="user")
        ctx.tool_name = self.name
        return ctx

    def _call_args(
        self, spec: ToolSpec, validated: BaseModel, ctx: ToolContext | None = None
    ) -> tuple[list[Any], dict[str, Any]]:
        """What the function is called with; a ``TypeError`` for a method tool not bound."""
        if self._func is self._unbound_method:
            raise TypeError(
                f"tool {self.name!r} is a method: run it from an instance (obj.{self.__name__})"
            )
        return spec.to_call_args(validated, ctx)


async def respond_directly(
    tool: FunctionTool[..., Any], args: Args, call_id: str, executor: Executor | None
) -> ToolResponse:
    """``tool.respond(tool.check_arguments(args))`` in one step, for a plain function
    that takes no context (a scheduler's short way): the response to call ``call_id``,
    untimed (``duration_s`` is the caller's to set).

    ``executor`` runs a sync function that runs in a thread (None: the default pool).
    """
    spec = tool._cell.spec or tool._cell.build()
    assert tool._plain and spec.context_parameter is None
    call_args, call_kwargs = tool._call_args(spec, validate_arguments(tool.name, spec, args))
    func = tool._func
    try:
        if tool._target.kind == "async":
            result = await func(*call_args, **call_kwargs)
        elif tool.run_in_thread:
            result = await in_thread(func, call_args, call_kwargs, executor)
        else:
            result = func(*call_args, **call_kwargs)
    except ToolError:
        raise
    except FAILURES as exc:
        raise failed(tool.name, exc) from exc
    content, artifact = split_result(result)
    body, parts = to_response(content, tool.name)
    return ToolResponse(id=call_id, name=tool.name, response=body, parts=parts, artifact=artifact)


def is_method_tool(tool: FunctionTool[..., Any]) -> bool:
    """Whether ``tool`` is a method (or classmethod) tool, to be bound before it runs."""
    return tool._target.binding != "none"
