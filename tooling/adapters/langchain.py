"""LangChain tools as ours (``LangchainTool``, ``LangchainToolset``), ours as LangChain's
(``to_langchain``). ``langchain-core`` is imported when one of them is first used.

In: the schema is LangChain's ``tool_call_schema`` (injected arguments hidden); a call
goes through ``tool.ainvoke(ToolCall)`` with our call id, so LangChain's validation,
callbacks, ``handle_tool_error`` and ``response_format="content_and_artifact"`` behave
as in LangChain. A sync-only tool runs ``tool.invoke`` on a worker thread.

Out: a ``StructuredTool`` whose schema is ours and whose calls run through our
validation, context and error responses; a ``ToolError`` becomes the tool's error text
(``handle_tool_error``), a ``ToolResult`` its content and artifact.
"""

from __future__ import annotations

import asyncio
import base64
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from .._base import BaseTool, BaseToolset
from .._context import SimpleToolContext
from .._errors import ToolError
from .._types import Blob, FileRef, ToolResult
from ._base import ForeignTool, answer, as_tool, model_schema, require, response_text, tool_name

if TYPE_CHECKING:
    from .._context import ReadonlyContext, ToolContext

__all__ = ["LangchainTool", "LangchainToolset", "to_langchain"]

ToolFilter = Sequence[str] | Callable[[BaseTool, "ReadonlyContext | None"], bool]


def _tools_module() -> Any:
    return require("langchain_core.tools", "langchain", "LangchainTool")


def _injected_names(tool: Any) -> tuple[set[str], set[str]]:
    """(all injected argument names, those that take the call id)."""
    base = require("langchain_core.tools.base", "langchain", "LangchainTool")
    shown = tool.tool_call_schema
    if isinstance(shown, dict):
        return set(), set()
    full = tool.get_input_schema()
    hidden = set(full.model_fields) - set(shown.model_fields)
    hidden |= set(getattr(tool, "_injected_args_keys", ()))
    annotations = base.get_all_basemodel_annotations(full)
    call_ids = {
        name
        for name in hidden
        if name in annotations
        and base._is_injected_arg_type(annotations[name], injected_type=base.InjectedToolCallId)
    }
    return hidden, call_ids


def _is_sync_only(tool: Any) -> bool:
    tools = _tools_module()
    if isinstance(tool, tools.StructuredTool):
        return tool.coroutine is None
    return type(tool)._arun is tools.BaseTool._arun


class LangchainTool(ForeignTool):
    """A LangChain ``BaseTool`` (``@tool`` functions, ``StructuredTool``, a toolkit's tools)
    as one of ours.

    ``inject`` gives each injected argument other than an ``InjectedToolCallId`` its
    value: a constant, or ``callable(ctx)`` called with the call's ``ToolContext``. An
    injected argument with no value is an error here; a model that sends one is refused
    (``tool.invalid_arguments``). A ``ToolMessage`` with status ``"error"`` (an error
    LangChain handled) is an error response carrying its text; a
    ``content_and_artifact`` tool's artifact is the response's ``artifact``.
    """

    def __init__(
        self,
        tool: Any,
        *,
        name: str | None = None,
        description: str | None = None,
        inject: Mapping[str, Any] | None = None,
    ) -> None:
        tools = _tools_module()
        if not isinstance(tool, tools.BaseTool):
            raise TypeError(f"LangchainTool takes a LangChain BaseTool, not {type(tool).__name__}")
        self.tool = tool
        self.name = tool_name(name or tool.name)
        self.description = description if description is not None else (tool.description or "")
        shown = tool.tool_call_schema
        if isinstance(shown, dict):
            schema = {k: v for k, v in shown.items() if k not in ("title", "description")}
            schema.setdefault("type", "object")
            schema.setdefault("properties", {})
            self.parameters_json_schema = schema
            self.arguments_model = None
        else:
            self.parameters_json_schema = model_schema(shown)
            self.arguments_model = shown
        hidden, call_ids = _injected_names(tool)
        given = dict(inject or {})
        unknown = sorted(set(given) - hidden)
        if unknown:
            raise ValueError(
                f"LangchainTool {self.name!r}: inject names {', '.join(unknown)}, which the "
                "tool does not inject (its injected arguments: "
                f"{', '.join(sorted(hidden)) or 'none'})"
            )
        missing = sorted(hidden - call_ids - set(given))
        if missing:
            raise ValueError(
                f"LangchainTool {self.name!r}: the injected argument(s) {', '.join(missing)} "
                "have no value: pass inject={name: value or callable(ctx)}"
            )
        self.inject: dict[str, Any] = given
        self.sync_only = _is_sync_only(tool)
        self.skip_summarization = bool(getattr(tool, "return_direct", False))

    @property
    def takes_context(self) -> bool:
        """Whether a call needs the context: for an injected value computed from it, or
        for ``return_direct`` (which sets ``skip_summarization``)."""
        return any(callable(v) for v in self.inject.values()) or self.skip_summarization

    def _tool_call(self, args: dict[str, Any], ctx: ToolContext | None) -> dict[str, Any]:
        call_id = (ctx.function_call_id if ctx is not None else "") or "call"
        full = dict(args)
        for key, value in self.inject.items():
            full[key] = value(ctx) if callable(value) else value
        if ctx is not None and self.skip_summarization:
            ctx.actions.skip_summarization = True
        return {"name": self.tool.name, "args": full, "id": call_id, "type": "tool_call"}

    async def call_foreign(self, args: dict[str, Any], ctx: ToolContext | None) -> Any:
        """``await tool.ainvoke(ToolCall)``, the injected values added."""
        return _answer_of(self.name, await self.tool.ainvoke(self._tool_call(args, ctx)))

    def call_foreign_sync(self, args: dict[str, Any], ctx: ToolContext | None) -> Any:
        """``tool.invoke(ToolCall)`` on a worker thread, for a sync-only tool."""
        return _answer_of(self.name, self.tool.invoke(self._tool_call(args, ctx)))


