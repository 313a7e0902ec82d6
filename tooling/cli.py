"""The ``tooling`` command: look at tools and run one, from the shell.

``tooling inspect TARGET [--provider P] [--json]``
    Every tool found in TARGET with its description, flags, how the AUTO strategy
    schedules its calls (beside other safe reads, keyed by a conflict key, or a barrier),
    schema as provider ``P`` sees it (``gemini`` by default; also ``gemini-legacy``,
    ``openai``, ``openai-strict``, ``anthropic``, ``mcp``) and diagnostics. Exits 1 when a tool
    cannot be built (the others are still shown; each failure is one line on stderr).
    ``--web [--host H] [--port P] [--no-browser]`` serves the same as a local web page
    (see ``tooling.web``) and prints its URL with the access token.

``tooling serve TARGET [--http [HOST:]PORT] [--name NAME]``
    Serves TARGET's tools as an MCP server (needs the ``mcp`` extra): over stdio by
    default, over streamable HTTP at ``http://HOST:PORT/mcp`` with ``--http`` (host
    ``127.0.0.1`` unless given). Toolsets are asked for their tools at each listing.
    Logs go to stderr only.

``tooling call TARGET:TOOL ['JSON'] [--timeout S] [--yes] [--grant SCOPE ...]``
    Validates the arguments and runs one tool through a ``Scheduler``, outside any agent:
    only the scopes given with ``--grant`` are granted (a tool declaring others is
    ``tool.forbidden``), a confirmation is asked for at the prompt
    (``--yes`` answers it in advance), ``--timeout`` bounds the call. Prints the response
    as JSON on stdout. Progress chunks go to stderr prefixed by their stream
    (``[stdout] ...``); a long-running tool's intermediate responses go to stderr too, under
    a live progress bar when stderr is a terminal. Exit status: 0 success, 1 tool error
    (the structured error is printed), 2 usage error (bad target, unknown tool, invalid
    JSON).

TARGET is a module (``pkg.mod``), ``module:attr`` (a tool, toolset, agent, function, or
a list of them), a ``.py`` file (loaded by path, under a unique module name), or a
directory holding an ``agent.py``. In a module, tools are the ``BaseTool`` instances
among its attributes, the bound method tools of its instances (``@tool`` on a method of
their class), the tools of its ``BaseToolset`` instances (filter and prefix
applied), and the tools of its agents (``root_agent`` and the rest) when the module uses
``agent_core``.

Errors are one line on stderr and a non-zero exit status, never a traceback; ``--debug``
shows the traceback instead. A tool that fails (``tool.failed``) is one line on stderr
too, and its traceback under ``--debug``. This module imports neither ``google.genai`` nor
``agent_core``: the Gemini exporter imports the former when asked for, and agents are
recognised only when the target has already imported the latter.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import importlib
import importlib.machinery
import importlib.util
import json
import logging
import math
import os
import re
import sys
import time
import types
import warnings
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn, TextIO

from ._base import BaseTool, BaseToolset
from ._errors import ToolError
from ._function_tool import FunctionTool
from ._planning import scheduling_of
from ._scheduler import Scheduler
from ._types import Confirmation, ToolCall, ToolProgress, ToolResponse

__all__ = [
    "PROVIDERS",
    "CliError",
    "CliParser",
    "FoundTool",
    "discover_tools",
    "export_schema",
    "load_agent_dir",
    "load_file",
    "load_target",
    "main",
]

PROVIDERS = ("gemini", "gemini-legacy", "openai", "openai-strict", "anthropic", "mcp")

EXIT_OK = 0
EXIT_TOOL_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class CliError(Exception):
    """A problem told to the user as one line on stderr, with an exit status."""

    def __init__(self, message: str, status: int = EXIT_USAGE) -> None:
        super().__init__(message)
        self.message = message
        self.status = status


def one_line(text: str, limit: int = 500) -> str:
    """``text`` on one line (whitespace runs collapsed), cut to ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe_exception(exc: BaseException) -> str:
    """``Type: message`` on one line (a ``SyntaxError`` names its file and line)."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return one_line(f"SyntaxError: {exc.msg} ({exc.filename}, line {exc.lineno})")
    text = str(exc)
    return one_line(f"{type(exc).__name__}: {text}" if text else type(exc).__name__)


# -- loading targets ----------------------------------------------------------------------


def _add_sys_path(directory: Path) -> None:
    entry = str(directory)
    if entry not in sys.path:
        sys.path.insert(0, entry)


def _package_root(directory: Path) -> Path | None:
    """The directory above the outermost package holding ``directory``, or None."""
    if not (directory / "__init__.py").is_file():
        return None
    top = directory
    while (top.parent / "__init__.py").is_file() and top.parent != top:
        top = top.parent
    return top.parent


def _import_in_package(path: Path) -> types.ModuleType | None:
    """Import ``path`` under its dotted name when it sits in a package, else None.

    The outermost package's parent goes on ``sys.path`` so absolute and relative imports
    inside the package work. Gives None when the dotted name imports some other module
    (a package of the same name installed elsewhere).
    """
    root = _package_root(path.parent)
    if root is None:
        return None
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    dotted = ".".join(parts)
    _add_sys_path(root)
    existing = sys.modules.get(dotted)
    if existing is not None and not _is_file_of(existing, path):
        return None
    importlib.invalidate_caches()
    module = importlib.import_module(dotted)
    return module if _is_file_of(module, path) else None


def _is_file_of(module: types.ModuleType, path: Path) -> bool:
    file = getattr(module, "__file__", None)
    return file is not None and Path(file).resolve() == path


def _unique_package(directory: Path) -> str:
    """A package with a unique name whose ``__path__`` is ``directory`` (made once)."""
    digest = hashlib.sha256(str(directory).encode("utf-8", "surrogatepass")).hexdigest()[:10]
    stem = re.sub(r"\W", "_", directory.name) or "dir"
    name = f"_tooling_loaded_{stem}_{digest}"
    if name not in sys.modules:
        spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
        spec.submodule_search_locations = [str(directory)]
        package = importlib.util.module_from_spec(spec)
        package.__path__ = [str(directory)]
        sys.modules[name] = package
    return name


def load_file(path: str | os.PathLike[str]) -> types.ModuleType:
    """Import a ``.py`` file by path.

    A file inside a package (its directory has an ``__init__.py``) is imported under its
    dotted name, the package root on ``sys.path``. Any other file is imported under a
    unique name, as a module of a synthetic package over its directory (so relative
    imports of its siblings work), with the directory and its parent on ``sys.path``.
    """
    file = Path(path).resolve()
    if not file.is_file():
        raise CliError(f"no such file: {os.fspath(path)}")
    try:
        module = _import_in_package(file)
        if module is not None:
            return module
        _add_sys_path(file.parent.parent)
        outer = _package_root(file.parent.parent)
        if outer is not None:  # the folder sits in a package: absolute imports of it work
            _add_sys_path(outer)
        _add_sys_path(file.parent)
        package = _unique_package(file.parent)
        importlib.invalidate_caches()
        name = package if file.stem == "__init__" else f"{package}.{file.stem}"
        return importlib.import_module(name)
    except CliError:
        raise
    except (Exception, SystemExit) as exc:
        raise CliError(f"cannot load {os.fspath(path)}: {describe_exception(exc)}") from exc


def load_agent_dir(directory: str | os.PathLike[str]) -> types.ModuleType:
    """Import ``directory/agent.py`` (see :func:`load_file`)."""
    folder = Path(directory)
    if not folder.is_dir():
        raise CliError(f"not a directory: {os.fspath(directory)}")
    agent_file = folder / "agent.py"
    if not agent_file.is_file():
        raise CliError(f"{os.fspath(directory)} has no agent.py")
    return load_file(agent_file)


def _import_module(name: str) -> types.ModuleType:
    _add_sys_path(Path.cwd())
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (name == exc.name or name.startswith(exc.name + ".")):
            raise CliError(f"module not found: {name}") from exc
        raise CliError(f"cannot import {name}: {describe_exception(exc)}") from exc
    except (Exception, SystemExit) as exc:
        raise CliError(f"cannot import {name}: {describe_exception(exc)}") from exc


def load_target(target: str) -> tuple[str, object]:
    """Resolve TARGET to ``(label, object)``: a module or the attribute it names.

    TARGET: ``pkg.mod``, ``pkg.mod:attr`` (dotted attribute paths allowed), a ``.py`` path
    optionally followed by ``:attr``, or a directory holding ``agent.py``.
    """
    if not target:
        raise CliError("empty target: give a module, module:attr or a .py path")
    base, sep, attr = target.rpartition(":")
    if not sep or not base or "/" in attr or "\\" in attr:
        base, attr = target, ""
    module: types.ModuleType
    if base.endswith(".py") or os.sep in base or "/" in base or Path(base).is_dir():
        candidate = Path(base)
        if candidate.is_dir():
            module = load_agent_dir(candidate)
        elif base.endswith(".py"):
            module = load_file(candidate)
        else:
            raise CliError(f"no such file or directory: {base}")
    else:
        if not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*", base):
            raise CliError(f"not a module name, module:attr or .py path: {target}")
        module = _import_module(base)
    if not attr:
        return module.__name__, module
    found: object = module
    for piece in attr.split("."):
        try:
            found = getattr(found, piece)
        except AttributeError:
            raise CliError(f"{base} has no attribute {attr!r}") from None
    return f"{base}:{attr}", found


# -- finding tools -------------------------------------------------------------------------


@dataclass
class FoundTool:
    """A tool found in a target, or why it could not be had."""

    name: str
    origin: str
    tool: BaseTool | None = None
    error: str | None = None
    toolset: BaseToolset | None = None  # the toolset that gave the tool, if any


@dataclass
class _Discovery:
    found: list[FoundTool] = field(default_factory=list)
    toolsets: list[BaseToolset] = field(default_factory=list)
    seen: set[int] = field(default_factory=set)

    def add(self, tool: BaseTool, origin: str, toolset: BaseToolset | None = None) -> None:
        if id(tool) not in self.seen:
            self.seen.add(id(tool))
            self.found.append(FoundTool(tool.name, origin, tool, toolset=toolset))


def _agent_class() -> type | None:
    """``agent_core.Agent`` if the target already imported ``agent_core``, else None."""
    module = sys.modules.get("agent_core")
    agent = getattr(module, "Agent", None) if module is not None else None
    return agent if isinstance(agent, type) else None


def _agents_below(agent: Any) -> list[Any]:
    """The agent's tree and the agents behind its ``AgentTool``s, each once."""
    out: list[Any] = []
    seen: set[int] = set()
    pending = [agent]
    while pending:
        for each in pending.pop().walk():
            if id(each) in seen:
                continue
            seen.add(id(each))
            out.append(each)
            pending.extend(
                t.agent for t in each.tools if hasattr(t, "agent") and t.agent is not None
            )
    return out


