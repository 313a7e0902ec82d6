"""The inspector's server without a browser: safety, the JSON API, footprint.

Servers run in this process (``tooling.web.serve_tools``, ``agent_core.web.serve``) or as
the real commands in a subprocess; requests are plain HTTP over 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import re
import socket
import subprocess
import sys
import textwrap
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_core import (
    Agent,
    Content,
    Event,
    EventActions,
    Part,
    Runner,
    ScriptedModel,
    SqliteSessionService,
)
from agent_core.web import serve
from tooling import tool
from tooling.web import WebServer, serve_tools

ROOT = Path(__file__).resolve().parent.parent
STATIC = ROOT / "tooling" / "web" / "static"

RUNS: list[str] = []


@tool(require_confirmation=True)
def erase(name: str) -> dict[str, str]:
    """Erase something (counted, not really).

    Args:
        name: What to erase.
    """
    RUNS.append(name)
    return {"erased": name}


@tool(read_only=True, concurrency_safe=True)
def add(a: int, b: int = 1) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


@tool(scopes=("files:write",))
def write(path: str) -> str:
    """Write a file (pretend).

    Args:
        path: Where.
    """
    return f"wrote {path}"


@tool(conflict_key="path")
def save(path: str) -> str:
    """Save a file (pretend).

    Args:
        path: Where.
    """
    return f"saved {path}"


def request(
    server: WebServer,
    method: str,
    path: str,
    body: Any = None,
    *,
    token: str | None = "default",
    headers: dict[str, str] | None = None,
) -> tuple[int, Any]:
    """One HTTP request to ``server``; the JSON answer, or the SSE items as a list."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=30)
    sent = {"Host": f"127.0.0.1:{server.port}"}
    if token is not None:
        sent["X-Inspector-Token"] = server.token if token == "default" else token
    sent.update(headers or {})
    data = None if body is None else json.dumps(body).encode()
    if data is not None:
        sent["Content-Type"] = "application/json"
    conn.request(method, path, body=data, headers=sent)
    response = conn.getresponse()
    raw = response.read().decode()
    conn.close()
    if response.getheader("Content-Type", "").startswith("text/event-stream"):
        items = []
        for block in raw.split("\n\n"):
            if block.strip():
                name = re.search(r"^event: (.*)$", block, re.M)
                payload = re.search(r"^data: (.*)$", block, re.M)
                assert name and payload
                items.append((name.group(1), json.loads(payload.group(1))))
        return response.status, items
    if response.getheader("Content-Type", "").startswith("application/json"):
        return response.status, json.loads(raw)
    return response.status, raw


@pytest.fixture
def tools_server() -> Iterator[WebServer]:
    RUNS.clear()
    with serve_tools([erase, add, write], title="test tools") as server:
        yield server


# -- safety ----------------------------------------------------------------------------------


def test_every_probe_without_token_foreign_origin_or_host_is_refused(tools_server) -> None:
    s = tools_server
    probes: list[tuple[str, str, dict[str, str], str | None]] = []
    paths = [
        ("GET", "/api/info"),
        ("GET", "/api/tools"),
        ("GET", "/api/tools/add?provider=openai"),
        ("POST", "/api/tools/erase/call"),
        ("GET", "/api/sessions"),
        ("POST", "/api/tools/add/call"),
        ("GET", "/api/nowhere"),
    ]
    for method, path in paths:  # no token
        probes.append((method, path, {}, None))
    for method, path in paths[:4]:  # a wrong token
        probes.append((method, path, {}, "not-the-token"))
    for method, path in paths[:5]:  # the token, but a foreign Origin
        probes.append((method, path, {"Origin": "http://evil.example"}, "default"))
    for method, path in paths[:3]:  # the token, but a Host that is not loopback
        probes.append((method, path, {"Host": f"evil.example:{s.port}"}, "default"))
    probes.append(("GET", "/", {"Host": "attacker.test"}, None))  # the page too
    assert len(probes) == 20
    refused = 0
    for method, path, headers, token in probes:
        body = {"args": {"name": "x"}} if method == "POST" else None
        status, answer = request(s, method, path, body, token=token, headers=headers)
        refused += status == 403
        assert status == 403, (method, path, headers, token, status, answer)
    assert refused == 20
    assert RUNS == []  # nothing ran
    # The same requests with the token, from the page's own origin, are answered.
    origin = {"Origin": f"http://127.0.0.1:{s.port}"}
    assert request(s, "GET", "/api/tools", headers=origin)[0] == 200
    assert request(s, "GET", "/api/info", headers={"Host": f"localhost:{s.port}"})[0] == 200


