"""A tool that works with the session's artifacts and the user's memory.

``analyze_document`` loads a document saved as an artifact of the session, searches the
user's memory (what earlier conversations said) for notes on the topic, writes an
analysis, and saves it as a new version of the artifact ``analysis_<document>`` (version
0 the first time, then 1, 2...). The tool's response names the artifact and its version;
the event carrying it records the save in ``actions.artifact_delta``.

The document and the memory must exist before the first message: :func:`prepare` seeds
them. The example runner (``python -m examples.document_analysis``) calls it with the
runner and the new session, live and offline alike:

- the artifact ``quarterly_report.txt`` is the file of the same name in ``files/``;
- an earlier session of the same user, added to the memory service, holds two notes
  from a past review (how to judge revenue, when churn needs flagging).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agent_core import Agent, Content, Event, Part, Runner, Session
from tooling import Blob, ToolContext

FILES = Path(__file__).with_name("files")
DOCUMENT = "quarterly_report.txt"

_EARLIER_CONVERSATION = [
    (
        "user",
        "For the quarterly reviews: judge revenue against the same quarter last year, "
        "never against the previous quarter.",
    ),
    ("analyst", "Noted: I will compare revenue year over year."),
    (
        "user",
        "And flag customer churn above 5% to the finance team, with the plans it came from.",
    ),
    ("analyst", "Noted: churn above 5% gets flagged to finance, broken down by plan."),
]


async def analyze_document(
    document_name: str, topic: str, tool_context: ToolContext
) -> dict[str, Any]:
    """Analyze a document saved in this conversation on one topic, using what the user
    said in earlier conversations, and save the analysis as an artifact.

    Args:
        document_name: The artifact's name, such as "quarterly_report.txt".
        topic: What to look for, in a word or two, such as "revenue" or "churn".

    Returns:
        {"status": "success", "analysis_artifact", "version", "passages",
        "memory_notes"}: the passages of the document about the topic, the notes found
        in memory, and where the full analysis was saved. {"status": "error",
        "error_message", "available"} when there is no such document.
    """
    document = await tool_context.load_artifact(document_name)
    if document is None:
        return {
            "status": "error",
            "error_message": f"No document named {document_name!r} in this conversation.",
            "available": await tool_context.list_artifacts(),
        }
    text = document.data.decode("utf-8", errors="replace")
    words = {w for w in re.findall(r"\w+", topic.lower()) if len(w) > 2}
    sentences = [
        sentence
        for block in text.split("\n\n")  # the title, then paragraphs
        for sentence in re.split(r"(?<=[.!?])\s+", " ".join(block.split()))
        if sentence
    ]
    passages = [s for s in sentences if words & set(re.findall(r"\w+", s.lower()))]
    notes = [hit.text for hit in await tool_context.search_memory(topic) if hit.author == "user"]
    report = [f"Analysis of {document_name}: {topic}", "", "Passages:"]
    report += [f"- {p}" for p in passages] or ["- (none)"]
    report += ["", "Guidance from earlier conversations:"]
    report += [f"- {n}" for n in notes] or ["- (none)"]
    name = f"analysis_{document_name}"
    version = await tool_context.save_artifact(name, "\n".join(report) + "\n")
    return {
        "status": "success",
        "analysis_artifact": name,
        "version": version,
        "passages": passages,
        "memory_notes": notes,
    }


async def prepare(runner: Runner, session: Session) -> None:
    """Seed the session: save the document as an artifact and remember an earlier talk.

    Safe to call again on a session that persists (``agent-core run --session-db``):
    what is already there is kept as it is.
    """
    where: dict[str, Any] = {"app_name": session.app_name, "user_id": session.user_id}
    artifacts = runner.artifact_service
    saved = await artifacts.load_artifact(**where, session_id=session.id, filename=DOCUMENT)
    if saved is None:
        document = Blob("text/plain", (FILES / DOCUMENT).read_bytes())
        await artifacts.save_artifact(
            **where, session_id=session.id, filename=DOCUMENT, artifact=document
        )
    if runner.memory_service is None:
        return
    earlier_id = f"{session.id}-earlier"
    earlier = await runner.session_service.get_session(**where, session_id=earlier_id)
    if earlier is None:
        earlier = await runner.session_service.create_session(**where, session_id=earlier_id)
        for i, (author, text) in enumerate(_EARLIER_CONVERSATION):
            role = "user" if author == "user" else "model"
            event = Event(author=author, content=Content(role, [Part.from_text(text)]))
            event.timestamp = 1_700_000_000.0 + i  # a fixed past: memory ranks alike every run
            await runner.session_service.append_event(earlier, event)
    await runner.memory_service.add_session_to_memory(earlier)


root_agent = Agent(
    name="document_analyst",
    model="gemini-2.5-flash",
    description="Analyzes documents saved in the conversation, using past guidance.",
    instruction=(
        "You analyze documents the user has saved in this conversation. For each topic "
        "the user asks about, call analyze_document once with the document's name and "
        "the topic, then summarize the passages it found, apply the guidance from "
        "earlier conversations it returns, and say which artifact version holds the "
        "full analysis."
    ),
    tools=[analyze_document],
)
