"""The ``tooling`` command: look at tools and run one, from the shell.

``tooling inspect TARGET [--provider P] [--json]``
    Every tool found in TARGET with its description, flags, how the AUTO strategy
    schedules its calls (beside other safe reads, keyed by a conflict key, or a barrier),
    schema as provider ``P`` sees it (``gemini`` by default; also ``gemini-legacy``,
    ``openai``, ``openai-strict``, ``anthropic``, ``mcp``) and diagnostics. Exits 1 when a tool
    cannot be built (the others are still shown; each failure is one line on stderr).
    ``--web [--host H] [--port P] [--no-browser]`` serves the same as a local web page
    (see ``tooling.web``) and prints its URL with the access token. ``--lint`` reports
    instead what the tool policies make visible: names a provider is given differently
    (and two tools one provider would confuse), tools hidden by scopes or ``available=``,
    guardrails, budgets, retries that need ``idempotent``.

``tooling serve TARGET [--http [HOST:]PORT] [--name NAME] [--timeout SECONDS]
[--auth-issuer URL --auth-audience AUD]``
    Serves TARGET's tools as an MCP server (needs the ``mcp`` extra): over stdio by
    default, over streamable HTTP at ``http://HOST:PORT/mcp`` with ``--http`` (host
    ``127.0.0.1`` unless given). Toolsets are asked for their tools at each listing.
    Logs go to stderr only. With ``--auth-issuer``/``--auth-audience`` only bearer
    tokens (JWTs) that issuer signed for that audience are accepted; their scopes are
    the calls' granted scopes.

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
directory holding an ``agent.py``, or an OpenAPI file (``.json``, ``.yaml``, ``.yml``
holding an ``openapi`` key): an ``OpenAPIToolset``, one tool per operation, its
requests sent to ``--base-url URL`` (all three commands take it) or else to the spec's
first server. In a module, tools are the ``BaseTool`` instances
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
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from ._cli.calling import call_tool
from ._cli.discovery import (
    EXIT_OK,
    EXIT_TOOL_ERROR,
    PROVIDERS,
    CliError,
    FoundTool,
    close_toolsets,
    discover_tools,
    export_schema,
    inspect_tool,
    load_agent_dir,
    load_file,
    load_target,
)
from ._cli.support import CliParser, run_cli

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
    label, obj = load_target(args.target, base_url=args.base_url)
    if args.web:
        from .web import serve_target, wait_until_interrupted

        server = serve_target(obj, label, host=args.host, port=args.port)
        return wait_until_interrupted(server, "tooling", browser=not args.no_browser)

    async def gather() -> list[dict[str, Any]]:
        found, toolsets = await discover_tools(obj, label)
        try:
            if args.lint:
                from ._cli.lint import lint

                return lint([entry.tool for entry in found if entry.tool is not None])
            return [inspect_tool(entry, args.provider) for entry in found]
        finally:
            await close_toolsets(toolsets)

    reports = asyncio.run(gather())
    if args.lint:
        from ._cli.lint import print_findings

        if args.json:
            sys.stdout.write(json.dumps(reports, indent=2, ensure_ascii=False) + "\n")
        else:
            print_findings(reports, sys.stdout)
        return EXIT_OK
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


def cmd_call(args: argparse.Namespace) -> int:
    return asyncio.run(call_tool(args))


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


def _base_url_option(command: argparse.ArgumentParser) -> None:
    command.add_argument(
        "--base-url",
        metavar="URL",
        default=None,
        help="for an OpenAPI file TARGET: where its requests go (default: the spec's server)",
    )


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
    inspect.add_argument(
        "--lint",
        action="store_true",
        help="report what the tool policies make visible (renamed names, scopes, budgets)",
    )
    inspect.add_argument("--host", default="127.0.0.1", help="with --web: address to bind")
    inspect.add_argument("--port", type=int, default=8000, help="with --web: port (0: any)")
    inspect.add_argument(
        "--no-browser", action="store_true", help="with --web: do not open a browser"
    )
    _base_url_option(inspect)
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
    _base_url_option(call)
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
    serve.add_argument(
        "--name", default=None, help="the server's name (default: TARGET's file or module name)"
    )
    serve.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="time limit of each call (default: 60; 0: no limit)",
    )
    _base_url_option(serve)
    serve.add_argument(
        "--auth-issuer",
        metavar="URL",
        default=None,
        help="accept only bearer tokens (JWT) issued by this authorization server",
    )
    serve.add_argument(
        "--auth-audience",
        metavar="AUD",
        default=None,
        help="the audience those tokens must carry (with --auth-issuer)",
    )
    serve.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    serve.set_defaults(handler=cmd_serve)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``tooling`` command."""
    return run_cli("tooling", build_parser(), argv)


if __name__ == "__main__":
    sys.exit(main())
