"""Loading a target (module, file, agent folder) and finding its tools, for the CLIs and
the inspector; errors as ``CliError``s a command tells in one line."""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import os
import re
import sys
import types
import warnings
from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .._base import BaseTool, BaseToolset
from .._function.tool import FunctionTool, is_method_tool
from .._scheduling.planning import scheduling_of

__all__: list[str] = []


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


OPENAPI_SUFFIXES = (".json", ".yaml", ".yml")


def load_openapi(path: str, base_url: str | None = None) -> tuple[str, object]:
    """An OpenAPI file (``.json``, ``.yaml``, ``.yml`` holding an ``openapi`` key) as an
    ``OpenAPIToolset``; what it left out goes to stderr."""
    from ..openapi import OpenAPIToolset
    from ..openapi._document import SpecError, load

    file = Path(path)
    if not file.is_file():
        raise CliError(f"no such file: {path}")
    try:
        load(file)
    except SpecError as exc:
        if "no 'openapi' version" in str(exc):
            raise CliError(f"{path} is not an OpenAPI document (it has no 'openapi' key)") from None
        raise CliError(f"cannot load {path}: {one_line(str(exc))}") from None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            toolset = OpenAPIToolset(file, base_url=base_url)
    except ValueError as exc:
        raise CliError(f"cannot load {path}: {one_line(str(exc))}") from None
    for diagnostic in toolset.diagnostics:
        sys.stderr.write(f"tooling: {diagnostic.code}: {one_line(diagnostic.message)}\n")
    return path, toolset


def load_target(target: str, *, base_url: str | None = None) -> tuple[str, object]:
    """Resolve TARGET to ``(label, object)``: a module or the attribute it names.

    TARGET: ``pkg.mod``, ``pkg.mod:attr`` (dotted attribute paths allowed), a ``.py`` path
    optionally followed by ``:attr``, a directory holding ``agent.py``, or an OpenAPI file
    (``.json``, ``.yaml``, ``.yml``: an ``OpenAPIToolset``, its requests sent to
    ``base_url`` if given, else to the spec's first server).
    """
    if not target:
        raise CliError("empty target: give a module, module:attr or a .py path")
    if target.lower().endswith(OPENAPI_SUFFIXES):
        return load_openapi(target, base_url)
    if base_url is not None:
        raise CliError("--base-url applies to an OpenAPI file TARGET (.json, .yaml, .yml) only")
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
        # Shown by the file's own name, not the module name made up to import it.
        label = file_label(Path(module.__file__ or candidate))
    else:
        if not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*", base):
            raise CliError(f"not a module name, module:attr or .py path: {target}")
        module = _import_module(base)
        label = module.__name__
    if not attr:
        return label, module
    found: object = module
    for piece in attr.split("."):
        try:
            found = getattr(found, piece)
        except AttributeError:
            raise CliError(f"{base} has no attribute {attr!r}") from None
    return f"{label}:{attr}", found


def file_label(path: Path) -> str:
    """How a loaded file is shown: its name, with its folder's for an ``agent.py`` or an
    ``__init__.py`` (``helpdesk/agent.py``)."""
    if path.name in ("agent.py", "__init__.py"):
        return f"{path.resolve().parent.name}/{path.name}"
    return path.name


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
            if isinstance(attr, FunctionTool) and is_method_tool(attr):
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


async def close_toolsets(toolsets: Iterable[BaseToolset]) -> None:
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


def tool_flags(tool: BaseTool) -> dict[str, Any]:
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


def inspect_tool(entry: FoundTool, provider: str) -> dict[str, Any]:
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
        flags=tool_flags(tool),
        scheduling=scheduling_of(tool),
        provider=provider,
        schema=schema,
        diagnostics=diagnostics,
    )
    return report