def _answer_of(name: str, message: Any) -> Any:
    """A ``ToolMessage`` as a result: its content, its artifact apart; an error status
    raises the ``ToolError`` carrying its text."""
    content = getattr(message, "content", message)
    if getattr(message, "status", "success") == "error":
        text = content if isinstance(content, str) else str(content)
        raise ToolError(text or f"tool {name!r} reported an error", code="tool.failed")
    artifact = getattr(message, "artifact", None)
    return ToolResult(content, artifact=artifact) if artifact is not None else content


class LangchainToolset(BaseToolset):
    """A list of LangChain tools, or a toolkit (anything with ``get_tools()``), as a
    toolset; ``inject`` is passed to each tool that has the named injected arguments."""

    def __init__(
        self,
        tools: Iterable[Any] | Any,
        *,
        inject: Mapping[str, Any] | None = None,
        tool_filter: ToolFilter | None = None,
        tool_name_prefix: str | None = None,
    ) -> None:
        super().__init__(tool_filter=tool_filter, tool_name_prefix=tool_name_prefix)
        found = tools.get_tools() if hasattr(tools, "get_tools") else list(tools)
        given = dict(inject or {})
        self._tools: list[BaseTool] = []
        for item in found:
            hidden, _ = _injected_names(item)
            own = {k: v for k, v in given.items() if k in hidden}
            self._tools.append(LangchainTool(item, inject=own))

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        """The adapted tools."""
        return list(self._tools)


# -- out -------------------------------------------------------------------------------------

_CALL_ID = "__tooling_call_id"


def to_langchain(tool: BaseTool | Callable[..., Any], *, granted_scopes: Iterable[str] = ()) -> Any:
    """Our tool as a LangChain ``StructuredTool`` (async and sync).

    The schema is ours; a call runs our validation, context (a ``SimpleToolContext``
    whose ``function_call_id`` is the LangChain tool call's id) and time limit. A failure
    is the tool's error text (``handle_tool_error``: a ``ToolMessage`` with status
    ``"error"`` holding our error response's JSON), never an exception out of
    ``ainvoke``; a ``ToolResult`` gives LangChain's content and artifact; ``Blob`` and
    ``FileRef`` parts follow the text as LangChain's image and file content blocks. LangChain has
    no confirmation protocol, so a tool that requires confirmation is refused here.
    """
    ours = as_tool(tool)
    if ours.require_confirmation is not False:
        raise ValueError(
            f"tool {ours.name!r} requires confirmation, which a LangChain tool cannot ask "
            "for: wrap it in your own approval step, or export it to a framework that has one"
        )
    tools = _tools_module()
    scopes = frozenset(granted_scopes)

    async def call(**kwargs: Any) -> tuple[Any, Any]:
        call_id = kwargs.pop(_CALL_ID, None) or ""
        ctx = SimpleToolContext(caller="langchain", function_call_id=call_id)
        response = await answer(ours, kwargs, ctx, granted_scopes=scopes)
        if response.error is not None:
            raise tools.ToolException(response_text(response))
        text = response_text(response)
        if not response.parts:
            return text, response.artifact
        # Images and files as LangChain's standard content blocks, after the text.
        blocks = [{"type": "text", "text": text}, *map(_content_block, response.parts)]
        return blocks, response.artifact

    def call_sync(**kwargs: Any) -> tuple[Any, Any]:
        answered: tuple[Any, Any] = _run_coroutine(lambda: call(**kwargs))
        return answered

    structured_tool: Any = tools.StructuredTool

    class OurStructuredTool(structured_tool):  # type: ignore[misc]
        """A StructuredTool that hands the tool call's id to our context."""

        def _to_args_and_kwargs(self, tool_input: Any, tool_call_id: str | None) -> Any:
            args, kwargs = super()._to_args_and_kwargs(tool_input, tool_call_id)
            if isinstance(kwargs, dict):
                kwargs[_CALL_ID] = tool_call_id
            return args, kwargs

    return OurStructuredTool(
        name=ours.name,
        description=ours.description,
        args_schema=ours.parameters_json_schema,
        func=call_sync,
        coroutine=call,
        response_format="content_and_artifact",
        handle_tool_error=True,
        metadata={
            "read_only": ours.read_only,
            "concurrency_safe": ours.concurrency_safe,
            "idempotent": ours.idempotent,
            "destructive": ours.is_destructive,
            "long_running": ours.long_running,
        },
    )


def _content_block(part: Blob | FileRef) -> dict[str, Any]:
    kind = "image" if part.mime_type.startswith("image/") else "file"
    if isinstance(part, FileRef):
        return {"type": kind, "url": part.uri, "mime_type": part.mime_type}
    data = base64.b64encode(part.data).decode("ascii")
    return {"type": kind, "base64": data, "mime_type": part.mime_type}


def _run_coroutine(make: Callable[[], Any]) -> Any:
    """Run a coroutine to its end from sync code: here when no loop runs in this thread,
    else on a thread of its own (LangChain's sync ``invoke`` inside async code)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(make())
    result: list[Any] = []
    errors: list[BaseException] = []

    def target() -> None:
        try:
            result.append(asyncio.run(make()))
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=target, name="tooling-langchain-sync", daemon=True)
    thread.start()
    thread.join()
    if errors:
        raise errors[0]
    return result[0]