def _method_tools(obj: object) -> list[BaseTool]:
    """The bound method tools of an instance (``@tool`` on methods of its class)."""
    if isinstance(obj, type | types.ModuleType) or callable(obj):
        return []
    tools: list[BaseTool] = []
    seen: set[str] = set()
    for klass in type(obj).__mro__:
        for name, attr in vars(klass).items():
            if name in seen:
                continue
            seen.add(name)
            if isinstance(attr, FunctionTool) and attr._target.binding != "none":
                bound = getattr(obj, name, None)
                if isinstance(bound, BaseTool):
                    tools.append(bound)
    return tools


async def discover_tools(obj: object, label: str) -> tuple[list[FoundTool], list[BaseToolset]]:
    """The tools in ``obj`` (a module, tool, toolset, agent, function or list of them).

    Gives the tools found and the toolsets they came from (to be closed by the caller).
    A toolset that fails to list its tools is one entry with ``error`` set.
    """
    found = _Discovery()
    agent_type = _agent_class()

    async def visit(item: object, origin: str, from_module: bool) -> None:
        if isinstance(item, BaseTool):
            found.add(item, origin)
        elif isinstance(item, BaseToolset):
            await visit_toolset(item, origin)
        elif agent_type is not None and isinstance(item, agent_type):
            for agent in _agents_below(item):
                where = f"agent {agent.name}"
                for t in agent.tools:
                    found.add(t, where)
                for toolset in agent.toolsets:
                    await visit_toolset(toolset, where)
        elif not from_module and isinstance(item, list | tuple):
            for each in item:
                await visit(each, origin, False)
        elif not from_module and isinstance(item, types.FunctionType | types.MethodType):
            try:
                found.add(FunctionTool(item), origin)
            except Exception as exc:
                name = getattr(item, "__name__", "?")
                found.found.append(FoundTool(name, origin, error=describe_exception(exc)))
        else:
            # An instance whose class has method tools: its bound tools are tools.
            for bound in _method_tools(item):
                found.add(bound, origin)

    async def visit_toolset(toolset: BaseToolset, origin: str) -> None:
        if any(t is toolset for t in found.toolsets):
            return
        found.toolsets.append(toolset)
        where = f"{origin}, toolset {type(toolset).__name__}"
        try:
            tools = await toolset.get_tools_with_prefix(None)
        except Exception as exc:
            found.found.append(
                FoundTool(
                    type(toolset).__name__,
                    where,
                    error=f"listing tools failed: {describe_exception(exc)}",
                )
            )
            return
        for t in tools:
            found.add(t, where, toolset)

    if isinstance(obj, types.ModuleType):
        for value in list(vars(obj).values()):
            await visit(value, label, True)
    else:
        await visit(obj, label, False)
    return found.found, found.toolsets


