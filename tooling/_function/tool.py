"""``FunctionTool`` and the ``@tool`` decorator: a typed Python callable as a tool."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import copy
import threading
import time
import types
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, TypeVar, overload

from pydantic import BaseModel, ValidationError
from pydantic_core import from_json

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
from .._bounds import check_dict_bounds, check_text_bounds
from .._errors import (
    FAILURES,
    ToolError,
    error_details_from_validation,
    failure,
    log_failure,
)
from .._results import to_response
from .._types import Diagnostic, ToolResponse
from .target import Isolation, Target, analyze_target, process_reference

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from .._context import ToolContext
    from .spec import ToolSpec

__all__ = ["FunctionTool", "tool"]

_NOTHING = object()

P = ParamSpec("P")
R = TypeVar("R")

Args = Mapping[str, Any] | str | bytes


class _SpecCell:
    """Builds a target's spec on first use; shared by a tool and all its copies."""

    __slots__ = ("_lock", "description", "long_running", "owner", "spec", "target")

    def __init__(self, target: Target, description: str | None, long_running: bool) -> None:
        self.target = target
        self.description = description
        self.long_running = long_running
        self.spec: ToolSpec | None = None
        self.owner: type | None = None  # the class a method tool is defined in
        self._lock = threading.Lock()

    def build(self) -> ToolSpec:
        with self._lock:
            if self.spec is None:
                from .spec import build_spec  # pydantic's model machinery, on first use

                self.spec = build_spec(
                    self.target,
                    description=self.description,
                    long_running=self.long_running,
                    owner=self.owner,
                )
            return self.spec