def test_the_page_itself_needs_no_token_but_a_loopback_host(tools_server) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", tools_server.port, timeout=10)
    conn.request("GET", "/", headers={"Host": f"127.0.0.1:{tools_server.port}"})
    response = conn.getresponse()
    page = response.read().decode()
    assert response.status == 200 and '<script src="app.js">' in page
    assert "default-src 'self'" in response.getheader("Content-Security-Policy", "")


def test_listens_on_loopback_only_by_default(tools_server) -> None:
    assert tools_server._httpd.server_address[0] == "127.0.0.1"
    assert tools_server.url.startswith(f"http://127.0.0.1:{tools_server.port}/?token=")
    others = {
        info[4][0]
        for info in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
        if not info[4][0].startswith("127.")
    }
    for address in others:  # the machine's other addresses do not answer
        with pytest.raises(OSError):
            socket.create_connection((address, tools_server.port), timeout=2).close()


def test_another_host_is_allowed_with_a_warning(caplog) -> None:
    with caplog.at_level(logging.WARNING, logger="tooling"):
        server = serve_tools([add], host="0.0.0.0")
    try:
        assert any("not only on this machine" in r.getMessage() for r in caplog.records)
        assert request(server, "GET", "/api/tools")[0] == 200
    finally:
        server.close()


# -- tools -------------------------------------------------------------------------------------


def test_tools_list_and_provider_reports(tools_server) -> None:
    status, body = request(tools_server, "GET", "/api/tools")
    assert status == 200
    assert [t["name"] for t in body["tools"]] == ["erase", "add", "write"]
    by_name = {t["name"]: t for t in body["tools"]}
    assert by_name["add"]["schedule"]["mode"] == "concurrent"
    assert by_name["erase"]["schedule"]["mode"] == "barrier"
    assert "conflict_key" in by_name["erase"]["schedule"]["summary"]
    assert by_name["add"]["parameters"]["properties"]["a"]["type"] == "integer"
    status, report = request(tools_server, "GET", "/api/tools/add?provider=openai-strict")
    assert status == 200 and report["provider"] == "openai-strict"
    assert report["schema"] == add.to_openai(strict=True)
    assert request(tools_server, "GET", "/api/tools/nope")[0] == 404
    with serve_tools([save]) as keyed:
        [entry] = request(keyed, "GET", "/api/tools")[1]["tools"]
        assert entry["schedule"]["mode"] == "keyed"
        assert entry["schedule"]["conflict_key"] == "path"
    assert request(tools_server, "GET", "/api/tools/add?provider=cobol")[0] == 400


def test_a_call_needs_confirmation_and_runs_once_after_yes(tools_server) -> None:
    status, items = request(tools_server, "POST", "/api/tools/erase/call", {"args": {"name": "db"}})
    assert status == 200
    [(kind, final)] = items
    assert kind == "response" and final["error_code"] == "tool.confirmation_required"
    fingerprint = final["response"]["confirmation"]["fingerprint"]
    assert RUNS == []
    _, items = request(
        tools_server,
        "POST",
        "/api/tools/erase/call",
        {"args": {"name": "db"}, "confirm": "sha256:wrong"},
    )
    assert items[-1][1]["error_code"] == "tool.confirmation_required" and RUNS == []
    _, items = request(
        tools_server,
        "POST",
        "/api/tools/erase/call",
        {"args": {"name": "db"}, "confirm": fingerprint, "confirmed": False},
    )
    assert items[-1][1]["error_code"] == "tool.rejected" and RUNS == []
    _, items = request(
        tools_server,
        "POST",
        "/api/tools/erase/call",
        {"args": {"name": "db"}, "confirm": fingerprint},
    )
    assert items[-1][1]["response"] == {"erased": "db"} and RUNS == ["db"]


def test_scopes_are_granted_only_when_ticked(tools_server) -> None:
    _, items = request(tools_server, "POST", "/api/tools/write/call", {"args": {"path": "a"}})
    assert items[-1][1]["error_code"] == "tool.forbidden"
    _, items = request(
        tools_server,
        "POST",
        "/api/tools/write/call",
        {"args": {"path": "a"}, "scopes": ["files:write"]},
    )
    assert items[-1][1]["response"] == {"result": "wrote a"}


def test_invalid_arguments_come_back_with_their_loc(tools_server) -> None:
    _, items = request(tools_server, "POST", "/api/tools/add/call", {"args": {"a": "x"}})
    final = items[-1][1]
    assert final["error_code"] == "tool.invalid_arguments"
    assert final["response"]["error"]["details"][0]["loc"] == ["a"]
    status, body = request(tools_server, "POST", "/api/tools/add/call", {"args": [1]})
    assert status == 400 and "args" in body["error"]


