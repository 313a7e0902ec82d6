"""``Agent``: a model, an instruction, tools and sub-agents."""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from tooling import BaseTool, BaseToolset, ExecutionStrategy, FunctionTool, ToolContext
from tooling.integration import provider_aliases

from ._output import FinalResult
from ._tool_search import ToolSearch
from .models.base import BaseLlm, LlmRequest, LlmResponse

if TYPE_CHECKING:
    from ._invocation.tool_context import InvocationToolContext

__all__ = ["Agent"]

_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")

BeforeModelCallback = Callable[
    ["InvocationToolContext", LlmRequest], "LlmResponse | Awaitable[LlmResponse | None] | None"
]
AfterModelCallback = Callable[
    ["InvocationToolContext", LlmResponse], "LlmResponse | Awaitable[LlmResponse | None] | None"
]
BeforeToolCallback = Callable[
    [BaseTool, dict[str, Any], ToolContext],
    "dict[str, Any] | Awaitable[dict[str, Any] | None] | None",
]
AfterToolCallback = Callable[
    [BaseTool, dict[str, Any], ToolContext, dict[str, Any]],
    "dict[str, Any] | Awaitable[dict[str, Any] | None] | None",
]


def _transfer_to_agent(agent_name: str, tool_context: ToolContext) -> dict[str, Any]:
    """Hand the conversation to another agent: one of your sub-agents, or your parent.

    Args:
        agent_name: The name of the agent to hand over to.
    """
    tool_context.actions.transfer_to_agent = agent_name
    return {"status": "transferred", "agent": agent_name}


TRANSFER_TOOL = FunctionTool(_transfer_to_agent, name="transfer_to_agent")


