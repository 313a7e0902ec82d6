"""One ``isolation="process"`` call, from the caller's side: request, updates, outcome.

The validated arguments and (when the tool takes a context) a snapshot of the state go
to a worker as JSON; progress comes back through the context, generator items as
intermediate responses, and the result with the call's state writes and actions, which
are applied to the caller's context as if the tool had run here.
"""

from __future__ import annotations

import builtins
import time
from collections.abc import AsyncGenerator, Mapping
from typing import TYPE_CHECKING, Any

from pydantic_core import to_json

from .._errors import ToolError, failure, log_failure
from .._results import log_result_failure
from .._types import ToolResponse
from .parts_json import decode_parts
from .processes import WorkerDied, default_process_pool

if TYPE_CHECKING:
    from .._context import ToolContext
    from .._function.target import ProcessRef
    from .._function.tool import FunctionTool
    from .processes import ProcessPool

__all__: list[str] = []


class RemoteException(Exception):
    """Stands for an exception a tool raised in a worker process, when its type is not a
    built-in one (the type's name and module are kept; the worker's traceback is a note)."""


_remote_types: dict[tuple[str, str], type[RemoteException]] = {}


async def process_updates(
    tool: FunctionTool[..., Any],
    ref: ProcessRef,
    values: dict[str, Any],
    ctx: ToolContext | None,
    processes: ProcessPool | None,
) -> AsyncGenerator[ToolResponse, None]:
    """The call's responses: ``final=False`` per generator item, then the final one."""
    pool = processes if processes is not None else default_process_pool()
    request: dict[str, Any] = {
        "module": ref.module,
        "qualname": ref.qualname,
        "file": ref.file,
        "name": tool.name,
        "args": values,
        "ctx": None,
    }
    if ctx is not None:
        request["ctx"] = {
            "state": ctx.state.to_dict(),
            "function_call_id": ctx.function_call_id,
            "invocation_id": ctx.invocation_id,
            "agent_name": ctx.agent_name,
            "user_id": ctx.user_id,
            "session_id": ctx.session_id,
        }
    try:
        data = to_json(request)
    except Exception as exc:
        raise ToolError(
            f"tool {tool.name!r} was not started: the session state holds a value that "
            f"cannot be sent to a worker process as JSON ({exc})",
            code="tool.failed",
        ) from exc
    call_id = ctx.function_call_id if ctx is not None else ""
    started = time.perf_counter()
    messages = pool.messages(data, ctx.emit_progress if ctx is not None else None)
    try:
        async for message in messages:
            kind = message["t"]
            response = None
            if kind in ("yield", "result"):
                response = ToolResponse(
                    id=call_id,
                    name=tool.name,
                    response=message["body"],
                    final=kind == "result",
                    duration_s=time.perf_counter() - started,
                    parts=decode_parts(message["parts"]),
                    artifact=message.get("artifact"),
                )
            if ctx is not None and kind != "yield":
                _apply_outcome(ctx, message)
            if response is not None:
                yield response
            elif kind == "tool_error":
                error = ToolError(
                    message["message"], code=message["code"], details=message["details"]
                )
                if message.get("log"):
                    log_result_failure(tool.name, error)
                raise error
            elif kind == "exception":
                cause = _rebuild(message)
                log_failure(tool.name, cause)
                raise failure(tool.name, cause) from cause
            else:
                died = WorkerDied(
                    f"the worker process running tool {tool.name!r} ended before answering: "
                    f"{message['how']}"
                )
                log_failure(tool.name, died)
                raise ToolError(
                    f"tool {tool.name!r} failed: its worker process ended before answering "
                    f"({message['how']})",
                    code="tool.failed",
                ) from died
    finally:
        await messages.aclose()


def _apply_outcome(ctx: ToolContext, message: Mapping[str, Any]) -> None:
    delta = message.get("delta")
    if delta:
        ctx.state.update(delta)
    done = message.get("actions")
    if not done:
        return
    actions = ctx.actions
    if done["skip_summarization"]:
        actions.skip_summarization = True
    if done["transfer_to_agent"] is not None:
        actions.transfer_to_agent = done["transfer_to_agent"]
    if done["escalate"]:
        actions.escalate = True
    if done["requested_confirmation"] is not None:
        actions.requested_confirmation = done["requested_confirmation"]
    if done["requested_credential"] is not None:
        actions.requested_credential = done["requested_credential"]


def _rebuild(message: Mapping[str, Any]) -> Exception:
    """The worker's exception, as a built-in exception or a :class:`RemoteException`."""
    name, module, text = message["type"], message["module"], message["message"]
    exc: Exception | None = None
    if module == "builtins":
        kind = getattr(builtins, name, None)
        if isinstance(kind, type) and issubclass(kind, Exception):
            try:
                exc = kind(text)
            except Exception:
                exc = None
    if exc is None:
        remote = _remote_types.get((module, name))
        if remote is None:
            remote = type(name, (RemoteException,), {"__module__": module})
            _remote_types[module, name] = remote
        exc = remote(text)
    exc.add_note(f"Raised in a worker process:\n{message['traceback']}")
    return exc
