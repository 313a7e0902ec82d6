"""What a run allows its tool calls: how many, how often the same one, how large a
result, and how many retries a tool may ask for.

``RunBudget`` is kept by whoever owns a run (the agent loop: one per invocation) and
lent to each dispatch of the run. A plain ``Scheduler`` without one gives each dispatch
its own, and only for tools that set a policy, so a policy-free call pays nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pydantic_core import to_json

from .._errors import ToolError

if TYPE_CHECKING:
    from .._base import BaseTool
    from .strategy import DispatchSettings

__all__: list[str] = []


@dataclass(slots=True)
class RunBudget:
    """The counts of one run, against its limits.

    ``max_tool_calls`` bounds the calls a model may ask for in the run (every call
    counts, run or refused, so a model that keeps asking cannot keep a run going);
    a tool's ``max_calls_per_run`` bounds its own calls. ``max_repeated_calls``: the
    same tool with the same validated arguments asked in that many consecutive turns is
    answered ``tool.repeated_call`` (None: never). ``max_result_tokens`` is the run's
    cut for results of tools that set none.
    """

    max_tool_calls: int | None = None
    max_repeated_calls: int | None = None
    max_result_tokens: int | None = None
    calls: int = 0
    per_tool: dict[str, int] = field(default_factory=dict)
    retry_asks: dict[str, int] = field(default_factory=dict)
    #: True once a call was answered ``tool.budget_exhausted``: the next turn is the last.
    exhausted: bool = False
    turn: int = 0
    #: (tool, arguments as JSON) -> (the last turn it was asked in, consecutive turns).
    _asked: dict[tuple[str, bytes], tuple[int, int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("max_tool_calls", "max_repeated_calls", "max_result_tokens"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise ValueError(f"{name} must be at least 1 (or None for no limit)")

    @property
    def spent(self) -> bool:
        """Whether no more calls will run: the run's limit was reached or passed."""
        return self.exhausted or (
            self.max_tool_calls is not None and self.calls >= self.max_tool_calls
        )

    def new_turn(self) -> None:
        """A new model turn's calls follow (the repeated-call rule counts turns)."""
        self.turn += 1

    def admit(self, tool: BaseTool, args: object) -> ToolError | None:
        """Count a call (``args`` as sent); the error that answers it instead of running,
        or None to run."""
        self.calls += 1
        name = tool.name
        used = self.per_tool.get(name, 0) + 1
        self.per_tool[name] = used
        limit = self.max_tool_calls
        if limit is not None and self.calls > limit:
            self.exhausted = True
            return ToolError(
                f"not run: this run's budget of {limit} tool calls is spent; answer with "
                "what you have, without calling tools",
                code="tool.budget_exhausted",
            )
        own = tool.max_calls_per_run
        if own is not None and used > own:
            self.exhausted = True
            return ToolError(
                f"not run: tool {name!r} may be called {own} times in a run and that is "
                "spent; answer with what you have",
                code="tool.budget_exhausted",
            )
        repeats = self.max_repeated_calls
        if repeats is not None:
            key = (name, _key(args))
            last, run = self._asked.get(key, (-1, 0))
            if last == self.turn:
                return None  # asked twice in one turn: not a repetition across turns
            run = run + 1 if last == self.turn - 1 else 1
            self._asked[key] = (self.turn, run)
            if run >= repeats:
                return ToolError(
                    f"not run again: tool {name!r} was asked with these same arguments in "
                    f"{run} consecutive turns and gave its answer above; use that answer, "
                    "or change the arguments",
                    code="tool.repeated_call",
                )
        return None

    def ask_retry(self, settings: DispatchSettings, name: str, error: ToolError) -> ToolError:
        """A tool asked the model to try again (``ToolError(retry=True)``): the error the
        model is told, ``tool.retries_exhausted`` once past the tool's ``retries``."""
        tool = settings.tools.get(name) or settings.tools.get(settings.aliases.get(name, ""))
        if tool is None:
            return error
        asked = self.retry_asks.get(tool.name, 0) + 1
        self.retry_asks[tool.name] = asked
        if asked <= tool.retries:
            return error
        exhausted = ToolError(
            f"tool {tool.name!r} asked for another try {asked} times; it allows "
            f"{tool.retries}. Its last words: {error.message}",
            code="tool.retries_exhausted",
        )
        exhausted.__cause__ = error
        return exhausted


def _key(args: object) -> bytes:
    """The arguments as sent, as bytes: equal arguments give equal keys (a model repeating
    itself sends the same text)."""
    if isinstance(args, bytes):
        return args
    if isinstance(args, str):
        return args.encode("utf-8", "surrogatepass")
    return to_json(args, fallback=str)


def has_policies(tool: BaseTool) -> bool:
    """Whether a tool sets a policy its calls must pass through."""
    return bool(
        tool.max_calls_per_run is not None
        or tool.retries
        or tool.max_result_tokens is not None
        or tool.guardrails
        or tool.output_guardrails
    )
