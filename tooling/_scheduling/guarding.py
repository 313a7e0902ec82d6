"""A call's policies around its run: guardrails before and after it, automatic retries
of an idempotent tool's transient failures, and the cut of a result over its token
budget.

Guardrails run once per call, here in the scheduler, so every way a call comes in (the
agent loop, the MCP server, an ``AgentTool``'s child run) applies them alike. A guardrail
is bounded by the call's time limit (:data:`GUARDRAIL_TIMEOUT` when it has none): one
that raises or hangs fails that call alone. Each verdict is a span event
(``tooling.guardrail``) on the call's span.
"""

from __future__ import annotations

import asyncio
import contextvars
import inspect
import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from .._errors import ToolError, log_failure
from .._policy import Reject
from .._types import ToolResponse
from .credentials import run_authorized
from .running import run_within_limit

if TYPE_CHECKING:
    from .._base import BaseTool, CheckedArguments
    from .._context import ToolContext
    from .._types import ToolCall
    from .dispatch import Dispatch

__all__: list[str] = []

#: How long a guardrail may take when the call has no time limit of its own, in seconds.
GUARDRAIL_TIMEOUT = 10.0
#: The first automatic retry waits this long, in seconds; each next one twice as long.
RETRY_BACKOFF = 0.05
RETRY_BACKOFF_MAX = 2.0
#: Tokens are estimated at this many bytes of JSON each.
BYTES_PER_TOKEN = 4


def _limit(dispatch: Dispatch, tool: BaseTool) -> float:
    limits = [x for x in (tool.timeout, dispatch.settings.timeout) if x is not None]
    return min(limits) if limits else GUARDRAIL_TIMEOUT


async def _verdict(
    dispatch: Dispatch, tool: BaseTool, check: Callable[..., Any], *args: Any
) -> Reject | None:
    """One guardrail's verdict within the time limit; ``ToolError`` if it fails or hangs."""
    limit = _limit(dispatch, tool)
    label = getattr(check, "__qualname__", None) or type(check).__name__
    try:
        if inspect.iscoroutinefunction(check):
            outcome = await asyncio.wait_for(check(*args), limit)
        else:
            # A sync check runs on a worker thread, so one that hangs cannot stall the
            # event loop: past the limit its thread is abandoned.
            loop = asyncio.get_running_loop()
            work = loop.run_in_executor(
                dispatch.settings.thread_pool(),
                contextvars.copy_context().run,
                check,
                *args,
            )
            outcome = await asyncio.wait_for(work, limit)
            if inspect.isawaitable(outcome):
                outcome = await asyncio.wait_for(_awaited(outcome), limit)
    except TimeoutError:
        raise ToolError(
            f"tool {tool.name!r} was not run: its guardrail {label} did not answer within "
            f"{limit:g} s",
            code="tool.failed",
        ) from None
    except ToolError:
        raise
    except Exception as exc:
        log_failure(tool.name, exc)
        error = ToolError(
            f"tool {tool.name!r}: its guardrail {label} failed with {type(exc).__name__}",
            code="tool.failed",
        )
        raise error from exc
    if outcome is not None and not isinstance(outcome, Reject):
        raise ToolError(
            f"tool {tool.name!r}: its guardrail {label} answered {type(outcome).__name__}; "
            "a guardrail answers None or Reject(message)",
            code="tool.failed",
        )
    return outcome


async def _awaited(value: Awaitable[Any]) -> Any:
    return await value


def _note(dispatch: Dispatch, call: ToolCall, stage: str, check: Any, verdict: str) -> None:
    if dispatch.trace is not None:
        label = getattr(check, "__qualname__", None) or type(check).__name__
        dispatch.trace.event(
            call,
            "tooling.guardrail",
            {"tooling.guardrail.name": label, "tooling.guardrail.stage": stage,
             "tooling.guardrail.verdict": verdict},
        )  # fmt: skip


async def guard_input(
    dispatch: Dispatch,
    tool: BaseTool,
    call: ToolCall,
    checked: CheckedArguments,
    ctx: ToolContext | None,
) -> None:
    """Run the tool's input guardrails; ``ToolError`` (``tool.rejected``) on a ``Reject``."""
    for check in tool.guardrails:
        try:
            verdict = await _verdict(dispatch, tool, check, checked.values, ctx)
        except ToolError:
            _note(dispatch, call, "input", check, "failed")
            raise
        _note(dispatch, call, "input", check, "allowed" if verdict is None else "rejected")
        if verdict is not None:
            raise ToolError(verdict.message, code="tool.rejected")


