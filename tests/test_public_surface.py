"""The public surface of both packages, pinned: a name added or removed is a decision.

Adding or removing a public name fails these tests until the lists below say so (and
``tests/test_docs.py`` until the API reference in ``docs/reference/`` does). Private
modules' ``__all__`` list only what their package re-exports, and neither package has an
import circle.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
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
        "JobInfo",
        "JobOptions",
        "MemoryHit",
        "ReadonlyContext",
        "Reject",
        "Scheduler",
        "SimpleToolContext",
        "ToolActions",
        "ToolCall",
        "ToolContext",
        "ToolError",
        "ToolProgress",
        "ToolResponse",
        "ToolResult",
        "ToolRuntime",
        "tool",
    ],
    "tooling.mcp": [
        "HttpServer",
        "McpAuth",
        "McpServer",
        "McpTool",
        "McpToolset",
        "StdioServer",
    ],
    "tooling.auth": [
        "AccessToken",
        "ApiKey",
        "ApiKeyScheme",
        "AuthConfig",
        "AuthScheme",
        "AuthorizationCodeFlow",
        "BasicCredentials",
        "BearerToken",
        "ClientCredentialsFlow",
        "Credential",
        "CredentialKey",
        "CredentialService",
        "CredentialServiceError",
        "HttpScheme",
        "InMemoryCredentialService",
        "OAuth2Client",
        "OAuth2Flows",
        "OAuth2Scheme",
        "OpenIdConnectScheme",
        "PendingAuthorization",
        "RequestAuth",
        "StoredCredential",
        "Unauthorized",
        "request_auth",
        "scheme_from_openapi",
    ],
    "tooling.builtin": [
        "BuiltinTool",
        "CodeExecution",
        "Document",
        "FileSearch",
        "LocalCodeExecution",
        "PostgresFtsRetriever",
        "Retriever",
        "SqliteFtsRetriever",
        "WebFetch",
        "WebSearch",
        "google_search",
        "retriever_tool",
    ],
    "tooling.openapi": ["OpenAPIToolset", "RestApiTool"],
    "tooling.adapters": [
        "CrewaiTool",
        "LangchainTool",
        "LangchainToolset",
        "to_adk",
        "to_langchain",
        "to_openai_agents",
        "to_pydantic_ai",
    ],
    "tooling.integration": [
        "CAPTURE_KEY",
        "EXIT_OK",
        "EXIT_TOOL_ERROR",
        "EXIT_USAGE",
        "CliError",
        "CliParser",
        "Closing",
        "FoundTool",
        "ProcessPool",
        "RunBudget",
        "WorkerPool",
        "artifact_blob",
        "auth_config_key",
        "call_fingerprint",
        "capture_content",
        "content_json",
        "continued_trace",
        "discover_tools",
        "error_details_from_validation",
        "give_up",
        "input_schema",
        "load_agent_dir",
        "load_target",
        "one_line",
        "pick_version",
        "provider_aliases",
        "provider_name",
        "route_progress",
        "run_cli",
        "state_value_problem",
        "trace_carrier",
        "tracer",
    ],
    "agent_core": [
        "AlreadyExistsError",
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
        "InMemoryJobStore",
        "InMemoryMemoryService",
        "InMemorySessionService",
        "Job",
        "JobStatus",
        "JobStore",
        "LlmRequest",
        "LlmResponse",
        "OpenAIModel",
        "Part",
        "PostgresArtifactService",
        "PostgresCredentialService",
        "ProviderPart",
        "PostgresJobStore",
        "PostgresSessionService",
        "RunConfig",
        "Runner",
        "ScriptedModel",
        "Session",
        "SessionExistsError",
        "SqliteArtifactService",
        "SqliteCredentialService",
        "SqliteJobStore",
        "SqliteSessionService",
        "ToolSearch",
        "UsageMetadata",
        "artifact_service_from_url",
        "credential_service_from_url",
        "job_store_from_url",
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
    """Every module with a private part in its dotted name: ``tooling._errors`` and
    ``tooling._scheduling.dispatch`` alike (a private folder's modules are private)."""
    found = []
    for package in ("tooling", "agent_core"):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if any(part.startswith("_") for part in parts[1:]):
                found.append(".".join(parts))
    return found


def test_private_modules_are_found_in_folders_too() -> None:
    names = set(_private_modules())
    assert {"tooling._errors", "tooling._scheduling.dispatch", "tooling._export.openai"} <= names
    assert "agent_core._invocation.loop" in names


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


# The layers of each package, lowest first. A module imports (at run time, functions
# included) only modules of its own layer or of layers below it. Each entry is a module
# name or a folder's prefix; a module not named belongs to its package's entry points
# (the top layer: ``__init__``, ``cli``, ``integration``, ...).
LAYERS: dict[str, list[list[str]]] = {
    "tooling": [
        # the shared vocabulary
        [
            "tooling._types",
            "tooling._closing",
            "tooling._errors",
            "tooling._jsonsafe",
            "tooling._bounds",
            "tooling._jsonschema",
            "tooling._schema_rewrites",
            "tooling._state",
            "tooling._results",
            "tooling._context",
            "tooling._schema_errors",
            "tooling._policy",
            "tooling._jobs",
        ],
        ["tooling.auth"],  # schemes, credentials, the credential service and the flows
        ["tooling._export"],  # exporters: read a tool's schema, nothing else
        ["tooling._base", "tooling._tracing"],  # BaseTool (its to_* call the exporters)
        ["tooling._workers"],
        ["tooling._function"],
        ["tooling._scheduling"],
        ["tooling.openapi"],  # REST APIs as toolsets (the CLI loads OpenAPI files)
        ["tooling._cli", "tooling._worker"],
        ["tooling.mcp", "tooling.web", "tooling.builtin", "tooling.adapters"],
    ],
    "agent_core": [
        [
            "agent_core._ids",
            "agent_core._config",
            "agent_core._content",
            "agent_core._events",
            "agent_core.sessions.errors",
            "agent_core.sessions.state",
            "agent_core.sessions.base",
            "agent_core.sessions.lease",
            "agent_core.services.base",
            "agent_core.models.base",
            "agent_core._tool_search",
            "agent_core._output",
            # what waits on the user: read by the replay model, the loop, the commands
            "agent_core._invocation.requests",
        ],
        ["agent_core._db"],
        ["agent_core.sessions", "agent_core.services", "agent_core.models", "agent_core.jobs"],
        ["agent_core._agent"],  # what an agent is: model, instruction, tools, callbacks
        ["agent_core._invocation"],
        ["agent_core._service_urls", "agent_core._job_loop"],  # stores by URL; the job loop
        ["agent_core._agent_tool", "agent_core._runner"],
        ["agent_core._cli", "agent_core.trace_db"],
        ["agent_core.web"],
    ],
}


def _layer(name: str) -> tuple[str, int]:
    package = name.split(".")[0]
    layers = LAYERS[package]
    best: tuple[int, int] | None = None  # (length of the matching entry, layer)
    for index, entries in enumerate(layers):
        for entry in entries:
            if (name == entry or name.startswith(f"{entry}.")) and (
                best is None or len(entry) > best[0]
            ):
                best = (len(entry), index)
    return package, len(layers) if best is None else best[1]


def test_the_folders_import_only_downwards() -> None:
    paths: dict[str, Path] = {}
    for package in ("tooling", "agent_core"):
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            paths[name.removesuffix(".__init__")] = path
    modules = set(paths)
    upward = []
    for name, path in sorted(paths.items()):
        package, level = _layer(name)
        for target in sorted(_imports(name, path, modules)):
            if name.startswith(f"{target}."):
                continue  # a module's own package, imported to reach a sibling
            target_package, target_level = _layer(target)
            if target_package == package and target_level > level:
                upward.append(f"{name} (layer {level}) -> {target} (layer {target_level})")
    assert not upward, "upward imports:\n" + "\n".join(upward)


def test_import_tooling_and_declaring_a_tool_do_not_import_asyncio() -> None:
    # asyncio drags in ssl, socket, selectors and subprocess: nothing runs at import or
    # decoration, so none of them is loaded until a tool first runs.
    code = (
        "import sys, tooling\n"
        "@tooling.tool\n"
        "def add(a: int, b: int = 1) -> int:\n"
        "    return a + b\n"
        "heavy = {'asyncio', 'ssl', 'socket', 'selectors', 'subprocess', 'concurrent.futures'}\n"
        "print(sorted(heavy & set(sys.modules)))\n"
        "import asyncio\n"
        "print(asyncio.run(add.run({'a': 2})))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.splitlines() == ["[]", "{'result': 3}"]


def test_tests_import_public_names_from_the_packages() -> None:
    """A test uses a public name as a user does (``from agent_core import Event``), so
    moving a private module never goes unnoticed by the surface, nor hides behind it."""
    import ast

    public = {p: set(importlib.import_module(p).__all__) for p in ("tooling", "agent_core")}
    found = []
    for path in sorted((ROOT / "tests").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.ImportFrom) or not node.module or node.level:
                continue
            top = node.module.split(".")[0]
            if top in public and "._" in node.module:
                names = [a.name for a in node.names if a.name in public[top]]
                if names:
                    found.append(f"{path.name}:{node.lineno} {node.module} {names}")
    assert found == []
