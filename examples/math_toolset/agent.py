"""A toolset with a name prefix, writing to session state, beside a plain greeting tool.

``MathToolset`` groups four arithmetic tools. The agent asks it for its tools at each
invocation (``get_tools``); ``tool_name_prefix="math"`` renames them on copies to
``math_add``, ``math_subtract``, ``math_multiply`` and ``math_divide``, so they cannot
clash with other tools. Each one records what it did in the session state under
``last_operation`` (``tool_context.state["last_operation"] = ...``); the write travels
in the response event's ``actions.state_delta`` and the instruction shows the value to
the model on its next turn through the ``{last_operation?}`` placeholder.

``greet_user`` is a plain function next to the toolset. Dividing by zero raises a
``ToolError`` with its own code, which the model is told as an error response.
"""

from __future__ import annotations

from typing import Any

from agent_core import Agent
from tooling import BaseTool, BaseToolset, FunctionTool, ReadonlyContext, ToolContext, ToolError


def _done(tool_context: ToolContext, expression: str, result: float) -> dict[str, Any]:
    tool_context.state["last_operation"] = f"{expression} = {result:g}"
    return {"status": "success", "result": result}


def add(a: float, b: float, tool_context: ToolContext) -> dict[str, Any]:
    """Add two numbers.

    Args:
        a: The first number.
        b: The number to add to it.
    """
    return _done(tool_context, f"{a:g} + {b:g}", a + b)


def subtract(a: float, b: float, tool_context: ToolContext) -> dict[str, Any]:
    """Subtract the second number from the first.

    Args:
        a: The number to subtract from.
        b: The number to subtract.
    """
    return _done(tool_context, f"{a:g} - {b:g}", a - b)


def multiply(a: float, b: float, tool_context: ToolContext) -> dict[str, Any]:
    """Multiply two numbers.

    Args:
        a: The first factor.
        b: The second factor.
    """
    return _done(tool_context, f"{a:g} × {b:g}", a * b)


def divide(a: float, b: float, tool_context: ToolContext) -> dict[str, Any]:
    """Divide the first number by the second.

    Args:
        a: The dividend.
        b: The divisor; must not be zero.

    Raises:
        ToolError: When the divisor is zero.
    """
    if b == 0:
        raise ToolError("Cannot divide by zero.", code="math.division_by_zero")
    return _done(tool_context, f"{a:g} ÷ {b:g}", a / b)


class MathToolset(BaseToolset):
    """Four arithmetic tools, offered under the ``math_`` prefix."""

    def __init__(self) -> None:
        super().__init__(tool_name_prefix="math")
        self._tools: list[BaseTool] = [
            FunctionTool(f, read_only=False) for f in (add, subtract, multiply, divide)
        ]

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        return list(self._tools)


def greet_user(name: str = "there") -> dict[str, str]:
    """Greet the user by name.

    Args:
        name: The user's name, if they gave it.
    """
    return {"greeting": f"Hello, {name}!"}


root_agent = Agent(
    name="calculator",
    model="gemini-2.5-flash",
    description="A friendly calculator.",
    instruction=(
        "You are a friendly calculator. Greet the user with greet_user when they say "
        "hello. For arithmetic, use math_add, math_subtract, math_multiply and "
        "math_divide, one step at a time; never compute in your head. When asked about "
        "the previous calculation, use this record of it (empty if there was none): "
        "{last_operation?}"
    ),
    tools=[greet_user, MathToolset()],
)