class FunctionTool(BaseTool, Generic[P, R]):
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
    ) -> None:
        target = analyze_target(func)
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
        self.conflict_key = _checked_conflict_key(conflict_key, target)
        if isolation not in ("thread", "process"):
            raise ValueError(f"isolation must be 'thread' or 'process', not {isolation!r}")
        if isolation == "process" and not run_in_thread:
            raise ValueError(
                f"tool {target.qualname}: run_in_thread=False runs on the event loop, "
                "isolation='process' in a worker process: choose one"
            )
        self.isolation: Isolation = isolation
        # Where a worker process finds the function: (module, qualname), checked here.
        self._process_ref = process_reference(target) if isolation == "process" else None
        self._target = target
        self._cell = _SpecCell(target, description, long_running)
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
        model = self._validate(spec, args)
        return CheckedArguments(
            native=model, dump=lambda: model.model_dump(mode="json", by_alias=True)
        )

    # -- running ---------------------------------------------------------------------------
    #
    # Every way in (``run``, ``stream``, a scheduler's ``respond``/``stream_responses``)
    # checks the arguments once, then ends in ``_invoke`` (one call of a plain function)
    # or ``_responses`` (the one generator of a call's responses, for every kind).

    async def run(self, args: Args, ctx: ToolContext | None = None) -> dict[str, Any]:
        """Validate ``args``, run the function, return the response dict for the model.

        Raises ``ToolError``: ``tool.invalid_arguments`` for bad arguments, the tool's own
        ``ToolError`` as is, ``tool.failed`` (chained to the cause) for anything else.
        """
        return (await self.respond(self.check_arguments(args), ctx)).response

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
        if self._target.kind in ("gen", "asyncgen") or self._process_ref is not None:
            final: ToolResponse | None = None
            async with self.stream_responses(arguments, ctx, runtime=runtime) as updates:
                async for update in updates:
                    final = update
            assert final is not None
            return final
        spec = self._cell.spec or self._cell.build()
        ctx = self._with_context(spec, ctx)
        started = time.perf_counter()
        body, parts = to_response(await self._invoke(spec, arguments, ctx, runtime))
        return ToolResponse(
            id=ctx.function_call_id if ctx is not None else "",
            name=self.name,
            response=body,
            duration_s=time.perf_counter() - started,
            parts=parts,
        )

    def stream_responses(
        self,
        arguments: CheckedArguments,
        ctx: ToolContext | None = None,
        *,
        runtime: ToolRuntime = _DEFAULT_RUNTIME,
    ) -> Responses:
        """Run a call whose arguments were checked, giving its responses as they happen."""
        return _closing(self._responses(arguments, ctx, runtime))

    async def _invoke(
        self,
        spec: ToolSpec,
        arguments: CheckedArguments,
        ctx: ToolContext | None,
        runtime: ToolRuntime,
    ) -> Any:
        """Call a plain (non-generator) function once; its raw result."""
        call_args, call_kwargs = self._call_args(spec, arguments, ctx)
        try:
            if self._target.kind == "async":
                return await self._func(*call_args, **call_kwargs)
            if not self.run_in_thread:
                return self._func(*call_args, **call_kwargs)
            return await self._in_thread(call_args, call_kwargs, runtime.executor)
        except ToolError:
            raise
        except FAILURES as exc:
            raise self._failed(exc) from exc

    async def _responses(
        self, arguments: CheckedArguments, ctx: ToolContext | None, runtime: ToolRuntime
    ) -> AsyncGenerator[ToolResponse, None]:
        spec = self._cell.spec or self._cell.build()
        ctx = self._with_context(spec, ctx)
        if self._process_ref is not None:
            from .._workers.process_calls import process_updates

            in_process = process_updates(
                self,
                self._process_ref,
                arguments.values,
                ctx if spec.context_parameter is not None else None,
                runtime.processes,
            )
            try:
                async for update in in_process:
                    yield update
            finally:
                await in_process.aclose()
            return

        call_id = ctx.function_call_id if ctx is not None else ""
        started = time.perf_counter()

        def response(value: Any, final: bool) -> ToolResponse:
            body, parts = to_response(value)
            return ToolResponse(
                id=call_id,
                name=self.name,
                response=body,
                final=final,
                duration_s=time.perf_counter() - started,
                parts=parts,
            )

        kind = self._target.kind
        if kind in ("sync", "async"):
            yield response(await self._invoke(spec, arguments, ctx, runtime), True)
            return

        call_args, call_kwargs = self._call_args(spec, arguments, ctx)
        last: Any = None
        if kind == "asyncgen":
            agen = self._func(*call_args, **call_kwargs)
            try:
                async for item in agen:
                    last = item
                    yield response(item, False)
            except ToolError:
                raise
            except FAILURES as exc:
                raise self._failed(exc) from exc
            finally:
                await agen.aclose()
            yield response(last, True)
            return

        from .._workers.sync_generator import SyncGeneratorDriver
        from .._workers.threads import default_executor

        driver = SyncGeneratorDriver(
            self._func,
            call_args,
            call_kwargs,
            executor=(runtime.executor or default_executor()) if self.run_in_thread else None,
        )
        try:
            while True:
                try:
                    done, item = await driver.next()
                except ToolError:
                    raise
                except FAILURES as exc:
                    raise self._failed(exc) from exc
                if done:
                    yield response(item if item is not None else last, True)
                    return
                last = item
                yield response(item, False)
        finally:
            await driver.aclose()

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
        self, spec: ToolSpec, arguments: CheckedArguments, ctx: ToolContext | None
    ) -> tuple[list[Any], dict[str, Any]]:
        if self._func is self._unbound_method:
            raise TypeError(
                f"tool {self.name!r} is a method: run it from an instance (obj.{self.__name__})"
            )
        return spec.to_call_args(arguments.native, ctx)

    def _validate(self, spec: ToolSpec, args: Args) -> BaseModel:
        model = spec.args_model
        try:
            if type(args) is dict:
                check_dict_bounds(args)
                validated = spec.validator.validate_python(args)
            elif isinstance(args, str | bytes):
                check_text_bounds(args)
                validated = spec.validator.validate_json(args)
            elif isinstance(args, Mapping):
                check_dict_bounds(args)
                validated = model.model_validate(args if type(args) is dict else dict(args))
            else:
                raise ToolError(
                    f"arguments for tool {self.name!r} must be a JSON object, "
                    f"not {type(args).__name__}",
                    code="tool.invalid_arguments",
                    details=[{"loc": [], "msg": "Input should be an object", "type": "model_type"}],
                )
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_context=False)
            retried, errors = _without_rejected_nulls(spec, args, errors)
            if retried is not None:
                return retried
            details = error_details_from_validation(errors, spec.parameter_names)
            raise self._invalid(details) from None
        except ToolError:
            raise
        except (ValueError, TypeError, RecursionError, UnicodeError) as exc:
            details = [{"loc": [], "msg": str(exc)[:200], "type": "value_error"}]
            raise self._invalid(details) from None
        return validated  # type: ignore[no-any-return]

    def _invalid(self, details: list[dict[str, Any]]) -> ToolError:
        summary = "; ".join(
            f"{'.'.join(str(x) for x in d['loc']) or '(arguments)'}: {d['msg']}"
            for d in details[:3]
        )
        if len(details) > 3:
            summary += f"; and {len(details) - 3} more"
        return ToolError(
            f"invalid arguments for tool {self.name!r}: {summary}",
            code="tool.invalid_arguments",
            details=details,
        )

    async def _in_thread(
        self, call_args: list[Any], call_kwargs: dict[str, Any], executor: Executor | None
    ) -> Any:
        if executor is None:
            # Imported here: ``import tooling`` does not start the worker pool's module.
            from .._workers.threads import default_executor

            executor = default_executor()
        return await asyncio.get_running_loop().run_in_executor(
            executor,
            contextvars.copy_context().run,
            call_in_thread,
            self._func,
            call_args,
            call_kwargs,
        )

    def _failed(self, exc: BaseException) -> ToolError:
        """The ``tool.failed`` error standing for ``exc``; logged with its traceback."""
        log_failure(self.name, exc)
        return failure(self.name, exc)


