"""``RunConfig``: the settings of one run, read by the runner, the loop and tool contexts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

__all__ = ["RunConfig"]

_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class RunConfig:
    """Settings of one run.

    ``max_model_calls`` ends a runaway loop with an error event; ``tool_timeout``,
    ``max_concurrency``, ``expose_errors`` and ``granted_scopes`` go to the scheduler;
    ``stream=True`` yields partial text events from a streaming model (only the
    aggregated event is stored). ``session_lease_timeout`` is how long, in seconds, a run
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

    google-adk's names are accepted too: ``max_llm_calls`` for ``max_model_calls``, and
    ``session_lock_timeout`` (this class's earlier name) for ``session_lease_timeout``;
    both read back as properties. Giving both names of one setting is a ``TypeError``.
    """

    max_model_calls: int = 25
    tool_timeout: float | None = None
    max_concurrency: int | None = None
    expose_errors: bool = False
    granted_scopes: frozenset[str] = frozenset()
    stream: bool = False
    session_lease_timeout: float = 30.0
    trace_content: bool = False
    max_tool_calls: int | None = None
    max_repeated_calls: int | None = 3
    max_result_tokens: int | None = None

    # Written out for the two aliases: a field added above must be added here too (a
    # test checks that every field is a parameter).
    def __init__(
        self,
        max_model_calls: int | None = None,
        tool_timeout: float | None = None,
        max_concurrency: int | None = None,
        expose_errors: bool = False,
        granted_scopes: frozenset[str] = frozenset(),
        stream: bool = False,
        session_lease_timeout: float | None = None,
        trace_content: bool = False,
        max_tool_calls: int | None = None,
        max_repeated_calls: int | None = 3,
        max_result_tokens: int | None = None,
        *,
        max_llm_calls: int | None = None,
        session_lock_timeout: float | None = None,
    ) -> None:
        calls = _one_of("max_model_calls", max_model_calls, "max_llm_calls", max_llm_calls)
        lease = _one_of(
            "session_lease_timeout",
            session_lease_timeout,
            "session_lock_timeout",
            session_lock_timeout,
        )
        set_field = object.__setattr__
        set_field(self, "max_model_calls", 25 if calls is None else calls)
        set_field(self, "tool_timeout", tool_timeout)
        set_field(self, "max_concurrency", max_concurrency)
        set_field(self, "expose_errors", expose_errors)
        set_field(self, "granted_scopes", granted_scopes)
        set_field(self, "stream", stream)
        set_field(self, "session_lease_timeout", 30.0 if lease is None else lease)
        set_field(self, "trace_content", trace_content)
        set_field(self, "max_tool_calls", max_tool_calls)
        set_field(self, "max_repeated_calls", max_repeated_calls)
        set_field(self, "max_result_tokens", max_result_tokens)

    @property
    def max_llm_calls(self) -> int:
        """google-adk's name of :attr:`max_model_calls`."""
        return self.max_model_calls

    @property
    def session_lock_timeout(self) -> float:
        """The earlier name of :attr:`session_lease_timeout`."""
        return self.session_lease_timeout


def _one_of(name: str, value: _T | None, alias: str, aliased: _T | None) -> _T | None:
    if value is not None and aliased is not None:
        raise TypeError(f"RunConfig got both {name} and {alias} (one setting, two names)")
    return value if value is not None else aliased
