"""``tooling serve`` seen by the official SDK's own client, over stdio and streamable HTTP.

Real processes: ``tooling serve tests/_mcp_tools.py`` as a stdio subprocess (one per
test) and as an HTTP server on 127.0.0.1 (one for the module). Both protocol eras the
SDK speaks are exercised: ``legacy`` (the initialize handshake) and ``auto`` (which
settles on 2026-07-28).
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

import mcp_types as types
from mcp import Client, StdioServerParameters

from tests._mcp_helpers import ROOT, TOOLS, http_server, serve_args
from tests._mcp_tools import PIXEL

MODES = ["legacy", "auto"]

#: The worker threads one session's sync calls may hold at once (see McpServer).
SESSION_THREADS = 16


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    with http_server(TOOLS) as (url, _process):
        yield url


def stdio_params() -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=serve_args(TOOLS), cwd=ROOT)


@asynccontextmanager
async def connect(where: str, mode: str, **options: Any) -> AsyncIterator[Client]:
    server: Any = stdio_params() if where == "stdio" else where
    async with Client(server, mode=mode, cache=None, **options) as client:
        yield client


async def eventually(predicate: Any, timeout: float = 20.0) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return False


def error_body(result: types.CallToolResult) -> dict[str, Any]:
    """The error response a failed call carries as its one text block."""
    assert result.is_error and result.structured_content is None
    (block,) = result.content
    assert isinstance(block, types.TextContent)
    return json.loads(block.text)  # type: ignore[no-any-return]


def targets(http_url: str) -> dict[str, str]:
    return {"stdio": "stdio", "http": http_url}


# -- list, call, results, errors, progress ----------------------------------------------------


async def check_basics(client: Client) -> None:
    listed = {t.name: t for t in (await client.list_tools()).tools}
    assert {"add", "pixel", "refuse", "chatty", "countdown", "delete_record"} <= set(listed)
    add = listed["add"]
    assert add.title == "Add two numbers."
    assert add.input_schema["required"] == ["a", "b"]
    assert add.output_schema == {
        "type": "object",
        "properties": {"result": {"type": "integer"}},
        "required": ["result"],
    }
    assert add.annotations is not None
    assert (add.annotations.read_only_hint, add.annotations.idempotent_hint) == (True, True)
    assert listed["delete_record"].annotations.destructive_hint is True  # type: ignore[union-attr]

    result = await client.call_tool("add", {"a": 2, "b": 3})
    assert not result.is_error
    assert result.structured_content == {"result": 5}
    assert [json.loads(b.text) for b in result.content if isinstance(b, types.TextContent)] == [
        {"result": 5}
    ]

    result = await client.call_tool("pixel", {})
    assert result.structured_content == {
        "image": {"part": 0, "mime_type": "image/png"},
        "file": {"part": 1, "mime_type": "text/plain"},
    }
    image = next(b for b in result.content if isinstance(b, types.ImageContent))
    assert base64.b64decode(image.data) == PIXEL and image.mime_type == "image/png"
    link = next(b for b in result.content if isinstance(b, types.ResourceLink))
    assert link.uri == "file:///tmp/x.txt"

    # Errors travel as text only: a client checks structuredContent against outputSchema.
    result = await client.call_tool("refuse", {"reason": "no"})
    assert result.is_error and result.structured_content is None
    assert error_body(result) == {
        "status": "error",
        "error": {"code": "demo.refused", "message": "refused: no"},
    }

    result = await client.call_tool("add", {"a": "two"})
    error = error_body(result)["error"]
    assert error["code"] == "tool.invalid_arguments"
    assert [d["loc"] for d in error["details"]] == [["a"], ["b"]]

    result = await client.call_tool("explode", {})
    assert error_body(result)["error"]["code"] == "tool.failed"

    result = await client.call_tool("nope", {})
    assert "add" in error_body(result)["error"]["message"]

    # An object or array parameter also takes its JSON as text.
    result = await client.call_tool("place", {"point": '{"x": 1, "y": 2}', "tags": '["t"]'})
    assert result.structured_content == {"x": 1, "y": 2, "tags": ["t"]}
    result = await client.call_tool("place", {"point": "[1, 2]"})
    assert error_body(result)["error"]["details"][0]["loc"] == ["point"]

    seen: list[tuple[float, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, message))

    result = await client.call_tool("chatty", {"steps": 3}, progress_callback=on_progress)
    assert result.structured_content == {"steps": 3}
    assert seen == [(1, "step 1 of 3"), (2, "step 2 of 3"), (3, "step 3 of 3")]

    seen.clear()
    result = await client.call_tool("countdown", {"start": 2}, progress_callback=on_progress)
    assert result.structured_content == {"left": 0}
    assert [(p, json.loads(m or "")) for p, m in seen] == [(1, {"left": 2}), (2, {"left": 1})]


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_over_stdio(mode: str) -> None:
    async with connect("stdio", mode) as client:
        await check_basics(client)


@pytest.mark.parametrize("mode", MODES)
async def test_sdk_client_over_http(http_url: str, mode: str) -> None:
    async with connect(http_url, mode) as client:
        assert client.protocol_version == ("2026-07-28" if mode == "auto" else "2025-11-25")
        await check_basics(client)


# -- confirmation by elicitation ----------------------------------------------------------------


async def check_confirmations(where: str, mode: str) -> None:
    asked: list[str] = []
    answers = iter(["accept", "decline"])

    async def answer(ctx: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        action = next(answers)
        return types.ElicitResult(action=action, content={"confirm": True})  # type: ignore[arg-type]

    async with connect(where, mode, elicitation_callback=answer) as client:
        result = await client.call_tool("delete_record", {"record_id": "r1"})
        assert not result.is_error and result.structured_content == {"deleted": "r1"}
        result = await client.call_tool("delete_record", {"record_id": "r2"})
        assert error_body(result)["error"]["code"] == "tool.rejected"
    assert len(asked) == 2
    assert "Confirm running delete_record." in asked[0] and '"r1"' in asked[0]

    async with connect(where, mode) as client:  # no elicitation: told confirmation is needed
        result = await client.call_tool("delete_record", {"record_id": "r3"})
        body = error_body(result)
        assert body["error"]["code"] == "tool.confirmation_required"
        assert body["confirmation"]["args"] == {"record_id": "r3"}


@pytest.mark.parametrize("mode", MODES)
async def test_confirmation_asks_the_client_over_http(http_url: str, mode: str) -> None:
    await check_confirmations(http_url, mode)


async def test_confirmation_asks_the_client_over_stdio() -> None:
    await check_confirmations("stdio", "legacy")


# -- cancellation and concurrent clients -------------------------------------------------------


async def check_cancel(where: str, mode: str, tmp_path: Path) -> None:
    marker = str(tmp_path / f"cancel-{mode}")
    async with connect(where, mode) as client:
        call = asyncio.create_task(client.call_tool("wait_for", {"marker": marker}))
        assert await eventually(lambda: Path(marker + ".started").exists())
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert await eventually(lambda: Path(marker + ".cancelled").exists())
        # The session goes on: another call is answered.
        result = await client.call_tool("add", {"a": 1, "b": 1})
        assert result.structured_content == {"result": 2}


@pytest.mark.parametrize("mode", MODES)
async def test_a_cancelled_call_is_cancelled_on_the_server_over_http(
    http_url: str, mode: str, tmp_path: Path
) -> None:
    await check_cancel(http_url, mode, tmp_path)


async def test_a_cancelled_call_is_cancelled_on_the_server_over_stdio(tmp_path: Path) -> None:
    await check_cancel("stdio", "auto", tmp_path)


@pytest.mark.parametrize("mode", MODES)
async def test_two_clients_at_once_over_http(http_url: str, mode: str, tmp_path: Path) -> None:
    marker = tmp_path / "release"
    async with connect(http_url, mode) as slow, connect(http_url, mode) as fast:
        waiting = asyncio.create_task(slow.call_tool("wait_for", {"marker": str(marker)}))
        assert await eventually(lambda: Path(f"{marker}.started").exists())
        # The other session is answered while the first one's call still runs.
        result = await fast.call_tool("add", {"a": 20, "b": 22})
        assert result.structured_content == {"result": 42}
        assert not waiting.done()
        marker.write_text("go")
        result = await asyncio.wait_for(waiting, 30)
        assert result.structured_content == {"result": "released"}


async def test_one_sessions_hung_sync_calls_hold_only_its_share_of_threads(
    http_url: str, tmp_path: Path
) -> None:
    mode = "legacy"  # 2026-07-28 requests carry no session: they share the server's pool
    marker = tmp_path / "release"
    started = lambda: len(list(tmp_path.glob("release.started-*")))  # noqa: E731
    async with connect(http_url, mode) as greedy, connect(http_url, mode) as other:
        calls = [
            asyncio.create_task(greedy.call_tool("hold", {"marker": str(marker), "index": i}))
            for i in range(SESSION_THREADS + 4)
        ]
        try:
            assert await eventually(lambda: started() >= SESSION_THREADS)
            # Another session's sync call gets a thread while the first one's hang.
            result = await asyncio.wait_for(other.call_tool("add", {"a": 1, "b": 2}), 30)
            assert result.structured_content == {"result": 3}
            await asyncio.sleep(0.3)
            count = started()
        finally:
            marker.write_text("go")
        results = await asyncio.wait_for(asyncio.gather(*calls), 60)
    assert count == SESSION_THREADS  # the rest waited for the session's share
    assert sorted(r.structured_content["result"] for r in results) == list(  # type: ignore[index]
        range(SESSION_THREADS + 4)
    )


async def test_served_calls_have_a_time_limit(tmp_path: Path) -> None:
    from importlib.metadata import version

    from tooling.mcp import McpServer

    assert McpServer([], name="x")._options["timeout"] == 60.0
    params = StdioServerParameters(
        command=sys.executable, args=serve_args(TOOLS, "--timeout", "0.5"), cwd=ROOT
    )
    async with Client(params, mode="legacy", cache=None) as client:
        # Named after the file, not the path as typed, and with this package's version.
        assert client.server_info is not None
        assert client.server_info.name == "_mcp_tools"
        assert client.server_info.version == version("agent-tooling")
        result = await client.call_tool("wait_for", {"marker": str(tmp_path / "never")})
        assert error_body(result)["error"]["code"] == "tool.timeout"
    assert (tmp_path / "never.cancelled").exists()


async def test_ending_a_session_cancels_its_calls_over_http(http_url: str, tmp_path: Path) -> None:
    marker = str(tmp_path / "ended")
    async with connect(http_url, "legacy") as client:
        call = asyncio.create_task(client.call_tool("wait_for", {"marker": marker}))
        assert await eventually(lambda: Path(marker + ".started").exists())
        # Leaving the block ends the HTTP session (a DELETE) with the call still running.
    with pytest.raises(BaseException):
        await call
    assert await eventually(lambda: Path(marker + ".cancelled").exists())


async def test_a_dropped_http_stream_is_not_a_cancel(http_url: str, tmp_path: Path) -> None:
    import httpx2  # the HTTP client the SDK itself uses

    marker = tmp_path / "dropped-stream"
    headers = {"Accept": "application/json, text/event-stream"}
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }
    async with httpx2.AsyncClient(timeout=30) as http:
        opened = await http.post(http_url, json=hello, headers=headers)
        session = {**headers, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        done = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        await http.post(http_url, json=done, headers=session)
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "wait_for", "arguments": {"marker": str(marker)}},
        }
        async with http.stream("POST", http_url, json=call, headers=session):
            assert await eventually(lambda: Path(f"{marker}.started").exists())
        # The response stream is gone (its connection closed), the session is not: the
        # call runs on, as the MCP specification says a disconnect is not a cancel.
        await asyncio.sleep(1.0)
        assert not Path(f"{marker}.cancelled").exists()
        marker.write_text("go")
        await http.delete(http_url, headers=session)


# -- the command -------------------------------------------------------------------------------


def test_serve_refuses_a_target_without_tools(tmp_path: Path) -> None:
    import subprocess

    empty = tmp_path / "empty.py"
    empty.write_text("x = 1\n")
    done = subprocess.run(
        [sys.executable, *serve_args(str(empty))], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert "no tools found" in done.stderr


def test_serve_rejects_a_bad_address() -> None:
    import subprocess

    done = subprocess.run(
        [sys.executable, *serve_args(TOOLS, "--http", "localhost:http")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "[HOST:]PORT" in done.stderr


def test_importing_tooling_does_not_import_mcp() -> None:
    import subprocess

    code = (
        "import sys, tooling, tooling.cli\n"
        "assert not [m for m in sys.modules if m.startswith('mcp')]"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


async def test_a_dropped_connection_cancels_the_call_over_stdio(tmp_path: Path) -> None:
    marker = str(tmp_path / "dropped")
    async with connect("stdio", "auto") as client:
        call = asyncio.create_task(client.call_tool("wait_for", {"marker": marker}))
        assert await eventually(lambda: Path(marker + ".started").exists())
        # Leaving the block closes the server's stdin with the call still running.
    with pytest.raises(BaseException):  # the pending call ends with the connection
        await call
    assert await eventually(lambda: Path(marker + ".cancelled").exists())
