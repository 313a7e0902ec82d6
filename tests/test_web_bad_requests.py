"""The inspector under bad input and failing stores: the token is checked before a body is
read, reads are bounded in time and size, malformed requests get a 4xx in our own words,
a 500 never carries an exception's text, and ``Accept: application/json`` gets one JSON
object instead of server-sent events. Plain sockets against a real server on 127.0.0.1."""

from __future__ import annotations

import http.client
import json
import socket
import time
from collections.abc import Iterator
from typing import Any

import pytest

from agent_core import Agent, InMemorySessionService, Runner, ScriptedModel
from agent_core.web import serve
from tooling import tool
from tooling.web import WebServer, serve_tools

SECRET_DSN = "postgresql://app:hunter2@db.internal:5432/prod"


@tool(read_only=True)
def add(a: int, b: int = 1) -> int:
    """Add two numbers."""
    return a + b


@pytest.fixture
def server() -> Iterator[WebServer]:
    with serve_tools([add], title="t") as made:
        yield made


def raw(server: WebServer, data: bytes, *, wait: float = 5.0) -> tuple[int, dict[str, Any], bytes]:
    """Send ``data`` as is; the status, headers and body of the answer."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=wait) as sock:
        sock.sendall(data)
        chunks = []
        while True:
            try:
                chunk = sock.recv(65536)
            except (ConnectionResetError, BrokenPipeError):
                break
            if not chunk:
                break
            chunks.append(chunk)
            if b"\r\n\r\n" in b"".join(chunks):
                head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
                length = [
                    int(line.split(b":")[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                ]
                if length and len(body) >= length[0]:
                    break
    data = b"".join(chunks)
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    return status, headers, body


def post(server: WebServer, path: str, *, headers: dict[str, str], body: bytes = b"") -> bytes:
    lines = [f"POST {path} HTTP/1.1", f"Host: 127.0.0.1:{server.port}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def test_the_token_is_checked_before_the_body_is_read(server: WebServer) -> None:
    # A body announced but never sent: the refusal does not wait for it (a server reading
    # first would answer 408 once its read timed out, long after this client gave up).
    server.read_timeout = 60
    status, _, body = raw(
        server,
        post(server, "/api/tools/add/call", headers={"Content-Length": "1000000"}),
        wait=30,
    )
    assert status == 403
    assert "token" in json.loads(body)["error"]


@pytest.mark.parametrize("length", ["abc", "-5", "1e3", " "])
def test_a_bad_content_length_is_a_400_in_our_words(server: WebServer, length: str) -> None:
    status, _, body = raw(
        server,
        post(
            server,
            "/api/tools/add/call",
            headers={"Content-Length": length, "X-Inspector-Token": server.token},
        ),
    )
    assert status == 400
    message = json.loads(body)["error"]
    assert message == "Content-Length must be a whole number of bytes"


def test_a_body_over_the_cap_is_a_413_and_the_connection_closes(server: WebServer) -> None:
    status, headers, body = raw(
        server,
        post(
            server,
            "/api/tools/add/call",
            headers={"Content-Length": str(64 * 1024 * 1024), "X-Inspector-Token": server.token},
        ),
    )
    assert status == 413
    assert "at most" in json.loads(body)["error"]
    assert headers.get("connection") == "close"


def test_deeply_nested_json_is_a_400(server: WebServer) -> None:
    data = b"[" * 100_000 + b"]" * 100_000
    status, _, body = raw(
        server,
        post(
            server,
            "/api/tools/add/call",
            headers={"Content-Length": str(len(data)), "X-Inspector-Token": server.token},
            body=data,
        ),
    )
    assert status == 400
    assert "nested too deep" in json.loads(body)["error"]


def test_a_client_that_stops_sending_is_let_go(server: WebServer) -> None:
    server.read_timeout = 0.5
    status, headers, body = raw(
        server,
        post(
            server,
            "/api/tools/add/call",
            headers={"Content-Length": "100", "X-Inspector-Token": server.token},
            body=b'{"args"',
        ),
    )
    assert status == 408
    assert "in time" in json.loads(body)["error"]
    assert headers.get("connection") == "close"


def chat_server(service: Any) -> WebServer:
    agent = Agent("bot", ScriptedModel(["hi"]))
    return serve(Runner(agent, app_name="app", session_service=service))


@pytest.mark.parametrize(
    "body",
    [
        {"content": {"role": "user", "parts": "hello"}},
        {"content": {"role": "user", "parts": [1, 2]}},
        {"content": {"role": "user", "parts": [{"function_call": "x"}]}},
        {"text": 5},
        [1],
    ],
)
def test_a_chat_body_of_the_wrong_shape_is_a_400(body: Any) -> None:
    with chat_server(InMemorySessionService()) as web:
        status, answer = request(web, "POST", "/api/sessions/u/s/messages", body)
    assert status == 400, answer
    assert "Error" not in answer["error"]  # our words, not an exception's name and text


def request(
    server: WebServer, method: str, path: str, body: Any = None, **headers: str
) -> tuple[int, Any]:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    sent = {"Host": f"127.0.0.1:{server.port}", "X-Inspector-Token": server.token, **headers}
    conn.request(method, path, body=None if body is None else json.dumps(body), headers=sent)
    response = conn.getresponse()
    raw_body = response.read().decode()
    conn.close()
    kind = response.getheader("Content-Type", "")
    if kind.startswith("application/json"):
        return response.status, json.loads(raw_body)
    return response.status, raw_body


class BrokenStore(InMemorySessionService):
    """A store whose every read fails with a message holding its DSN and password."""

    async def list_sessions(self, *, app_name: str, user_id: str | None = None) -> Any:
        raise ConnectionError(f"could not connect to {SECRET_DSN}")

    async def get_session(self, *, app_name: str, user_id: str, session_id: str) -> Any:
        raise ConnectionError(f"could not connect to {SECRET_DSN}")


def test_a_failing_store_never_shows_its_exception_text() -> None:
    with chat_server(BrokenStore()) as web:
        for method, path, body in [
            ("GET", "/api/sessions", None),
            ("GET", "/api/sessions/u/s", None),
            ("POST", "/api/sessions/u/s/messages", {"text": "hi"}),
        ]:
            status, answer = request(web, method, path, body)
            text = json.dumps(answer) if not isinstance(answer, str) else answer
            assert "hunter2" not in text and "db.internal" not in text, (path, text)
            if method == "GET":
                assert status == 500
                assert "ConnectionError" in answer["error"]


def test_a_call_asked_for_as_json_is_one_json_object(server: WebServer) -> None:
    status, answer = request(
        server, "POST", "/api/tools/add/call", {"args": {"a": 2}}, Accept="application/json"
    )
    assert status == 200
    assert answer["response"] == {"result": 3}
    assert answer["error_code"] is None
    status, failed = request(
        server, "POST", "/api/tools/add/call", {"args": {"a": "x"}}, Accept="application/json"
    )
    assert status == 200
    assert failed["error_code"] == "tool.invalid_arguments"
    # Without it, or asking for events, the answer is a stream as before.
    status, streamed = request(server, "POST", "/api/tools/add/call", {"args": {"a": 2}})
    assert status == 200 and isinstance(streamed, str) and "event: response" in streamed


def test_a_chat_message_asked_for_as_json_is_one_json_object() -> None:
    with chat_server(InMemorySessionService()) as web:
        status, answer = request(
            web, "POST", "/api/sessions/u/s/messages", {"text": "hi"}, Accept="application/json"
        )
    assert status == 200
    assert [e["content"]["parts"][0]["text"] for e in answer["events"]] == ["hi"]


def test_connections_past_the_limit_get_a_503_and_a_freed_slot_serves_again() -> None:
    with WebServer(max_connections=2, read_timeout=30) as web:
        idle = [socket.create_connection(("127.0.0.1", web.port), timeout=10) for _ in range(2)]
        try:
            # Both idle clients hold their threads; one more is refused at once.
            refused = raw(web, b"GET /api/info HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", wait=10)
            assert refused[0] == 503
            assert "too many connections" in json.loads(refused[2])["error"]
        finally:
            idle.pop().close()
        try:
            for _ in range(100):  # the closed client's thread ends on its own
                status, _ = request(web, "GET", "/api/info")
                if status == 200:
                    break
                time.sleep(0.05)
            assert status == 200
        finally:
            for sock in idle:
                sock.close()
