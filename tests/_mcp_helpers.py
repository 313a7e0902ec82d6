"""Starting real MCP servers for the tests: ``tooling serve`` over stdio or HTTP."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOOLS = str(ROOT / "tests" / "_mcp_tools.py")
SDK_SERVER = str(ROOT / "tests" / "_mcp_sdk_server.py")

#: ``tooling ...`` as this interpreter runs it (no reliance on the console script).
TOOLING = [sys.executable, "-c", "import sys; from tooling.cli import main; sys.exit(main())"]


def serve_args(target: str = TOOLS, *extra: str) -> list[str]:
    """The arguments after the interpreter for ``tooling serve target extra...``."""
    return [*TOOLING[1:], "serve", target, *extra]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port} after {timeout} s")


def stop(process: subprocess.Popen[bytes], *, hard: bool = False) -> None:
    if hard:
        process.kill()
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


@contextmanager
def http_server(
    target: str = TOOLS,
    port: int | None = None,
    *,
    script: bool = False,
    kill: bool = False,
    extra: tuple[str, ...] = (),
) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A server on 127.0.0.1: ``tooling serve target --http`` (or ``target`` run as a
    script taking ``--port``); yields its URL and process, then stops it (``kill``: at
    once, with SIGKILL)."""
    port = port or free_port()
    if script:
        args = [sys.executable, target, "--port", str(port), *extra]
    else:
        args = [sys.executable, *serve_args(target, "--http", f"127.0.0.1:{port}", *extra)]
    process = subprocess.Popen(
        args, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=dict(os.environ)
    )
    try:
        wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp", process
    finally:
        stop(process, hard=kill)


def wait_until(predicate: object, timeout: float = 20.0) -> bool:
    """Poll ``predicate()`` until true or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return True
        time.sleep(0.02)
    return False
