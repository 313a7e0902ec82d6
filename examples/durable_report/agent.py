"""A report written by a durable job: the agent answers at once, a worker finishes it.

``write_report`` is ``@tool(durable=True)``: the call answers ``{"status": "pending",
"job_id": ...}`` at once and the job is kept in the session database. The process that
served the chat may exit; a worker process running the same folder picks the job up,
runs it (its progress readable from any process) and delivers the report to the
session, where the model answers it the next time:

    agent-core run examples/durable_report --session-db reports.db --session s1
    agent-core worker examples/durable_report --session-db reports.db
    agent-core jobs --job-db reports.db list

Asking for the same report again while it is being written joins the running job
instead of starting a second one.

Try it with:

- "Write me the quarterly report for EMEA.";
- "And the same again?" (joins the job already running).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

from agent_core import Agent
from tooling import ToolContext, tool

#: Seconds each section takes to write (0 under the offline replay and the tests).
SECTION_S = float(os.environ.get("DURABLE_REPORT_SECTION_S", "2"))
SECTIONS = ("revenue", "costs", "headcount", "outlook")


@tool(durable=True)
def write_report(region: str, quarter: str, tool_context: ToolContext) -> Iterator[Any]:
    """Write the quarterly report of a region (takes a while: it runs as a job).

    Args:
        region: The region, such as "EMEA" or "APAC".
        quarter: The quarter, such as "2026-Q3".
    """
    written = []
    for section in SECTIONS:
        time.sleep(SECTION_S)
        written.append(section)
        yield {"written": list(written), "of": len(SECTIONS)}
    job = tool_context.job
    return {
        "title": f"{region} report, {quarter}",
        "sections": written,
        "job": job.job_id if job else None,
    }


root_agent = Agent(
    name="durable_report",
    model="gemini-2.5-flash",
    description="Writes quarterly reports as durable jobs.",
    instruction=(
        "You write quarterly reports with write_report. It runs as a job: when it answers "
        "'pending', tell the user the report is being written and that it will arrive in "
        "this conversation. When the report arrives, summarize its title and sections."
    ),
    tools=[write_report],
)
