"""Runs that pause for the user and resume: confirmations (with deferred calls), refusals,
credentials, pending long-running calls, and a pause that survives a process restart."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_core import (
    Agent,
    Content,
    Event,
    FunctionCall,
    Part,
    Runner,
    ScriptedModel,
    SqliteSessionService,
)
from agent_core._invocation.requests import GENERATED_ID_PREFIX
from tooling import Blob, ExecutionStrategy, ToolContext, tool

APP, USER, SID = "app", "u1", "s1"


def call(name: str, id: str | None = None, **args: Any) -> Part:
    return Part.from_function_call(name, args, id=id)


def reply(name: str, request_id: str | None, response: dict[str, Any]) -> Content:
    return Content(role="user", parts=[Part.from_function_response(name, response, id=request_id)])


async def collect(runner: Runner, message: str | Content, **kw: Any) -> list[Event]:
    kw.setdefault("user_id", USER)
    kw.setdefault("session_id", SID)
    return [e async for e in runner.run_async(new_message=message, **kw)]


async def stored(runner: Runner) -> list[Event]:
    session = await runner.session_service.get_session(
        app_name=runner.app_name, user_id=USER, session_id=SID
    )
    assert session is not None
    return session.events


def request_call(event: Event) -> FunctionCall:
    (fc,) = event.get_function_calls()
    return fc


def responses(event: Event) -> list[dict[str, Any]]:
    return [r.response for r in event.get_function_responses()]


def sent(runner_model: ScriptedModel, turn: int) -> list[dict[str, Any]]:
    return [c.to_dict() for c in runner_model.requests[turn].contents]


class Files:
    """A pretend file system with a delete that needs the user's confirmation."""

    def __init__(self) -> None:
        self.deleted: list[str] = []
        self.logged: list[str] = []
        self.read: list[str] = []
        files = self

        @tool(require_confirmation=True)
        def delete_file(path: str) -> dict[str, Any]:
            """Delete a file.

            Args:
                path: The file to delete.
            """
            files.deleted.append(path)
            return {"deleted": path}

        @tool
        def write_log(message: str) -> str:
            """Append to the log."""
            files.logged.append(message)
            return "logged"

        @tool(read_only=True, concurrency_safe=True)
        def read_file(path: str) -> str:
            """Read a file."""
            files.read.append(path)
            return f"contents of {path}"

        self.tools: list[Any] = [delete_file, write_log, read_file]


# -- confirmation ------------------------------------------------------------------------


async def test_confirmation_pauses_with_a_request_event() -> None:
    files = Files()
    model = ScriptedModel([[call("delete_file", path="a.txt")], "Deleted a.txt."])
    runner = Runner(Agent("fs", model, tools=files.tools), app_name=APP)

    events = await collect(runner, "delete a.txt")

    assert files.deleted == []
    call_event, request = events
    original = request_call(call_event)
    fc = request_call(request)
    assert fc.name == "request_confirmation"
    assert fc.id and fc.id != original.id
    assert fc.args["originalFunctionCall"] == {
        "id": original.id,
        "name": "delete_file",
        "args": {"path": "a.txt"},
    }
    confirmation = fc.args["toolConfirmation"]
    assert confirmation["tool"] == "delete_file"
    assert confirmation["args"] == {"path": "a.txt"}
    assert confirmation["fingerprint"].startswith("sha256:")
    assert "hint" in confirmation
    assert fc.args["deferredCalls"] == []
    assert request.long_running_tool_ids == {fc.id}
    assert request.actions.requested_tool_confirmations == {original.id: confirmation}
    assert request.is_final_response()
    assert len(model.requests) == 1  # the run paused: no second model call
    assert [e.id for e in await stored(runner)][1:] == [call_event.id, request.id]

    # The event's wire shape carries the request.
    wire = request.to_dict()["content"]["parts"][0]["functionCall"]
    assert wire["name"] == "request_confirmation"
    assert set(wire["args"]) >= {"originalFunctionCall", "toolConfirmation"}


