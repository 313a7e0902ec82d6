"""``RunConfig``: the settings of one run, read by the runner, the loop and tool contexts."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["RunConfig"]


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Settings of one run.

    ``max_model_calls`` ends a runaway loop with an error event; ``tool_timeout``,
    ``max_concurrency``, ``expose_errors`` and ``granted_scopes`` go to the scheduler;
    ``stream=True`` yields partial text events from a streaming model (only the
    aggregated event is stored). ``session_lock_timeout`` is how long, in seconds, a run
    waits for its session's lease (another run on the session holds it) before it ends
    with a ``session.busy`` error event. ``trace_content=True`` records prompts,
    arguments and results in the run's OpenTelemetry spans (as
    ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` does for every run).

    Tool policies of the run: past ``max_tool_calls`` calls (every call the model asks
    for counts), or a tool's own ``max_calls_per_run``, a call is answered
    ``tool.budget_exhausted`` without running and the next model turn is the last (its
    calls do not run; the run ends with an ``agent.tool_budget_exhausted`` error event).
    The same tool with the same arguments asked in ``max_repeated_calls`` consecutive
    turns is answered ``tool.repeated_call`` (None: never). ``max_result_tokens`` cuts
    the results of tools that set no budget of their own (head and tail, 4 bytes a
    token).
    """

    max_model_calls: int = 25
    tool_timeout: float | None = None
    max_concurrency: int | None = None
    expose_errors: bool = False
    granted_scopes: frozenset[str] = frozenset()
    stream: bool = False
    session_lock_timeout: float = 30.0
    trace_content: bool = False
    max_tool_calls: int | None = None
    max_repeated_calls: int | None = 3
    max_result_tokens: int | None = None