async def _close_toolsets(toolsets: Iterable[BaseToolset]) -> None:
    for toolset in toolsets:
        with suppress(Exception):
            await toolset.close()


# -- inspect --------------------------------------------------------------------------------


def export_schema(tool: BaseTool, provider: str) -> Any:
    """What ``provider`` is given for ``tool``, as JSON-safe data."""
    if provider == "gemini":
        return tool.to_gemini().model_dump(mode="json", exclude_none=True)
    if provider == "gemini-legacy":
        return tool.to_gemini(legacy=True).model_dump(mode="json", exclude_none=True)
    if provider == "openai":
        return tool.to_openai()
    if provider == "openai-strict":
        return tool.to_openai(strict=True)
    if provider == "anthropic":
        return tool.to_anthropic()
    if provider == "mcp":
        return tool.to_mcp()
    raise CliError(f"unknown provider {provider!r}; choose from {', '.join(PROVIDERS)}")


def _flags(tool: BaseTool) -> dict[str, Any]:
    rule = tool.require_confirmation
    return {
        "read_only": bool(tool.read_only),
        "concurrency_safe": bool(tool.concurrency_safe),
        "long_running": bool(tool.long_running),
        "idempotent": bool(tool.idempotent),
        "destructive": bool(tool.is_destructive),
        "require_confirmation": "predicate" if callable(rule) else bool(rule),
        "timeout": tool.timeout,
        "scopes": list(tool.scopes),
    }


