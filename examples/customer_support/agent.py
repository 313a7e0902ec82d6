"""A tool that hands the conversation to another agent: urgent queries go to support.

``front_desk`` answers general questions about an analytics product. Its tool
``check_and_transfer`` looks at the user's message: when it is urgent, the tool sets
``tool_context.actions.transfer_to_agent = "support_agent"``. After the tool's response,
the loop hands the conversation to ``support_agent`` (a sub-agent of ``front_desk``),
which answers in the same invocation and keeps the conversation afterwards. A query
that is not urgent is simply noted, and ``front_desk`` answers it itself.
"""

from __future__ import annotations

from typing import Any

from agent_core import Agent
from tooling import ToolContext

URGENT_WORDS = ("urgent", "asap", "emergency", "immediately", "right now", "outage")


def check_and_transfer(query: str, tool_context: ToolContext) -> dict[str, Any]:
    """Check whether the user's query is urgent; if it is, hand it to the support team.

    Call this with the user's message whenever they sound like they need help quickly.

    Args:
        query: The user's message, word for word.

    Returns:
        {"status": "transferred", "agent": "support_agent", "reason"} for an urgent
        query (the support agent answers next), else {"status": "not_urgent",
        "message"}: answer the query yourself.
    """
    lowered = query.lower()
    matched = [word for word in URGENT_WORDS if word in lowered]
    if matched:
        tool_context.actions.transfer_to_agent = "support_agent"
        return {
            "status": "transferred",
            "agent": "support_agent",
            "reason": f"urgent query (mentions {', '.join(repr(w) for w in matched)})",
        }
    return {"status": "not_urgent", "message": "No urgency detected: answer it yourself."}


support_agent = Agent(
    name="support_agent",
    model="gemini-2.5-flash",
    description="The dedicated support handler for urgent problems (logins, outages).",
    instruction=(
        "You are the dedicated support handler of the analytics product. Say that you "
        "are the support handler, then help the user solve their urgent problem step by "
        "step, asking for details only when you need them."
    ),
)

root_agent = Agent(
    name="front_desk",
    model="gemini-2.5-flash",
    description="The first point of contact for customers of the analytics product.",
    instruction=(
        "You are the first point of contact for customer support of an analytics "
        "product. Answer general questions yourself. When the user signals urgency, call "
        "check_and_transfer with their message."
    ),
    tools=[check_and_transfer],
    sub_agents=[support_agent],
)
