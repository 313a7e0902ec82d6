"""One round of the agent-loop comparison with google-adk, for one side, printed as JSON.

Run by ``bench_agent.py`` in alternating subprocesses::

    <project venv>/bin/python benchmarks/_adk_agent_side.py --impl ours
    <adk venv>/bin/python     benchmarks/_adk_agent_side.py --impl adk

A *round* is one run of the agent on a fresh in-memory session: the user's message,
a scripted model turn calling a tool (once, or 50 times in one turn), the tool calls,
one response event, and a scripted final text turn. Ours: ``agent_core.Runner`` with a
``ScriptedModel``; google-adk: its ``Runner`` with an ``InMemorySessionService`` and a
``BaseLlm`` subclass that plays the same two turns. The loop overhead of a round is
(run time - time inside the model - time inside the tool), each measured on the same
clock; sessions are made before the timing. The tool is the same async function on
both sides, marked read-only and concurrency-safe on ours so the 50 calls run together
as google-adk runs them.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

from _timing import clock, dist_version, loop, set_clock

CALLS = {"one": 1, "fifty": 50}
USER_TEXT = "Look the keys up."
FINAL_TEXT = "Done: every key was found."
INSTRUCTION = "You look keys up with the lookup tool and answer briefly."

#: Nanoseconds spent inside the model and inside the tool since the last reset.
SPENT = {"model": 0, "tool": 0}
_now: Callable[[], int] = clock()


async def lookup(key: str) -> dict:
    """Look a key up.

    Args:
        key: The key to look for.
    """
    start = _now()
    found = {"key": key, "found": True}
    SPENT["tool"] += _now() - start
    return found


Drive = Callable[[str], Awaitable[int]]  # run one round on a session id; the events seen
Sessions = Callable[[int], Awaitable[list[str]]]  # make n fresh sessions; their ids


# -- ours ---------------------------------------------------------------------------------------


def ours(turns_needed: int) -> dict[str, tuple[Drive, Sessions]]:
    """Per case, a round driver and a session maker on ``agent_core``."""
    from agent_core import Agent, FunctionCall, Part, Runner, ScriptedModel
    from tooling import tool

    class TimedScript(ScriptedModel):
        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            start = _now()
            responses = super().generate_content_async(llm_request, stream)
            first = await responses.__anext__()
            SPENT["model"] += _now() - start
            yield first
            await responses.aclose()

    safe_lookup = tool(lookup, read_only=True, concurrency_safe=True)
    made: dict[str, tuple[Drive, Sessions]] = {}
    for case, count in CALLS.items():
        call_turn = [
            Part(function_call=FunctionCall(id=None, name="lookup", args={"key": f"k{i}"}))
            for i in range(count)
        ]
        model = TimedScript([call_turn, FINAL_TEXT] * turns_needed)
        agent = Agent("bench", model, instruction=INSTRUCTION, tools=[safe_lookup])
        runner = Runner(agent, app_name="bench")

        async def drive(session_id: str, runner: Any = runner) -> int:
            seen = 0
            async for _ in runner.run_async(
                user_id="u", session_id=session_id, new_message=USER_TEXT
            ):
                seen += 1
            return seen

        async def sessions(n: int, runner: Any = runner) -> list[str]:
            service = runner.session_service
            return [
                (await service.create_session(app_name="bench", user_id="u")).id for _ in range(n)
            ]

        made[case] = (drive, sessions)
    return made


# -- google-adk ---------------------------------------------------------------------------------


def adk(turns_needed: int) -> dict[str, tuple[Drive, Sessions]]:
    """Per case, a round driver and a session maker on google-adk's Runner."""
    from google.adk.agents import LlmAgent
    from google.adk.models import BaseLlm, LlmResponse
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    # Real models report usage; without it google-adk logs a warning per model call.
    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=10, candidates_token_count=5, total_token_count=15
    )

    class ScriptedLlm(BaseLlm):
        """Plays its turns in order, a deep copy each time (as ScriptedModel does)."""

        turns: list[Any]
        position: int = 0

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            start = _now()
            turn = self.turns[self.position].model_copy(deep=True)
            self.position += 1
            SPENT["model"] += _now() - start
            yield turn

    message = types.Content(role="user", parts=[types.Part(text=USER_TEXT)])
    made: dict[str, tuple[Drive, Sessions]] = {}
    for case, count in CALLS.items():
        call_turn = LlmResponse(
            content=types.Content(
                role="model",
                parts=[
                    types.Part(
                        function_call=types.FunctionCall(name="lookup", args={"key": f"k{i}"})
                    )
                    for i in range(count)
                ],
            ),
            usage_metadata=usage,
        )
        text_turn = LlmResponse(
            content=types.Content(role="model", parts=[types.Part(text=FINAL_TEXT)]),
            usage_metadata=usage,
        )
        model = ScriptedLlm(model="scripted", turns=[call_turn, text_turn] * turns_needed)
        agent = LlmAgent(name="bench", model=model, instruction=INSTRUCTION, tools=[lookup])
        service = InMemorySessionService()
        runner = Runner(app_name="bench", agent=agent, session_service=service)

        async def drive(session_id: str, runner: Any = runner) -> int:
            seen = 0
            async for _ in runner.run_async(
                user_id="u", session_id=session_id, new_message=message
            ):
                seen += 1
            return seen

        async def sessions(n: int, service: Any = service) -> list[str]:
            return [
                (await service.create_session(app_name="bench", user_id="u")).id for _ in range(n)
            ]

        made[case] = (drive, sessions)
    return made


