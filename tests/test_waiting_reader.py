"""One reader of what waits on the user: requests open and answered, calls held behind
them, long-running calls without a result, and stored requests that are malformed."""

from __future__ import annotations

from typing import Any

from agent_core import Agent, Content, Event, Part, Runner, ScriptedModel
from agent_core._invocation.requests import UserRequest, Waiting
from agent_core.cli import pending_requests
from agent_core.web import pending_calls
from tooling import tool

APP, USER, SID = "app", "u1", "s1"


def call(name: str, **args: Any) -> Part:
    return Part.from_function_call(name, args)


async def run(runner: Runner, message: str | Content) -> list[Event]:
    return [e async for e in runner.run_async(user_id=USER, session_id=SID, new_message=message)]


async def events_of(runner: Runner) -> list[Event]:
    session = await runner.session_service.get_session(app_name=APP, user_id=USER, session_id=SID)
    assert session is not None
    return session.events


@tool(require_confirmation=True)
def delete_file(path: str) -> str:
    """Delete a file.

    Args:
        path: The file to delete.
    """
    return f"deleted {path}"


def read_file(path: str) -> str:
    """Read a file.

    Args:
        path: The file to read.
    """
    return f"contents of {path}"


async def test_a_confirmation_request_is_read_with_its_held_and_deferred_calls() -> None:
    model = ScriptedModel(
        [[call("delete_file", path="a.txt"), call("read_file", path="b.txt")], "Done."]
    )
    runner = Runner(
        Agent("files", model, tools=[delete_file, read_file], tool_strategy="sequential"),
        app_name=APP,
    )
    await run(runner, "clean up")
    events = await events_of(runner)

    (request,) = Waiting(events).open_requests()
    assert request.kind == "confirmation" and request.name == "request_confirmation"
    assert request.author == "files"
    assert request.call is not None and request.call.name == "delete_file"
    assert request.call.args == {"path": "a.txt"}
    assert [c.name for c in request.deferred] == ["read_file"]
    assert request.fingerprint and request.hint
    assert [c.id for c in pending_requests(events)] == [request.id]
    assert [c["id"] for c in pending_calls(events)] == [request.id]

    answer = Part.from_function_response(request.name, {"confirmed": True}, id=request.id)
    await run(runner, Content("user", [answer]))
    events = await events_of(runner)
    assert Waiting(events).open_requests() == []
    assert pending_requests(events) == [] and pending_calls(events) == []
    assert Waiting(events).held_call_answered(request)


async def test_a_long_running_call_without_its_result_is_waiting_until_it_arrives() -> None:
    @tool(long_running=True)
    def start_render(scene: str) -> None:
        """Start rendering a scene; the result comes later."""

    model = ScriptedModel([[call("start_render", scene="intro")], "Rendered."])
    runner = Runner(Agent("studio", model, tools=[start_render]), app_name=APP)
    await run(runner, "render")
    events = await events_of(runner)

    waiting = Waiting(events)
    assert waiting.open_requests() == []
    (job,) = waiting.open_long_running()
    assert job.call.name == "start_render" and job.author == "studio"
    assert [c["id"] for c in pending_calls(events)] == [job.call.id]

    result = Part.from_function_response("start_render", {"frames": 240}, id=job.call.id)
    await run(runner, Content("user", [result]))
    assert Waiting(await events_of(runner)).open_long_running() == []


async def test_an_update_that_will_continue_does_not_answer_a_long_running_call() -> None:
    start = Event(
        author="studio",
        content=Content("model", [Part.from_function_call("render", {}, id="c1")]),
        long_running_tool_ids={"c1"},
    )
    update = Part.from_function_response("render", {"progress": 0.5}, id="c1")
    assert update.function_response is not None
    update.function_response.will_continue = True
    events = [start, Event(author="user", content=Content("user", [update]))]
    (job,) = Waiting(events).open_long_running()
    assert job.call.id == "c1"


def test_a_malformed_stored_request_is_read_without_its_call() -> None:
    stored = Part.from_function_call(
        "request_confirmation", {"originalFunctionCall": "nope", "deferredCalls": [1]}, id="r1"
    )
    assert stored.function_call is not None
    request = UserRequest.read(stored.function_call)
    assert request is not None
    assert request.call is None and request.deferred == () and request.held_calls() == []
    assert request.tool_name == "?" and request.fingerprint == "" and request.hint == ""
    plain = Part.from_function_call("read_file", {"path": "x"}, id="c1").function_call
    assert plain is not None and UserRequest.read(plain) is None


async def test_answering_a_malformed_stored_request_is_an_error_event_not_a_crash() -> None:
    model = ScriptedModel(["unused"])
    runner = Runner(Agent("files", model, tools=[delete_file]), app_name=APP)
    session = await runner.session_service.create_session(
        app_name=APP, user_id=USER, session_id=SID
    )
    bad = Event(
        author="files",
        content=Content("model", [Part.from_function_call("request_confirmation", {}, id="r1")]),
        long_running_tool_ids={"r1"},
    )
    await runner.session_service.append_event(session, bad)

    answer = Part.from_function_response("request_confirmation", {"confirmed": True}, id="r1")
    (event,) = await run(runner, Content("user", [answer]))
    assert event.error_code == "agent.unknown_request"
    assert model.requests == []
