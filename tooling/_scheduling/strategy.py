"""How a scheduler runs one turn's calls (``ExecutionStrategy``), the hooks around each
call, and the settings a dispatch reads (``DispatchSettings``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Protocol

from .._base import BaseTool
from .._context import ToolContext
from .._types import ToolCall

if TYPE_CHECKING:
    from .._workers.processes import ProcessPool
    from .._workers.threads import WorkerPool
    from ..auth._service import CredentialService
    from .budget import RunBudget

__all__ = ["ExecutionStrategy"]


ContextFactory = Callable[[ToolCall], ToolContext]


class CallHooks(Protocol):
    """Callbacks around each call; a non-None return replaces the tool's response dict.

    ``args`` are the call's checked arguments as JSON values (defaults filled in);
    ``artifact`` what the tool kept for the application (``ToolResult``), or None.
    """

    async def before(
        self, tool: BaseTool, call: ToolCall, args: dict[str, Any], ctx: ToolContext
    ) -> dict[str, Any] | None: ...

    async def after(
        self,
        tool: BaseTool,
        call: ToolCall,
        args: dict[str, Any],
        ctx: ToolContext,
        response: dict[str, Any],
        *,
        artifact: Any = None,
    ) -> dict[str, Any] | None: ...


class ExecutionStrategy(StrEnum):
    """How the calls of one model turn are run.

    ``AUTO``: a call starts when every earlier call it conflicts with has finished. Two
    calls conflict unless both tools are ``read_only`` and ``concurrency_safe``, or both
    calls have a conflict key (``conflict_key=``) and the keys differ. So safe reads run
    together, writes to different keys overlap, writes to one key keep their order, and a
    call without a key to an unsafe tool is a barrier (it starts after every earlier call
    finished, and no later call starts before it finished). ``PARALLEL``: all at once,
    whatever the flags and keys. ``SEQUENTIAL``: one by one, in call order.
    """

    AUTO = "auto"
    PARALLEL = "parallel"
    SEQUENTIAL = "sequential"


@dataclass(frozen=True, slots=True)
class DispatchSettings:
    """What one dispatch reads of its scheduler: the tools, the settings, the pools.

    The pools are given as callables: a scheduler makes its own only when a call first
    needs one.
    """

    tools: Mapping[str, BaseTool]
    #: A provider's name for a tool it had to rename -> the tool's own name.
    aliases: Mapping[str, str]
    strategy: ExecutionStrategy
    max_concurrency: int | None
    timeout: float | None
    expose_errors: bool
    hooks: CallHooks | None
    thread_pool: Callable[[], WorkerPool]
    process_pool: Callable[[], ProcessPool]
    #: Where credentials of tools with ``auth=`` are stored (made on first use).
    credential_service: Callable[[], CredentialService]
    #: The run's counts and limits (the agent loop's), or None: each dispatch its own.
    budget: RunBudget | None = None
    #: Whether any tool sets a policy (or the budget cuts results): calls take the full way.
    policed: bool = False
