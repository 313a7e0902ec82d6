"""Run an example folder: offline from its ``replay.json``, or live against Gemini.

Every example folder holds ``agent.py`` (exporting ``root_agent``) and ``replay.json``::

    {"prompts": ["what the user says", {"confirm": true}, ...],
     "turns": [<model turns in the event wire shape>, ...]}

(``"agents": {name: [turns]}`` instead of ``"turns"`` gives each agent its own script.)
``python -m examples.<name>`` calls :func:`main`: without an API key it swaps a
``ScriptedModel`` playing ``turns`` in for the model of every agent in the tree (agents
behind an ``AgentTool`` included) and sends ``prompts`` one by one; with
``GOOGLE_API_KEY`` or ``GEMINI_API_KEY`` set it sends the same prompts to Gemini
(``--offline`` forces the replay). The conversation is printed as it happens.

A prompt is a text, ``{"confirm": true|false}`` (the answer to the pending confirmation
request) or ``{"function_response": {"name": ..., "response": {...}}}`` (the result of a
pending long-running call). Two optional hooks in ``agent.py``:

- ``async def prepare(runner, session)``: called once before the first prompt, live and
  offline, to seed the session (artifacts, memory, state).
- ``REPLAY_ENV: dict[str, str]``: environment variables set while the replay runs
  offline, so that tools with random results give the values the script expects.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib.util
import inspect
import json
import os
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

from agent_core import (
    Agent,
    Content,
    Event,
    InMemoryMemoryService,
    Runner,
    ScriptedModel,
)
from agent_core.models.scripted import ReplayPrompt, load_replay, replay_message
from agent_core.services.base import BaseArtifactService, BaseMemoryService
from agent_core.sessions.base import BaseSessionService, Session

__all__ = [
    "Exchange",
    "Replay",
    "describe_event",
    "describe_prompt",
    "has_api_key",
    "load_agent_module",
    "main",
    "play",
    "run_example",
    "use_model",
]

USER_ID = "user"
SESSION_ID = "replay"


@dataclass
class Exchange:
    """One prompt and the events the agents produced for it."""

    prompt: ReplayPrompt
    events: list[Event] = field(default_factory=list)
    skipped: str | None = None  # why a prompt was not sent (live runs only)


@dataclass
class Replay:
    """What :func:`play` did: the ``agent.py`` module it ran, each prompt with its
    events, and the session as it was at the end."""

    module: ModuleType
    exchanges: list[Exchange]
    session: Session


def load_agent_module(agent_dir: str | os.PathLike[str]) -> ModuleType:
    """Execute ``agent_dir/agent.py`` afresh, under a module name unique to the folder.

    Loading by path keeps example folders from colliding with each other (every one has
    an ``agent.py``); executing afresh gives each run new module state (counters, stores).
    """
    folder = Path(agent_dir).resolve()
    path = folder / "agent.py"
    if not path.is_file():
        raise FileNotFoundError(f"{folder} has no agent.py")
    name = f"_example_{folder.name}_agent"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pydantic and dataclasses look their module up here
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    if not isinstance(getattr(module, "root_agent", None), Agent):
        raise ValueError(f"{path} must define root_agent, an agent_core.Agent")
    return module


def use_model(root: Agent, model: ScriptedModel) -> None:
    """Make ``model`` the model of every agent in ``root``'s tree."""
    for agent in root.reachable():
        agent.model = model


def has_api_key() -> bool:
    """Whether a Gemini key is in the environment."""
    return bool(os.environ.get("GOOGLE_API_KEY") or os.environ.get("GEMINI_API_KEY"))


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


async def play(
    agent_dir: str | os.PathLike[str],
    *,
    live: bool = False,
    on_prompt: Callable[[Exchange], None] | None = None,
    on_event: Callable[[Event], None] | None = None,
    session_service: BaseSessionService | None = None,
    artifact_service: BaseArtifactService | None = None,
    memory_service: BaseMemoryService | None = None,
) -> Replay:
    """Run the example's prompts through a ``Runner``; return what each one produced.

    The runner uses the services given (in memory by default; a memory service is
    always there, for examples that search memory); pass your own to inspect them after.

    Offline (``live=False``) the agents play ``replay.json``'s turns and a prompt that
    has nothing to answer is an error (the replay is broken); live, the agents ask
    Gemini and such a prompt is skipped, since a real model may not have asked, and the
    run stops at the first model error (later prompts build on earlier answers).
    ``on_prompt`` is called with each exchange before its prompt is sent (``skipped``
    already set), ``on_event`` with each event as it comes.
    """
    folder = Path(agent_dir)
    module = load_agent_module(folder)
    root: Agent = module.root_agent
    scripted, prompts = load_replay(folder / "replay.json")
    if not live:
        use_model(root, scripted)
    env = {} if live else dict(getattr(module, "REPLAY_ENV", {}))
    exchanges: list[Exchange] = []
    with _environment(env):
        async with Runner(
            root,
            app_name=folder.name,
            session_service=session_service,
            artifact_service=artifact_service,
            memory_service=memory_service or InMemoryMemoryService(),
            run_jobs=False,  # durable jobs are left to a worker (examples/durable_report)
        ) as runner:
            session = await runner.session_service.create_session(
                app_name=runner.app_name, user_id=USER_ID, session_id=SESSION_ID
            )
            prepare = getattr(module, "prepare", None)
            if prepare is not None:
                result = prepare(runner, session)
                if inspect.isawaitable(result):
                    await result
            for prompt in prompts:
                exchange = Exchange(prompt)
                exchanges.append(exchange)
                current = await runner.session_service.get_session(
                    app_name=runner.app_name, user_id=USER_ID, session_id=SESSION_ID
                )
                assert current is not None
                try:
                    message: str | Content = replay_message(prompt, current.events)
                except ValueError as exc:
                    if not live:
                        raise ValueError(f"{folder / 'replay.json'}: {exc}") from None
                    exchange.skipped = str(exc)
                if on_prompt is not None:
                    on_prompt(exchange)
                if exchange.skipped is not None:
                    continue
                async for event in runner.run_async(
                    user_id=USER_ID, session_id=SESSION_ID, new_message=message
                ):
                    exchange.events.append(event)
                    if on_event is not None:
                        on_event(event)
                if live and any((e.error_code or "").startswith("model.") for e in exchange.events):
                    break
            final = await runner.session_service.get_session(
                app_name=runner.app_name, user_id=USER_ID, session_id=SESSION_ID
            )
    assert final is not None
    return Replay(module, exchanges, final)