def _inspect_one(entry: FoundTool, provider: str) -> dict[str, Any]:
    report: dict[str, Any] = {"name": entry.name, "origin": entry.origin}
    if entry.tool is None:
        report["error"] = entry.error
        return report
    tool = entry.tool
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if isinstance(tool, FunctionTool):
                _ = tool.spec
            schema = export_schema(tool, provider)
            description = tool.description
            diagnostics = [
                {"level": d.level, "code": d.code, "message": d.message, "parameter": d.parameter}
                for d in tool.diagnostics
            ]
    except CliError:
        raise
    except Exception as exc:
        report["error"] = describe_exception(exc)
        return report
    report.update(
        description=description,
        flags=_flags(tool),
        scheduling=scheduling_of(tool),
        provider=provider,
        schema=schema,
        diagnostics=diagnostics,
    )
    return report


def _print_report(report: dict[str, Any], out: TextIO) -> None:
    out.write(f"{report['name']}  ({report['origin']})\n")
    if "error" in report:
        out.write(f"  ! cannot be built: {report['error']}\n\n")
        return
    description = report["description"] or "(no description)"
    for line in description.splitlines() or [""]:
        out.write(f"  {line}\n".rstrip() + "\n")
    flags = report["flags"]
    names = [
        k
        for k in ("read_only", "concurrency_safe", "long_running", "idempotent", "destructive")
        if flags[k]
    ]
    if flags["require_confirmation"] == "predicate":
        names.append("require_confirmation(predicate)")
    elif flags["require_confirmation"]:
        names.append("require_confirmation")
    out.write(f"  flags: {', '.join(names) or '(none)'}\n")
    if flags["timeout"] is not None:
        out.write(f"  timeout: {flags['timeout']:g} s\n")
    if flags["scopes"]:
        out.write(f"  scopes: {', '.join(flags['scopes'])}\n")
    out.write(f"  scheduling (auto): {report['scheduling']['summary']}\n")
    out.write(f"  schema ({report['provider']}):\n")
    text = json.dumps(report["schema"], indent=2, ensure_ascii=False)
    for line in text.splitlines():
        out.write(f"    {line}\n")
    if report["diagnostics"]:
        out.write("  diagnostics:\n")
        for d in report["diagnostics"]:
            where = f" [{d['parameter']}]" if d["parameter"] else ""
            out.write(f"    {d['level']} {d['code']}{where}: {d['message']}\n")
    else:
        out.write("  diagnostics: none\n")
    out.write("\n")