async def guard_output(
    dispatch: Dispatch,
    tool: BaseTool,
    call: ToolCall,
    checked: CheckedArguments,
    ctx: ToolContext | None,
    response: ToolResponse,
) -> ToolResponse:
    """Run the output guardrails on a successful response: a ``Reject`` replaces it with
    ``tool.rejected`` (the model never sees the result)."""
    if response.error is not None:
        return response
    body = response.full_response if response.full_response is not None else response.response
    for check in tool.output_guardrails:
        try:
            verdict = await _verdict(dispatch, tool, check, checked.values, ctx, body)
        except ToolError:
            _note(dispatch, call, "output", check, "failed")
            raise
        _note(dispatch, call, "output", check, "allowed" if verdict is None else "rejected")
        if verdict is not None:
            raise ToolError(verdict.message, code="tool.rejected")
    return response


def transient(tool: BaseTool, error: ToolError) -> bool:
    """Whether a failure may be retried automatically: a timeout, or an exception of a
    ``retry_on`` type (the cause of ``tool.failed``, or a ``ToolError`` itself)."""
    if error.code == "tool.timeout":
        return True
    kinds = tool.retry_on
    if not kinds:
        return False
    cause = error.__cause__
    return isinstance(error, kinds) or (cause is not None and isinstance(cause, kinds))


async def with_retries(
    dispatch: Dispatch,
    tool: BaseTool,
    call: ToolCall,
    attempt: Callable[[], Awaitable[ToolResponse]],
) -> ToolResponse:
    """``attempt()``, again on a transient failure up to ``tool.retries`` times, with
    backoff; only an ``idempotent`` tool is retried (running it twice is safe)."""
    tries = 0
    while True:
        try:
            return await attempt()
        except ToolError as error:
            if tries >= tool.retries or error.retry or not transient(tool, error):
                raise
            tries += 1
            if dispatch.trace is not None:
                dispatch.trace.event(
                    call,
                    "tooling.retry",
                    {"tooling.retry.attempt": tries, "error.type": error.code},
                )
            delay = min(RETRY_BACKOFF * 2 ** (tries - 1), RETRY_BACKOFF_MAX)
            await asyncio.sleep(delay * (0.5 + random.random() / 2))


def cut_to_tokens(response: ToolResponse, max_tokens: int) -> ToolResponse:
    """Cut a successful response over ``max_tokens`` to its head and tail for the model.

    The model gets ``{"status": "truncated", "content": head + marker + tail,
    "omitted_bytes": n}``, the marker saying how much was left out and to narrow the
    request; the whole value stays as ``full_response`` and (if the tool kept none)
    ``artifact``.
    """
    if response.error is not None:
        return response
    body = response.full_response if response.full_response is not None else response.response
    text = to_json(body, fallback=str).decode("utf-8", "replace")
    room = max_tokens * BYTES_PER_TOKEN
    if len(text.encode()) <= room:
        return response
    head_size = max(room * 2 // 3, 1)
    tail_size = max(room - head_size, 0)
    head = text.encode()[:head_size].decode("utf-8", "ignore")
    tail = text.encode()[len(text.encode()) - tail_size :].decode("utf-8", "ignore")
    omitted = len(text.encode()) - len(head.encode()) - len(tail.encode())
    marker = (
        f"\n[... {omitted} bytes (about {omitted // BYTES_PER_TOKEN} tokens) left out: the "
        f"result is over this tool's budget of {max_tokens} tokens; narrow the request "
        "(filters, a smaller page, fewer fields) to see the rest ...]\n"
    )
    response.full_response = body
    if response.artifact is None:
        response.artifact = body
    response.response = {
        "status": "truncated",
        "content": head + marker + tail,
        "omitted_bytes": omitted,
    }
    return response


async def run_policed(
    dispatch: Dispatch,
    tool: BaseTool,
    call: ToolCall,
    checked: CheckedArguments,
    ctx: ToolContext | None,
    started: float,
) -> ToolResponse:
    """The run under the tool's policies: retried when transient (idempotent tools),
    checked by the output guardrails, cut to its token budget."""

    async def attempt() -> ToolResponse:
        if tool.auth is None:
            return await run_within_limit(dispatch, tool, call, checked, ctx, started)
        assert ctx is not None
        return await run_authorized(dispatch, tool, call, checked, ctx, started)

    if tool.retries and tool.idempotent:
        response = await with_retries(dispatch, tool, call, attempt)
    else:
        response = await attempt()
    if tool.output_guardrails:
        response = await guard_output(dispatch, tool, call, checked, ctx, response)
    limit = tool.max_result_tokens
    if limit is None:
        limit = dispatch.budget.max_result_tokens
    if limit is not None:
        cut_to_tokens(response, limit)
    return response
