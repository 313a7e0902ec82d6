"""``ScriptedModel``: a model that plays back turns written in advance (tests, offline demos)."""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import AsyncGenerator, Iterable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeAlias

from .._content import Content, Part
from .._invocation.requests import Waiting
from .base import BaseLlm, LlmRequest, LlmResponse

if TYPE_CHECKING:
    from tooling.builtin import BuiltinTool

    from .._events import Event

__all__ = [
    "ReplayPrompt",
    "ScriptExhausted",
    "ScriptedModel",
    "Turn",
    "load_replay",
    "replay_message",
]

Turn: TypeAlias = LlmResponse | Content | Sequence[Part] | str | Mapping[str, Any]
"""One scripted model turn: a response, a ``Content``, a list of ``Part``s, a text, or a dict
in the event wire shape (``{"role": "model", "parts": [...]}``) or an error
(``{"error_code": ..., "error_message": ...}``)."""

ReplayPrompt: TypeAlias = str | dict[str, Any]
"""One user turn of a replay file: a text, ``{"confirm": true|false}`` (the answer to the
pending confirmation request) or ``{"function_response": {"name": ..., "response": {...}}}``
(the result of a pending long-running call; an ``"id"`` may name the call)."""

_WORD = re.compile(r"\s*\S+\s*|\s+")


class ScriptExhausted(RuntimeError):
    """The model was asked for more turns than its script has."""


