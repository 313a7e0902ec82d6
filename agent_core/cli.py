"""The ``agent-core`` command: chat with an agent folder from the shell.

``agent-core run AGENT_DIR [--replay FILE] [--model NAME] [--session-db URL] [--session ID]
[--user U] [--json] [--scope S]``

``AGENT_DIR/agent.py`` must define ``root_agent`` (an :class:`agent_core.Agent`). It is
imported by path (under its dotted name when the folder is a package, else under a name
unique to the folder), so example folders with relative imports work.

Live or replay
    With the key of the root agent's model set (``GOOGLE_API_KEY`` or ``GEMINI_API_KEY``
    for Gemini, ``OPENAI_API_KEY`` for ``"openai:..."``, ``ANTHROPIC_API_KEY`` for
    ``"anthropic:..."``) and no ``--replay``, the agents use their own models. Otherwise
    the run replays ``--replay FILE`` or ``AGENT_DIR/replay.json`` (``{"prompts": [...],
    "turns": [...]}``, or ``"agents": {name: [turns]}`` instead of ``"turns"``): a
    ``ScriptedModel`` playing its turns becomes the model of every agent in the tree
    (agents behind an ``AgentTool`` included), and ``agent.py``'s optional ``REPLAY_ENV``
    mapping is put in the environment. One line on stderr says which it is.
    ``--model openai:MODEL`` (or ``anthropic:MODEL``, ``google:MODEL``) makes every agent
    use that model; the run is then live when that provider's key is set
    (``OPENAI_API_KEY``, ``ANTHROPIC_API_KEY``), and the SDK's ``OPENAI_BASE_URL`` /
    ``ANTHROPIC_BASE_URL`` are honoured.

What the user says
    With a live model on a terminal: an interactive chat (``you>``; ``exit`` or
    end-of-file ends it), and a confirmation request is asked at the prompt (``[y/N]``).
    A replay never asks: on a terminal it plays the recorded user turns and answers (the
    replay file's ``prompts``). Otherwise each line of
    stdin is a user turn (``y``/``n`` answer a pending confirmation; a line holding a JSON
    prompt such as ``{"confirm": true}`` or ``{"function_response": {...}}`` is read as
    one); when stdin gives nothing, the replay file's ``prompts`` are played, so
    ``agent-core run examples/function_tools < /dev/null`` runs the whole scripted
    conversation. ``agent.py``'s optional ``async def prepare(runner, session)`` is called
    once before the first turn.

Output
    ``user> ...``, ``[agent] calls tool(args)``, ``[agent] tool -> response``, progress as
    ``  [stdout] ...``, intermediate responses as ``[agent] tool ~> ...``, answers as
    ``[agent] text``, errors as ``! code: message``. ``--json`` prints every event as one
    JSON line (``Event.to_json()``) instead. Exit status 1 when an error event occurred
    (a model failure, a replay that ran out of turns), 2 for usage errors.

Sessions
    In memory by default; ``--session-db URL`` keeps them (and artifacts) in a database:
    ``sqlite:///path``, ``postgresql://...`` or ``memory://``, or a plain path for a
    SQLite file. Running again with the same ``--session ID`` (and ``--user``) continues
    the conversation, a pending confirmation included. Tools' credentials (``auth=``)
    are kept there too, or in ``--credential-db URL`` (encrypted when
    ``AGENT_CORE_CREDENTIAL_KEY`` is set): a line on stdin answers a credential request
    (the address the authorization sent the user back to, or an API key), never echoed.

``agent-core web FOLDER [--session-db URL] [--job-db URL] [--trace-db PATH] [--host H]
[--port P] [--no-browser]`` serves the inspector (see ``agent_core.web``) and prints its URL.

Errors (bad folder, no ``root_agent``, no key and no replay, an unreadable replay) are one
line on stderr and a non-zero exit status, never a traceback; ``--debug`` re-raises.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import os
import sqlite3
import sys
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

from tooling.integration import (
    EXIT_OK,
    EXIT_TOOL_ERROR,
    CliError,
    CliParser,
    Closing,
    load_agent_dir,
    run_cli,
)

from ._cli.conversation import Conversation, stdin_prompts
from ._cli.jobs import add_job_commands
from ._cli.printing import Output, describe_event
from ._cli.support import (
    agent_key_variables,
    artifact_service,
    credential_service,
    key_variables,
    read_replay,
    root_agent,
    session_service,
    use_replay,
)
from ._content import FunctionCall
from ._events import Event
from ._invocation.requests import Waiting
from ._runner import RunConfig, Runner
from .models._names import model_from_name
from .models.scripted import ReplayPrompt
from .services.memory import InMemoryMemoryService

__all__ = ["describe_event", "main", "pending_requests"]

NO_REPLAY = "no API key and no replay file: set GOOGLE_API_KEY or pass --replay FILE"


def pending_requests(events: Sequence[Event]) -> list[FunctionCall]:
    """Confirmation and credential requests that still wait for the user's answer.

    A request is open while neither it nor the call it holds has a response in a later
    event.
    """
    open_ids = {r.id for r in Waiting(events).open_requests()}
    return [call for event in events for call in event.get_function_calls() if call.id in open_ids]


# -- the command -------------------------------------------------------------------------------


def cmd_run(args: argparse.Namespace) -> int:
    folder = Path(args.agent_dir)
    if not folder.is_dir():
        raise CliError(f"not a directory: {args.agent_dir}")
    if not (folder / "agent.py").is_file():
        raise CliError(f"{args.agent_dir} has no agent.py (it must define root_agent)")
    replay = Path(args.replay) if args.replay is not None else folder / "replay.json"
    if args.replay is not None and not replay.is_file():
        raise CliError(f"replay file not found: {args.replay}")
    variables = key_variables(args.model)  # a bad --model name fails before the import
    # The folder's own problems (an import error, no root_agent, a tool that cannot be
    # built) come first: they are what needs fixing, key or no key.
    module = load_agent_dir(folder)
    root = root_agent(module, folder)
    if not args.model:
        variables = agent_key_variables(root)
    live = any(os.environ.get(v) for v in variables) and args.replay is None
    if not live and not replay.is_file():
        raise CliError(NO_REPLAY.replace("GOOGLE_API_KEY", variables[0]))
    out = Output(args.json)
    prompts: list[ReplayPrompt] = []
    if live:
        if replay.is_file():
            prompts = read_replay(replay)[1]
        if args.model:
            model = model_from_name(args.model)
            for agent in root.reachable():
                agent.model = model
            out.note(f"live run: every agent uses {args.model} ({key_variables(args.model)[0]})")
        else:
            out.note(f"live run: the agents use their own models ({'/'.join(variables)} is set)")
    else:
        prompts = use_replay(root, module, replay)
        why = "--replay given" if args.replay is not None else f"no {variables[0]}"
        out.note(
            f"replaying {replay} with a ScriptedModel ({why}): no model is called; the "
            "recorded user turns and answers are played"
        )

    # Only a live model chats: a replay plays its recorded turns, on a terminal too.
    interactive = live and sys.stdin.isatty()
    piped: list[ReplayPrompt] = [] if sys.stdin.isatty() else stdin_prompts()
    if not interactive and not piped and not prompts:
        raise CliError("nothing to say: stdin is empty and there are no replay prompts")

    service = session_service(args.session_db)
    session_id = args.session or f"cli-{uuid.uuid4().hex[:12]}"
    if args.session_db is not None and args.session is None:
        out.note(f"session {session_id} (continue it with --session {session_id})")
    config = RunConfig(granted_scopes=frozenset(args.scope or ()))
    # With a session database, artifacts are kept in the same database.
    artifacts = artifact_service(args.session_db)
    # Tools' credentials (a pending authorization too) likewise, unless told otherwise.
    credentials = credential_service(args.credential_db or args.session_db)
    runner = Runner(
        root,
        app_name=folder.resolve().name,
        session_service=service,
        artifact_service=artifacts,
        memory_service=InMemoryMemoryService(),
        credential_service=credentials,
    )
    try:
        talk = Conversation(runner, args.user, session_id, out, config, live)
        try:
            session = talk.session()
        except (sqlite3.Error, OSError) as exc:
            raise CliError(f"cannot use session database {args.session_db}: {exc}") from exc
        if args.session is not None and session.events:
            out.note(f"continuing session {session_id} ({len(session.events)} events so far)")
        prepare = getattr(module, "prepare", None)
        if callable(prepare):

            async def seed() -> None:
                result = prepare(runner, session)
                if inspect.isawaitable(result):
                    await result

            asyncio.run(seed())
        if interactive:
            talk.interactive()
        else:
            talk.scripted(piped or prompts)
    finally:
        runner.close()
        for store in (service, artifacts):
            if isinstance(store, Closing):
                store.close()
    return EXIT_TOOL_ERROR if out.errors else EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = CliParser(prog="agent-core", description="Run an agent folder from the shell.")
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks instead of one-line errors"
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=CliParser)
    run = commands.add_parser(
        "run",
        help="chat with AGENT_DIR/agent.py's root_agent (live with a key, else its replay)",
        description=(
            "Chat with AGENT_DIR/agent.py's root_agent: live with its model's API key, "
            "otherwise replaying AGENT_DIR/replay.json (or --replay FILE). Without a terminal, "
            "user turns come from stdin lines, or from the replay's prompts when stdin is empty."
        ),
    )
    run.add_argument(
        "agent_dir", metavar="AGENT_DIR", help="a folder with agent.py defining root_agent"
    )
    run.add_argument("--replay", metavar="FILE", help="replay this file (even with an API key)")
    run.add_argument(
        "--model",
        metavar="NAME",
        help="live, every agent uses this model: openai:MODEL (OPENAI_API_KEY, "
        "OPENAI_BASE_URL), anthropic:MODEL (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL), "
        "google:MODEL or gemini-...",
    )
    run.add_argument(
        "--session-db",
        metavar="URL",
        help="keep sessions here: sqlite:///path, postgresql://..., or a SQLite file path",
    )
    run.add_argument(
        "--session", metavar="ID", help="the session id (continue one with --session-db)"
    )
    run.add_argument(
        "--credential-db",
        metavar="URL",
        help="keep tools' credentials here (default: with the sessions; encrypted when "
        "AGENT_CORE_CREDENTIAL_KEY is set)",
    )
    run.add_argument("--user", default="user", metavar="USER", help="the user id (default: user)")
    run.add_argument("--json", action="store_true", help="print each event as one JSON line")
    run.add_argument(
        "--scope", action="append", metavar="SCOPE", help="grant a scope to the tools (repeatable)"
    )
    run.add_argument(
        "--trace-db",
        metavar="PATH",
        help="append the run's OpenTelemetry spans to this SQLite file (needs opentelemetry-sdk)",
    )
    run.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    run.set_defaults(handler=_cmd_run)

    web = commands.add_parser(
        "web",
        help="serve a local web page: tools, sessions and run waterfalls",
        description=(
            "Serve the inspector for FOLDER (an agent folder or a folder of them): Tools, "
            "Sessions and, with --trace-db, Runs. Prints the URL with its access token."
        ),
    )
    web.add_argument("folder", metavar="FOLDER", help="an agent folder, or a folder of them")
    web.add_argument(
        "--session-db", metavar="URL", help="sessions: a SQLite path, sqlite:///path, memory://"
    )
    web.add_argument(
        "--job-db", metavar="URL", help="durable jobs (default: the --session-db database)"
    )
    web.add_argument("--trace-db", metavar="PATH", help="spans written by run --trace-db")
    web.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    web.add_argument("--port", type=int, default=8000, help="port (default 8000; 0: any free)")
    web.add_argument("--no-browser", action="store_true", help="do not open a browser")
    web.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    web.set_defaults(handler=_cmd_web)
    add_job_commands(commands)
    return parser


def _cmd_run(args: argparse.Namespace) -> int:
    """``run``, its spans appended to ``--trace-db`` when given."""
    return _traced(args, cmd_run)


def _traced(args: argparse.Namespace, command: Callable[[argparse.Namespace], int]) -> int:
    """``command``, its spans appended to ``--trace-db`` when given (so the runs of ``web``
    chats appear on its Runs page, as those of ``run`` do)."""
    if args.trace_db is None:
        return command(args)
    from .trace_db import install

    try:
        provider = install(args.trace_db)
    except ImportError as exc:  # opentelemetry-sdk is missing
        raise CliError(
            f"--trace-db needs opentelemetry-sdk (pip install 'agent-tooling[web]'): {exc}"
        ) from exc
    except (sqlite3.Error, OSError) as exc:
        raise CliError(f"cannot open trace database {args.trace_db}: {exc}") from exc
    try:
        return command(args)
    finally:
        provider.shutdown()


def _cmd_web(args: argparse.Namespace) -> int:
    from .web._cli import cmd_web

    return _traced(args, cmd_web)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``agent-core`` command."""
    return run_cli("agent-core", build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
