"""``BaseTool`` (what the scheduler and agent loop accept) and ``BaseToolset``."""

from __future__ import annotations

import copy
import re
import warnings
from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Self, TypeVar

from ._errors import ToolError
from ._types import Diagnostic, ToolResponse

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from google.genai import types as genai_types

    from ._context import ReadonlyContext, ToolContext
    from ._jobs import JobOptions
    from ._policy import Availability, Guardrail, OutputGuardrail, Policies
    from ._workers.processes import ProcessPool
    from .auth._credentials import AuthConfig

__all__ = [
    "BaseTool",
    "BaseToolset",
    "CheckedArguments",
    "ToolRuntime",
]

TOOL_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")

_T = TypeVar("_T")

ConfirmationPredicate = Callable[[dict[str, Any]], "bool | Awaitable[bool]"]
ConflictKeyRule = str | Callable[[dict[str, Any]], "str | None"]
Isolation = Literal["thread", "process"]
Responses = AbstractAsyncContextManager[AsyncIterator[ToolResponse]]


class CheckedArguments:
    """A call's arguments, checked once and carried to every step that needs them.

    ``values`` are the arguments as the tool sees them, as JSON values (defaults filled
    in): what confirmation predicates, fingerprints, conflict keys and tool callbacks
    read. ``native`` is what the tool itself runs with (for a ``FunctionTool``, the
    validated pydantic model); ``values`` is computed from it on first use.
    """

    __slots__ = ("_dump", "_values", "native")

    def __init__(
        self,
        values: dict[str, Any] | None = None,
        *,
        native: Any = None,
        dump: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self._values = values
        self._dump = dump
        self.native: Any = native if native is not None else values

    @property
    def values(self) -> dict[str, Any]:
        """The arguments as JSON values, by parameter name."""
        if self._values is None:
            assert self._dump is not None
            self._values = self._dump()
        return self._values


@dataclass(frozen=True, slots=True)
class ToolRuntime:
    """What a scheduler lends a call: the threads and processes it may run on.

    ``None`` means the process-wide defaults.
    """

    executor: Executor | None = None
    processes: ProcessPool | None = None


_DEFAULT_RUNTIME = ToolRuntime()


def parse_arguments(tool_name: str, args: Mapping[str, Any] | str | bytes) -> dict[str, Any]:
    """A call's arguments as a dict: JSON text parsed (within the size and depth bounds), a
    mapping copied; anything else, or JSON that is not an object, is
    ``ToolError("tool.invalid_arguments")``."""
    if isinstance(args, str | bytes):
        from ._bounds import check_text_bounds

        check_text_bounds(args)
        import json

        try:
            parsed = json.loads(args)
        except ValueError as exc:
            raise ToolError(
                f"arguments for tool {tool_name!r} are not valid JSON: {exc}",
                code="tool.invalid_arguments",
                details=[{"loc": [], "msg": str(exc), "type": "json_invalid"}],
            ) from None
    else:
        parsed = args
    if not isinstance(parsed, Mapping):
        raise ToolError(
            f"arguments for tool {tool_name!r} must be a JSON object",
            code="tool.invalid_arguments",
            details=[{"loc": [], "msg": "Input should be an object", "type": "model_type"}],
        )
    return dict(parsed)


def validate_tool_name(name: str, *, where: str = "tool", wide: bool = False) -> str:
    """Return ``name`` if it is a valid tool name, else raise ``ValueError`` saying why.

    ``wide=True`` takes MCP's names too (letters, digits, ``_``, ``-``, ``.``, ``/``, up
    to 128 characters): a remote tool's, or one a toolset's prefix made longer. Every
    exporter maps such a name to one its provider accepts.
    """
    if wide:
        from ._export.names import WIDE_NAME_PATTERN

        if isinstance(name, str) and WIDE_NAME_PATTERN.fullmatch(name):
            return name
        raise ValueError(
            f"{where} name {name!r} is not valid: a tool name is letters, digits, '_', '-', "
            "'.' or '/', at most 128 characters"
        )
    if not isinstance(name, str) or not TOOL_NAME_PATTERN.fullmatch(name):
        raise ValueError(
            f"{where} name {name!r} is not valid: a tool name starts with a letter or '_', "
            "then letters, digits, '_' or '-', at most 64 characters"
        )
    return name


class BaseTool(ABC):
    """A tool the scheduler can run and every exporter can describe.

    A hand-written tool sets ``name``, ``description`` and ``parameters_json_schema``
    (class attributes or properties), optionally ``response_json_schema`` and the flags
    below, and implements :meth:`run`. Exports are computed from these, once, and cached:
    treat what they return as read-only.
    """

    name: str
    description: str = ""
    parameters_json_schema: dict[str, Any] = {"type": "object", "properties": {}}  # noqa: RUF012
    response_json_schema: dict[str, Any] | None = None

    read_only: bool = False
    concurrency_safe: bool = False
    long_running: bool = False
    idempotent: bool = False
    destructive: bool | None = None
    require_confirmation: bool | ConfirmationPredicate = False
    timeout: float | None = None
    scopes: tuple[str, ...] = ()
    #: What a call changes, for the AUTO strategy: a parameter name, or a function of the
    #: validated arguments giving a key (None: no key). Calls with different keys overlap.
    conflict_key: ConflictKeyRule | None = None
    #: Where the call runs: ``"process"`` tools run in a worker process a scheduler owns.
    isolation: Isolation = "thread"
    #: Set for a durable tool: its calls run as jobs that outlive the process.
    durable: JobOptions | None = None
    #: The credential the scheduler gets before each call (``tool_context.credential``).
    auth: AuthConfig | None = None

    # Policies (see ``_policy.py``), all off by default.
    #: Retries of a transient failure (an exception of a ``retry_on`` type, a timeout),
    #: made only for an ``idempotent`` tool; and how often ``ToolError(retry=True)`` may
    #: ask the model to try again.
    retries: int = 0
    retry_on: tuple[type[BaseException], ...] = ()
    #: How many calls of this tool one run allows (past it: ``tool.budget_exhausted``).
    max_calls_per_run: int | None = None
    #: A result over this many tokens (estimated at 4 bytes each) is cut to its head and
    #: tail for the model; the whole value is kept as ``full_response`` and ``artifact``.
    max_result_tokens: int | None = None
    #: ``available(readonly_context) -> bool``, asked once per model turn.
    available: Availability | None = None
    #: Checks before the run (``guardrail(args, ctx)``) and after it (``guardrail(args,
    #: ctx, response)``): None allows, ``Reject(message)`` refuses, raising fails the call.
    guardrails: tuple[Guardrail, ...] = ()
    output_guardrails: tuple[OutputGuardrail, ...] = ()

    def set_policies(self, policies: Policies) -> None:
        """Set the policy attributes from a checked record (``@tool``'s options)."""
        self.retries = policies.retries
        self.retry_on = policies.retry_on
        self.max_calls_per_run = policies.max_calls_per_run
        self.max_result_tokens = policies.max_result_tokens
        self.available = policies.available
        self.guardrails = policies.guardrails
        self.output_guardrails = policies.output_guardrails

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        flag = cls.__dict__.get("is_long_running")
        if isinstance(flag, bool):  # google-adk's spelling, set as a class attribute
            delattr(cls, "is_long_running")
            cls.long_running = flag

    @property
    def is_long_running(self) -> bool:
        """google-adk's name of ``long_running`` (also settable, on a class or a tool)."""
        return bool(self.long_running)

    @is_long_running.setter
    def is_long_running(self, value: bool) -> None:
        self.long_running = value

    async def run_async(
        self, *, args: Mapping[str, Any], tool_context: ToolContext | None = None
    ) -> dict[str, Any]:
        """google-adk's way to call a tool: :meth:`run` with keyword arguments.

        It returns what :meth:`run` returns, the response dict the model sees (a plain
        result as ``{"result": ...}``), and raises what :meth:`run` raises.
        """
        return await self.run(args, tool_context)

    @property
    def is_destructive(self) -> bool:
        """``destructive`` with its default applied: ``not read_only`` when unset."""
        return (not self.read_only) if self.destructive is None else self.destructive

    @property
    def diagnostics(self) -> list[Diagnostic]:
        """What was noticed about this tool: at spec build and by exports so far."""
        return list(self.__dict__.get("_export_diagnostics", ()))

    @abstractmethod
    async def run(
        self, args: Mapping[str, Any] | str, ctx: ToolContext | None = None
    ) -> dict[str, Any]:
        """Validate ``args``, run the tool, and return the response dict for the model."""

    @asynccontextmanager
    async def stream(
        self, args: Mapping[str, Any] | str, ctx: ToolContext | None = None
    ) -> AsyncIterator[AsyncIterator[ToolResponse]]:
        """Responses as they happen; a tool that does not stream gives one final response."""

        async def one() -> AsyncGenerator[ToolResponse, None]:
            response = await self.run(args, ctx)
            call_id = getattr(ctx, "function_call_id", "") if ctx is not None else ""
            yield ToolResponse(id=call_id, name=self.name, response=response)

        updates = one()
        try:
            yield updates
        finally:
            await updates.aclose()

    # -- what a scheduler uses -------------------------------------------------------------
    #
    # A scheduler checks a call's arguments once (``check_arguments``), then runs it with
    # ``respond`` (one final response) or, for a tool that ``streams``, with
    # ``stream_responses``. The defaults below make a hand-written tool that defines only
    # ``run`` (and maybe ``stream``) work; ``FunctionTool`` overrides them.

    def check_callable(self, *, where: str = "") -> None:  # noqa: B027 - optional hook
        """Raise ``TypeError`` if the tool cannot be called as it is (``where`` prefixes
        the message). The default finds nothing wrong."""

    @property
    def streams(self) -> bool:
        """True when a call gives intermediate responses before its final one."""
        return type(self).stream is not BaseTool.stream

    @property
    def runs_in_thread(self) -> bool:
        """True when a call runs on a worker thread (a scheduler checks it has one free)."""
        return False

    @property
    def takes_context(self) -> bool:
        """Whether a call needs a ``ToolContext`` (a scheduler makes one only then)."""
        return True

    def check_arguments(self, args: Mapping[str, Any] | str | bytes) -> CheckedArguments:
        """Check a call's arguments; raises ``ToolError("tool.invalid_arguments")``.

        The default parses JSON text and copies a mapping.
        """
        return CheckedArguments(parse_arguments(self.name, args))

    def validated_arguments(self, args: Mapping[str, Any] | str) -> dict[str, Any]:
        """The arguments as the tool will see them, as JSON-safe values."""
        return self.check_arguments(args).values

    async def respond(
        self,
        arguments: CheckedArguments,
        ctx: ToolContext | None = None,
        *,
        runtime: ToolRuntime = _DEFAULT_RUNTIME,
    ) -> ToolResponse:
        """Run a call whose arguments were checked; its final response.

        The default calls :meth:`run` with the checked values; ``Blob``/``FileRef``
        values in the result become response parts, and a ``ToolResult``'s artifact
        the response's ``artifact``.
        """
        from ._results import split_result, to_response

        content, artifact = split_result(await self.run(arguments.values, ctx))
        body, parts = to_response(content, self.name)
        call_id = ctx.function_call_id if ctx is not None else ""
        return ToolResponse(
            id=call_id, name=self.name, response=body, parts=parts, artifact=artifact
        )

    def stream_responses(
        self,
        arguments: CheckedArguments,
        ctx: ToolContext | None = None,
        *,
        runtime: ToolRuntime = _DEFAULT_RUNTIME,
    ) -> Responses:
        """Run a call whose arguments were checked, giving its responses as they happen.

        The default is :meth:`stream` with the checked values.
        """
        return self.stream(arguments.values, ctx)

    # -- exports -------------------------------------------------------------------------

    def _cached_export(self, key: str, build: Callable[[], tuple[_T, list[Diagnostic]]]) -> _T:
        exports: dict[str, Any] = self.__dict__.setdefault("_exports", {})
        try:
            return exports[key]  # type: ignore[no-any-return]
        except KeyError:
            pass
        value, found = build()
        if found:
            self.__dict__.setdefault("_export_diagnostics", []).extend(found)
            for diagnostic in found:
                warnings.warn(f"{self.name}: {diagnostic.message}", UserWarning, stacklevel=3)
        exports[key] = value
        return value

    def to_gemini(self, *, legacy: bool = False) -> genai_types.FunctionDeclaration:
        """A ``google.genai.types.FunctionDeclaration``.

        By default the declaration carries ``parameters_json_schema`` (and
        ``response_json_schema``); ``legacy=True`` gives the OpenAPI-subset ``parameters``
        for models that need it.
        """
        key = "gemini-legacy" if legacy else "gemini"
        exports = self.__dict__.get("_exports")
        if exports is not None and key in exports:
            return exports[key]  # type: ignore[no-any-return]
        from ._export import gemini

        return self._cached_export(key, lambda: gemini.export(self, legacy=legacy))

    def to_openai(self, *, strict: bool = False) -> dict[str, Any]:
        """The Chat Completions tool dict; ``strict=True`` obeys OpenAI's strict-mode rules."""
        key = "openai-strict" if strict else "openai"
        exports = self.__dict__.get("_exports")
        if exports is not None and key in exports:
            return exports[key]  # type: ignore[no-any-return]
        from ._export import openai

        return self._cached_export(key, lambda: openai.export(self, strict=strict))

    def to_anthropic(self) -> dict[str, Any]:
        """The Anthropic Messages API tool dict (``name``, ``description``, ``input_schema``)."""
        exports = self.__dict__.get("_exports")
        if exports is not None and "anthropic" in exports:
            return exports["anthropic"]  # type: ignore[no-any-return]
        from ._export import anthropic

        return self._cached_export("anthropic", lambda: anthropic.export(self))

    def to_mcp(self) -> dict[str, Any]:
        """The MCP ``Tool`` dict, with annotations from the tool's flags."""
        exports = self.__dict__.get("_exports")
        if exports is not None and "mcp" in exports:
            return exports["mcp"]  # type: ignore[no-any-return]
        from ._export import mcp

        return self._cached_export("mcp", lambda: mcp.export(self))

    # -- copies ----------------------------------------------------------------------------

    def renamed(self, name: str) -> Self:
        """A shallow copy under another name; the original and its caches are untouched."""
        validate_tool_name(name, wide=True)
        clone = copy.copy(self)
        clone.__dict__.pop("_exports", None)
        clone.__dict__.pop("_export_diagnostics", None)
        clone.name = name
        return clone

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {getattr(self, 'name', '?')!r}>"


ToolFilter = Sequence[str] | Callable[[BaseTool, "ReadonlyContext | None"], bool]


class BaseToolset(ABC):
    """A group of tools resolved per invocation (an MCP server, an API, a plugin).

    ``tool_filter`` keeps tools by name (a list) or by ``predicate(tool, readonly_context)``;
    ``tool_name_prefix`` renames each kept tool to ``f"{prefix}_{name}"`` on a copy.
    """

    def __init__(
        self,
        *,
        tool_filter: ToolFilter | None = None,
        tool_name_prefix: str | None = None,
    ) -> None:
        self.tool_filter = tool_filter
        self.tool_name_prefix = tool_name_prefix

    @abstractmethod
    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        """The toolset's tools for this invocation."""

    async def get_tools_with_prefix(
        self, readonly_context: ReadonlyContext | None = None
    ) -> list[BaseTool]:
        """:meth:`get_tools`, filtered, then renamed with the prefix (on copies).

        Raises ``ValueError`` if two of the resulting tools share a name or a prefixed
        name is not a valid tool name (MCP's characters, at most 128: each exporter maps a
        longer or wider name to one its provider accepts).
        """
        tools = [
            t for t in await self.get_tools(readonly_context) if self._keep(t, readonly_context)
        ]
        if self.tool_name_prefix:
            tools = [t.renamed(f"{self.tool_name_prefix}_{t.name}") for t in tools]
        seen: set[str] = set()
        for t in tools:
            if t.name in seen:
                raise ValueError(f"{type(self).__name__} returned two tools named {t.name!r}")
            seen.add(t.name)
        return tools

    def _keep(self, tool: BaseTool, readonly_context: ReadonlyContext | None) -> bool:
        if self.tool_filter is None:
            return True
        if callable(self.tool_filter):
            return bool(self.tool_filter(tool, readonly_context))
        return tool.name in self.tool_filter

    async def close(self) -> None:  # noqa: B027 - optional hook, not abstract
        """Release what the toolset holds (connections, processes). Default: nothing."""