class ScriptedModel(BaseLlm):
    """A model that answers with the turns it was given, in order.

    ``turns`` is a list of turns (each an ``LlmResponse``, a ``Content``, a list of
    ``Part``s, a string of text, or a wire-shape dict), shared by every agent that uses
    the model, or a mapping ``{agent_name: [turns]}`` giving each agent its own script
    (picked by ``LlmRequest.agent_name``). Every model call consumes one turn; a tool
    round takes two (the call, then the answer once the tool has responded).

    Each request is recorded in :attr:`requests` with a deep copy of its contents, so
    later changes to the conversation do not rewrite what the model was shown. Asking
    for more turns than scripted raises :class:`ScriptExhausted`.

    With ``stream=True`` a text-only turn comes as one partial response per word (the
    word with its surrounding whitespace; the pieces join to the full text) and then the
    full response; any other turn comes as one response.

    ``builtins`` names the built-in tools (``"web_search"``, ``"code_execution"``, ...)
    the model plays as a provider would (None: every one), so a script can replay a
    provider's search turn offline; ``builtins_beside_functions=False`` makes it refuse
    built-ins beside function declarations, as Gemini before 3 does.
    """

    def __init__(
        self,
        turns: Sequence[Turn] | Mapping[str, Sequence[Turn]],
        *,
        model: str = "scripted",
        builtins: Iterable[str] | None = None,
        builtins_beside_functions: bool = True,
    ) -> None:
        super().__init__(model)
        self._builtins = None if builtins is None else frozenset(builtins)
        self._beside = builtins_beside_functions
        self.requests: list[LlmRequest] = []
        self._shared: list[LlmResponse] | None
        self._by_agent: dict[str, list[LlmResponse]]
        self._positions: dict[str, int] = {}
        if isinstance(turns, Mapping):
            self._shared = None
            self._by_agent = {
                str(name): _to_responses(agent_turns, where=f"agent {name!r}")
                for name, agent_turns in turns.items()
            }
        else:
            self._shared = _to_responses(turns, where="script")
            self._by_agent = {}

    def supports_builtin(self, tool: BuiltinTool) -> bool:
        """True for the kinds named by ``builtins`` (every kind when it is None)."""
        return self._builtins is None or tool.kind in self._builtins

    @property
    def builtins_beside_functions(self) -> bool:
        """As given to the constructor (default True)."""
        return self._beside

    @classmethod
    def from_json(cls, path: str | os.PathLike[str], *, model: str = "scripted") -> ScriptedModel:
        """Read a script from a JSON file.

        The file holds a list of turns in the event wire shape (``{"role": "model",
        "parts": [...]}``, parts as ``Part.from_dict`` reads them), plain strings (text
        turns) or ``{"error_code": ..., "error_message": ...}`` (error turns); or
        ``{"agents": {"name": [turns], ...}}`` for one script per agent; or a replay file
        (see :func:`load_replay`): an object with ``"turns"`` or ``"agents"``, whose
        ``"prompts"`` are ignored here.
        """
        data = _read_json(path)
        try:
            return cls._from_data(data, model=model)
        except ValueError as exc:
            raise ValueError(f"invalid model script {os.fspath(path)!r}: {exc}") from None

    @classmethod
    def _from_data(cls, data: Any, *, model: str) -> ScriptedModel:
        if isinstance(data, list):
            return cls(data, model=model)
        if not isinstance(data, dict):
            raise ValueError(
                f'expected a list of turns or {{"agents": ...}}, got {type(data).__name__}'
            )
        scripts = [key for key in ("turns", "agents") if key in data]
        unknown = sorted(set(data) - {"turns", "agents", "prompts"})
        if len(scripts) != 1 or unknown:
            raise ValueError(
                'expected a list of turns, {"agents": {name: [turns]}} or a replay object '
                'with "turns" or "agents" (and "prompts"), got an object with keys '
                f"{sorted(data)}"
            )
        if scripts == ["turns"]:
            if not isinstance(data["turns"], list):
                raise ValueError('"turns" must be a list of turns')
            return cls(data["turns"], model=model)
        agents = data["agents"]
        if not isinstance(agents, dict):
            raise ValueError('"agents" must map agent names to lists of turns')
        for name, agent_turns in agents.items():
            if not isinstance(agent_turns, list):
                raise ValueError(f"the turns of agent {name!r} must be a list")
        return cls(agents, model=model)

    @property
    def multi_agent(self) -> bool:
        """Whether each agent has its own script."""
        return self._shared is None

    def remaining(self, agent_name: str = "") -> int:
        """How many turns are left (for ``agent_name``, in a multi-agent script)."""
        script, position = self._script_for(agent_name)
        return max(len(script) - position, 0)

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Record the request and play the next turn (word by word when streaming)."""
        self.requests.append(
            replace(
                llm_request,
                contents=copy.deepcopy(llm_request.contents),
                tools=dict(llm_request.tools),
            )
        )
        turn = self._next_turn(llm_request.agent_name)
        if stream:
            for piece in _text_pieces(turn):
                yield LlmResponse(content=Content("model", [Part(text=piece)]), partial=True)
        yield turn

    # -- internals -------------------------------------------------------------------------

    def _script_for(self, agent_name: str) -> tuple[list[LlmResponse], int]:
        key = "" if self._shared is not None else agent_name
        script = self._shared if self._shared is not None else self._by_agent.get(agent_name, [])
        return script, self._positions.get(key, 0)

    def _next_turn(self, agent_name: str) -> LlmResponse:
        script, position = self._script_for(agent_name)
        if position >= len(script):
            raise ScriptExhausted(self._exhausted_message(agent_name, len(script)))
        self._positions["" if self._shared is not None else agent_name] = position + 1
        return copy.deepcopy(script[position])

    def _exhausted_message(self, agent_name: str, count: int) -> str:
        who = f"agent {agent_name!r}" if agent_name else "the agent"
        if self._shared is None and agent_name not in self._by_agent:
            known = ", ".join(repr(name) for name in self._by_agent) or "none"
            return (
                f"ScriptedModel has no turns for {who}: its script is per agent and "
                f'names {known}. Add a list of turns for {agent_name!r} under "agents".'
            )
        scope = f"{who}'s script" if self._shared is None else "the script (shared by all agents)"
        plural = "turn" if count == 1 else "turns"
        return (
            f"ScriptedModel ran out of turns: {who} asked for turn {count + 1}, but "
            f"{scope} has {count} {plural}. Each model call uses one turn, and a tool "
            "call needs a second turn to answer after the tool responds: add more turns."
        )


def _to_responses(turns: Sequence[Turn], *, where: str) -> list[LlmResponse]:
    if isinstance(turns, str | bytes) or not isinstance(turns, Sequence):
        raise ValueError(f"the {where} must be a list of turns, got {type(turns).__name__}")
    return [_to_response(turn, where=f"{where}, turn {i}") for i, turn in enumerate(turns)]


def _to_response(turn: Turn, *, where: str) -> LlmResponse:
    if isinstance(turn, LlmResponse):
        return copy.deepcopy(turn)
    if isinstance(turn, Content):
        return LlmResponse(content=copy.deepcopy(turn))
    if isinstance(turn, str):
        return LlmResponse(content=Content("model", [Part(text=turn)]))
    if isinstance(turn, Mapping):
        return _from_dict(turn, where=where)
    if isinstance(turn, Sequence):
        parts = [p for p in turn if isinstance(p, Part)]
        if len(parts) == len(turn):
            return LlmResponse(content=Content("model", copy.deepcopy(parts)))
    raise ValueError(
        f"{where}: a turn must be an LlmResponse, a Content, a list of Parts, a string or "
        f"a dict, got {type(turn).__name__}"
    )


def _from_dict(turn: Mapping[str, Any], *, where: str) -> LlmResponse:
    code = turn.get("error_code", turn.get("errorCode"))
    message = turn.get("error_message", turn.get("errorMessage"))
    if code is not None or message is not None:
        return LlmResponse(
            error_code=str(code) if code is not None else "scripted_error",
            error_message=str(message) if message is not None else None,
        )
    parts = turn.get("parts")
    if not isinstance(parts, list):
        raise ValueError(
            f'{where}: expected {{"role": "model", "parts": [...]}} or '
            f'{{"error_code": ..., "error_message": ...}}, got keys {sorted(turn)}'
        )
    try:
        content = Content.from_dict({"role": turn.get("role", "model"), "parts": parts})
    except (KeyError, TypeError, AttributeError, ValueError) as exc:
        raise ValueError(f"{where}: unreadable parts ({type(exc).__name__}: {exc})") from None
    citations = turn.get("citations")
    if citations is not None and not (
        isinstance(citations, list) and all(isinstance(c, dict) for c in citations)
    ):
        raise ValueError(f"{where}: citations must be a list of objects")
    return LlmResponse(content=content, citations=[dict(c) for c in citations or ()] or None)


def _text_pieces(turn: LlmResponse) -> list[str]:
    """The streamed pieces of a text-only turn (empty for any other turn)."""
    content = turn.content
    if turn.error_code is not None or content is None or not content.parts:
        return []
    if any(p != Part(text=p.text) or p.text is None for p in content.parts):
        return []
    return _WORD.findall(content.text)


# -- replay files ----------------------------------------------------------------------


def _read_json(path: str | os.PathLike[str]) -> Any:
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def load_replay(
    path: str | os.PathLike[str], *, model: str = "scripted"
) -> tuple[ScriptedModel, list[ReplayPrompt]]:
    """Read a replay file: the model's script and the user's turns that go with it.

    The file is ``{"prompts": [...], "turns": [...]}``, or ``{"prompts": [...], "agents":
    {name: [turns]}}`` when each agent has its own script (turns as
    :meth:`ScriptedModel.from_json` reads them). Each prompt is a :data:`ReplayPrompt`: a
    text, ``{"confirm": true|false}`` or ``{"function_response": {"name": ...,
    "response": {...}}}``. Turn a prompt into the message to send with
    :func:`replay_message`. Raises ``ValueError`` naming the file for a malformed one.
    """
    data = _read_json(path)
    where = os.fspath(path)
    try:
        if not isinstance(data, dict):
            raise ValueError(
                'a replay file is an object {"prompts": [...], "turns": [...]} (or "agents" '
                f'instead of "turns"), got {type(data).__name__}'
            )
        prompts = data.get("prompts", [])
        if not isinstance(prompts, list):
            raise ValueError('"prompts" must be a list')
        for i, prompt in enumerate(prompts):
            _check_prompt(prompt, where=f"prompt {i}")
        scripted = ScriptedModel._from_data(data, model=model)
    except ValueError as exc:
        raise ValueError(f"invalid replay file {where!r}: {exc}") from None
    return scripted, list(prompts)


def _check_prompt(prompt: Any, *, where: str) -> None:
    if isinstance(prompt, str):
        return
    if isinstance(prompt, dict) and set(prompt) == {"confirm"}:
        if not isinstance(prompt["confirm"], bool):
            raise ValueError(f'{where}: "confirm" must be true or false')
        return
    if isinstance(prompt, dict) and set(prompt) == {"function_response"}:
        body = prompt["function_response"]
        if (
            isinstance(body, dict)
            and isinstance(body.get("name"), str)
            and isinstance(body.get("response"), dict)
            and set(body) <= {"name", "response", "id"}
        ):
            return
        raise ValueError(
            f'{where}: expected {{"function_response": {{"name": "...", "response": {{...}}}}}}'
        )
    raise ValueError(
        f'{where}: a prompt is a string, {{"confirm": true|false}} or '
        f'{{"function_response": {{"name": ..., "response": {{...}}}}}}, got {prompt!r}'
    )


def replay_message(prompt: ReplayPrompt, events: Iterable[Event]) -> str | Content:
    """The message that plays ``prompt`` after ``events`` (the session's events so far).

    A text is sent as it is. ``{"confirm": bool}`` answers every confirmation request
    still pending (a ``request_confirmation`` function response ``{"confirmed": bool}``
    to each request's id). ``{"function_response": {"name", "response"}}`` answers the
    latest pending long-running call of that name (or the call ``"id"`` names). Raises
    ``ValueError`` when nothing is pending to answer.
    """
    _check_prompt(prompt, where="prompt")
    if isinstance(prompt, str):
        return prompt
    waiting = Waiting(events)
    if "confirm" in prompt:
        parts = [
            Part.from_function_response(
                request.name, {"confirmed": prompt["confirm"]}, id=request.id
            )
            for request in waiting.open_requests()
            if request.kind == "confirmation"
        ]
        if not parts:
            raise ValueError("no confirmation request is pending: nothing to confirm")
        return Content("user", parts)

    body = prompt["function_response"]
    call_id = body.get("id")
    if call_id is None:
        for waiting_call in waiting.open_long_running():
            if waiting_call.call.name == body["name"]:
                call_id = waiting_call.call.id
        if call_id is None:
            raise ValueError(f"no long-running call of {body['name']!r} is waiting for a result")
    return Content(
        "user", [Part.from_function_response(body["name"], dict(body["response"]), id=call_id)]
    )
