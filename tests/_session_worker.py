"""Runner processes for the many-process session tests.

``python tests/_session_worker.py count URL RUNS`` waits for ``go`` on stdin, then runs
an agent RUNS times on session ``shared``; each run calls ``add_one``, which reads the
session's ``counter``, waits a little (so that runs not kept apart would overlap) and
writes it back plus one. Exit status 1 if any run ended with an error event.

``python tests/_session_worker.py zygote URL`` imports everything once, then for each
``fork`` line on stdin forks a child that runs the agent on session ``shared`` over and
over, writing the id of every event the run yields to the file named on the ``fork``
line (``fork PATH``), one per line with ``call`` after the id of an event holding
function calls (yielded before it is stored, with its responses), and prints the
child's pid. The children are reaped at once (SIGCHLD ignored), so a killed one leaves no zombie.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time

from agent_core import Agent, Part, RunConfig, Runner, ScriptedModel, session_service_from_url
from tooling import ToolContext

APP = "app"
USER = "u"
SESSION = "shared"


def add_one(tool_context: ToolContext) -> int:
    """Add one to the session's counter."""
    n = int(tool_context.state.get("counter", 0)) + 1
    time.sleep(0.002)
    tool_context.state["counter"] = n
    tool_context.state[f"last_by_{os.getpid()}"] = n
    return n


def make_agent(runs: int) -> Agent:
    turns: list[object] = []
    for _ in range(runs):
        turns += [[Part.from_function_call("add_one", {})], "added"]
    return Agent("counter", ScriptedModel(turns), tools=[add_one])


def make_runner(url: str, runs: int, agent: Agent | None = None) -> Runner:
    agent = agent or make_agent(runs)
    return Runner(agent, app_name=APP, session_service=session_service_from_url(url))


async def count(url: str, runs: int) -> int:
    runner = make_runner(url, runs)
    failed = 0
    try:
        for _ in range(runs):
            async for event in runner.run_async(
                user_id=USER,
                session_id=SESSION,
                new_message="add one",
                run_config=RunConfig(session_lock_timeout=120),
            ):
                if event.error_code is not None:
                    print(event.error_code, event.error_message, file=sys.stderr)
                    failed = 1
    finally:
        await runner.aclose()
        await runner.session_service.aclose()  # type: ignore[attr-defined]
    return failed


async def forever(url: str, log_path: str, agent: Agent) -> None:
    runner = make_runner(url, 0, agent)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    while True:
        async for event in runner.run_async(
            user_id=USER, session_id=SESSION, new_message="add one"
        ):
            kind = "call" if event.get_function_calls() else "-"
            os.write(log, f"{event.id} {kind} {event.error_code or ''}\n".encode())


def zygote(url: str) -> None:
    # Everything a child needs is loaded and built here, once: a child starts at once.
    import sqlite3  # noqa: F401

    if url.startswith("postgres"):
        import psycopg  # noqa: F401
        import psycopg_pool  # noqa: F401
    agent = make_agent(1000)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)
    print("ready", flush=True)
    for line in sys.stdin:
        command, _, arg = line.strip().partition(" ")
        if command != "fork":
            break
        pid = os.fork()
        if pid == 0:
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            try:
                asyncio.run(forever(url, arg, agent))
            finally:
                os._exit(1)
        print(pid, flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "count":
        print("ready", flush=True)
        if sys.stdin.readline().strip() == "go":
            sys.exit(asyncio.run(count(sys.argv[2], int(sys.argv[3]))))
    else:
        zygote(sys.argv[2])
