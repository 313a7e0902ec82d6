"""An agent used as a tool: the assistant asks a summarizer agent, then answers itself.

``AgentTool(summarizer)`` turns the ``summarizer`` agent into a tool of the same name
with one string parameter, ``request``. When the assistant calls it, the summarizer
runs in a session of its own (seeded with the assistant's state) and its final text
comes back as the tool's result, ``{"result": "..."}``. The assistant stays in charge:
it presents the summary and keeps answering the user's next messages, unlike a
sub-agent, which takes the conversation over.
"""

from __future__ import annotations

from agent_core import Agent, AgentTool

summarizer = Agent(
    name="summarizer",
    model="gemini-2.5-flash",
    description="Summarizes a text it is given; say how short the summary should be.",
    instruction=(
        "You summarize texts. Read the text in the request and write a faithful, concise "
        "summary in plain prose: the main claim first, then the key supporting points. "
        "Follow any length the request asks for. Add nothing that is not in the text."
    ),
)

root_agent = Agent(
    name="assistant",
    model="gemini-2.5-flash",
    description="A helpful assistant that can summarize long texts.",
    instruction=(
        "You are a helpful assistant. When the user gives you a long text, or asks for a "
        "summary, call the summarizer tool with the text (and any length the user wants) "
        "and present what it returns, introduced in one short sentence."
    ),
    tools=[AgentTool(summarizer)],
)
