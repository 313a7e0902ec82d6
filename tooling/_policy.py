"""A tool's policies, as options: retries, budgets, result size, availability, guardrails.

Every tool has them (``BaseTool``'s class attributes, all off by default); ``@tool`` and
``FunctionTool`` take them as options, checked here. The scheduler applies them (see
``_scheduling/budget.py`` and ``_scheduling/guarding.py``), so the agent loop, the MCP
server and ``AgentTool`` apply them alike.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._context import ReadonlyContext, ToolContext

__all__ = ["Reject"]


@dataclass(frozen=True, slots=True)
class Reject:
    """A guardrail's verdict refusing a call: the model is answered ``tool.rejected``
    with ``message`` (written for the model: say what to do instead)."""

    message: str


#: ``guardrail(args, ctx)``: given the validated arguments (JSON values) and the call's
#: context before the tool runs; None allows, ``Reject(message)`` refuses.
Guardrail = Callable[
    [dict[str, Any], "ToolContext | None"], "Reject | Awaitable[Reject | None] | None"
]
#: ``guardrail(args, ctx, response)``: after the run, given the response dict too.
OutputGuardrail = Callable[
    [dict[str, Any], "ToolContext | None", dict[str, Any]],
    "Reject | Awaitable[Reject | None] | None",
]
#: ``available(readonly_context) -> bool``: whether the tool is offered this model turn.
Availability = Callable[["ReadonlyContext"], "bool | Awaitable[bool]"]


@dataclass(frozen=True, slots=True)
class Policies:
    """The policy options of ``@tool``/``FunctionTool``, checked."""

    retries: int = 0
    retry_on: tuple[type[BaseException], ...] = ()
    max_calls_per_run: int | None = None
    max_result_tokens: int | None = None
    available: Availability | None = None
    guardrails: tuple[Guardrail, ...] = ()
    output_guardrails: tuple[OutputGuardrail, ...] = ()


def checked_policies(
    where: str,
    *,
    retries: int = 0,
    retry_on: Sequence[type[BaseException]] | type[BaseException] = (),
    max_calls_per_run: int | None = None,
    max_result_tokens: int | None = None,
    available: Availability | None = None,
    guardrails: Sequence[Guardrail] = (),
    output_guardrails: Sequence[OutputGuardrail] = (),
) -> Policies:
    """The options as a ``Policies`` record; ``TypeError``/``ValueError`` naming ``where``."""
    if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
        raise ValueError(f"{where} retries must be a whole number, 0 or more")
    kinds = (retry_on,) if isinstance(retry_on, type) else tuple(retry_on)
    for kind in kinds:
        if not (isinstance(kind, type) and issubclass(kind, BaseException)):
            raise TypeError(f"{where} retry_on must be exception types, not {kind!r}")
    for label, value in (
        ("max_calls_per_run", max_calls_per_run),
        ("max_result_tokens", max_result_tokens),
    ):
        if value is not None and (not isinstance(value, int) or value < 1):
            raise ValueError(f"{where} {label} must be a whole number of at least 1, or None")
    if available is not None and not callable(available):
        raise TypeError(f"{where} available must be a function of the context")
    for label, checks in (("guardrails", guardrails), ("output_guardrails", output_guardrails)):
        if callable(checks) or not all(callable(g) for g in checks):
            raise TypeError(f"{where} {label} must be a list of functions")
    return Policies(
        retries=retries,
        retry_on=kinds,
        max_calls_per_run=max_calls_per_run,
        max_result_tokens=max_result_tokens,
        available=available,
        guardrails=tuple(guardrails),
        output_guardrails=tuple(output_guardrails),
    )
