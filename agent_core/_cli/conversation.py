"""One conversation of ``agent-core run``: sending the user's turns, answering the requests
waiting on them, playing a replay's prompts."""

from __future__ import annotations

import asyncio
import json
import sys
from collections import deque
from collections.abc import Sequence

from tooling.integration import (
    one_line,
)

from .._content import Content, Part
from .._events import Event
from .._invocation.requests import REQUEST_CONFIRMATION, REQUEST_CREDENTIAL, UserRequest, Waiting
from .._runner import RunConfig, Runner
from ..models.scripted import ReplayPrompt, replay_message
from ..sessions.base import Session
from .printing import Output, describe_prompt, json_text

__all__: list[str] = []

_YES = ("y", "yes")
_NO = ("n", "no")


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


def stdin_prompts() -> list[ReplayPrompt]:
    return [_structured(line) for line in sys.stdin.read().splitlines() if line.strip()]


# -- the conversation ------------------------------------------------------------------------


class Conversation:
    """One session of one runner, driven from the command line."""

    def __init__(
        self,
        runner: Runner,
        user_id: str,
        session_id: str,
        out: Output,
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
                self.out.note(f"skipped {one_line(describe_prompt(prompt))!r}: {exc}")
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
                question = f"Confirm {name} {json_text(args, 300)}? [y/N] "
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
