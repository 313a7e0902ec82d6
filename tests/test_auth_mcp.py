"""MCP served behind bearer tokens: the SDK's resource-server support with JWTs from a
real Authlib authorization server; a token's scopes decide what a client sees and may
call. Also ``tooling serve --http --auth-issuer --auth-audience``."""

from __future__ import annotations

import asyncio
import copy
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest
from _mcp_helpers import free_port, serve_args, stop, wait_for_port

from examples._authorization_server import RunningServer, oauth_server
from tooling import Scheduler, ToolCall, tool
from tooling.auth import OAuth2Client
from tooling.mcp import HttpServer, McpAuth, McpServer, McpToolset
from tooling.mcp._auth import JwtVerifier

AUDIENCE = "mcp-tools"
ROOT = Path(__file__).resolve().parent.parent


@tool(read_only=True, scopes=["read"])
def list_notes() -> list[str]:
    """List the notes."""
    return ["one", "two"]


@tool(scopes=["write"])
def add_note(text: str) -> str:
    """Add a note."""
    return f"added {text}"


@tool
def ping() -> str:
    """Answer pong (no scope needed)."""
    return "pong"


@pytest.fixture
def issuer() -> Iterator[RunningServer]:
    with oauth_server() as running:
        running.add_client("reader", "r-secret", "client_credentials")
        running.add_client("writer", "w-secret", "client_credentials", scope="read write")
        running.issue_jwts(AUDIENCE)
        yield running


def token(issuer: RunningServer, client: str, secret: str, scope: str) -> str:
    answer = httpx2.post(
        issuer.token_url,
        data={"grant_type": "client_credentials", "scope": scope},
        auth=(client, secret),
    )
    assert answer.status_code == 200, answer.text
    return str(answer.json()["access_token"])


class Revocable:
    """The default JWT verifier, plus tokens the test revokes before they expire."""

    def __init__(self, issuer: str) -> None:
        self.inner = JwtVerifier(issuer, AUDIENCE)
        self.revoked: set[str] = set()
        self.seen: list[str] = []

    async def verify_token(self, token: str) -> Any:
        self.seen.append(token)
        return None if token in self.revoked else await self.inner.verify_token(token)


@pytest.fixture
def verifier(issuer: RunningServer) -> Revocable:
    return Revocable(issuer.url)


@pytest.fixture
def served(issuer: RunningServer, verifier: Revocable) -> Iterator[str]:
    """Our MCP server with ``auth=`` on 127.0.0.1, in a thread; yields its URL."""
    server = McpServer(
        [list_notes, add_note, ping],
        name="notes",
        auth=McpAuth(issuer.url, AUDIENCE, verifier=verifier),
    )
    port = free_port()
    loop = asyncio.new_event_loop()
    task: asyncio.Task[None] | None = None

    def run() -> None:
        nonlocal task
        task = loop.create_task(server.run_async("streamable-http", port=port))
        try:
            loop.run_until_complete(task)
        except asyncio.CancelledError:
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while True:
        try:
            httpx2.get(f"http://127.0.0.1:{port}/", timeout=1)
            break
        except httpx2.HTTPError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        loop.call_soon_threadsafe(lambda: task.cancel() if task is not None else None)
        thread.join(timeout=10)


async def names_and_call(
    url: str, bearer: str, name: str, args: dict[str, object] | None = None
) -> tuple[list[str], dict[str, object]]:
    """The tools a client with ``bearer`` is shown, and what calling ``name`` gives it."""
    toolset = McpToolset(HttpServer(url, headers={"Authorization": f"Bearer {bearer}"}))
    try:
        tools = {t.name: t for t in await toolset.get_tools()}
        target = tools.get(name)
        if target is None:  # not listed: a client calls it by name all the same
            target = copy.copy(tools.get("ping") or next(iter(tools.values())))
            target.name = target.remote_name = name  # type: ignore[attr-defined]
        call = ToolCall(id="c", name=name, args=args or {})
        (response,) = await Scheduler([target]).dispatch([call])
        return sorted(tools), response.response
    finally:
        await toolset.close()


def test_a_request_without_a_token_or_with_a_bad_one_gets_a_401_with_the_metadata(
    served: str, issuer: RunningServer
) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    missing = httpx2.post(served, json=body)
    forged = httpx2.post(served, json=body, headers={"Authorization": "Bearer not.a.jwt"})

    for answer in (missing, forged):
        assert answer.status_code == 401
        assert "resource_metadata=" in answer.headers["www-authenticate"]
    metadata = httpx2.get(
        served.replace("/mcp", "/.well-known/oauth-protected-resource/mcp")
    ).json()
    assert [u.rstrip("/") for u in metadata["authorization_servers"]] == [issuer.url]


async def test_a_read_token_sees_and_calls_only_what_read_allows(
    served: str, issuer: RunningServer
) -> None:
    reader = token(issuer, "reader", "r-secret", "read")

    names, listed = await names_and_call(served, reader, "list_notes")
    assert names == ["list_notes", "ping"]
    assert listed == {"result": ["one", "two"]}

    _, refused = await names_and_call(served, reader, "add_note")
    assert "tool.forbidden" in str(refused) and "write" in str(refused)


