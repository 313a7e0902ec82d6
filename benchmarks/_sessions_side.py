"""One process's share of a session-store benchmark, printed as JSON.

Run by ``bench_sessions.py``, several at once::

    <python> benchmarks/_sessions_side.py --impl ours|adk --store URL --work append|run
        --count N --tag T

It builds the store, makes its own session (``T``) outside the timing, prints ``ready``,
waits for ``go`` on stdin (so that every process starts together), then does N
operations one after another and prints their latencies (ns) and the wall-clock start
and end of the whole batch:

- ``append``: ``append_event`` of an event with a small state delta
  (``{"n": i, "user:last": i}``) to the process's session;
- ``run``: one whole run on the session: the user's message, a model turn with 5 calls
  of an async tool, the 5 responses, the model's final text (a scripted model on both
  sides; ours ``agent_core.Runner``, google-adk's ``Runner``);
- ``scale``: N such runs at once (``asyncio.gather``), each on a session of its own
  (made before the timing); the model answers each request from what it holds (calls
  first, then the text), so concurrent runs do not share a script.

Ours takes the store as ``session_service_from_url`` does; google-adk's
``DatabaseSessionService`` takes an SQLAlchemy URL (``sqlite+aiosqlite:///...``,
``postgresql+psycopg://...``), or ``memory://`` for its ``InMemorySessionService``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import warnings
from collections.abc import Awaitable, Callable
from typing import Any

CALLS = 5
USER_TEXT = "Look the keys up."
FINAL_TEXT = "Done."

Op = Callable[[int], Awaitable[None]]


async def lookup(key: str) -> dict[str, str]:
    """Look a key up.

    Args:
        key: The key.
    """
    return {"key": key, "value": key.upper()}


async def ours(store: str, work: str, count: int, tag: str) -> tuple[Op, Callable[[], Any]]:
    from agent_core import Agent, Part, Runner, ScriptedModel, session_service_from_url
    from agent_core._events import Event, EventActions

    service: Any = session_service_from_url(store)
    session = await service.create_session(app_name="bench", user_id="u", session_id=tag)
    if work == "append":

        async def append(i: int) -> None:
            delta = {"n": i, "user:last": i}
            await service.append_event(
                session, Event(author="bench", actions=EventActions(state_delta=delta))
            )

        return append, service

    turns: list[Any] = []
    for _ in range(count + 1):
        turns += [
            [Part.from_function_call("lookup", {"key": f"k{i}"}) for i in range(CALLS)],
            FINAL_TEXT,
        ]
    agent = Agent("bench", ScriptedModel(turns), tools=[lookup])
    runner = Runner(agent, app_name="bench", session_service=service)

    async def run(i: int) -> None:
        async for _ in runner.run_async(user_id="u", session_id=tag, new_message=USER_TEXT):
            pass

    return run, service


async def adk(store: str, work: str, count: int, tag: str) -> tuple[Op, Callable[[], Any]]:
    from google.adk.events import Event, EventActions
    from google.adk.sessions import DatabaseSessionService, InMemorySessionService

    service: Any = (
        InMemorySessionService() if store == "memory://" else DatabaseSessionService(store)
    )
    session = await service.create_session(app_name="bench", user_id="u", session_id=tag)
    if work == "append":
        state = {"session": session}

        async def append(i: int) -> None:
            delta = {"n": i, "user:last": i}
            event = Event(author="bench", actions=EventActions(state_delta=delta))
            await service.append_event(state["session"], event)

        return append, service

    from google.adk.agents import LlmAgent
    from google.adk.models import BaseLlm, LlmResponse
    from google.adk.runners import Runner
    from google.genai import types

    usage = types.GenerateContentResponseUsageMetadata(
        prompt_token_count=10, candidates_token_count=5, total_token_count=15
    )
    call_turn = LlmResponse(
        content=types.Content(
            role="model",
            parts=[
                types.Part(function_call=types.FunctionCall(name="lookup", args={"key": f"k{i}"}))
                for i in range(CALLS)
            ],
        ),
        usage_metadata=usage,
    )
    text_turn = LlmResponse(
        content=types.Content(role="model", parts=[types.Part(text=FINAL_TEXT)]),
        usage_metadata=usage,
    )

    class ScriptedLlm(BaseLlm):
        turns: list[Any]
        position: int = 0

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            turn = self.turns[self.position].model_copy(deep=True)
            self.position += 1
            yield turn

    model = ScriptedLlm(model="scripted", turns=[call_turn, text_turn] * (count + 1))
    agent = LlmAgent(name="bench", model=model, tools=[lookup])
    runner = Runner(app_name="bench", agent=agent, session_service=service)
    message = types.Content(role="user", parts=[types.Part(text=USER_TEXT)])

    async def run(i: int) -> None:
        async for _ in runner.run_async(user_id="u", session_id=tag, new_message=message):
            pass

    return run, service


async def ours_scale(store: str, count: int, tag: str) -> tuple[Op, Any, list[str]]:
    from agent_core import (
        Agent,
        BaseLlm,
        Content,
        LlmResponse,
        Part,
        Runner,
        session_service_from_url,
    )

    class Answering(BaseLlm):
        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            last = llm_request.contents[-1] if llm_request.contents else None
            answered = last is not None and any(p.function_response for p in last.parts)
            parts = (
                [Part.from_text(FINAL_TEXT)]
                if answered
                else [Part.from_function_call("lookup", {"key": f"k{i}"}) for i in range(CALLS)]
            )
            yield LlmResponse(content=Content("model", parts))

    service: Any = session_service_from_url(store)
    ids = [f"{tag}-{i}" for i in range(count)]
    for sid in ids:
        await service.create_session(app_name="bench", user_id="u", session_id=sid)
    runner = Runner(
        Agent("bench", Answering("answering"), tools=[lookup]),
        app_name="bench",
        session_service=service,
    )

    async def run(i: int) -> None:
        sid = ids[i] if i >= 0 else ids[0]
        async for _ in runner.run_async(user_id="u", session_id=sid, new_message=USER_TEXT):
            pass

    return run, service, ids


async def adk_scale(store: str, count: int, tag: str) -> tuple[Op, Any, list[str]]:
    from google.adk.agents import LlmAgent
    from google.adk.models import BaseLlm, LlmResponse
    from google.adk.runners import Runner
    from google.adk.sessions import DatabaseSessionService
    from google.genai import types

    class Answering(BaseLlm):
        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> Any:
            last = llm_request.contents[-1] if llm_request.contents else None
            answered = last is not None and any(p.function_response for p in last.parts or ())
            parts = (
                [types.Part(text=FINAL_TEXT)]
                if answered
                else [
                    types.Part(function_call=types.FunctionCall(name="lookup", args={"key": k}))
                    for k in (f"k{i}" for i in range(CALLS))
                ]
            )
            yield LlmResponse(content=types.Content(role="model", parts=parts))

    # The same pool size as ours (SQLAlchemy's default, 5 + 10 overflow, times out at a
    # thousand runs), and no timeout for a connection: runs wait their turn.
    pool = int(os.environ.get("BENCH_POOL", "50"))
    service: Any = DatabaseSessionService(store, pool_size=pool, max_overflow=0, pool_timeout=3600)
    ids = [f"{tag}-{i}" for i in range(count)]
    for sid in ids:
        await service.create_session(app_name="bench", user_id="u", session_id=sid)
    agent = LlmAgent(name="bench", model=Answering(model="answering"), tools=[lookup])
    runner = Runner(app_name="bench", agent=agent, session_service=service)
    message = types.Content(role="user", parts=[types.Part(text=USER_TEXT)])

    async def run(i: int) -> None:
        sid = ids[i] if i >= 0 else ids[0]
        async for _ in runner.run_async(user_id="u", session_id=sid, new_message=message):
            pass

    return run, service, ids


async def scale(opts: argparse.Namespace) -> None:
    build = ours_scale if opts.impl == "ours" else adk_scale
    op, service, _ = await build(opts.store, opts.count, opts.tag)
    await op(-1)  # warm
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    latencies: list[int] = []

    async def timed(i: int) -> None:
        t0 = time.perf_counter_ns()
        await op(i)
        latencies.append(time.perf_counter_ns() - t0)

    started = time.time()
    await asyncio.gather(*(timed(i) for i in range(opts.count)))
    ended = time.time()
    close = getattr(service, "aclose", None) or getattr(service, "close", None)
    if close is not None:
        result = close()
        if asyncio.iscoroutine(result):
            await result
    print(json.dumps({"latencies": latencies, "start": started, "end": ended}), flush=True)


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--impl", choices=("ours", "adk"), required=True)
    parser.add_argument("--store", required=True)
    parser.add_argument("--work", choices=("append", "run", "scale"), required=True)
    parser.add_argument("--count", type=int, required=True)
    parser.add_argument("--tag", required=True)
    opts = parser.parse_args()
    warnings.simplefilter("ignore")
    if opts.work == "scale":
        await scale(opts)
        return
    build = ours if opts.impl == "ours" else adk
    op, service = await build(opts.store, opts.work, opts.count, opts.tag)
    await op(-1)  # warm: connections open, tables made, code paths loaded
    print("ready", flush=True)
    if sys.stdin.readline().strip() != "go":
        return
    latencies = []
    started = time.time()
    for i in range(opts.count):
        t0 = time.perf_counter_ns()
        await op(i)
        latencies.append(time.perf_counter_ns() - t0)
    ended = time.time()
    close = getattr(service, "aclose", None) or getattr(service, "close", None)
    if close is not None:
        result = close()
        if asyncio.iscoroutine(result):
            await result
    print(json.dumps({"latencies": latencies, "start": started, "end": ended}), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