@asynccontextmanager
async def _closing(
    updates: AsyncGenerator[ToolResponse, None],
) -> AsyncIterator[AsyncIterator[ToolResponse]]:
    try:
        yield updates
    finally:
        await updates.aclose()


def _checked_conflict_key(rule: ConflictKeyRule | None, target: Target) -> ConflictKeyRule | None:
    """``rule`` if it names a parameter of the tool or is callable; else a ``TypeError``."""
    if rule is None or callable(rule):
        return rule
    if not isinstance(rule, str):
        raise TypeError(
            f"tool {target.qualname}: conflict_key must be a parameter name or a function of "
            f"the arguments, not {type(rule).__name__}"
        )
    names = [p.name for p in target.parameters]
    if rule not in names:
        raise TypeError(
            f"tool {target.qualname}: conflict_key {rule!r} is not one of its parameters "
            f"({', '.join(names) or 'it has none'})"
        )
    return rule


def call_in_thread(func: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Call ``func`` on a worker thread; a ``StopIteration`` cannot cross into an asyncio
    future (the awaiting side would never wake), so it is renamed."""
    try:
        return func(*args, **kwargs)
    except StopIteration as exc:
        raise RuntimeError("the tool raised StopIteration") from exc


def _without_rejected_nulls(
    spec: ToolSpec, args: Any, errors: list[Any]
) -> tuple[BaseModel | None, list[Any]]:
    """Validate again with the ``null`` values that mean "the default" left out.

    A strict-mode model sends ``null`` for every argument it means to leave out, at any
    depth; where the field has a default (and its type does not admit None), that is what
    the null means. Which nulls those are is read from the parameters schema (see
    ``drop_default_nulls``), so a null for an entry of a ``dict[str, T]`` stays an error.
    Only tried after a failure that involved a null, so valid calls pay nothing. Gives
    the model, or the errors to report.
    """
    from .._jsonschema import drop_default_nulls  # only on the failure path

    if not any(e.get("input", 0) is None for e in errors):
        return None, errors
    try:
        data = from_json(args) if isinstance(args, str | bytes) else copy.deepcopy(dict(args))
        if not drop_default_nulls(spec.parameters_json_schema, data):
            return None, errors
        return spec.validator.validate_python(data), []
    except ValidationError as retry:
        return None, retry.errors(include_url=False, include_context=False)
    except Exception:
        return None, errors


@overload
def tool(func: Callable[P, R], /) -> FunctionTool[P, R]: ...
@overload
def tool(
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
) -> Callable[[Callable[P, R]], FunctionTool[P, R]]: ...
def tool(func: Callable[..., Any] | None = None, /, **options: Any) -> Any:
    """Turn a typed function into a :class:`FunctionTool`; use bare or with options.

    Options: ``name`` (default: the function's name), ``description`` (default: from the
    docstring), ``read_only``, ``concurrency_safe`` (with ``read_only``, lets the AUTO
    strategy run the call beside others), ``long_running``, ``idempotent``,
    ``destructive`` (default ``not read_only``), ``require_confirmation`` (a bool, or a
    predicate given the validated arguments), ``timeout`` (seconds), ``scopes`` (all
    must be granted for the tool to run), ``run_in_thread`` (``False`` runs a sync
    function on the event loop itself), ``conflict_key`` (a parameter name, or a function
    of the validated arguments giving a key: under AUTO, calls with different keys
    overlap and calls with the same key keep their order), ``isolation`` (``"process"``
    runs a sync function or generator in a worker process that a timeout or cancellation
    really stops; the function must be importable by module and name).
    """
    if func is not None:
        return FunctionTool(func, **options)
    return lambda f: FunctionTool(f, **options)