async def test_a_token_with_both_scopes_sees_and_calls_everything(
    served: str, issuer: RunningServer
) -> None:
    writer = token(issuer, "writer", "w-secret", "read write")

    names, added = await names_and_call(served, writer, "add_note", {"text": "hi"})

    assert names == ["add_note", "list_notes", "ping"]
    assert added == {"result": "added hi"}


async def test_a_toolset_with_oauth2_client_gets_its_own_token_and_a_new_one_when_refused(
    served: str, issuer: RunningServer, verifier: Revocable
) -> None:
    client = OAuth2Client(client_id="writer", client_secret="w-secret", scopes=("read", "write"))
    toolset = McpToolset(HttpServer(served, auth=client, auth_issuer=issuer.url))
    try:
        tools = {t.name: t for t in await toolset.get_tools()}
        assert sorted(tools) == ["add_note", "list_notes", "ping"]
        scheduler = Scheduler(list(tools.values()))
        call = [ToolCall(id="c1", name="add_note", args={"text": "a"})]
        assert (await scheduler.dispatch(call))[0].response == {"result": "added a"}
        assert issuer.store.requests["client_credentials"] == 1

        verifier.revoked.add(verifier.seen[-1])  # the server stops accepting that token
        again = [ToolCall(id="c2", name="add_note", args={"text": "b"})]
        assert (await scheduler.dispatch(again))[0].response == {"result": "added b"}
        assert issuer.store.requests["client_credentials"] == 2
    finally:
        await toolset.close()
    assert "w-secret" not in repr(toolset) and "w-secret" not in repr(
        HttpServer(served, auth=client)
    )


async def test_toolsets_sharing_a_credential_service_share_the_token(
    served: str, issuer: RunningServer, tmp_path: Path
) -> None:
    from agent_core import SqliteCredentialService

    client = OAuth2Client(client_id="reader", client_secret="r-secret", scopes=("read",))
    for _ in range(3):  # three connections, as three processes would open
        with SqliteCredentialService(tmp_path / "tokens.db") as service:
            server = HttpServer(
                served, auth=client, auth_issuer=issuer.url, credential_service=service
            )
            toolset = McpToolset(server)
            try:
                tools = {t.name: t for t in await toolset.get_tools()}
                call = [ToolCall(id="c", name="list_notes", args={})]
                (response,) = await Scheduler([tools["list_notes"]]).dispatch(call)
                assert response.response == {"result": ["one", "two"]}
            finally:
                await toolset.close()
    assert issuer.store.requests["client_credentials"] == 1
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("tokens.db*"))
    assert b"r-secret" not in raw


def test_tooling_serve_verifies_tokens_from_the_issuer(
    issuer: RunningServer, tmp_path: Path
) -> None:
    target = tmp_path / "notes_tools.py"
    target.write_text(
        "from tooling import tool\n\n"
        "@tool(read_only=True, scopes=['read'])\n"
        "def list_notes() -> list[str]:\n"
        "    '''List the notes.'''\n"
        "    return ['one']\n\n"
        "@tool(scopes=['write'])\n"
        "def add_note(text: str) -> str:\n"
        "    '''Add a note.'''\n"
        "    return text\n"
    )
    port = free_port()
    args = serve_args(str(target), "--http", f"127.0.0.1:{port}")
    args += ["--auth-issuer", issuer.url, "--auth-audience", AUDIENCE]
    process = subprocess.Popen(
        [sys.executable, *args],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ),
    )
    try:
        wait_for_port(port, process)
        url = f"http://127.0.0.1:{port}/mcp"
        assert (
            httpx2.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "ping"}).status_code == 401
        )
        reader = token(issuer, "reader", "r-secret", "read")
        names, listed = asyncio.run(names_and_call(url, reader, "list_notes"))
        assert names == ["list_notes"] and listed == {"result": ["one"]}
    finally:
        stop(process)


def test_auth_options_go_together_and_need_http(tmp_path: Path) -> None:
    target = tmp_path / "t.py"
    target.write_text("from tooling import tool\n\n@tool\ndef f() -> int:\n    return 1\n")
    half = subprocess.run(
        [sys.executable, *serve_args(str(target), "--http", "0", "--auth-issuer", "http://x")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    stdio = subprocess.run(
        [
            sys.executable,
            *serve_args(str(target), "--auth-issuer", "http://x", "--auth-audience", "a"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert half.returncode != 0 and "go together" in half.stderr
    assert stdio.returncode != 0 and "needs --http" in stdio.stderr


async def test_tokens_naming_unknown_keys_do_not_make_the_verifier_fetch_each_time(
    issuer: RunningServer,
) -> None:
    import jwt

    verifier = JwtVerifier(issuer.url, AUDIENCE)
    good = token(issuer, "reader", "r-secret", "read")
    assert (await verifier.verify_token(good)) is not None
    fetched = verifier._fetched_at
    for i in range(5):
        forged = jwt.encode({"aud": AUDIENCE}, "k" * 32, headers={"kid": f"nope-{i}"})
        assert await verifier.verify_token(forged) is None
    assert verifier._fetched_at == fetched  # no new fetch within the minute
