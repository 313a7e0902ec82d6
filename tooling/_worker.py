"""Inside a worker process: run the tool calls the parent sends over a pipe.

Every message is JSON, one per ``send_bytes``. The parent sends a request::

    {"module": ..., "qualname": ..., "name": ..., "args": {...}, "ctx": {...} | null}

and the worker answers ``{"t": "started"}`` once the tool is imported (its time limit
starts then), any number of ``{"t": "progress", "s", "c"}`` (a chunk
emitted through the context) and ``{"t": "yield", "body", "parts"}`` (a sync
generator's item), then exactly one of ``{"t": "result", "body", "parts", ...}``,
``{"t": "tool_error", "code", "message", "details", ...}`` or ``{"t": "exception",
"type", "module", "message", "traceback", ...}``; the last three carry the call's state
writes and actions (``delta``, ``actions``) when the tool took a context.

This module is imported in the worker only (and by the parent for the names of the
messages); it never imports asyncio.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.machinery
import importlib.util
import os
import signal
import sys
import threading
import traceback
from collections.abc import Mapping
from multiprocessing.connection import Connection
from typing import Any, NoReturn

from pydantic_core import from_json, to_json, to_jsonable_python

from ._context import ToolContext
from ._errors import ToolError
from ._function.tool import FunctionTool
from ._results import UnsendableResult, split_result, to_response
from ._types import Blob, MemoryHit, ToolProgress
from ._workers.parts_json import encode_parts

__all__: list[str] = []

#: Sent once the tool is imported, just before it runs.
_STARTED = b'{"t":"started"}'


def main(fd: int, host_pid: int) -> None:
    """A worker process's entry point: serve on socket ``fd`` while ``host_pid`` lives."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the host's to handle
    _die_with_parent()
    if os.getppid() != host_pid:  # the host is already gone
        return
    serve(Connection(fd))


def serve(conn: Connection) -> None:
    """The worker's loop: one request at a time until the pipe closes."""
    tools: dict[tuple[str, str], FunctionTool[..., Any]] = {}
    lock = threading.Lock()
    while True:
        try:
            data = conn.recv_bytes()
        except (EOFError, OSError):
            return
        reply = _answer(conn, lock, from_json(data), tools)
        try:
            payload = to_json(reply)
        except Exception as exc:  # a state write that is not JSON
            payload = to_json(
                {
                    "t": "tool_error",
                    "code": "tool.failed",
                    "message": f"the call's state writes cannot cross back as JSON: {exc}",
                    "details": None,
                }
            )
        with lock:
            conn.send_bytes(payload)


def _die_with_parent() -> None:
    """Ask Linux to kill this worker when its parent goes (best effort, Linux only)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _resolve(
    request: Mapping[str, Any], tools: dict[tuple[str, str], FunctionTool[..., Any]]
) -> FunctionTool[..., Any]:
    where = (request["module"], request["qualname"])
    found = tools.get(where)
    if found is not None:
        return found
    obj: Any = _import(where[0], request.get("file"))
    for part in where[1].split("."):
        obj = getattr(obj, part)
    tool = obj if isinstance(obj, FunctionTool) else FunctionTool(obj)
    tools[where] = tool
    return tool


def _import(name: str, file: str | None) -> Any:
    """Import module ``name``; one the host loaded by path is loaded from ``file``."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        missing = exc.name or ""
        if file is None or not (name == missing or name.startswith(missing + ".")):
            raise
    parent = name.rpartition(".")[0]
    if parent and parent not in sys.modules:
        # A made-up package over the file's folder, so its relative imports work.
        package_spec = importlib.machinery.ModuleSpec(parent, None, is_package=True)
        package_spec.submodule_search_locations = [os.path.dirname(file)]
        package = importlib.util.module_from_spec(package_spec)
        package.__path__ = [os.path.dirname(file)]
        sys.modules[parent] = package
    spec = importlib.util.spec_from_file_location(name, file)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"cannot load {name!r} from {file}", name=name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _answer(
    conn: Connection,
    lock: threading.Lock,
    request: Mapping[str, Any],
    tools: dict[tuple[str, str], FunctionTool[..., Any]],
) -> dict[str, Any]:
    ctx: WorkerContext | None = None
    try:
        tool = _resolve(request, tools)
        with lock:  # imported: the call's time limit starts now
            conn.send_bytes(_STARTED)
        if request.get("ctx") is not None:
            ctx = WorkerContext(conn, lock, request["ctx"])
        if ctx is not None:
            ctx.tool_name = request["name"]
        checked = tool.check_arguments(request["args"])  # the values become Python types
        call_args, call_kwargs = tool.spec.to_call_args(checked.native, ctx)
        value = tool(*call_args, **call_kwargs)
        if tool.is_generator:
            value = _drain(conn, lock, value)
        content, artifact = split_result(value)
        body, parts = to_response(content, None)
        reply: dict[str, Any] = {"t": "result", "body": body, "parts": encode_parts(parts)}
        if artifact is not None:
            reply["artifact"] = _artifact_json(artifact)
    except ToolError as error:
        reply = {
            "t": "tool_error",
            "code": error.code,
            "message": error.message,
            "details": error.details,
            # a result that cannot be sent is a failure the parent logs, as every failure
            "log": isinstance(error, UnsendableResult),
        }
    except BaseException as exc:
        reply = {
            "t": "exception",
            "type": type(exc).__name__,
            "module": type(exc).__module__,
            "message": str(exc),
            "traceback": traceback.format_exc(),
        }
    if ctx is not None:
        reply.update(ctx.outcome())
    return reply