def cmd_inspect(args: argparse.Namespace) -> int:
    label, obj = load_target(args.target)
    if args.web:
        from .web import serve_target, wait_until_interrupted

        server = serve_target(obj, label, host=args.host, port=args.port)
        return wait_until_interrupted(server, "tooling", browser=not args.no_browser)

    async def gather() -> list[dict[str, Any]]:
        found, toolsets = await discover_tools(obj, label)
        try:
            return [_inspect_one(entry, args.provider) for entry in found]
        finally:
            await _close_toolsets(toolsets)

    reports = asyncio.run(gather())
    if not reports:
        raise CliError(f"no tools found in {args.target}", status=EXIT_TOOL_ERROR)
    if args.json:
        sys.stdout.write(json.dumps(reports, indent=2, ensure_ascii=False) + "\n")
    else:
        for report in reports:
            _print_report(report, sys.stdout)
    broken = [r for r in reports if "error" in r]
    for report in broken:
        where = f"{report['name']!r} ({report['origin']})"
        sys.stderr.write(f"tooling: tool {where} cannot be built: {report['error']}\n")
    return EXIT_TOOL_ERROR if broken else EXIT_OK


# -- call ------------------------------------------------------------------------------------


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


async def _call(args: argparse.Namespace) -> int:
    target, name = _parse_call_target(args.target)
    arguments = _parse_arguments(args.arguments)
    label, obj = load_target(target)
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
        await _close_toolsets(toolsets)


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
            final.response.get("confirmation")
            if final.response.get("status") == "confirmation_required"
            else None
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
        size = (
            f", {len(part.data)} bytes"
            if hasattr(part, "data")
            else f", {getattr(part, 'uri', '')}"
        )
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


def cmd_call(args: argparse.Namespace) -> int:
    return asyncio.run(_call(args))


# -- serve -----------------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from .mcp._serve import serve
    except ImportError as exc:
        if exc.name is None or not exc.name.startswith("mcp"):
            raise
        raise CliError("tooling serve needs the MCP SDK: pip install 'agent-tooling[mcp]'") from exc
    return serve(args)


# -- main ------------------------------------------------------------------------------------


