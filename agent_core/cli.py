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

``agent-core web FOLDER [--session-db URL] [--trace-db PATH] [--host H] [--port P]
[--no-browser]`` serves the inspector (see ``agent_core.web``) and prints its URL.

Errors (bad folder, no ``root_agent``, no key and no replay, an unreadable replay) are one
line on stderr and a non-zero exit status, never a traceback; ``--debug`` re-raises.
"""

from __future__ import annotations

import argparse
import asyncio
import inspect
import json
import os
import sqlite3
import sys
import uuid
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from tooling.integration import (
    EXIT_OK,
    EXIT_TOOL_ERROR,
    CliError,
    CliParser,
    Closing,
    load_agent_dir,
    one_line,
    run_cli,
)

from ._cli_jobs import add_job_commands
from ._cli_support import (
    agent_key_variables,
    artifact_service,
    credential_service,
    key_variables,
    read_replay,
    root_agent,
    session_service,
    use_replay,
)
from ._content import Content, FunctionCall, Part
from ._events import Event
from ._invocation.requests import REQUEST_CONFIRMATION, REQUEST_CREDENTIAL, UserRequest, Waiting
from ._runner import RunConfig, Runner
from .models._names import model_from_name
from .models.scripted import ReplayPrompt, replay_message
from .services.memory import InMemoryMemoryService
from .sessions.base import Session

__all__ = ["describe_event", "main", "pending_requests"]

NO_REPLAY = "no API key and no replay file: set GOOGLE_API_KEY or pass --replay FILE"
_YES = ("y", "yes")
_NO = ("n", "no")
_RESPONSE_LIMIT = 2000


def pending_requests(events: Sequence[Event]) -> list[FunctionCall]:
    """Confirmation and credential requests that still wait for the user's answer.

    A request is open while neither it nor the call it holds has a response in a later
    event.
    """
    open_ids = {r.id for r in Waiting(events).open_requests()}
    return [call for event in events for call in event.get_function_calls() if call.id in open_ids]


# -- printing --------------------------------------------------------------------------------


def _json(value: Any, limit: int = _RESPONSE_LIMIT) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call_text(name: str, args: Any) -> str:
    if isinstance(args, dict):
        inner = ", ".join(f"{key}={_json(value, 300)}" for key, value in args.items())
        return f"{name}({inner})"
    return f"{name}({_json(args, 300)})"


def _response_text(response: dict[str, Any]) -> str:
    error = response.get("error")
    if response.get("status") == "error" and isinstance(error, dict):
        return f"! {error.get('code', 'error')}: {error.get('message', '')}"
    return _json(response)


def describe_event(event: Event) -> list[str]:
    """An event as readable lines (empty for streamed text pieces)."""
    who = f"[{event.author}]"
    lines: list[str] = []
    if event.progress is not None:
        item = event.progress
        if item.dropped:
            return [f"  [{item.stream}] {item.chunk} ({item.dropped} chunks dropped)"]
        return [f"  [{item.stream}] {line}" for line in item.chunk.rstrip("\n").split("\n")]
    content = event.content
    for part in content.parts if content is not None else []:
        call, response = part.function_call, part.function_response
        request = UserRequest.read(call) if call is not None else None
        if request is not None:
            held = _call_text(request.tool_name, request.call.args if request.call else {})
            if request.kind == "confirmation":
                lines.append(f"{who} asks to confirm {held}: {request.hint}".rstrip(": "))
            else:
                lines.append(f"{who} needs a credential for {held}")
        elif call is not None:
            lines.append(f"{who} calls {_call_text(call.name, call.args)}")
        elif response is not None:
            arrow = "~>" if event.partial or response.will_continue else "->"
            extra = ""
            for piece in response.parts or []:
                if piece.inline_data is not None:
                    extra += (
                        f" (+ {piece.inline_data.mime_type}, {len(piece.inline_data.data)} bytes)"
                    )
                elif piece.file_data is not None:
                    extra += f" (+ {piece.file_data.mime_type} {piece.file_data.uri})"
            lines.append(
                f"{who} {response.name} {arrow} {_response_text(response.response)}{extra}"
            )
        elif part.text and not part.thought and not event.partial:
            lines.append(f"{who} {part.text.strip()}")
    if event.actions.transfer_to_agent:
        lines.append(f"{who} hands the conversation to {event.actions.transfer_to_agent}")
    if event.error_code is not None:
        lines.append(f"! {event.error_code}: {event.error_message or ''}".rstrip())
    return lines


def _describe_prompt(prompt: ReplayPrompt) -> str:
    if isinstance(prompt, str):
        return f"user> {prompt}"
    if "confirm" in prompt:
        return "user> [" + ("confirms" if prompt["confirm"] else "declines") + "]"
    body = prompt.get("function_response") or {}
    return f"user> [result of {body.get('name')}: {_json(body.get('response'), 300)}]"


class _Output:
    """Where the conversation goes: readable lines, or one JSON line per event."""

    def __init__(self, as_json: bool) -> None:
        self.as_json = as_json
        self.errors = 0

    def event(self, event: Event) -> None:
        if event.error_code is not None:
            self.errors += 1
        if self.as_json:
            sys.stdout.write(event.to_json() + "\n")
        else:
            for line in describe_event(event):
                sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def user(self, prompt: ReplayPrompt) -> None:
        if not self.as_json:
            sys.stdout.write(_describe_prompt(prompt) + "\n")
            sys.stdout.flush()

    def line(self, text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def note(self, text: str) -> None:
        sys.stderr.write(f"agent-core: {text}\n")
        sys.stderr.flush()

    def problem(self, code: str, text: str) -> None:
        """An error of the command itself (not an event): counted like an error event."""
        self.errors += 1
        if self.as_json:
            self.note(f"{code}: {text}")
        else:
            sys.stdout.write(f"! {code}: {text}\n")
            sys.stdout.flush()


# -- reading the user ------------------------------------------------------------------------


def _read_line(prompt: str, as_json: bool) -> str | None:
    """One line from the terminal, or None at end of input."""
    if as_json:  # stdout holds JSON lines only: ask on stderr
        sys.stderr.write(prompt)
        sys.stderr.flush()
        line = sys.stdin.readline()
        return line.rstrip("\n") if line else None
    try:
        return input(prompt)
    except EOFError:
        sys.stdout.write("\n")
        return None


def _structured(line: str) -> ReplayPrompt:
    """A typed line: a JSON prompt when it is one, else text."""
    text = line.strip()
    if text.startswith("{"):
        try:
            value = json.loads(text)
        except ValueError:
            return text
        if isinstance(value, dict) and set(value) in ({"confirm"}, {"function_response"}):
            return value
    return text


def _credential_answer(
    pending: Sequence[UserRequest], line: str
) -> tuple[UserRequest, dict[str, str]] | None:
    """A typed line as the answer to the first credential request from ``tooling.auth``
    waiting: the redirect address after an authorization, or an API key or token."""
    text = line.strip()
    for request in pending:
        if request.kind == "confirmation" or not text:
            continue
        config = request.auth_config
        if isinstance(config.get("auth_uri"), str):
            if text.startswith(("http://", "https://")):
                return request, {"auth_response_uri": text}
            continue
        kind = config.get("kind")
        if kind in ("api_key", "bearer"):
            return request, {str(kind): text}
    return None


def _stdin_prompts() -> list[ReplayPrompt]:
    return [_structured(line) for line in sys.stdin.read().splitlines() if line.strip()]


# -- the conversation ------------------------------------------------------------------------


class _Conversation:
    """One session of one runner, driven from the command line."""

    def __init__(
        self,
        runner: Runner,
        user_id: str,
        session_id: str,
        out: _Output,
        run_config: RunConfig,
        live: bool,
    ) -> None:
        self.runner = runner
        self.user_id = user_id
        self.session_id = session_id
        self.out = out
        self.config = run_config
        self.live = live

    def session(self) -> Session:
        async def get() -> Session:
            service = self.runner.session_service
            found = await service.get_session(
                app_name=self.runner.app_name, user_id=self.user_id, session_id=self.session_id
            )
            if found is None:
                found = await service.create_session(
                    app_name=self.runner.app_name, user_id=self.user_id, session_id=self.session_id
                )
            return found

        return asyncio.run(get())

    def send(self, message: str | Content) -> None:
        events: list[Event] = []
        for event in self.runner.run(
            user_id=self.user_id,
            session_id=self.session_id,
            new_message=message,
            run_config=self.config,
        ):
            self.out.event(event)
            events.append(event)
        if not self.out.as_json:
            for waiting in Waiting(events).open_long_running():
                agent, name = waiting.author, waiting.call.name
                self.out.line(
                    f"[{agent}] {name} is still running; send its result as "
                    f'{{"function_response": {{"name": "{name}", "response": {{...}}}}}}'
                )

    def pending(self) -> list[UserRequest]:
        return Waiting(self.session().events).open_requests()

    def play(self, prompt: ReplayPrompt, *, echo: bool = True) -> bool:
        """Send one scripted or piped prompt; False when it cannot be played."""
        if isinstance(prompt, str):
            answer = prompt.strip().lower()
            pending = self.pending()
            credential = _credential_answer(pending, prompt)
            if answer in _YES + _NO and any(r.kind == "confirmation" for r in pending):
                prompt = {"confirm": answer in _YES}
            elif credential is not None:
                request, reply = credential
                if echo:
                    self.out.user("[supplies a credential]")  # never echoed: it may be secret
                part = Part.from_function_response(REQUEST_CREDENTIAL, reply, id=request.id)
                self.send(Content("user", [part]))
                return True
            else:
                if echo:
                    self.out.user(prompt)
                self.send(prompt)
                return True
        if echo:
            self.out.user(prompt)
        try:
            message = replay_message(prompt, self.session().events)
        except ValueError as exc:
            if self.live:
                self.out.note(f"skipped {one_line(_describe_prompt(prompt))!r}: {exc}")
                return True
            self.out.problem("replay", f"{exc}")
            return False
        self.send(message)
        return True

    def scripted(self, prompts: Sequence[ReplayPrompt]) -> None:
        queue = deque(prompts)
        while queue:
            if not self.play(queue.popleft()):
                return
        left = self.pending()
        for request in left:
            uri = request.auth_config.get("auth_uri")
            if request.kind != "confirmation" and isinstance(uri, str):
                self.out.note(
                    f"{request.tool_name} needs your authorization: open {uri} and give the "
                    "address you are sent back to on stdin"
                )
        if left:
            names = ", ".join(r.tool_name for r in left)
            self.out.note(
                f"the conversation ends waiting for the user ({names}); answer with y/n on "
                "stdin (with --session-db and the same --session to continue it)"
            )

    def interactive(self) -> None:
        self.answer_pending()
        while True:
            line = _read_line("you> ", self.out.as_json)
            if line is None or line.strip().lower() in ("exit", "quit"):
                return
            if not line.strip():
                continue
            self.play(_structured(line), echo=False)
            self.answer_pending()

    def ask_credential(self, request: UserRequest) -> dict[str, str] | None:
        """The user's answer to a credential request from ``tooling.auth``: the address
        they were sent back to after authorizing, or the API key or token they type.
        None when the request is not one this command can ask about, or no answer came."""
        config = request.auth_config
        name = request.tool_name
        if isinstance(config.get("auth_uri"), str):
            sys.stderr.write(f"{name} needs your authorization: open\n  {config['auth_uri']}\n")
            question = "then paste the address you were sent back to: "
        elif config.get("kind") in ("api_key", "bearer"):
            what = "an API key" if config.get("kind") == "api_key" else "a token"
            question = f"{name} needs {what}: "
        else:
            return None
        line = _read_line(question, self.out.as_json)
        found = _credential_answer([request], line) if line else None
        return found[1] if found is not None else None

    def answer_pending(self) -> None:
        """Ask the user about each open request; resume with their answers."""
        while True:
            requests = self.pending()
            replies: list[Part] = []
            for request in requests:
                name = request.tool_name
                if request.kind != "confirmation":
                    answer_to = self.ask_credential(request)
                    if answer_to is None:
                        self.out.note(
                            f"{name} needs a credential, which this command cannot supply"
                        )
                        continue
                    replies.append(
                        Part.from_function_response(REQUEST_CREDENTIAL, answer_to, id=request.id)
                    )
                    continue
                hint = request.hint
                if hint and hint != f"Confirm running {name}.":
                    sys.stderr.write(f"{name}: {hint}\n")
                args = request.call.args if request.call is not None else {}
                question = f"Confirm {name} {_json(args, 300)}? [y/N] "
                answer = _read_line(question, self.out.as_json)
                confirmed = answer is not None and answer.strip().lower() in _YES
                replies.append(
                    Part.from_function_response(
                        REQUEST_CONFIRMATION, {"confirmed": confirmed}, id=request.id
                    )
                )
            if not replies:
                return
            self.send(Content("user", replies))


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
    out = _Output(args.json)
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
    piped: list[ReplayPrompt] = [] if sys.stdin.isatty() else _stdin_prompts()
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
        talk = _Conversation(runner, args.user, session_id, out, config, live)
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
