"""``tooling call``: one tool run from the shell through a ``Scheduler``: its target and
arguments parsed, a confirmation asked for at the prompt, progress shown on stderr (a live
bar on a terminal), the response printed as JSON."""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import time
import types
import warnings
from collections.abc import Sequence
from contextlib import suppress
from typing import Any, TextIO

from .._base import BaseTool
from .._errors import ToolError
from .._function.tool import FunctionTool
from .._scheduling.scheduler import Scheduler
from .._types import Blob, Confirmation, ToolCall, ToolProgress, ToolResponse
from .discovery import (
    EXIT_OK,
    EXIT_TOOL_ERROR,
    CliError,
    FoundTool,
    close_toolsets,
    describe_exception,
    discover_tools,
    load_target,
    one_line,
)

__all__: list[str] = []


def progress_fraction(response: object) -> float | None:
    """How far along an intermediate response says it is, from 0 to 1, if it says.

    ``percent`` is read as 0–100; ``progress`` as a fraction when it is a float from 0 to
    1, else as a percentage.
    """
    if not isinstance(response, dict):
        return None
    for key in ("percent", "progress"):
        value = response.get(key)
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            continue
        if key == "progress" and isinstance(value, float) and 0.0 <= value <= 1.0:
            return value
        return min(max(value / 100.0, 0.0), 1.0)
    return None


_SPINNER = "|/-\\"


class _ProgressView:
    """Shows a call's progress on stderr: a live bar on a terminal, plain lines otherwise."""

    def __init__(self, stream: TextIO, name: str) -> None:
        self.out = stream
        self.name = name
        self.live = stream.isatty()
        self.line = ""
        self.started = time.monotonic()
        self.latest: dict[str, Any] | None = None
        self.tick = 0
        self.shown = False

    def _width(self) -> int:
        try:
            return max(os.get_terminal_size(self.out.fileno()).columns - 1, 20)
        except (OSError, ValueError):
            return 79

    def _render(self) -> str:
        elapsed = time.monotonic() - self.started
        fraction = progress_fraction(self.latest)
        detail = (
            json.dumps(self.latest, ensure_ascii=False, default=str)
            if self.latest is not None
            else ""
        )
        if fraction is not None:
            filled = round(fraction * 24)
            head = f"{self.name} [{'#' * filled}{'.' * (24 - filled)}] {fraction * 100:5.1f}%"
        else:
            head = f"{self.name} {_SPINNER[self.tick % len(_SPINNER)]} {elapsed:5.1f}s"
        text = f"{head}  {detail}" if detail else head
        width = self._width()
        return text if len(text) <= width else text[: width - 1] + "…"

    def _draw(self) -> None:
        self.line = self._render()
        self.out.write("\r\x1b[K" + self.line)
        self.out.flush()
        self.shown = True

    def clear(self) -> None:
        if self.live and self.shown:
            self.out.write("\r\x1b[K")
            self.out.flush()
            self.shown = False

    def animate(self) -> None:
        self.tick += 1
        if self.live:
            self._draw()

    def update(self, response: dict[str, Any]) -> None:
        self.latest = response
        if self.live:
            self._draw()
        else:
            fraction = progress_fraction(response)
            share = f" {fraction * 100:.0f}%" if fraction is not None else ""
            body = json.dumps(response, ensure_ascii=False, default=str)
            self.out.write(f"… {self.name}{share} {body}\n")
            self.out.flush()

    def chunk(self, item: ToolProgress) -> None:
        self.clear()
        if item.dropped:
            self.out.write(f"[{item.stream}] {item.chunk} ({item.dropped} chunks dropped)\n")
        else:
            lines = item.chunk.splitlines() or [""]
            for line in lines:
                self.out.write(f"[{item.stream}] {line}\n")
        self.out.flush()
        if self.live and self.latest is not None:
            self._draw()


def _ask(question: str, stdin: TextIO, prompt_to: TextIO) -> bool:
    """Ask a y/N question on ``prompt_to``; read the answer from ``stdin`` (EOF is no)."""
    prompt_to.write(f"{question} [y/N] ")
    prompt_to.flush()
    answer = stdin.readline()
    if not answer:
        prompt_to.write("\n")
        prompt_to.flush()
    elif not stdin.isatty():
        prompt_to.write(answer if answer.endswith("\n") else answer + "\n")
        prompt_to.flush()
    return answer.strip().lower() in ("y", "yes")


def _parse_call_target(text: str) -> tuple[str, str]:
    target, sep, name = text.rpartition(":")
    if not sep or not target or not name:
        raise CliError(
            f"expected TARGET:TOOL (e.g. mymodule:my_tool or tools.py:my_tool), got {text!r}"
        )
    return target, name