async def test_confirmed_reply_resumes_and_runs_the_call() -> None:
    files = Files()
    model = ScriptedModel([[call("delete_file", path="a.txt")], "Deleted a.txt."])
    runner = Runner(Agent("fs", model, tools=files.tools), app_name=APP)
    _, request = await collect(runner, "delete a.txt")
    request_id = request_call(request).id

    events = await collect(runner, reply("request_confirmation", request_id, {"confirmed": True}))

    assert files.deleted == ["a.txt"]
    response, answer = events
    original_id = request_call(request).args["originalFunctionCall"]["id"]
    assert [r.id for r in response.get_function_responses()] == [original_id]
    assert responses(response) == [{"deleted": "a.txt"}]
    assert answer.content is not None and answer.content.text == "Deleted a.txt."
    # The model sees the call and its real response; the request traffic stays between
    # the user and the loop.
    contents = sent(model, 1)
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"] == [
        {"functionCall": {"name": "delete_file", "args": {"path": "a.txt"}}}
    ]
    assert contents[2]["parts"][0]["functionResponse"]["response"] == {"deleted": "a.txt"}
    assert "request_confirmation" not in str(contents)
    session = await stored(runner)
    assert len(session) == 6  # user, call, request, user's reply, response, answer


async def test_refused_reply_gives_a_rejected_response() -> None:
    files = Files()
    model = ScriptedModel([[call("delete_file", path="a.txt")], "I did not delete it."])
    runner = Runner(Agent("fs", model, tools=files.tools), app_name=APP)
    _, request = await collect(runner, "delete a.txt")

    events = await collect(
        runner, reply("request_confirmation", request_call(request).id, {"confirmed": False})
    )

    assert files.deleted == []
    (refused,) = responses(events[0])
    assert refused["status"] == "error" and refused["error"]["code"] == "tool.rejected"
    assert events[-1].content is not None and events[-1].content.text == "I did not delete it."
    assert "tool.rejected" in str(sent(model, 1))


async def test_resume_runs_the_deferred_calls_too() -> None:
    files = Files()
    model = ScriptedModel(
        [
            [
                call("read_file", path="a.txt"),
                call("delete_file", path="a.txt"),
                call("write_log", message="deleted a.txt"),
            ],
            "Read, deleted and logged.",
        ]
    )
    runner = Runner(Agent("fs", model, tools=files.tools), app_name=APP)

    call_event, answered, request = await collect(runner, "clean up")

    # The read ran; the delete waits; the log write after it is deferred until resume.
    assert files.read == ["a.txt"] and files.deleted == [] and files.logged == []
    read_id, delete_id, log_id = [c.id for c in call_event.get_function_calls()]
    assert [r.id for r in answered.get_function_responses()] == [read_id]
    fc = request_call(request)
    assert fc.args["originalFunctionCall"]["id"] == delete_id
    assert fc.args["deferredCalls"] == [
        {"id": log_id, "name": "write_log", "args": {"message": "deleted a.txt"}}
    ]

    events = await collect(runner, reply("request_confirmation", fc.id, {"confirmed": True}))

    assert files.deleted == ["a.txt"] and files.logged == ["deleted a.txt"]
    resumed, final = events
    assert [r.id for r in resumed.get_function_responses()] == [delete_id, log_id]
    assert responses(resumed) == [{"deleted": "a.txt"}, {"result": "logged"}]
    assert final.content is not None and final.content.text == "Read, deleted and logged."
    # The model gets every response of its turn together, in call order.
    contents = sent(model, 1)
    assert len(contents) == 3
    assert [p["functionResponse"]["name"] for p in contents[2]["parts"]] == [
        "read_file",
        "delete_file",
        "write_log",
    ]


