"""Google Search as a built-in tool: the provider searches, the answer cites its sources.

``google_search`` (``tooling.builtin.WebSearch()``) is declared once and becomes each
provider's own search tool: Gemini's ``google_search``, OpenAI's ``web_search``,
Anthropic's ``web_search_20250305``. Nothing runs here: the provider searches inside its
turn and the answer's sources arrive on ``Event.citations``.

``unit_convert`` is a plain function beside it. On Gemini before 3, which refuses
built-in tools beside functions in one request, the loop offers the search as a function
``google_search(request)`` that asks the same model with only the built-in.

Try it with:

- "How far away is the moon?";
- "And how long does its light take to reach us? In minutes."
"""

from __future__ import annotations

from typing import Literal

from agent_core import Agent
from tooling import tool
from tooling.builtin import google_search

_FACTORS = {"km": 1000.0, "mi": 1609.344, "m": 1.0}


@tool(read_only=True, concurrency_safe=True, idempotent=True)
def unit_convert(
    value: float, unit: Literal["km", "mi", "m"], to: Literal["km", "mi", "m"]
) -> float:
    """Convert a distance from one unit to another.

    Args:
        value: The distance.
        unit: Its unit.
        to: The unit wanted.
    """
    return round(value * _FACTORS[unit] / _FACTORS[to], 3)


root_agent = Agent(
    name="web_search",
    model="gemini-2.5-flash",
    description="Answers questions from a web search and says where the facts come from.",
    instruction=(
        "Answer from a web search; keep answers short and name the sources. Use "
        "unit_convert for any conversion between km, miles and metres."
    ),
    tools=[google_search, unit_convert],
)