class CliParser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (and exit status 2)."""

    def error(self, message: str) -> NoReturn:
        raise CliError(f"{message} (see {self.prog} --help)")


def build_parser() -> argparse.ArgumentParser:
    parser = CliParser(
        prog="tooling",
        description="Inspect tools (schemas, flags, diagnostics) and run one from the shell.",
    )
    parser.add_argument(
        "--debug", action="store_true", help="show tracebacks instead of one-line errors"
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=CliParser)

    inspect = commands.add_parser(
        "inspect",
        help="show every tool in TARGET with its schema for a provider",
        description="Show every tool in TARGET: description, flags, schema, diagnostics.",
    )
    inspect.add_argument(
        "target", help="module, module:attr, path/to/file.py[:attr] or an agent directory"
    )
    inspect.add_argument(
        "--provider",
        choices=PROVIDERS,
        default="gemini",
        help="whose schema to show (default: gemini)",
    )
    inspect.add_argument(
        "--json", action="store_true", help="print one JSON document (a list of tools)"
    )
    inspect.add_argument(
        "--web", action="store_true", help="serve a local web page of the tools instead"
    )
    inspect.add_argument("--host", default="127.0.0.1", help="with --web: address to bind")
    inspect.add_argument("--port", type=int, default=8000, help="with --web: port (0: any)")
    inspect.add_argument(
        "--no-browser", action="store_true", help="with --web: do not open a browser"
    )
    inspect.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    inspect.set_defaults(handler=cmd_inspect)

    call = commands.add_parser(
        "call",
        help="validate arguments and run one tool",
        description="Run one tool outside any agent and print its response as JSON.",
    )
    call.add_argument("target", metavar="TARGET:TOOL", help="where the tool is, and its name")
    call.add_argument(
        "arguments", nargs="?", default="{}", metavar="JSON", help="the arguments, a JSON object"
    )
    call.add_argument(
        "--timeout", type=float, default=None, metavar="S", help="give up after S seconds"
    )
    call.add_argument(
        "--yes", "-y", action="store_true", help="confirm in advance if the tool asks"
    )
    call.add_argument(
        "--grant",
        action="append",
        metavar="SCOPE",
        help="grant a scope the tool declares (repeatable; none is granted by default)",
    )
    call.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    call.set_defaults(handler=cmd_call)

    serve = commands.add_parser(
        "serve",
        help="serve the tools in TARGET as an MCP server",
        description="Serve every tool in TARGET over MCP (stdio unless --http is given).",
    )
    serve.add_argument(
        "target", help="module, module:attr, path/to/file.py[:attr] or an agent directory"
    )
    serve.add_argument(
        "--http",
        metavar="[HOST:]PORT",
        default=None,
        help="serve streamable HTTP at http://HOST:PORT/mcp (HOST defaults to 127.0.0.1)",
    )
    serve.add_argument("--name", default=None, help="the server's name (default: TARGET)")
    serve.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    serve.set_defaults(handler=cmd_serve)
    return parser


def run_cli(
    prog: str,
    parser: argparse.ArgumentParser,
    argv: Sequence[str] | None,
) -> int:
    """Parse ``argv`` and run the chosen handler; errors become one line on stderr.

    Shared by the ``tooling`` and ``agent-core`` commands.
    """
    raw = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in raw
    _report_tool_failures(prog, debug)
    try:
        args = parser.parse_args(raw)
        handler: Callable[[argparse.Namespace], int] = args.handler
        return handler(args)
    except CliError as exc:
        if debug:
            raise
        sys.stderr.write(f"{prog}: {exc.message}\n")
        return exc.status
    except KeyboardInterrupt:
        if debug:
            raise
        sys.stderr.write(f"\n{prog}: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # the reader went away (``| head``): stop quietly
        with suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_TOOL_ERROR
    except Exception as exc:
        if debug:
            raise
        sys.stderr.write(
            f"{prog}: {describe_exception(exc)} (run with --debug for the traceback)\n"
        )
        return EXIT_TOOL_ERROR


class _OneLine(logging.Handler):
    """Warnings of the library loggers as one line each, pointing at ``--debug``."""

    def __init__(self, prog: str) -> None:
        super().__init__(logging.WARNING)
        self.prog = prog

    def emit(self, record: logging.LogRecord) -> None:
        hint = " (run with --debug for the traceback)" if record.exc_info else ""
        sys.stderr.write(f"{self.prog}: {one_line(record.getMessage())}{hint}\n")


def _report_tool_failures(prog: str, debug: bool) -> None:
    """Show tool failures (logged by ``tooling`` and ``agent_core``) on stderr: with their
    tracebacks under ``--debug``, else one line each."""
    if debug:
        handler: logging.Handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("%(name)s: %(levelname)s: %(message)s"))
    else:
        handler = _OneLine(prog)
    handler.setLevel(logging.WARNING)
    for name in ("tooling", "agent_core"):
        logger = logging.getLogger(name)
        if not any(isinstance(h, logging.StreamHandler | _OneLine) for h in logger.handlers):
            logger.addHandler(handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tooling`` command."""
    return run_cli("tooling", build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