def test_the_call_answer_is_what_tooling_call_prints(tmp_path, tools_server) -> None:
    (tmp_path / "calc.py").write_text(
        textwrap.dedent(
            '''
            from tooling import tool

            @tool
            def scale(values: list[float], factor: float = 2.0) -> dict:
                """Scale numbers.

                Args:
                    values: The numbers.
                    factor: By how much.
                """
                return {"scaled": [v * factor for v in values], "n": len(values)}
            '''
        )
    )
    args = {"values": [1, 2.5], "factor": 3}
    cli = subprocess.run(
        [sys.executable, "-m", "tooling.cli", "call", "calc.py:scale", json.dumps(args)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert cli.returncode == 0, cli.stderr
    from tooling.cli import load_target

    _, module = load_target(str(tmp_path / "calc.py"))
    with serve_tools([module.scale]) as server:
        _, items = request(server, "POST", "/api/tools/scale/call", {"args": args})
    assert items[-1][1]["response"] == json.loads(cli.stdout)


# -- sessions ----------------------------------------------------------------------------------


def _filled_store(path: Path, sessions: dict[str, int]) -> None:
    async def fill() -> None:
        service = SqliteSessionService(path)
        try:
            for sid, count in sessions.items():
                session = await service.create_session(app_name="app", user_id="u", session_id=sid)
                for i in range(count):
                    await service.append_event(
                        session,
                        Event(
                            invocation_id=f"inv-{i // 10}",
                            author="user" if i % 2 == 0 else "bot",
                            content=Content("user", [Part.from_text(f"{sid} #{i}")]),
                            actions=EventActions(state_delta={"count": i, f"k{i % 3}": i}),
                        ),
                    )
        finally:
            await service.aclose()

    asyncio.run(fill())


def test_sessions_api_pages_and_state_at(tmp_path) -> None:
    db = tmp_path / "s.db"
    _filled_store(db, {"a": 30, "b": 5})
    service = SqliteSessionService(db)
    agent = Agent(name="bot", model=ScriptedModel(["hi"]))
    with Runner(agent, app_name="app", session_service=service) as runner, serve(runner) as server:
        status, body = request(server, "GET", "/api/sessions")
        assert status == 200
        assert sorted(s["id"] for s in body["sessions"]) == ["a", "b"]
        _, page = request(server, "GET", "/api/sessions/u/a?offset=10&limit=15&state_at=3")
        assert page["total"] == 30 and page["offset"] == 10
        assert [e["content"]["parts"][0]["text"] for e in page["events"]] == [
            f"a #{i}" for i in range(10, 25)
        ]
        assert page["state_at"] == {"count": 3, "k0": 3, "k1": 1, "k2": 2}
        assert page["state"]["count"] == 29
        seen = page["last_update_time"]
        _, same = request(server, "GET", f"/api/sessions/u/a?offset=30&since={seen}")
        assert same == {"user_id": "u", "id": "a", "unchanged": True}
        _, other = request(server, "GET", f"/api/sessions/u/a?offset=30&since={seen - 1}")
        assert other["total"] == 30 and other["events"] == []
        assert request(server, "GET", "/api/sessions/u/nope")[0] == 404
        assert request(server, "GET", "/api/sessions/u/a?state_at=99")[0] == 400
        status, items = request(server, "POST", "/api/sessions/u/new/messages", {"text": "hello"})
        assert status == 200
        assert items[-1] == ("done", {"events": 1})
        assert items[0][1]["content"]["parts"][0]["text"] == "hi"
        _, page = request(server, "GET", "/api/sessions/u/new")
        assert [e["author"] for e in page["events"]] == ["user", "bot"]
    service.close()


def test_pending_calls_are_listed(tmp_path) -> None:
    model = ScriptedModel([[Part.from_function_call("erase", {"name": "x"})]])
    agent = Agent(name="bot", model=model, tools=[erase])
    with Runner(agent, app_name="app") as runner, serve(runner) as server:
        _, items = request(server, "POST", "/api/sessions/u/s1/messages", {"text": "erase x"})
        assert items[-1][0] == "done"
        _, body = request(server, "GET", "/api/sessions")
        [row] = body["sessions"]
        assert [p["name"] for p in row["pending"]] == ["request_confirmation"]
        assert row["pending"][0]["args"]["originalFunctionCall"]["name"] == "erase"


# -- the commands and the footprint -------------------------------------------------------------


def _started(process: subprocess.Popen[str]) -> str:
    assert process.stdout is not None
    for _ in range(5):
        line = process.stdout.readline()
        found = re.search(r"(http://\S+)", line)
        if found:
            return found.group(1)
    process.kill()
    problem = process.stderr.read() if process.stderr else ""
    raise AssertionError(f"no URL printed; stderr: {problem}")


def test_tooling_inspect_web_serves_the_tools_without_agent_core(tmp_path) -> None:
    (tmp_path / "plain.py").write_text(
        "from tooling import tool\n\n@tool\ndef ping(x: int) -> int:\n    '''Ping.'''\n"
        "    return x\n"
    )
    script = textwrap.dedent(
        """
        import json, sys, urllib.request
        from tooling.cli import load_target
        from tooling.web import serve_target
        label, obj = load_target("plain.py")
        with serve_target(obj, label) as server:
            req = urllib.request.Request(
                server.origin + "/api/tools", headers={"X-Inspector-Token": server.token}
            )
            names = [t["name"] for t in json.load(urllib.request.urlopen(req))["tools"]]
        print(json.dumps({"names": names, "agent_core": "agent_core" in sys.modules}))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"names": ["ping"], "agent_core": False}

    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "tooling.cli",
            "inspect",
            "--web",
            "plain.py",
            "--port",
            "0",
            "--no-browser",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = _started(process)
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/\?token=[\w-]{20,}", url)
        import urllib.request

        base, token = url.split("/?token=")
        req = urllib.request.Request(base + "/api/info", headers={"X-Inspector-Token": token})
        assert json.load(urllib.request.urlopen(req, timeout=10))["pages"] == ["tools"]
    finally:
        process.terminate()
        process.wait(10)


def test_agent_core_web_serves_a_folder_of_agents(tmp_path) -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent_core.cli",
            "web",
            str(ROOT / "examples"),
            "--port",
            "0",
            "--no-browser",
            "--session-db",
            str(tmp_path / "s.db"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = _started(process)
        import urllib.request

        base, token = url.split("/?token=")
        req = urllib.request.Request(base + "/api/info", headers={"X-Inspector-Token": token})
        info = json.load(urllib.request.urlopen(req, timeout=10))
        assert info["pages"] == ["tools", "sessions", "jobs"]  # durable_report has jobs
        names = [a["name"] for a in info["apps"]]
        assert "function_tools" in names and "approvals" in names
        jobs = {a["name"]: a["jobs"] for a in info["apps"]}
        assert jobs["durable_report"] and not jobs["function_tools"]
        req = urllib.request.Request(
            base + "/api/jobs?app=durable_report", headers={"X-Inspector-Token": token}
        )
        assert json.load(urllib.request.urlopen(req, timeout=10)) == {"jobs": []}
        assert all(a["replay"] for a in info["apps"])  # no key: every app replays
    finally:
        process.terminate()
        process.wait(10)


def test_a_folder_of_agents_leaves_out_one_whose_package_is_missing(tmp_path) -> None:
    agent = (
        "from agent_core import Agent, ScriptedModel\n"
        "root_agent = Agent('{name}', ScriptedModel(['hi']), description='d', instruction='i')\n"
    )
    (tmp_path / "fine").mkdir()
    (tmp_path / "fine" / "agent.py").write_text(agent.format(name="fine"))
    (tmp_path / "needs_extra").mkdir()
    (tmp_path / "needs_extra" / "agent.py").write_text(
        "import no_such_package_for_this_test\n" + agent.format(name="needs_extra")
    )
    command = [sys.executable, "-m", "agent_core.cli", "web", "--port", "0", "--no-browser"]
    process = subprocess.Popen(
        [*command, str(tmp_path)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = _started(process)
        import urllib.request

        base, token = url.split("/?token=")
        req = urllib.request.Request(base + "/api/info", headers={"X-Inspector-Token": token})
        info = json.load(urllib.request.urlopen(req, timeout=10))
        assert [a["name"] for a in info["apps"]] == ["fine"]
    finally:
        process.terminate()
        _, errors = process.communicate(timeout=10)
    assert "leaving out needs_extra" in errors and "no_such_package_for_this_test" in errors

    # Alone, the folder that cannot load is an error, as before.
    alone = subprocess.run(
        [*command, str(tmp_path / "needs_extra")], cwd=ROOT, capture_output=True, text=True
    )
    assert alone.returncode != 0 and "no_such_package_for_this_test" in alone.stderr


def test_importing_the_packages_loads_none_of_the_inspector() -> None:
    script = (
        "import sys, tooling, agent_core\n"
        "heavy = ['tooling.web', 'agent_core.web', 'agent_core.trace_db', 'http.server',"
        " 'opentelemetry', 'playwright']\n"
        "print([m for m in heavy if m in sys.modules])"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_base_install_gains_no_dependency_and_the_page_is_small() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    base = " ".join(project["dependencies"]).lower()
    assert "opentelemetry" not in base and "playwright" not in base
    assert "opentelemetry-sdk" in " ".join(project["optional-dependencies"]["web"])
    files = [STATIC / name for name in ("index.html", "app.js", "app.css")]
    assert sum(f.stat().st_size for f in files) <= 150 * 1024
    for f in files:  # no external URL: everything comes from the server itself
        assert not re.search(r"(https?:)?//[a-z0-9.-]+\.[a-z]{2,}", f.read_text()), f


# -- runs ----------------------------------------------------------------------------------------


def test_stored_spans_become_invocations_and_bars(tmp_path) -> None:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from agent_core.trace_db import SqliteSpanExporter, find_trace, read_trace

    db = tmp_path / "spans.db"
    provider = TracerProvider()  # not the global one: only this test's spans
    provider.add_span_processor(SimpleSpanProcessor(SqliteSpanExporter(db)))
    tracer = provider.get_tracer("test")
    with tracer.start_as_current_span(
        "invoke_agent bot",
        attributes={"agent_core.invocation.id": "inv-1", "gen_ai.agent.name": "bot"},
    ) as root:
        with tracer.start_as_current_span("chat scripted"):
            pass
        with tracer.start_as_current_span(
            "execute_tool read",
            attributes={"tooling.call.index": 0, "gen_ai.tool.call.id": "c0"},
        ):
            pass
        with tracer.start_as_current_span(
            "execute_tool write",
            attributes={
                "tooling.call.index": 1,
                "gen_ai.tool.call.id": "c1",
                "tooling.call.queue_wait_s": 0.25,
                "tooling.call.waited_for": ["c0"],
                "tooling.call.wait_reason": "barrier",
            },
        ):
            pass
    provider.shutdown()
    trace_id = format(root.get_span_context().trace_id, "032x")
    assert find_trace(db, "inv-1") == trace_id and find_trace(db, trace_id) == trace_id
    assert find_trace(db, "inv-2") is None
    stored = read_trace(db, trace_id)
    assert stored[0]["name"] == "invoke_agent bot"

    agent = Agent(name="viewer", model=ScriptedModel(["-"]))
    with Runner(agent, app_name="v") as runner, serve(runner, trace_db=db) as server:
        _, info = request(server, "GET", "/api/info")
        assert info["pages"] == ["tools", "sessions", "runs"]
        _, body = request(server, "GET", "/api/invocations")
        [row] = body["invocations"]
        assert row["id"] == "inv-1" and row["agent"] == "bot" and row["trace_id"] == trace_id
        _, body = request(server, "GET", "/api/invocations/inv-1/spans")
        bars = {b["name"]: b for b in body["bars"]}
        assert [b["kind"] for b in body["bars"]] == ["agent", "model", "tool", "tool"]
        write = bars["execute_tool write"]
        by_id = {s["span_id"]: s for s in stored}
        span = by_id[write["span_id"]]
        assert write["wait_start_ns"] == span["start_ns"] - 250_000_000 - body["origin_ns"]
        assert write["start_ns"] == span["start_ns"] - body["origin_ns"]
        assert write["waited_for"] == ["c0"] and write["wait_reason"] == "barrier"
        assert write["label"] == "#1 write" and write["depth"] == 1
        assert request(server, "GET", "/api/invocations/nope/spans")[0] == 404


def test_sessions_of_every_user_are_listed_from_postgres(postgres_dsn) -> None:
    from agent_core import PostgresSessionService

    async def fill(service) -> None:
        for user, sid in (("ann", "a1"), ("bob", "b1"), ("bob", "b2")):
            session = await service.create_session(app_name="pg", user_id=user, session_id=sid)
            await service.append_event(
                session, Event(author="user", content=Content("user", [Part.from_text(sid)]))
            )

    service = PostgresSessionService(postgres_dsn)
    agent = Agent(name="bot", model=ScriptedModel(["-"]))
    with Runner(agent, app_name="pg", session_service=service) as runner, serve(runner) as server:
        server.run(fill(service))
        _, body = request(server, "GET", "/api/sessions")
        assert sorted((s["user_id"], s["id"]) for s in body["sessions"]) == [
            ("ann", "a1"),
            ("bob", "b1"),
            ("bob", "b2"),
        ]
        _, page = request(server, "GET", "/api/sessions/bob/b2")
        assert page["total"] == 1 and page["events"][0]["content"]["parts"][0]["text"] == "b2"
    service.close()
