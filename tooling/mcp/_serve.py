"""``tooling serve TARGET [--http [HOST:]PORT]``: a target's tools as an MCP server.

TARGET is found as ``tooling inspect`` finds it. The server is named after the target's
file, folder or module (``--name`` overrides) and carries this package's version; each
call has ``--timeout`` seconds (60 unless set). Tools are served as found; toolsets are
served as toolsets (asked at each listing). Nothing but the protocol goes to stdout:
logs and messages go to stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from .._base import BaseTool, BaseToolset
from .._cli.discovery import CliError, discover_tools, load_target
from ._server import McpServer, Transport

__all__: list[str] = []

DEFAULT_HOST = "127.0.0.1"


def parse_address(text: str) -> tuple[str, int]:
    """``[HOST:]PORT`` as ``(host, port)``; the host defaults to ``127.0.0.1``."""
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host = DEFAULT_HOST
    host = host.strip("[]") or DEFAULT_HOST
    try:
        port = int(port_text)
    except ValueError:
        raise CliError(f"--http wants [HOST:]PORT, not {text!r}") from None
    if not 0 <= port <= 65535:
        raise CliError(f"port {port} is out of range (0-65535)")
    return host, port


async def _collect(target: str, base_url: str | None) -> list[BaseTool | BaseToolset]:
    label, obj = load_target(target, base_url=base_url)
    found, toolsets = await discover_tools(obj, label)
    broken = [f for f in found if f.error is not None]
    if broken:
        for entry in broken:
            sys.stderr.write(
                f"tooling: tool {entry.name!r} ({entry.origin}) cannot be built: {entry.error}\n"
            )
        raise CliError(f"not serving {target}: {len(broken)} tool(s) cannot be built")
    served: list[BaseTool | BaseToolset] = [
        f.tool for f in found if f.tool is not None and f.toolset is None
    ]
    served.extend(toolsets)
    if not served:
        raise CliError(f"no tools found in {target}", status=1)
    return served


def server_name(target: str) -> str:
    """The name a target is served under: its file's, folder's or module's own name."""
    where = target
    if ":" in target and not Path(target).exists():
        where = target.rsplit(":", 1)[0]  # module:attr or path.py:attr
    path = Path(where)
    if where.endswith(".py") or path.exists():
        return path.resolve().stem or where
    return where


def serving_version() -> str:
    """The version ``serverInfo`` carries: this package's."""
    try:
        return version("agent-tooling")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0"


def serve(args: argparse.Namespace) -> int:
    """Run the ``serve`` command (see the module docs)."""
    logging.basicConfig(
        stream=sys.stderr, level=logging.INFO, format="%(name)s: %(levelname)s: %(message)s"
    )
    served = asyncio.run(_collect(args.target, getattr(args, "base_url", None)))
    try:
        auth = None
        if args.auth_issuer or args.auth_audience:
            if not (args.auth_issuer and args.auth_audience):
                raise CliError("--auth-issuer and --auth-audience go together")
            if args.http is None:
                raise CliError("--auth-issuer needs --http: stdio has no bearer tokens")
            from ._auth import McpAuth

            auth = McpAuth(args.auth_issuer, args.auth_audience)
        server = McpServer(
            served,
            name=args.name or server_name(args.target),
            version=serving_version(),
            timeout=args.timeout if args.timeout > 0 else None,
            auth=auth,
        )
    except (TypeError, ValueError) as exc:
        raise CliError(f"cannot serve {args.target}: {exc}") from exc
    count = sum(1 for s in served if isinstance(s, BaseTool))
    what = f"{count} tool(s)" + (
        f" and {len(served) - count} toolset(s)" if len(served) > count else ""
    )
    options: dict[str, Any] = {}
    transport: Transport
    if args.http is None:
        sys.stderr.write(f"tooling: serving {what} from {args.target} over stdio\n")
        transport = "stdio"
    else:
        host, port = parse_address(args.http)
        shown = f"[{host}]" if ":" in host else host
        sys.stderr.write(
            f"tooling: serving {what} from {args.target} at http://{shown}:{port}/mcp\n"
        )
        transport = "streamable-http"
        options = {"host": host, "port": port}
    sys.stderr.flush()
    server.run(transport, **options)
    return 0