async def test_confirmation_requested_by_the_tool_with_a_payload() -> None:
    seen: list[Any] = []

    def transfer_money(amount: int, tool_context: ToolContext) -> str:
        """Transfer money."""
        if tool_context.tool_confirmation is None:
            tool_context.request_confirmation(f"Send {amount}?", payload={"limit": 100})
            return "waiting"
        seen.append(tool_context.tool_confirmation.payload)
        return f"sent {amount}"

    model = ScriptedModel([[call("transfer_money", amount=50)], "Sent."])
    runner = Runner(Agent("bank", model, tools=[transfer_money]), app_name=APP)
    _, request = await collect(runner, "send 50")
    fc = request_call(request)
    assert fc.name == "request_confirmation"
    assert fc.args["toolConfirmation"]["hint"] == "Send 50?"
    assert fc.args["toolConfirmation"]["payload"] == {"limit": 100}

    confirmed = {"confirmed": True, "payload": {"limit": 60}}
    events = await collect(runner, reply("request_confirmation", fc.id, confirmed))
    assert responses(events[0]) == [{"result": "sent 50"}]
    assert seen == [{"limit": 60}]


async def test_a_reply_to_an_unknown_request_is_an_error_event() -> None:
    model = ScriptedModel(["never"])
    runner = Runner(Agent("a", model), app_name=APP)
    (event,) = await collect(runner, reply("request_confirmation", "req-nope", {"confirmed": True}))
    assert event.error_code == "agent.unknown_request"
    assert model.requests == []