class Agent:
    """A model with an instruction and tools, possibly leading sub-agents.

    ``model`` is a ``BaseLlm`` or a model name, built on first use: ``"openai:MODEL"``,
    ``"anthropic:MODEL"``, ``"google:MODEL"`` or a bare ``"gemini-..."`` name.
    ``instruction`` may use ``{state_key}`` placeholders (``{key?}`` when the key may be
    missing). ``tools`` takes plain functions, ``BaseTool``s, ``BaseToolset``s and
    ``AgentTool``s. Callbacks may be sync or async; one that returns non-None replaces
    the step it wraps.
    """

    def __init__(
        self,
        name: str,
        model: str | BaseLlm,
        *,
        instruction: str = "",
        description: str = "",
        tools: Sequence[BaseTool | BaseToolset | Callable[..., Any]] = (),
        sub_agents: Sequence[Agent] = (),
        tool_strategy: ExecutionStrategy = ExecutionStrategy.AUTO,
        input_schema: type[BaseModel] | None = None,
        output_key: str | None = None,
        generate_content_config: Any = None,
        before_tool_callback: BeforeToolCallback | None = None,
        after_tool_callback: AfterToolCallback | None = None,
        before_model_callback: BeforeModelCallback | None = None,
        after_model_callback: AfterModelCallback | None = None,
        tool_search: ToolSearch | None = None,
        output_schema: type[BaseModel] | None = None,
    ) -> None:
        if not _NAME.match(name) or name == "user":
            raise ValueError(
                f"agent name {name!r} is not valid: use letters, digits and '_' (not 'user')"
            )
        self.name = name
        self._model = model
        self.instruction = instruction
        self.description = description
        self.tool_strategy = ExecutionStrategy(tool_strategy)
        self.input_schema = input_schema
        self.output_key = output_key
        self.generate_content_config = generate_content_config
        self.before_tool_callback = before_tool_callback
        self.after_tool_callback = after_tool_callback
        self.before_model_callback = before_model_callback
        self.after_model_callback = after_model_callback
        #: Offer the tools through ``search_tools`` (a large catalog), or None: all at once.
        self.tool_search = tool_search
        #: The final answer's model: given through a ``final_result`` tool, validated.
        self.output_schema = output_schema
        self._final_result = FinalResult(output_schema, output_key) if output_schema else None
        self.parent_agent: Agent | None = None

        self.tools: list[BaseTool] = []
        self.toolsets: list[BaseToolset] = []
        for item in tools:
            if isinstance(item, BaseToolset):
                self.toolsets.append(item)
            elif isinstance(item, BaseTool):
                self.tools.append(item)
            elif callable(item):
                self.tools.append(FunctionTool(item))
            else:
                raise TypeError(f"agent {name}: {item!r} is not a tool, toolset or function")
        seen: set[str] = set()
        for t in self.tools:
            t.check_callable(where=f"agent {name}: ")
            _ = t.parameters_json_schema  # a broken function tool fails here, naming the parameter
            if t.name in seen:
                raise ValueError(f"agent {name}: two tools are named {t.name!r}")
            seen.add(t.name)
        try:
            provider_aliases(seen)
        except ValueError as exc:
            raise ValueError(f"agent {name}: {exc}") from None
        if tool_search is not None and not self.toolsets:
            tool_search.check(seen, where=f"agent {name}: ")

        self.sub_agents = list(sub_agents)
        for sub in self.sub_agents:
            if sub.parent_agent is not None:
                raise ValueError(f"agent {sub.name} already has a parent ({sub.parent_agent.name})")
            sub.parent_agent = self
        names = [a.name for a in self.walk()]
        if len(names) != len(set(names)):
            raise ValueError(f"agent names must be unique in a tree: {names}")

    @property
    def model(self) -> BaseLlm:
        """The model, built from its name on first use."""
        if isinstance(self._model, str):
            from .models._names import model_from_name

            try:
                self._model = model_from_name(self._model)
            except ValueError as exc:
                raise ValueError(f"agent {self.name}: {exc}") from None
        return self._model

    @model.setter
    def model(self, model: str | BaseLlm) -> None:
        """Give the agent another model (a name is built on first use)."""
        self._model = model

    @property
    def model_as_given(self) -> str | BaseLlm:
        """The model as given: a name not built yet, or the model (nothing is built)."""
        return self._model

    def walk(self) -> Iterator[Agent]:
        """This agent and all its descendants, depth first."""
        yield self
        for sub in self.sub_agents:
            yield from sub.walk()

    def reachable(self) -> Iterator[Agent]:
        """Every agent this one can reach, each once: sub-agents, and agents behind
        ``AgentTool``s (with their own sub-agents)."""
        seen: set[int] = set()
        pending: list[Agent] = [self]
        while pending:
            for agent in pending.pop().walk():
                if id(agent) in seen:
                    continue
                seen.add(id(agent))
                yield agent
                for t in agent.tools:
                    # An ``AgentTool`` (any tool standing for an agent) holds it as ``agent``.
                    behind = getattr(t, "agent", None)
                    if isinstance(behind, Agent):
                        pending.append(behind)

    def find_agent(self, name: str) -> Agent | None:
        """The agent called ``name`` in this tree, or None."""
        return next((a for a in self.walk() if a.name == name), None)

    def transfer_targets(self) -> list[Agent]:
        """The agents this one may hand the conversation to: its sub-agents and its parent."""
        targets = list(self.sub_agents)
        if self.parent_agent is not None:
            targets.append(self.parent_agent)
        return targets

    def builtin_tools(self) -> list[BaseTool]:
        """Tools the framework adds: ``transfer_to_agent`` when there is anyone to hand to."""
        added: list[BaseTool] = []
        if self.transfer_targets() and all(t.name != TRANSFER_TOOL.name for t in self.tools):
            added.append(TRANSFER_TOOL)
        if self._final_result is not None:
            added.append(self._final_result)
        return added

    def render_instruction(self, state: Mapping[str, Any]) -> str:
        """The instruction with ``{key}`` placeholders filled from ``state``.

        Raises ``KeyError`` naming a missing key (``{key?}`` becomes empty instead).
        """

        def fill(match: re.Match[str]) -> str:
            key = match.group(1)
            optional = key.endswith("?")
            key = key.rstrip("?")
            if key in state:
                value = state[key]
                return value if isinstance(value, str) else json.dumps(value, default=str)
            if optional:
                return ""
            raise KeyError(
                f"the instruction of agent {self.name} uses {{{key}}}, which is not in the state"
            )

        text = re.sub(r"\{([A-Za-z_][A-Za-z0-9_:.\-]*\??)\}", fill, self.instruction)
        targets = self.transfer_targets()
        if targets and self.builtin_tools():
            lines = "\n".join(f"- {a.name}: {a.description or '(no description)'}" for a in targets)
            text += (
                "\n\nYou can hand the conversation to another agent with the "
                f"transfer_to_agent tool when it is better suited:\n{lines}"
            )
        return text.strip()

    def __repr__(self) -> str:
        return f"Agent({self.name!r})"
