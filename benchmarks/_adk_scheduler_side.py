"""One round of the scheduler comparison with google-adk, for one side, printed as JSON.

Run by ``bench_scheduler.py`` in alternating subprocesses::

    <project venv>/bin/python benchmarks/_adk_scheduler_side.py --impl ours
    <adk venv>/bin/python     benchmarks/_adk_scheduler_side.py --impl adk

Each case is one model turn of 50 calls to one tool, run to the end inside one event
loop: ``await Scheduler.dispatch(calls)`` here, ``await handle_function_calls_async(
invocation_context, function_call_event, tools_dict)`` in google-adk. The tools (the
same functions on both sides) sleep 10 ms (``asyncio.sleep`` / ``time.sleep``) or do
nothing. google-adk runs sync tools inline on the event loop unless
``RunConfig.tool_thread_pool_config`` is set, so its sync cases are measured both ways.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import warnings
from typing import Any

from _timing import Case, dist_version, loop, measure, set_clock

CALLS = 50
NAP_S = 0.01


async def nap_async(i: int) -> int:
    """Sleep 10 ms without blocking the event loop."""
    await asyncio.sleep(NAP_S)
    return i


def nap_sync(i: int) -> int:
    """Sleep 10 ms, blocking the thread."""
    time.sleep(NAP_S)
    return i


async def noop_async(i: int) -> int:
    """Return the number given."""
    return i


def noop_sync(i: int) -> int:
    """Return the number given."""
    return i


FUNCS = {f.__name__: f for f in (nap_async, nap_sync, noop_async, noop_sync)}

#: case -> (tool, wall clock?, fixed iterations per round or None to calibrate)
CASES: dict[str, tuple[str, bool, int | None]] = {
    "async_sleep": ("nap_async", True, 3),
    "sync_sleep": ("nap_sync", True, 3),
    "async_noop": ("noop_async", False, None),
    "sync_noop": ("noop_sync", True, None),
}


def _ours(rounds: int, budget_ms: float) -> dict[str, Any]:
    from tooling import Scheduler, ToolCall, tool

    # read_only + concurrency_safe: AUTO runs the 50 calls together, as google-adk does.
    scheduler = Scheduler([tool(f, read_only=True, concurrency_safe=True) for f in FUNCS.values()])
    cases: dict[str, Case] = {}
    for case, (name, wall, n) in CASES.items():
        calls = [ToolCall(id=f"call-{i}", name=name, args={"i": i}) for i in range(CALLS)]
        loop().run_until_complete(scheduler.dispatch(calls))  # warm: threads, specs
        cases[case] = Case("await s.dispatch(c)", {"s": scheduler, "c": calls}, n=n, wall=wall)
    results = measure(cases, rounds=rounds, budget_ms=budget_ms)
    scheduler.close()
    return {"results": results, "notes": [], "version": dist_version("agent-tooling")}


def _adk(rounds: int, budget_ms: float) -> dict[str, Any]:
    from google.adk.agents import LlmAgent, RunConfig
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.agents.run_config import ToolThreadPoolConfig
    from google.adk.events import Event
    from google.adk.flows.llm_flows.functions import handle_function_calls_async
    from google.adk.sessions import InMemorySessionService
    from google.adk.tools import FunctionTool
    from google.genai import types

    tools = {name: FunctionTool(f) for name, f in FUNCS.items()}
    agent = LlmAgent(name="bench_agent", model="gemini-2.0-flash", tools=list(tools.values()))

    async def contexts() -> tuple[Any, Any]:
        service = InMemorySessionService()
        session = await service.create_session(app_name="bench", user_id="bench")
        made = []
        for config in (
            RunConfig(),
            RunConfig(tool_thread_pool_config=ToolThreadPoolConfig(max_workers=64)),
        ):
            made.append(
                InvocationContext(
                    session_service=service,
                    invocation_id="bench-inv",
                    agent=agent,
                    session=session,
                    run_config=config,
                )
            )
        return made[0], made[1]

    inline, pooled = loop().run_until_complete(contexts())
    cases: dict[str, Case] = {}
    for case, (name, wall, n) in CASES.items():
        event = Event(
            author="bench_agent",
            invocation_id="bench-inv",
            content=types.Content(
                role="model",
                parts=[
                    types.Part(
                        function_call=types.FunctionCall(id=f"call-{i}", name=name, args={"i": i})
                    )
                    for i in range(CALLS)
                ],
            ),
        )
        variants = [(case, inline)]
        if name.endswith("_sync"):
            variants.append((f"{case}_pool", pooled))
        for label, ctx in variants:
            loop().run_until_complete(handle_function_calls_async(ctx, event, tools))  # warm
            stmt = "await h(ctx, ev, tools)"
            env = {"h": handle_function_calls_async, "ctx": ctx, "ev": event, "tools": tools}
            # Inline sync sleeps take 0.5 s a turn: one per round is plenty.
            count = 1 if label == "sync_sleep" else n
            cases[label] = Case(stmt, env, n=count, wall=wall)
    results = measure(cases, rounds=rounds, budget_ms=budget_ms)
    return {"results": results, "notes": [], "version": dist_version("google-adk")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=("ours", "adk"), required=True)
    parser.add_argument("--rounds", type=int, default=5, help="rounds inside this process")
    parser.add_argument("--budget-ms", type=float, default=20.0, help="time per round per case")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    opts = parser.parse_args()
    set_clock(opts.clock)
    warnings.simplefilter("ignore")
    run = _ours if opts.impl == "ours" else _adk
    json.dump(run(opts.rounds, opts.budget_ms), sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
