"""The ``@tool`` decorator: ``FunctionTool`` with its options, bare or called."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar, overload

from .._base import ConfirmationPredicate, ConflictKeyRule
from .target import Isolation
from .tool import FunctionTool

if TYPE_CHECKING:
    from .._jobs import JobOptions
    from .._policy import Availability, Guardrail, OutputGuardrail
    from ..auth._credentials import AuthConfig

__all__ = ["tool"]

P = ParamSpec("P")
R = TypeVar("R")


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
    auth: AuthConfig | None = None,
    retries: int = 0,
    retry_on: Sequence[type[BaseException]] | type[BaseException] = (),
    max_calls_per_run: int | None = None,
    max_result_tokens: int | None = None,
    available: Availability | None = None,
    guardrails: Sequence[Guardrail] = (),
    output_guardrails: Sequence[OutputGuardrail] = (),
    durable: bool | JobOptions | None = None,
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
    really stops; the function must be importable by module and name), ``auth`` (a
    ``tooling.auth.AuthConfig``: the scheduler gets the tool a valid credential before
    each call, as ``tool_context.credential``), ``durable`` (``True`` or a
    ``JobOptions``: each call runs as a job that outlives the process, answered "pending"
    at once and finished by a job loop; implies ``long_running``).

    Policies: ``retries`` and ``retry_on`` (a failure of a ``retry_on`` type, or a
    timeout, is retried with backoff only when the tool is ``idempotent``;
    ``ToolError(retry=True)`` may ask the model to try again that many times, then the
    call is ``tool.retries_exhausted``), ``max_calls_per_run``, ``max_result_tokens`` (a
    longer result is cut to its head and tail for the model), ``available`` (a
    function of the ``ReadonlyContext``: whether the tool is offered this turn),
    ``guardrails`` and ``output_guardrails`` (checks before and after each run that may
    answer ``Reject(message)``).
    """
    if func is not None:
        return FunctionTool(func, **options)
    return lambda f: FunctionTool(f, **options)