def _parse_arguments(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except ValueError as exc:
        raise CliError(f"invalid JSON arguments: {one_line(str(exc))}") from None
    if not isinstance(value, dict):
        raise CliError(
            f"the arguments must be a JSON object, got {type(value).__name__}: {one_line(text, 80)}"
        )
    return value


def _find_tool(found: Sequence[FoundTool], name: str, obj: object, target: str) -> BaseTool:
    for entry in found:
        if entry.tool is not None and entry.name == name:
            return entry.tool
    if isinstance(obj, types.ModuleType):
        attr: Any = obj
        for piece in name.split("."):  # store.add_note: an instance's method tool
            attr = getattr(attr, piece, None)
        if isinstance(attr, BaseTool):
            return attr
        if isinstance(attr, types.FunctionType | types.MethodType):
            return FunctionTool(attr)
    names = ", ".join(sorted({e.name for e in found if e.tool is not None})) or "(none)"
    raise CliError(f"no tool named {name!r} in {target}; the tools are: {names}")


async def call_tool(args: argparse.Namespace) -> int:
    """``tooling call TARGET:TOOL [JSON]``: run the tool, print its response; the exit status."""
    target, name = _parse_call_target(args.target)
    arguments = _parse_arguments(args.arguments)
    label, obj = load_target(target, base_url=getattr(args, "base_url", None))
    found, toolsets = await discover_tools(obj, label)
    try:
        tool = _find_tool(found, name, obj, target)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scheduler = Scheduler([tool], timeout=args.timeout)
        except Exception as exc:
            raise CliError(
                f"tool {name!r} cannot be built: {describe_exception(exc)}", EXIT_TOOL_ERROR
            ) from exc
        try:
            granted = frozenset(args.grant or ())
            return await _run_call(scheduler, tool, arguments, args.yes, granted)
        finally:
            scheduler.close()
    finally:
        await close_toolsets(toolsets)


async def _run_call(
    scheduler: Scheduler,
    tool: BaseTool,
    arguments: dict[str, Any],
    yes: bool,
    granted: frozenset[str],
) -> int:
    call = ToolCall(id="cli-1", name=tool.name, args=arguments)
    confirmations: dict[str, Confirmation] = {}
    while True:
        final = await _stream_call(scheduler, tool, call, confirmations, granted)
        request = (
            final.response.get("confirmation") if final.waiting_for == "confirmation" else None
        )
        if request is None or call.id in confirmations:
            break
        hint = str(request.get("hint") or "")
        shown = json.dumps(request.get("args", arguments), ensure_ascii=False, default=str)
        if hint and hint != f"Confirm running {tool.name}.":
            sys.stderr.write(f"{tool.name} asks: {hint}\n")
        if yes:
            sys.stderr.write(f"Confirm {tool.name} {shown}? yes (--yes)\n")
            confirmed = True
        else:
            confirmed = _ask(f"Confirm {tool.name} {shown}?", sys.stdin, sys.stderr)
        confirmations[call.id] = Confirmation(confirmed, str(request.get("fingerprint", "")))
    sys.stdout.write(json.dumps(final.response, indent=2, ensure_ascii=False, default=str) + "\n")
    for index, part in enumerate(final.parts):
        size = f", {len(part.data)} bytes" if isinstance(part, Blob) else f", {part.uri}"
        sys.stderr.write(f"part {index}: {part.mime_type}{size}\n")
    return EXIT_TOOL_ERROR if final.error is not None else EXIT_OK


async def _stream_call(
    scheduler: Scheduler,
    tool: BaseTool,
    call: ToolCall,
    confirmations: dict[str, Confirmation],
    granted: frozenset[str],
) -> ToolResponse:
    view = _ProgressView(sys.stderr, tool.name)
    final: ToolResponse | None = None
    ticker: asyncio.Task[None] | None = None
    if view.live and tool.long_running:

        async def spin() -> None:
            while True:
                await asyncio.sleep(0.1)
                view.animate()

        ticker = asyncio.create_task(spin())
    try:
        async with scheduler.stream(
            [call], confirmations=confirmations, granted_scopes=granted
        ) as items:
            async for item in items:
                if isinstance(item, ToolProgress):
                    view.chunk(item)
                elif not item.final:
                    view.update(item.response)
                else:
                    final = item
    finally:
        if ticker is not None:
            ticker.cancel()
            with suppress(asyncio.CancelledError):
                await ticker
        view.clear()
    if final is None:  # the stream ended without an answer: should not happen
        raise ToolError(f"tool {tool.name!r} gave no response")
    return final