async def test_a_pause_survives_a_process_restart(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"

    first_files = Files()
    async with SqliteSessionService(db) as sessions:
        model = ScriptedModel([[call("delete_file", path="a.txt")]])
        async with Runner(
            Agent("fs", model, tools=first_files.tools), app_name=APP, session_service=sessions
        ) as runner:
            _, request = await collect(runner, "delete a.txt")
    request_id = request_call(request).id

    # A new process: a new service on the same file, a new runner, a new agent.
    files = Files()
    async with SqliteSessionService(db) as reopened:
        model = ScriptedModel(["Deleted it."])
        runner = Runner(
            Agent("fs", model, tools=files.tools), app_name=APP, session_service=reopened
        )
        events = await collect(
            runner, reply("request_confirmation", request_id, {"confirmed": True})
        )
        assert files.deleted == ["a.txt"] and first_files.deleted == []
        assert responses(events[0]) == [{"deleted": "a.txt"}]
        assert events[-1].content is not None and events[-1].content.text == "Deleted it."
        contents = sent(model, 0)
        assert [c["role"] for c in contents] == ["user", "model", "user"]
        assert contents[2]["parts"][0]["functionResponse"]["response"] == {"deleted": "a.txt"}
        assert len(await stored(runner)) == 6


_PAUSE_IN_ANOTHER_PROCESS = """
import asyncio, json, sys
from agent_core import Agent, Part, Runner, ScriptedModel, SqliteSessionService
from tooling import tool

@tool(require_confirmation=True)
def delete_file(path: str) -> dict:
    \"\"\"Delete a file.\"\"\"
    raise SystemExit("must not run before confirmation")

async def main():
    async with SqliteSessionService(sys.argv[1]) as sessions:
        model = ScriptedModel([[Part.from_function_call("delete_file", {"path": "a.txt"})]])
        runner = Runner(Agent("fs", model, tools=[delete_file]), app_name="app",
                        session_service=sessions)
        events = [e async for e in runner.run_async(
            user_id="u1", session_id="s1", new_message="delete a.txt")]
        print(json.dumps(events[-1].get_function_calls()[0].id))

asyncio.run(main())
"""


async def test_a_pause_made_by_another_process_is_resumed_here(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"
    done = subprocess.run(
        [sys.executable, "-c", _PAUSE_IN_ANOTHER_PROCESS, str(db)],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=Path(__file__).resolve().parent.parent,
    )
    assert done.returncode == 0, done.stderr
    request_id = json.loads(done.stdout)

    files = Files()
    async with SqliteSessionService(db) as sessions:
        model = ScriptedModel(["Deleted it."])
        runner = Runner(
            Agent("fs", model, tools=files.tools), app_name=APP, session_service=sessions
        )
        events = await collect(
            runner, reply("request_confirmation", request_id, {"confirmed": True})
        )
    assert files.deleted == ["a.txt"]
    assert responses(events[0]) == [{"deleted": "a.txt"}]
    assert events[-1].content is not None and events[-1].content.text == "Deleted it."


# -- credentials -------------------------------------------------------------------------

AUTH = {"type": "oauth2", "scopes": ["calendar.read"]}


def list_events(day: str, tool_context: ToolContext) -> dict[str, Any]:
    """List calendar events.

    Args:
        day: The day to list.
    """
    credential = tool_context.get_auth_response(AUTH)
    if credential is None:
        tool_context.request_credential(AUTH)
        return {"status": "needs credential"}
    return {"day": day, "token_seen": credential["access_token"]}


async def test_a_credential_request_pauses_and_the_reply_resumes() -> None:
    model = ScriptedModel([[call("list_events", day="monday")], "Monday is free."])
    runner = Runner(Agent("cal", model, tools=[list_events]), app_name=APP)

    call_event, request = await collect(runner, "what's on monday?")

    fc = request_call(request)
    assert fc.name == "request_credential"
    original_id = request_call(call_event).id
    assert fc.args["originalFunctionCall"]["id"] == original_id
    assert fc.args["authConfig"] == AUTH
    assert request.actions.requested_auth_configs == {original_id: AUTH}
    assert request.long_running_tool_ids == {fc.id}
    assert len(model.requests) == 1

    events = await collect(runner, reply("request_credential", fc.id, {"access_token": "tok-1"}))

    assert responses(events[0]) == [{"day": "monday", "token_seen": "tok-1"}]
    assert events[-1].content is not None and events[-1].content.text == "Monday is free."
    assert "tok-1" in str(sent(model, 1))  # the tool's answer, not the credential itself
    assert "request_credential" not in str(sent(model, 1))


# -- long-running calls left pending ---------------------------------------------------


async def test_a_pending_long_running_call_ends_the_turn_and_its_response_resumes() -> None:
    started: list[str] = []

    @tool(long_running=True)
    def start_render(scene: str) -> None:
        """Start rendering a scene; the result comes later."""
        started.append(scene)

    model = ScriptedModel([[call("start_render", scene="intro")], "The render finished."])
    runner = Runner(Agent("studio", model, tools=[start_render]), app_name=APP)

    (call_event,) = await collect(runner, "render the intro")

    assert started == ["intro"]
    call_id = request_call(call_event).id
    assert call_id is not None and call_id.startswith(GENERATED_ID_PREFIX)
    assert call_event.long_running_tool_ids == {call_id}
    assert call_event.is_final_response()
    assert len(model.requests) == 1
    assert [e.id for e in await stored(runner)][1:] == [call_event.id]

    # Later, the result arrives as the user's function response.
    result = reply("start_render", call_id, {"status": "done", "frames": 240})
    events = await collect(runner, result)

    assert started == ["intro"]  # not run again
    assert events[-1].content is not None and events[-1].content.text == "The render finished."
    contents = sent(model, 1)
    assert contents[1]["parts"] == [
        {"functionCall": {"name": "start_render", "args": {"scene": "intro"}}}
    ]
    assert contents[2]["parts"] == [
        {
            "functionResponse": {
                "name": "start_render",
                "response": {"status": "done", "frames": 240},
            }
        }
    ]


async def test_pending_and_answered_calls_in_one_turn() -> None:
    @tool(long_running=True)
    def start_job() -> None:
        """Start a job."""

    def status() -> str:
        """Report status."""
        return "green"

    model = ScriptedModel(
        [[call("status"), call("start_job")], "Status green; the job is running.", "Job done."]
    )
    runner = Runner(Agent("ops", model, tools=[start_job, status]), app_name=APP)
    events = await collect(runner, "go")
    call_event, answered, text = events
    status_id, job_id = [c.id for c in call_event.get_function_calls()]
    assert call_event.long_running_tool_ids == {job_id}
    assert [r.id for r in answered.get_function_responses()] == [status_id]
    assert text.content is not None and text.content.text == "Status green; the job is running."
    assert len(model.requests) == 2

    events = await collect(runner, reply("start_job", job_id, {"result": "ok"}))
    assert events[-1].content is not None and events[-1].content.text == "Job done."


# -- replies that must not run a call twice ----------------------------------------------


async def test_replaying_an_answered_confirmation_does_not_run_the_call_again() -> None:
    files = Files()
    model = ScriptedModel([[call("delete_file", path="a.txt")], "Deleted.", "unused"])
    runner = Runner(Agent("fs", model, tools=files.tools), app_name=APP)
    _, request = await collect(runner, "delete a.txt")
    answer = reply("request_confirmation", request_call(request).id, {"confirmed": True})
    await collect(runner, answer)
    assert files.deleted == ["a.txt"]

    (event,) = await collect(runner, answer)

    assert event.error_code == "agent.request_answered"
    assert files.deleted == ["a.txt"]
    assert len(model.requests) == 2


async def test_a_refused_request_cannot_be_confirmed_later() -> None:
    files = Files()
    model = ScriptedModel([[call("delete_file", path="a.txt")], "Not deleted.", "unused"])
    runner = Runner(Agent("fs", model, tools=files.tools), app_name=APP)
    _, request = await collect(runner, "delete a.txt")
    request_id = request_call(request).id
    await collect(runner, reply("request_confirmation", request_id, {"confirmed": False}))

    (event,) = await collect(runner, reply("request_confirmation", request_id, {"confirmed": True}))

    assert event.error_code == "agent.request_answered"
    assert files.deleted == []


async def test_a_resume_cancelled_before_the_call_ran_can_be_retried() -> None:
    started = asyncio.Event()
    runs: list[str] = []

    @tool(require_confirmation=True)
    async def deploy(env: str) -> str:
        """Deploy."""
        runs.append(env)
        if len(runs) == 1:
            started.set()
            await asyncio.sleep(30)  # the first attempt is cancelled here
        return f"deployed {env}"

    model = ScriptedModel([[call("deploy", env="prod")], "Deployed."])
    runner = Runner(Agent("ops", model, tools=[deploy]), app_name=APP)
    _, request = await collect(runner, "deploy")
    answer = reply("request_confirmation", request_call(request).id, {"confirmed": True})

    task = asyncio.create_task(collect(runner, answer))
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # No response was stored for the call, so the request is still pending.
    assert not any(e.get_function_responses() for e in (await stored(runner)) if e.author != "user")

    events = await collect(runner, answer)
    assert runs == ["prod", "prod"]
    assert responses(events[0]) == [{"result": "deployed prod"}]


# -- what a resumed call's response decides -----------------------------------------------


async def test_a_resumed_call_with_skip_summarization_ends_the_run() -> None:
    @tool(require_confirmation=True)
    def export_report(tool_context: ToolContext) -> str:
        """Export the report and show it as is."""
        tool_context.actions.skip_summarization = True
        return "report.csv"

    model = ScriptedModel([[call("export_report")], "never asked"])
    runner = Runner(Agent("a", model, tools=[export_report]), app_name=APP)
    _, request = await collect(runner, "export")
    events = await collect(
        runner, reply("request_confirmation", request_call(request).id, {"confirmed": True})
    )
    assert len(events) == 1 and events[0].is_final_response()
    assert responses(events[0]) == [{"result": "report.csv"}]
    assert len(model.requests) == 1


async def test_a_paused_sub_agent_resumes_and_can_transfer_back() -> None:
    @tool(require_confirmation=True)
    def refund(amount: int, tool_context: ToolContext) -> str:
        """Refund, then hand back to the desk."""
        tool_context.actions.transfer_to_agent = "desk"
        return f"refunded {amount}"

    model = ScriptedModel(
        {
            "desk": [[call("transfer_to_agent", agent_name="billing")], "Desk: refund done."],
            "billing": [[call("refund", amount=5)]],
        }
    )
    billing = Agent("billing", model, tools=[refund])
    runner = Runner(Agent("desk", model, sub_agents=[billing]), app_name=APP)
    events = await collect(runner, "refund me")
    request = events[-1]
    assert request.author == "billing"
    assert request_call(request).name == "request_confirmation"

    events = await collect(
        runner, reply("request_confirmation", request_call(request).id, {"confirmed": True})
    )
    assert [e.author for e in events] == ["billing", "desk"]
    assert responses(events[0]) == [{"result": "refunded 5"}]
    assert events[-1].content is not None and events[-1].content.text == "Desk: refund done."
    assert [r.agent_name for r in model.requests] == ["desk", "billing", "desk"]


def test_sync_runs_with_sqlite_sessions_and_binary_results(tmp_path: Path) -> None:
    def snapshot() -> Blob:
        """Take a picture."""
        return Blob("image/png", b"\x89PNG\r\n")

    model = ScriptedModel([[call("snapshot")], "A picture.", "Still a picture."])
    with SqliteSessionService(tmp_path / "s.db") as sessions:
        runner = Runner(
            Agent("cam", model, tools=[snapshot]), app_name=APP, session_service=sessions
        )
        first = list(runner.run(user_id=USER, session_id=SID, new_message="snap"))
        list(runner.run(user_id=USER, session_id=SID, new_message="again"))
        session = asyncio.run(sessions.get_session(app_name=APP, user_id=USER, session_id=SID))
    assert session is not None and len(session.events) == 6
    (fr,) = first[1].get_function_responses()
    assert fr.response == {"part": 0, "mime_type": "image/png"}
    assert fr.parts is not None and fr.parts[0].inline_data == Blob("image/png", b"\x89PNG\r\n")
    # Stored and read back, the event is the one that was yielded.
    assert session.events[2].to_dict() == first[1].to_dict()
    # The model got the bytes with the response, from the stored session.
    sent_part = model.requests[2].contents[2].parts[0].function_response
    assert sent_part is not None and sent_part.parts is not None
    assert sent_part.parts[0].inline_data == Blob("image/png", b"\x89PNG\r\n")


async def test_several_requests_answered_in_one_reply() -> None:
    files = Files()
    model = ScriptedModel(
        [[call("delete_file", path="a"), call("delete_file", path="b")], "Both deleted."]
    )
    agent = Agent("fs", model, tools=files.tools, tool_strategy=ExecutionStrategy.PARALLEL)
    runner = Runner(agent, app_name=APP)
    call_event, request = await collect(runner, "delete a and b")
    # Under PARALLEL both calls wait for the user: one request part each, in call order.
    requests = request.get_function_calls()
    assert [r.args["originalFunctionCall"]["args"] for r in requests] == [
        {"path": "a"},
        {"path": "b"},
    ]
    assert request.long_running_tool_ids == {r.id for r in requests}
    assert set(request.actions.requested_tool_confirmations) == {
        c.id for c in call_event.get_function_calls()
    }

    answer = Content(
        role="user",
        parts=[
            Part.from_function_response("request_confirmation", {"confirmed": True}, id=r.id)
            for r in requests
        ],
    )
    events = await collect(runner, answer)
    assert files.deleted == ["a", "b"]
    assert [r.id for r in events[0].get_function_responses()] == [
        c.id for c in call_event.get_function_calls()
    ]
    assert events[-1].content is not None and events[-1].content.text == "Both deleted."


def test_a_call_still_waiting_is_shown_to_the_model_as_pending() -> None:
    @tool(require_confirmation=True)
    def delete_file(path: str) -> str:
        """Delete a file."""
        return f"deleted {path}"

    model = ScriptedModel([[Part.from_function_call("delete_file", {"path": "a"})], "ok"])
    runner = Runner(Agent("ops", model, tools=[delete_file]), app_name="app")
    list(runner.run(user_id="u", session_id="s", new_message="delete a"))
    list(runner.run(user_id="u", session_id="s", new_message="never mind"))

    sent = [c.to_dict() for c in model.requests[-1].contents]
    assert [c["role"] for c in sent] == ["user", "model", "user", "user"]
    (stand_in,) = sent[2]["parts"]
    assert stand_in["functionResponse"]["name"] == "delete_file"
    assert stand_in["functionResponse"]["response"]["status"] == "pending"
    assert sent[3]["parts"] == [{"text": "never mind"}]
