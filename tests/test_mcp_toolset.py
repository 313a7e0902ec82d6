"""``McpToolset`` against real servers: one written only with the SDK's own ``Server``
(``tests/_mcp_sdk_server.py``) and ours (``tests/_mcp_our_server.py``), both as stdio
subprocesses, and ``tooling serve --http`` on 127.0.0.1.

A connection lives on the event loop that opened it and closes when that loop shuts
down; a module-wide toolset therefore reconnects in each test (each has its own loop).
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("mcp")

from agent_core import Agent, Content, Part, Runner, ScriptedModel
from tests._mcp_helpers import ROOT, SDK_SERVER, TOOLS, free_port, http_server
from tests._mcp_tools import PIXEL
from tooling import Blob, Scheduler, SimpleToolContext, ToolCall, ToolError, ToolProgress
from tooling.mcp import HttpServer, McpTool, McpToolset, StdioServer

OUR_SERVER = str(ROOT / "tests" / "_mcp_our_server.py")


def sdk_server() -> StdioServer:
    return StdioServer(sys.executable, [SDK_SERVER], cwd=ROOT)


def our_server() -> StdioServer:
    return StdioServer(sys.executable, [OUR_SERVER], cwd=ROOT)


@pytest.fixture(scope="module")
def sdk_tools() -> Iterator[McpToolset]:
    toolset = McpToolset(sdk_server())
    yield toolset
    asyncio.run(toolset.close())


@pytest.fixture(scope="module")
def our_tools() -> Iterator[McpToolset]:
    toolset = McpToolset(our_server())
    yield toolset
    asyncio.run(toolset.close())


async def tools_of(toolset: McpToolset) -> dict[str, McpTool]:
    found = await toolset.get_tools()
    assert all(isinstance(t, McpTool) for t in found)
    return {t.name: t for t in found}  # type: ignore[misc]


async def stats(toolset: McpToolset) -> dict[str, int]:
    return await (await tools_of(toolset))["stats"].run({})


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def eventually(predicate: Any, timeout: float = 20.0) -> bool:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while loop.time() < deadline:
        if predicate():
            return True
        await asyncio.sleep(0.02)
    return False


# -- a server written with the SDK alone --------------------------------------------------


async def test_lists_every_page_once_and_a_warm_list_sends_nothing(sdk_tools: McpToolset) -> None:
    tools = await tools_of(sdk_tools)
    assert {"echo", "text_only", "image", "fail", "slow", "stats", "change_tools"} <= set(tools)
    before = await stats(sdk_tools)
    again = await sdk_tools.get_tools()
    again = await sdk_tools.get_tools()
    after = await stats(sdk_tools)
    assert after["lists"] == before["lists"]  # two warm lists: no request
    assert after["calls"] == before["calls"] + 1  # only the stats call itself
    assert {t.name for t in again} == set(tools)


async def test_a_tool_carries_the_server_schemas_but_not_its_hints(sdk_tools: McpToolset) -> None:
    echo = (await tools_of(sdk_tools))["echo"]
    assert echo.parameters_json_schema["required"] == ["text"]
    assert echo.response_json_schema == {
        "type": "object",
        "properties": {"echo": {"type": "string"}},
    }
    assert echo.definition.annotations.read_only_hint is True  # type: ignore[union-attr]
    assert (echo.read_only, echo.concurrency_safe, echo.idempotent) == (False, False, False)
    assert echo.to_openai()["function"]["name"] == "echo"
    assert echo.to_anthropic()["input_schema"]["required"] == ["text"]


async def test_trusted_annotations_set_the_flags() -> None:
    toolset = McpToolset(sdk_server(), trust_annotations=True, tool_filter=["echo"])
    try:
        (echo,) = await toolset.get_tools_with_prefix()
        assert (echo.read_only, echo.concurrency_safe, echo.idempotent) == (True, True, True)
    finally:
        await toolset.close()


async def test_results_map_to_responses_and_parts(sdk_tools: McpToolset) -> None:
    tools = await tools_of(sdk_tools)
    assert await tools["echo"].run({"text": "hi"}) == {"echo": "hi"}
    assert await tools["text_only"].run("{}") == {"result": "plain words"}
    scheduler = Scheduler(list(tools.values()))
    (image,) = await scheduler.dispatch([ToolCall("c1", "image", {})])
    assert image.error is None
    assert image.response == {"result": "", "parts": [{"part": 0, "mime_type": "image/png"}]}
    assert image.parts == (Blob("image/png", b"\x89PNG fake"),)
    with pytest.raises(ToolError) as raised:
        await tools["fail"].run({})
    assert raised.value.code == "tool.failed" and raised.value.message == "it broke, try later"


async def test_invalid_arguments_are_refused_before_sending(sdk_tools: McpToolset) -> None:
    tools = await tools_of(sdk_tools)
    before = await stats(sdk_tools)
    with pytest.raises(ToolError) as raised:
        await tools["echo"].run({"text": 3, "extra": True})
    error = raised.value
    assert error.code == "tool.invalid_arguments"
    # The server's schema leaves other properties open, so only the type is wrong.
    assert [(d["loc"], d["type"], d["input"]) for d in error.details or []] == [
        (["text"], "type", 3)
    ]
    after = await stats(sdk_tools)
    assert after["calls"] == before["calls"] + 1  # only the stats call itself


async def test_a_null_for_an_optional_parameter_is_left_out(sdk_tools: McpToolset) -> None:
    count = (await tools_of(sdk_tools))["count"]
    # What a model following the strict OpenAI declaration sends for "left out".
    strict = count.to_openai(strict=True)["function"]["parameters"]
    assert strict["required"] == ["n", "label"]
    assert await count.run({"n": None, "label": None}) == {}
    assert await count.run({"n": 3, "label": None}) == {"n": 3}
    with pytest.raises(ToolError) as raised:  # a wrong value is still refused
        await count.run({"n": "3"})
    assert [d["loc"] for d in raised.value.details or []] == [["n"]]


async def test_missing_arguments_give_one_detail_each(sdk_tools: McpToolset) -> None:
    triple = (await tools_of(sdk_tools))["triple"]
    with pytest.raises(ToolError) as raised:
        await triple.run({})
    assert [(d["loc"], d["type"]) for d in raised.value.details or []] == [
        (["a"], "missing"),
        (["b"], "missing"),
        (["c"], "missing"),
    ]


async def test_a_tool_that_requires_tasks_is_left_out(caplog: pytest.LogCaptureFixture) -> None:
    # The handshake era carries a tool's task support (the 2026-07-28 era has none).
    with http_server(SDK_SERVER, script=True, extra=("--legacy",)) as (url, _):
        toolset = McpToolset(HttpServer(url))
        try:
            with caplog.at_level("WARNING", logger="tooling"):
                tools = await tools_of(toolset)
            assert toolset._connection._open.client.protocol_version == "2025-11-25"  # type: ignore[union-attr]
        finally:
            await toolset.close()
    assert "in_background" not in tools and "echo" in tools
    (line,) = [r.getMessage() for r in caplog.records if "in_background" in r.getMessage()]
    assert "tasks are not supported" in line


async def test_a_sampling_request_is_refused_in_the_clients_own_words(
    sdk_tools: McpToolset,
) -> None:
    summarize = (await tools_of(sdk_tools))["summarize"]
    with pytest.raises(ToolError) as raised:
        await summarize.run({})
    assert raised.value.code == "tool.failed"
    assert "does not answer sampling requests" in raised.value.message
    assert "the MCP server refused" not in raised.value.message


async def test_a_list_change_invalidates_the_cache() -> None:
    toolset = McpToolset(sdk_server())
    try:
        tools = await tools_of(toolset)
        assert "extra" not in tools
        await tools["change_tools"].run({})
        assert await eventually(lambda: toolset._tools is None)
        assert "extra" in await tools_of(toolset)
    finally:
        await toolset.close()


async def test_a_timeout_tells_the_server_to_cancel(tmp_path: Path) -> None:
    toolset = McpToolset(sdk_server())
    marker = tmp_path / "slow.marker"
    try:
        slow = (await tools_of(toolset))["slow"]
        slow.call_timeout = 1.0
        with pytest.raises(ToolError) as raised:
            await slow.run({"marker": str(marker)})
        assert raised.value.code == "tool.timeout"
        assert marker.with_suffix(".started").exists()
        assert await eventually(lambda: marker.with_suffix(".cancelled").exists())
        assert await (await tools_of(toolset))["echo"].run({"text": "still"}) == {"echo": "still"}
    finally:
        await toolset.close()


# -- our own server ---------------------------------------------------------------------------


async def test_our_server_round_trip(our_tools: McpToolset) -> None:
    tools = await tools_of(our_tools)
    assert await tools_of(our_tools) == tools  # cached: the same tool objects
    assert tools["add"].description.startswith("Add two numbers.")
    assert await tools["add"].run({"a": 2, "b": 40}) == {"result": 42}

    scheduler = Scheduler(list(tools.values()))
    (pixel,) = await scheduler.dispatch([ToolCall("p", "pixel", {})])
    assert pixel.response == {
        "image": {"part": 0, "mime_type": "image/png"},
        "file": {"part": 1, "mime_type": "text/plain"},
    }
    assert pixel.parts[0] == Blob("image/png", PIXEL)
    assert pixel.parts[1].uri == "file:///tmp/x.txt"  # type: ignore[union-attr]

    with pytest.raises(ToolError) as raised:
        await tools["refuse"].run({"reason": "no"})
    assert (raised.value.code, raised.value.message) == ("demo.refused", "refused: no")

    ctx = SimpleToolContext()
    assert await tools["chatty"].run({"steps": 2}, ctx) == {"steps": 2}
    assert [(p.stream, p.chunk) for p in ctx.progress] == [
        ("progress", "step 1 of 2"),
        ("progress", "step 2 of 2"),
    ]

    with pytest.raises(ToolError) as raised:  # no elicitation here: told it needs the user
        await tools["delete_record"].run({"record_id": "r1"})
    assert raised.value.code == "tool.confirmation_required"

    # Our strict declaration's null for an optional parameter is its default here too.
    place = tools["place"]
    point = {"x": 1, "y": 2}
    assert await place.run({"point": point, "tags": None}) == {**point, "tags": []}


async def test_progress_reaches_a_streamed_dispatch(our_tools: McpToolset) -> None:
    scheduler = Scheduler(await our_tools.get_tools())
    seen: list[Any] = []
    async with scheduler.stream([ToolCall("c", "chatty", {"steps": 2})]) as items:
        async for item in items:
            seen.append(item)
    assert [(p.id, p.stream, p.chunk) for p in seen if isinstance(p, ToolProgress)] == [
        ("c", "progress", "step 1 of 2"),
        ("c", "progress", "step 2 of 2"),
    ]
    assert seen[-1].response == {"steps": 2}
    # A plain dispatch reads no progress: none is asked of the server, the call still runs.
    (done,) = await scheduler.dispatch([ToolCall("d", "chatty", {"steps": 2})])
    assert done.response == {"steps": 2}


async def test_our_server_announces_a_grown_toolset(our_tools: McpToolset) -> None:
    tools = await tools_of(our_tools)
    assert "hello" not in tools
    assert await tools["grow"].run({}) == {"result": 1}
    assert await eventually(lambda: our_tools._tools is None)
    grown = await tools_of(our_tools)
    assert await grown["hello"].run({}) == {"result": "hello"}


async def test_a_lost_call_is_not_sent_again_and_the_next_use_reconnects(
    our_tools: McpToolset, tmp_path: Path
) -> None:
    tools = await tools_of(our_tools)
    first_pid = (await tools["pid"].run({}))["result"]
    marker = tmp_path / "crash"
    with pytest.raises(ToolError) as raised:
        await tools["crash"].run({"marker": str(marker)})
    assert "may or may not have run" in raised.value.message
    assert marker.read_text().count("ran") == 1  # it ran once, and was not sent again
    assert await eventually(lambda: not alive(first_pid))
    # The next use opens a new connection (a new server process).
    second_pid = (await (await tools_of(our_tools))["pid"].run({}))["result"]
    assert second_pid != first_pid
    # An idempotent tool is not re-sent either unless its annotations are trusted.
    once = tmp_path / "once"
    with pytest.raises(ToolError):
        await (await tools_of(our_tools))["crash_once"].run({"marker": str(once)})
    assert once.read_text().count("ran") == 1


async def test_a_trusted_idempotent_call_is_sent_again_once(tmp_path: Path) -> None:
    toolset = McpToolset(our_server(), trust_annotations=True)
    marker = tmp_path / "once"
    try:
        crash_once = (await tools_of(toolset))["crash_once"]
        assert crash_once.idempotent
        assert await crash_once.run({"marker": str(marker)}) == {"result": 2}
        assert marker.read_text().count("ran") == 2
    finally:
        await toolset.close()


async def test_close_leaves_no_process() -> None:
    toolset = McpToolset(our_server())
    pid = (await (await tools_of(toolset))["pid"].run({}))["result"]
    assert alive(pid)
    await toolset.close()
    assert not alive(pid)
    await toolset.close()  # closing twice is fine


def test_a_loop_that_shuts_down_closes_its_connection() -> None:
    toolset = McpToolset(our_server())

    async def server_pid() -> int:
        return (await (await tools_of(toolset))["pid"].run({}))["result"]  # type: ignore[no-any-return]

    first = asyncio.run(server_pid())
    assert not alive(first)  # asyncio.run's shutdown stopped the server
    second = asyncio.run(server_pid())  # the next loop opens a new connection
    assert second != first and not alive(second)
    # A loop ended as Runner.run ends its loops: no task cancelled, async generators shut.
    loop = asyncio.new_event_loop()
    try:
        third = loop.run_until_complete(server_pid())
        assert alive(third)
        loop.run_until_complete(loop.shutdown_asyncgens())
    finally:
        loop.close()
    assert not alive(third)
    asyncio.run(toolset.close())


async def test_a_toolset_used_from_another_threads_loop_works_there() -> None:
    toolset = McpToolset(our_server())
    try:
        add = (await tools_of(toolset))["add"]
        # From a loop in another thread while this one runs: the work is done here.
        result = await asyncio.to_thread(asyncio.run, add.run({"a": 1, "b": 2}))
        assert result == {"result": 3}
    finally:
        await toolset.close()


async def test_a_restarted_http_server_is_reopened_once() -> None:
    port = free_port()
    with http_server(TOOLS, port, kill=True) as (url, _first):
        toolset = McpToolset(HttpServer(url))
        add = (await tools_of(toolset))["add"]
        assert await add.run({"a": 1, "b": 1}) == {"result": 2}
    try:
        with http_server(TOOLS, port):
            assert await add.run({"a": 2, "b": 2}) == {"result": 4}
    finally:
        await toolset.close()


async def test_a_restarted_handshake_era_http_server_gets_a_new_session() -> None:
    port = free_port()
    legacy = ("--legacy",)
    with http_server(SDK_SERVER, port, script=True, kill=True, extra=legacy) as (url, _):
        toolset = McpToolset(HttpServer(url))
        echo = (await tools_of(toolset))["echo"]
        assert not echo.idempotent  # untrusted: a lost call would not be sent again
        assert await echo.run({"text": "one"}) == {"echo": "one"}
        assert toolset._connection._open.client.protocol_version == "2025-11-25"  # type: ignore[union-attr]
    try:
        with http_server(SDK_SERVER, port, script=True, extra=legacy):
            # The new server answers the old session with 404: the call never ran there,
            # so it is sent again on a new session.
            assert await echo.run({"text": "two"}) == {"echo": "two"}
            stats = await (await tools_of(toolset))["stats"].run({})
            assert stats["calls"] == 2  # echo once, and this call: nothing ran twice
    finally:
        await toolset.close()


# -- servers that misbehave on stdio ------------------------------------------------------------

FAULTY = str(ROOT / "tests" / "_mcp_faulty_server.py")


def faulty(mode: str, pids: Path) -> StdioServer:
    return StdioServer(sys.executable, [FAULTY, mode], env={"FAULTY_PIDS": str(pids)})


async def test_a_line_that_is_not_utf8_does_not_kill_the_connection(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    toolset = McpToolset(faulty("garble", pids), timeout=30)
    try:
        (poke,) = await toolset.get_tools()
        # The bad line is skipped; the answer after it arrives, and so do later ones.
        assert await asyncio.wait_for(poke.run({}), 20) == {"result": "poked"}
        assert await asyncio.wait_for(poke.run({}), 20) == {"result": "poked"}
    finally:
        await toolset.close()
    assert len(pids.read_text().split()) == 1  # one server process did it all


async def test_a_closed_stdout_fails_the_call_and_the_next_use_reconnects(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    toolset = McpToolset(faulty("close", pids), timeout=30)
    try:
        (poke,) = await toolset.get_tools()
        with pytest.raises(ToolError, match="may or may not have run"):
            await asyncio.wait_for(poke.run({}), 20)
        with pytest.raises(ToolError, match="may or may not have run"):
            await asyncio.wait_for(poke.run({}), 20)  # on a new connection
        assert len(pids.read_text().split()) == 2
    finally:
        await toolset.close()


async def test_a_server_that_never_answers_fails_get_tools_within_the_timeout(
    tmp_path: Path,
) -> None:
    toolset = McpToolset(faulty("silent", tmp_path / "pids"), timeout=1.0)
    try:
        with pytest.raises(OSError, match="did not answer"):
            await asyncio.wait_for(toolset.get_tools(), 20)
    finally:
        await toolset.close()
    (pid,) = map(int, (tmp_path / "pids").read_text().split())
    assert await eventually(lambda: not alive(pid))

    # One that answers the handshake but not tools/list: given up, and the next use
    # starts a new server.
    pids = tmp_path / "nolist"
    toolset = McpToolset(faulty("nolist", pids), timeout=1.0)
    try:
        for _ in range(2):
            with pytest.raises(OSError, match="did not answer tools/list"):
                await asyncio.wait_for(toolset.get_tools(), 20)
    finally:
        await toolset.close()
    assert len(pids.read_text().split()) == 2


# -- an agent -----------------------------------------------------------------------------------


async def test_an_agent_calls_two_mcp_tools_in_one_turn() -> None:
    toolset = McpToolset(our_server(), tool_name_prefix="calc", tool_filter=["add", "pid"])
    model = ScriptedModel(
        [
            Content(
                role="model",
                parts=[
                    Part.from_function_call("calc_add", {"a": 1, "b": 2}),
                    Part.from_function_call("calc_add", {"a": 3, "b": 4}),
                ],
            ),
            "3 and 7.",
        ]
    )
    agent = Agent(name="calc", model=model, instruction="Add.", tools=[toolset])
    async with Runner(agent, app_name="mcp") as runner:
        events = [
            e async for e in runner.run_async(user_id="u", session_id="s", new_message="add twice")
        ]
    responses = [r for e in events for r in e.get_function_responses()]
    assert [(r.name, r.response) for r in responses] == [
        ("calc_add", {"result": 3}),
        ("calc_add", {"result": 7}),
    ]
    assert sorted(model.requests[0].tools) == ["calc_add", "calc_pid"]
    assert events[-1].content.parts[0].text == "3 and 7."  # type: ignore[union-attr]


async def test_a_confirmation_crosses_our_own_bridge_as_the_loops_pause(tmp_path: Path) -> None:
    """``tooling serve`` asks by elicitation; ``McpToolset`` turns that into the loop's
    confirmation pause, and the user's answer goes back to the server as the reply."""

    def reply(request_id: str | None, confirmed: bool) -> Content:
        answer = Part.from_function_response(
            "request_confirmation", {"confirmed": confirmed}, id=request_id
        )
        return Content(role="user", parts=[answer])

    toolset = McpToolset(our_server(), tool_filter=["delete_record"])
    model = ScriptedModel(
        [
            [Part.from_function_call("delete_record", {"record_id": "r1"})],
            "Deleted r1.",
            [Part.from_function_call("delete_record", {"record_id": "r2"})],
            "Kept r2.",
        ]
    )
    agent = Agent(name="records", model=model, instruction="Delete.", tools=[toolset])
    async with Runner(agent, app_name="mcp") as runner:

        async def run(message: str | Content) -> list[Any]:
            return [
                e async for e in runner.run_async(user_id="u", session_id="s", new_message=message)
            ]

        _, request = await run("delete r1")
        (ask,) = request.get_function_calls()
        assert ask.name == "request_confirmation"
        assert "Confirm running delete_record." in ask.args["toolConfirmation"]["hint"]
        assert len(model.requests) == 1  # paused: the model waits for the user

        events = await run(reply(ask.id, True))
        answers = [r.response for e in events for r in e.get_function_responses()]
        assert {"deleted": "r1"} in answers

        _, request = await run("delete r2")
        (ask,) = request.get_function_calls()
        events = await run(reply(ask.id, False))
        answers = [r.response for e in events for r in e.get_function_responses()]
        assert any(a.get("error", {}).get("code") == "tool.rejected" for a in answers)


# -- failures and the public surface ---------------------------------------------------------


async def test_a_server_that_cannot_be_reached_is_a_tool_error_naming_it() -> None:
    port = free_port()  # nothing listens there
    toolset = McpToolset(HttpServer(f"http://127.0.0.1:{port}/mcp"))
    try:
        with pytest.raises(OSError, match=f"cannot connect to the MCP server .*{port}"):
            await toolset.get_tools()
    finally:
        await toolset.close()
    missing = McpToolset(StdioServer("/nonexistent/mcp-server"))
    with pytest.raises(OSError):
        await missing.get_tools()
    await missing.close()


def test_the_public_surface_of_tooling_mcp() -> None:
    import tooling.mcp

    assert tooling.mcp.__all__ == [
        "HttpServer",
        "McpAuth",
        "McpServer",
        "McpTool",
        "McpToolset",
        "StdioServer",
    ]
    assert all(getattr(tooling.mcp, name).__doc__ for name in tooling.mcp.__all__)
