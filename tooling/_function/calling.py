"""Calling a tool's function: awaited, on the loop, or in a worker thread, and the one
generator of a call's responses (a plain function's one, a generator's updates).

A ``Callee`` says which function and how; the tool makes one per call from its flags, so
a bound copy of a method tool calls its own bound function.
"""

from __future__ import annotations

import contextvars
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from .._errors import FAILURES, ToolError, failure, log_failure
from .._results import split_result, to_response
from .._types import ToolResponse

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from .target import Kind

__all__: list[str] = []


class Callee:
    """The function a call runs, and how: awaited (``async``), on the event loop, or in
    a worker thread (``in_thread``); ``name`` is the tool's, for errors.

    A plain slotted class: a dataclass costs more at import than it saves here.
    """

    __slots__ = ("func", "in_thread", "kind", "name")

    def __init__(self, name: str, func: Callable[..., Any], kind: Kind, in_thread: bool) -> None:
        self.name = name
        self.func = func
        self.kind: Kind = kind
        self.in_thread = in_thread


async def call_once(
    name: str,
    func: Callable[..., Any],
    kind: Kind,
    threaded: bool,
    call_args: list[Any],
    call_kwargs: dict[str, Any],
    executor: Executor | None,
) -> Any:
    """Call a plain (non-generator) function of tool ``name`` once (awaited, in a worker
    thread when ``threaded``, else on the loop); its raw result.

    The tool's own ``ToolError`` comes out as is; anything else as ``tool.failed``.
    """
    try:
        if kind == "async":
            return await func(*call_args, **call_kwargs)
        if not threaded:
            return func(*call_args, **call_kwargs)
        return await in_thread(func, call_args, call_kwargs, executor)
    except ToolError:
        raise
    except FAILURES as exc:
        raise failed(name, exc) from exc


async def responses(
    callee: Callee,
    call_args: list[Any],
    call_kwargs: dict[str, Any],
    call_id: str,
    executor: Executor | None,
) -> AsyncGenerator[ToolResponse, None]:
    """A call's responses: one final for a plain function; for a generator one
    ``final=False`` per yield, then the final one (a sync generator's ``return`` value,
    else the last yield again)."""
    started = time.perf_counter()
    name = callee.name

    def response(value: Any, final: bool) -> ToolResponse:
        content, artifact = split_result(value)
        body, parts = to_response(content, name)
        return ToolResponse(
            id=call_id,
            name=name,
            response=body,
            final=final,
            duration_s=time.perf_counter() - started,
            parts=parts,
            artifact=artifact,
        )

    kind = callee.kind
    if kind in ("sync", "async"):
        result = await call_once(
            name, callee.func, kind, callee.in_thread, call_args, call_kwargs, executor
        )
        yield response(result, True)
        return

    last: Any = None
    if kind == "asyncgen":
        agen = callee.func(*call_args, **call_kwargs)
        try:
            async for item in agen:
                last = item
                yield response(item, False)
        except ToolError:
            raise
        except FAILURES as exc:
            raise failed(name, exc) from exc
        finally:
            await agen.aclose()
        yield response(last, True)
        return

    from .._workers.sync_generator import SyncGeneratorDriver
    from .._workers.threads import default_executor

    driver = SyncGeneratorDriver(
        callee.func,
        call_args,
        call_kwargs,
        executor=(executor or default_executor()) if callee.in_thread else None,
    )
    try:
        while True:
            try:
                done, item = await driver.next()
            except ToolError:
                raise
            except FAILURES as exc:
                raise failed(name, exc) from exc
            if done:
                yield response(item if item is not None else last, True)
                return
            last = item
            yield response(item, False)
    finally:
        await driver.aclose()


async def in_thread(
    func: Callable[..., Any],
    call_args: list[Any],
    call_kwargs: dict[str, Any],
    executor: Executor | None,
) -> Any:
    """``func(*call_args, **call_kwargs)`` on a worker thread, in a copy of this context."""
    import asyncio  # here: ``import tooling`` does not import asyncio

    if executor is None:
        # Imported here: ``import tooling`` does not start the worker pool's module.
        from .._workers.threads import default_executor

        executor = default_executor()
    return await asyncio.get_running_loop().run_in_executor(
        executor,
        contextvars.copy_context().run,
        call_in_thread,
        func,
        call_args,
        call_kwargs,
    )


def call_in_thread(func: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> Any:
    """Call ``func`` on a worker thread; a ``StopIteration`` cannot cross into an asyncio
    future (the awaiting side would never wake), so it is renamed."""
    try:
        return func(*args, **kwargs)
    except StopIteration as exc:
        raise RuntimeError("the tool raised StopIteration") from exc


def failed(tool_name: str, exc: BaseException) -> ToolError:
    """The ``tool.failed`` error standing for ``exc``; logged with its traceback."""
    log_failure(tool_name, exc)
    return failure(tool_name, exc)


@asynccontextmanager
async def closing(
    updates: AsyncGenerator[ToolResponse, None],
) -> AsyncIterator[AsyncIterator[ToolResponse]]:
    """``updates`` as an async context manager that closes them on leaving."""
    try:
        yield updates
    finally:
        await updates.aclose()
