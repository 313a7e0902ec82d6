"""Two plain Python functions as an agent's tools.

``generate_random_number`` and ``is_even`` are ordinary functions with type hints and
docstrings; passing them in ``tools=[...]`` is all it takes: each becomes a
``FunctionTool`` whose schema and description come from the signature and docstring.

Try it with:

- "a random number" (one call);
- "a random number and check even" (two calls, the second using the first's result);
- "random number and is 5 even" (two independent calls in one model turn).

Deterministic numbers: with ``FUNCTION_TOOLS_COUNTER=1`` in the environment (and under
pytest, when ``PYTEST_CURRENT_TEST`` is set) ``generate_random_number`` returns 1, 2,
3... instead of random values, so replays and event snapshots are exact. The offline
replay (``python -m examples.function_tools``) turns it on through ``REPLAY_ENV``.
"""

from __future__ import annotations

import itertools
import os
import random

from agent_core import Agent

_counter = itertools.count(1)

#: Set while the offline replay runs (see examples/_replay.py).
REPLAY_ENV = {"FUNCTION_TOOLS_COUNTER": "1"}


def _counting() -> bool:
    return os.environ.get("FUNCTION_TOOLS_COUNTER") == "1" or "PYTEST_CURRENT_TEST" in os.environ


def generate_random_number(max_value: int = 100) -> int:
    """Pick a random whole number from 0 to max_value, both included.

    Args:
        max_value: The largest number that may come out.

    Returns:
        The number picked.
    """
    if _counting():
        return next(_counter)
    return random.randint(0, max_value)


def is_even(number: int) -> bool:
    """Tell whether a whole number is even.

    Args:
        number: The number to check.

    Returns:
        True when the number is even, False when it is odd.
    """
    return number % 2 == 0


root_agent = Agent(
    name="function_tools",
    model="gemini-2.5-flash",
    description="Picks random numbers and checks whether numbers are even.",
    instruction=(
        "You help with numbers. Use generate_random_number when the user wants a random "
        "number and is_even to check whether a number is even; never guess either. When "
        "the user asks for both, call the tools and report each result."
    ),
    tools=[generate_random_number, is_even],
)
