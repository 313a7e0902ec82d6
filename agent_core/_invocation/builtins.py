"""Built-in tools in a model turn: which ones the model's provider runs, and what stands in
for the others.

Before any request, each built-in (``tooling.builtin``) of the agent is checked against
the agent's model: one the provider runs is offered as it is; otherwise its ``fallback``
is offered in its place, or (``optional=True``) it is dropped with one warning, or the
run ends with a ``tool.unsupported`` error event naming the tool and the model. A model
that refuses built-ins beside function declarations in one request (Gemini before 3)
gets each built-in as a function tool of its own, ``name(request)``, which asks the same
model again with only that built-in.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tooling import BaseTool, ToolContext, ToolError

from .._content import Content, Part
from ..models.base import BaseLlm, LlmRequest

if TYPE_CHECKING:
    from tooling.builtin import BuiltinTool

    from .._agent import Agent

__all__: list[str] = []

logger = logging.getLogger("agent_core")

_warned: set[tuple[str, str]] = set()


class Unsupported(Exception):
    """A built-in the model's provider does not run, with no fallback and not optional."""


def offer_builtins(agent: Agent, tools: dict[str, BaseTool]) -> dict[str, BaseTool]:
    """``tools`` with each built-in replaced by what the agent's model can be offered.

    Raises :class:`Unsupported` (its message for the error event), or ``ValueError`` when
    a fallback's name is taken by another tool.
    """
    module = sys.modules.get("tooling.builtin")
    if module is None:  # no built-in tool exists in this process
        return tools
    builtin_type: type[BuiltinTool] = module.BuiltinTool
    if not any(isinstance(t, builtin_type) for t in tools.values()):
        return tools
    model = agent.model
    offered: dict[str, BaseTool] = {}
    kept: list[BuiltinTool] = []
    for name, tool in tools.items():
        if not isinstance(tool, builtin_type):
            offered[name] = tool
            continue
        if model.supports_builtin(tool):
            kept.append(tool)
            offered[name] = tool
        elif tool.fallback is not None:
            fallback = tool.fallback
            if fallback.name in tools and tools[fallback.name] is not fallback:
                raise ValueError(
                    f"the fallback of built-in {tool.name!r} is named {fallback.name!r}, "
                    f"which another tool of agent {agent.name} is named too"
                )
            offered[fallback.name] = fallback
        elif tool.optional:
            key = (repr(model), tool.name)
            if key not in _warned:
                _warned.add(key)
                logger.warning(
                    "built-in tool %r is left out for %r: its provider does not run it",
                    tool.name,
                    model,
                )
        else:
            raise Unsupported(
                f"built-in tool {tool.name!r} is not supported by {model!r} "
                f"(provider {model.provider or 'none'}); give it fallback= (a tool offered "
                "in its place) or optional=True"
            )
    functions = [t for t in offered.values() if not isinstance(t, builtin_type)]
    if kept and functions and not model.builtins_beside_functions:
        for tool in kept:
            offered[tool.name] = BuiltinAsFunction(tool, model)
    return offered


class BuiltinAsFunction(BaseTool):
    """A built-in offered as a function tool ``name(request)``: the request goes to the
    same model, with that built-in only, and its answer (with citations) comes back."""

    read_only = True
    concurrency_safe = True

    def __init__(self, builtin: BuiltinTool, model: BaseLlm) -> None:
        self.builtin = builtin
        self.model = model
        self.name = builtin.name
        self.description = (
            f"{builtin.description} Say in 'request' what to find out or compute; the "
            "answer comes back as text."
        )
        self.parameters_json_schema = {
            "type": "object",
            "properties": {
                "request": {"type": "string", "description": "What to ask, in plain words."}
            },
            "required": ["request"],
            "additionalProperties": False,
        }

    @property
    def takes_context(self) -> bool:
        """False: the request is all it needs."""
        return False

    async def run(
        self, args: Mapping[str, Any] | str, ctx: ToolContext | None = None
    ) -> dict[str, Any]:
        """Ask the model with only the built-in; its answer and the sources it cites."""
        request = self.check_arguments(args).values.get("request")
        if not isinstance(request, str) or not request.strip():
            raise ToolError(
                f"tool {self.name!r} takes one non-empty string argument 'request'",
                code="tool.invalid_arguments",
                details=[{"loc": ["request"], "msg": "Field required", "type": "missing"}],
            )
        llm_request = LlmRequest(
            model=self.model.model,
            contents=[Content("user", [Part(text=request)])],
            system_instruction="Answer the request with the tool you have; cite your sources.",
            tools={self.builtin.name: self.builtin},
            agent_name=f"{self.name}_builtin",
        )
        final = None
        async for response in self.model.generate_content_async(llm_request):
            if not response.partial:
                final = response
        if final is None or final.error_code is not None:
            why = final.error_message if final is not None else "no answer"
            raise ToolError(f"the {self.name} request failed: {why}")
        answer: dict[str, Any] = {"result": final.content.text if final.content else ""}
        if final.citations:
            answer["citations"] = final.citations
        return answer
