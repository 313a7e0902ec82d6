"""The public surface of both packages, pinned: a name added or removed is a decision.

Adding or removing a public name fails these tests until the lists below say so (and
``tests/test_docs.py`` until the API reference in ``docs/reference/`` does). Private
modules' ``__all__`` list only what their package re-exports, and neither package has an
import circle.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SURFACE: dict[str, list[str]] = {
    "tooling": [
        "BaseTool",
        "BaseToolset",
        "Blob",
        "CheckedArguments",
        "Confirmation",
        "Diagnostic",
        "ExecutionStrategy",
        "FileRef",
        "FunctionTool",
        "MemoryHit",
        "ReadonlyContext",
        "Scheduler",
        "SimpleToolContext",
        "ToolActions",
        "ToolCall",
        "ToolContext",
        "ToolError",
        "ToolProgress",
        "ToolResponse",
        "ToolRuntime",
        "tool",
    ],
    "tooling.mcp": ["HttpServer", "McpServer", "McpTool", "McpToolset", "StdioServer"],
    "tooling.integration": [
        "CAPTURE_KEY",
        "EXIT_OK",
        "EXIT_TOOL_ERROR",
        "EXIT_USAGE",
        "CliError",
        "CliParser",
        "FoundTool",
        "ProcessPool",
        "WorkerPool",
        "artifact_blob",
        "auth_config_key",
        "capture_content",
        "content_json",
        "continued_trace",
        "discover_tools",
        "error_details_from_validation",
        "input_schema",
        "load_agent_dir",
        "load_target",
        "one_line",
        "pick_version",
        "run_cli",
        "state_value_problem",
        "trace_carrier",
        "tracer",
    ],
    "agent_core": [
        "Agent",
        "AgentTool",
        "AnthropicModel",
        "BaseLlm",
        "Content",
        "Event",
        "EventActions",
        "FunctionCall",
        "FunctionResponse",
        "GeminiModel",
        "InMemoryArtifactService",
        "InMemoryMemoryService",
        "InMemorySessionService",
        "LlmRequest",
        "LlmResponse",
        "OpenAIModel",
        "Part",
        "PostgresArtifactService",
        "PostgresSessionService",
        "RunConfig",
        "Runner",
        "ScriptedModel",
        "Session",
        "SessionExistsError",
        "SqliteArtifactService",
        "SqliteSessionService",
        "artifact_service_from_url",
        "session_service_from_url",
    ],
}


@pytest.mark.parametrize("package", sorted(SURFACE))
def test_the_public_names_are_exactly_the_pinned_ones(package: str) -> None:
    module = importlib.import_module(package)
    assert sorted(module.__all__) == sorted(SURFACE[package])
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name} does not resolve"


def _private_modules() -> list[str]:
    found = []
    for package in ("tooling", "agent_core"):
        for path in sorted((ROOT / package).rglob("_*.py")):
            if path.name != "__init__.py":
                found.append(".".join(path.relative_to(ROOT).with_suffix("").parts))
    return found


def _public_parent(name: str) -> str:
    parent = name.rsplit(".", 1)[0]
    while parent.rsplit(".", 1)[-1].startswith("_"):
        parent = parent.rsplit(".", 1)[0]
    return parent


@pytest.mark.parametrize("name", _private_modules())
def test_a_private_module_lists_only_what_its_package_publishes(name: str) -> None:
    module = importlib.import_module(name)
    listed = getattr(module, "__all__", None)
    if listed is None:
        return
    parent = _public_parent(name)
    while not hasattr(importlib.import_module(parent), "__all__"):
        parent = parent.rsplit(".", 1)[0]  # a package without a face of its own
    published = set(importlib.import_module(parent).__all__)
    if parent == "tooling":  # the loop-facing names are published by tooling.integration
        published |= set(importlib.import_module("tooling.integration").__all__)
    assert set(listed) <= published, f"{name} lists {sorted(set(listed) - published)}"


def _imports(name: str, path: Path, modules: set[str]) -> set[str]:
    """The project modules ``name`` imports anywhere (functions included; not the ones
    only under ``if TYPE_CHECKING``)."""
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                continue
            if isinstance(child, ast.Import):
                found.update(a.name for a in child.names if a.name in modules)
            elif isinstance(child, ast.ImportFrom):
                base = package.split(".")
                if child.level > 1:
                    base = base[: len(base) - (child.level - 1)]
                origin = child.module or ""
                if child.level:
                    origin = ".".join([*base, *([child.module] if child.module else [])])
                submodules = {f"{origin}.{a.name}" for a in child.names} & modules
                # ``from . import _x`` needs the submodule, not the package's own names.
                found.update(submodules or ({origin} & modules))
            visit(child)

    visit(ast.parse(path.read_text()))
    found.discard(name)
    return found


def test_no_import_circle_in_either_package() -> None:
    paths: dict[str, Path] = {}
    for package in ("tooling", "agent_core"):
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            paths[name.removesuffix(".__init__")] = path
    modules = set(paths)
    graph = {name: _imports(name, path, modules) for name, path in paths.items()}
    # A package importing its own submodules is how packages work: not a circle.
    for name, targets in graph.items():
        graph[name] = {t for t in targets if not name.startswith(f"{t}.")}

    circles: list[list[str]] = []
    state: dict[str, int] = {}  # 1: on the path, 2: done
    path: list[str] = []

    def walk(node: str) -> None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                circles.append([*path[path.index(target) :], target])
            elif target not in state:
                walk(target)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            walk(node)
    assert not circles, "import circles: " + "; ".join(" -> ".join(c) for c in circles)
