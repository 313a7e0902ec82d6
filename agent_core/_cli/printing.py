"""How ``agent-core run`` prints a conversation: events as readable lines, or JSON lines."""

from __future__ import annotations

import json
import sys
from typing import Any

from .._events import Event
from .._invocation.requests import UserRequest
from ..models.scripted import ReplayPrompt

__all__: list[str] = []

_RESPONSE_LIMIT = 2000


# -- printing --------------------------------------------------------------------------------


def json_text(value: Any, limit: int = _RESPONSE_LIMIT) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _call_text(name: str, args: Any) -> str:
    if isinstance(args, dict):
        inner = ", ".join(f"{key}={json_text(value, 300)}" for key, value in args.items())
        return f"{name}({inner})"
    return f"{name}({json_text(args, 300)})"


def _response_text(response: dict[str, Any]) -> str:
    error = response.get("error")
    if response.get("status") == "error" and isinstance(error, dict):
        return f"! {error.get('code', 'error')}: {error.get('message', '')}"
    return json_text(response)


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


def describe_prompt(prompt: ReplayPrompt) -> str:
    if isinstance(prompt, str):
        return f"user> {prompt}"
    if "confirm" in prompt:
        return "user> [" + ("confirms" if prompt["confirm"] else "declines") + "]"
    body = prompt.get("function_response") or {}
    return f"user> [result of {body.get('name')}: {json_text(body.get('response'), 300)}]"


class Output:
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
            sys.stdout.write(describe_prompt(prompt) + "\n")
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