def _artifact_json(artifact: Any) -> Any:
    """An artifact as JSON values, to cross to the parent (None when it cannot)."""
    try:
        return to_jsonable_python(artifact, bytes_mode="base64")
    except Exception:  # not JSON: the parent gets no artifact
        return None


def _drain(conn: Connection, lock: threading.Lock, generator: Any) -> Any:
    """Send each item of a sync generator; give its final value (return, else last item)."""
    last: Any = None
    while True:
        try:
            item = next(generator)
        except StopIteration as stop:
            return stop.value if stop.value is not None else last
        last = item
        body, parts = to_response(split_result(item)[0], None)
        payload = to_json({"t": "yield", "body": body, "parts": encode_parts(parts)})
        with lock:
            conn.send_bytes(payload)


class WorkerContext(ToolContext):
    """The context a tool gets in a worker process.

    ``state`` is a snapshot of the caller's state plus this call's writes (shipped back
    as its delta), ``emit_progress`` is forwarded to the caller, ``function_call_id`` and
    the invocation's ids are the caller's, and the actions (``skip_summarization``,
    ``request_confirmation`` ...) go back with the result. Artifacts, memory and
    credentials live in the caller's process: those methods raise ``RuntimeError``.
    """

    def __init__(self, conn: Connection, lock: threading.Lock, fields: Mapping[str, Any]) -> None:
        super().__init__(
            invocation_id=fields.get("invocation_id", ""),
            agent_name=fields.get("agent_name", ""),
            user_id=fields.get("user_id", ""),
            session_id=fields.get("session_id", ""),
            state=fields.get("state") or {},
            function_call_id=fields.get("function_call_id", ""),
        )
        self._conn = conn
        self._lock = lock

    def _deliver_progress(self, item: ToolProgress) -> None:
        payload = to_json({"t": "progress", "s": item.stream, "c": item.chunk})
        with self._lock:
            self._conn.send_bytes(payload)

    def outcome(self) -> dict[str, Any]:
        """The call's state writes and actions, for the caller to apply."""
        actions = self.actions
        return {
            "delta": actions.state_delta,
            "actions": {
                "skip_summarization": actions.skip_summarization,
                "transfer_to_agent": actions.transfer_to_agent,
                "escalate": actions.escalate,
                "requested_confirmation": actions.requested_confirmation,
                "requested_credential": actions.requested_credential,
            },
        }

    def _unavailable(self, what: str) -> NoReturn:
        raise RuntimeError(
            f"ToolContext.{what} is not available to a tool with isolation='process': "
            "artifacts, memory and credentials stay in the caller's process (state, "
            "emit_progress and function_call_id work)"
        )

    async def _save_artifact(self, name: str, blob: Blob) -> int:
        """Not available in a worker process: raises ``RuntimeError``."""
        self._unavailable("save_artifact")

    async def _load_artifact(self, name: str, version: int | None) -> Blob | None:
        """Not available in a worker process: raises ``RuntimeError``."""
        self._unavailable("load_artifact")

    async def list_artifacts(self) -> list[str]:
        """Not available in a worker process: raises ``RuntimeError``."""
        self._unavailable("list_artifacts")

    async def search_memory(self, query: str) -> list[MemoryHit]:
        """Not available in a worker process: raises ``RuntimeError``."""
        self._unavailable("search_memory")

    def get_auth_response(self, auth_config: Mapping[str, Any]) -> dict[str, Any] | None:
        """Not available in a worker process: raises ``RuntimeError``."""
        self._unavailable("get_auth_response")
