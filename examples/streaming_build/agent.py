"""A tool that runs a real subprocess and streams its output while it runs.

``run_build`` starts ``build_script.py`` (a stand-in build shipped with the example)
with the current Python, reads its stdout and stderr concurrently, and hands every line
to ``tool_context.emit_progress("stdout" | "stderr", line)`` as soon as it is printed.
Each line reaches whoever runs the agent at once, as a progress event, while the tool
is still running; the model does not see them. When the process exits, the tool
returns what the model needs: the exit status, the counts, and the warnings and errors.

Progress is bounded: a process that prints without end cannot flood memory (lines over
8 KiB are cut, and what does not fit is counted as dropped, never silently lost).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from agent_core import Agent
from tooling import ToolContext, tool

BUILD_SCRIPT = Path(__file__).with_name("build_script.py")


@tool(timeout=120)
async def run_build(target: str, tool_context: ToolContext) -> dict[str, Any]:
    """Build a target and report how it went; the build's output streams live meanwhile.

    Args:
        target: What to build: "app" or "docs".

    Returns:
        {"status": "succeeded" | "failed", "exit_code", "stdout_lines", "stderr_lines",
        "warnings", "errors"}: the exit code is 0 on success.
    """
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-u",
        str(BUILD_SCRIPT),
        target,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert process.stdout is not None and process.stderr is not None

    async def pump(stream: asyncio.StreamReader, name: str) -> list[str]:
        lines = []
        async for raw in stream:
            line = raw.decode("utf-8", errors="replace")
            tool_context.emit_progress(name, line)
            lines.append(line.rstrip("\n"))
        return lines

    try:
        out, err = await asyncio.gather(
            pump(process.stdout, "stdout"), pump(process.stderr, "stderr")
        )
        code = await process.wait()
    finally:
        if process.returncode is None:  # cancelled or timed out: stop the build too
            process.kill()
            await process.wait()
    return {
        "status": "succeeded" if code == 0 else "failed",
        "exit_code": code,
        "stdout_lines": len(out),
        "stderr_lines": len(err),
        "warnings": [line for line in err if line.startswith("warning:")],
        "errors": [line for line in err if line.startswith("error:")],
    }


root_agent = Agent(
    name="build_runner",
    model="gemini-2.5-flash",
    description="Runs builds and explains their results.",
    instruction=(
        "You run builds with run_build. The user sees the build's output live, so do not "
        "repeat it: report whether the build succeeded, its exit code, and each warning "
        "or error with a short suggestion for fixing it."
    ),
    tools=[run_build],
)