# -- printing ------------------------------------------------------------------------------


def _short(value: Any, limit: int = 240) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def describe_prompt(prompt: ReplayPrompt) -> str:
    """The user's turn, as one line."""
    if isinstance(prompt, str):
        return f"user> {prompt}"
    if "confirm" in prompt:
        return "user> [" + ("confirms" if prompt["confirm"] else "refuses") + "]"
    body = prompt["function_response"]
    return f"user> [result of {body['name']}: {_short(body['response'])}]"


def describe_event(event: Event) -> list[str]:
    """An event as readable lines: text, calls (->), responses (<-), progress, actions."""
    lines: list[str] = []
    if event.progress is not None:
        chunk = event.progress.chunk.rstrip("\n")
        lines.append(f"    [{event.progress.name} {event.progress.stream}] {chunk}")
        return lines
    if event.error_code is not None:
        lines.append(f"  !! {event.error_code}: {event.error_message}")
    content = event.content
    for part in content.parts if content is not None else []:
        call, response = part.function_call, part.function_response
        if part.provider_part is not None:
            kept = part.provider_part
            summary = f": {_short(kept.summary)}" if kept.summary else ""
            lines.append(f"  ** {kept.kind} (run by {kept.provider}){summary}")
        elif part.text and not part.thought:
            lines.append(f"{event.author}> {part.text.rstrip()}")
        elif call is not None and call.name == "request_confirmation":
            held = call.args.get("originalFunctionCall", {})
            hint = call.args.get("toolConfirmation", {}).get("hint", "")
            lines.append(
                f"  ?? {held.get('name')}({_short(held.get('args', {}))}) waits for your "
                f"confirmation: {hint}"
            )
        elif call is not None:
            lines.append(f"  -> {call.name}({_short(call.args)})")
        elif response is not None:
            arrow = "  .." if response.will_continue else "  <-"
            extra = "".join(
                f" [+ {p.inline_data.mime_type}, {len(p.inline_data.data)} bytes]"
                for p in response.parts or []
                if p.inline_data is not None
            )
            lines.append(f"{arrow} {response.name}: {_short(response.response)}{extra}")
    for number, source in enumerate(event.citations or (), start=1):
        title = source.get("title") or source.get("uri", "")
        lines.append(f"     [{number}] {title} <{source.get('uri', '')}>")
    actions = event.actions
    if actions.state_delta:
        lines.append(f"     state: {_short(actions.state_delta)}")
    if actions.artifact_delta:
        lines.append(f"     artifacts saved: {_short(actions.artifact_delta)}")
    if actions.transfer_to_agent:
        lines.append(f"  => handed over to {actions.transfer_to_agent}")
    if event.long_running_tool_ids and content is not None:
        waiting = [
            c.name
            for c in event.get_function_calls()
            if c.id in event.long_running_tool_ids and c.name != "request_confirmation"
        ]
        if waiting and not event.partial:
            lines.append(f"     (long-running: {', '.join(waiting)})")
    return lines


def run_example(
    agent_dir: str | os.PathLike[str], *, live: bool | None = None, out: TextIO | None = None
) -> int:
    """Play the example in ``agent_dir`` and print the conversation; return an exit code.

    ``live=None`` means live when a Gemini key is set, offline otherwise.
    """
    stream = out if out is not None else sys.stdout
    folder = Path(agent_dir)
    use_live = has_api_key() if live is None else live

    def emit(line: str) -> None:
        print(line, file=stream, flush=True)

    mode = "live, with Gemini" if use_live else "offline, replaying replay.json"
    emit(f"== {folder.name} ({mode}) ==")

    def on_prompt(exchange: Exchange) -> None:
        emit("")
        emit(describe_prompt(exchange.prompt))
        if exchange.skipped:
            emit(f"  (not sent: {exchange.skipped})")

    def on_event(event: Event) -> None:
        for line in describe_event(event):
            emit(line)

    try:
        replay = asyncio.run(play(folder, live=use_live, on_prompt=on_prompt, on_event=on_event))
    except (ValueError, FileNotFoundError) as exc:
        emit(f"error: {exc}")
        return 1
    events = [e for x in replay.exchanges for e in x.events]
    if use_live and any((e.error_code or "").startswith("model.") for e in events):
        emit("")
        emit("stopped: the model call failed (check the API key and the network).")
        return 1
    return 0


def main(agent_dir: str | os.PathLike[str], argv: list[str] | None = None) -> int:
    """The ``python -m examples.<name>`` entry point."""
    folder = Path(agent_dir)
    parser = argparse.ArgumentParser(
        prog=f"python -m examples.{folder.name}",
        description="Run the example: live with GOOGLE_API_KEY/GEMINI_API_KEY, else offline.",
    )
    parser.add_argument(
        "--offline", action="store_true", help="replay replay.json even when a key is set"
    )
    args = parser.parse_args(argv)
    return run_example(folder, live=False if args.offline else None)