# -- measuring ----------------------------------------------------------------------------------


def measure_rounds(
    made: dict[str, tuple[Drive, Sessions]], runs: dict[str, int], rounds: int
) -> dict[str, dict[str, float]]:
    """Per case, medians over ``rounds`` interleaved rounds of per-run nanoseconds."""
    ev = loop()

    async def batch(drive: Drive, ids: list[str]) -> int:
        return sum([await drive(session_id) for session_id in ids])

    events: dict[str, int] = {}
    for case, (drive, sessions) in made.items():  # warm up; count the events of one run
        events[case] = ev.run_until_complete(batch(drive, ev.run_until_complete(sessions(1))))
        ev.run_until_complete(batch(drive, ev.run_until_complete(sessions(2))))
    samples: dict[str, list[tuple[float, float, float]]] = {case: [] for case in made}
    names = list(made)
    for r in range(rounds):
        for case in names[r % len(names) :] + names[: r % len(names)]:
            drive, sessions = made[case]
            n = runs[case]
            ids = ev.run_until_complete(sessions(n))
            gc.collect()
            gc.disable()  # garbage made while timing is collected after, outside the timing
            try:
                SPENT["model"] = SPENT["tool"] = 0
                start = _now()
                ev.run_until_complete(batch(drive, ids))
                total = _now() - start
            finally:
                gc.enable()
            samples[case].append((total / n, SPENT["model"] / n, SPENT["tool"] / n))
    out: dict[str, dict[str, float]] = {}
    for case, rows in samples.items():
        out[case] = {
            "total": statistics.median(t for t, _, _ in rows),
            "model": statistics.median(m for _, m, _ in rows),
            "tool": statistics.median(x for _, _, x in rows),
            "overhead": statistics.median(t - m - x for t, m, x in rows),
            "events": events[case],
        }
    return out


def main() -> None:
    global _now
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=("ours", "adk"), required=True)
    parser.add_argument("--rounds", type=int, default=5, help="rounds inside this process")
    parser.add_argument("--runs-one", type=int, default=20, help="1-call runs per round")
    parser.add_argument("--runs-fifty", type=int, default=4, help="50-call runs per round")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    opts = parser.parse_args()
    set_clock(opts.clock)
    _now = clock()
    warnings.simplefilter("ignore")
    runs = {"one": opts.runs_one, "fifty": opts.runs_fifty}
    turns_needed = 3 + opts.rounds * max(runs.values())
    made = (ours if opts.impl == "ours" else adk)(turns_needed)
    results = measure_rounds(made, runs, opts.rounds)
    dist = "agent-tooling" if opts.impl == "ours" else "google-adk"
    json.dump({"results": results, "version": dist_version(dist)}, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
