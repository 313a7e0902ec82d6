"""ScriptedModel: turn forms, JSON scripts (single and multi-agent), recorded requests,
running out of turns, and streaming."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_core import Agent, Content, Event, FunctionCall, Part, Runner
from agent_core.models.base import LlmRequest, LlmResponse
from agent_core.models.scripted import ScriptedModel, ScriptExhausted, load_replay, replay_message
from tooling import Blob, tool


@tool
def is_even(number: int) -> bool:
    """Tell whether a number is even."""
    return number % 2 == 0


def request(text: str = "hi", agent_name: str = "") -> LlmRequest:
    return LlmRequest(
        model="scripted",
        contents=[Content("user", [Part.from_text(text)])],
        agent_name=agent_name,
    )


async def ask(
    model: ScriptedModel, llm_request: LlmRequest | None = None, stream: bool = False
) -> list[LlmResponse]:
    llm_request = llm_request if llm_request is not None else request()
    return [r async for r in model.generate_content_async(llm_request, stream=stream)]


async def one(model: ScriptedModel, llm_request: LlmRequest | None = None) -> LlmResponse:
    [response] = await ask(model, llm_request)
    return response


# -- turn forms ------------------------------------------------------------------------------


async def test_every_turn_form() -> None:
    call = Part.from_function_call("is_even", {"number": 4})
    model = ScriptedModel(
        [
            "Hello there.",
            [call],
            Content("model", [Part.from_text("From a Content.")]),
            LlmResponse(content=Content("model", [Part.from_text("Done.")]), finish_reason="STOP"),
            {
                "role": "model",
                "parts": [{"functionCall": {"name": "is_even", "args": {"number": 5}}}],
            },
            {"error_code": "RESOURCE_EXHAUSTED", "error_message": "Quota exceeded."},
        ]
    )
    assert model.model == "scripted"
    assert repr(model) == "ScriptedModel('scripted')"

    text = await one(model)
    assert text.content == Content("model", [Part(text="Hello there.")])
    assert text.partial is False and text.error_code is None

    parts = await one(model)
    assert parts.content == Content("model", [call])
    assert parts.content is not None and parts.content.parts[0] is not call  # a copy

    assert (await one(model)).content == Content("model", [Part(text="From a Content.")])

    given = await one(model)
    assert given.finish_reason == "STOP"
    assert given.content is not None and given.content.text == "Done."

    wire = await one(model)
    assert wire.content is not None
    assert wire.content.parts[0].function_call == FunctionCall(None, "is_even", {"number": 5})

    error = await one(model)
    assert (error.error_code, error.error_message, error.content) == (
        "RESOURCE_EXHAUSTED",
        "Quota exceeded.",
        None,
    )
    assert model.remaining() == 0


async def test_turns_are_handed_out_as_copies() -> None:
    """The loop may change what it got (strip ids, say) without rewriting the script."""
    turn = LlmResponse(
        content=Content("model", [Part.from_function_call("is_even", {"number": 2})])
    )
    model = ScriptedModel([turn, turn])
    first = await one(model)
    assert first.content is not None and first.content.parts[0].function_call is not None
    first.content.parts[0].function_call.id = "generated-1"
    second = await one(model)
    assert second.content is not None and second.content.parts[0].function_call is not None
    assert second.content.parts[0].function_call.id is None


def test_bad_turns_are_refused_at_construction() -> None:
    with pytest.raises(ValueError, match="turn 1"):
        ScriptedModel(["fine", 42])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="turn 0"):
        ScriptedModel([{"text": "no parts key"}])
    with pytest.raises(ValueError, match="list of turns"):
        ScriptedModel("just a string")


# -- requests --------------------------------------------------------------------------------


async def test_requests_are_recorded_as_they_were() -> None:
    model = ScriptedModel(["one", "two"])
    contents = [Content("user", [Part.from_text("first")])]
    first = LlmRequest(
        model="scripted",
        contents=contents,
        system_instruction="Be brief.",
        tools={"is_even": is_even},
        agent_name="root",
    )
    await one(model, first)
    # The loop goes on: the conversation grows and parts change.
    contents.append(Content("model", [Part.from_text("one")]))
    contents[0].parts[0].text = "changed"
    await one(model, LlmRequest(model="scripted", contents=contents))

    assert len(model.requests) == 2
    recorded = model.requests[0]
    assert recorded.contents == [Content("user", [Part.from_text("first")])]
    assert recorded.system_instruction == "Be brief."
    assert recorded.tools == {"is_even": is_even}
    assert recorded.agent_name == "root"
    assert [c.text for c in model.requests[1].contents] == ["changed", "one"]


# -- running out -----------------------------------------------------------------------------


async def test_running_out_of_turns_is_a_clear_error() -> None:
    model = ScriptedModel(["only turn"])
    await one(model, request(agent_name="helper"))
    with pytest.raises(ScriptExhausted) as info:
        await one(model, request(agent_name="helper"))
    message = str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert "'helper'" in message
    assert "turn 2" in message
    assert "1 turn." in message
    assert "add more turns" in message
    assert len(model.requests) == 2  # the request that found nothing is recorded too


async def test_empty_script() -> None:
    with pytest.raises(ScriptExhausted, match="has 0 turns"):
        await one(ScriptedModel([]))


# -- JSON scripts ----------------------------------------------------------------------------


def write(tmp_path: Path, data: Any) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


async def test_from_json_single_script(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        [
            {
                "role": "model",
                "parts": [
                    {"functionCall": {"name": "is_even", "args": {"number": 4}, "id": "c1"}},
                    {"inlineData": {"mimeType": "image/png", "data": "AAE="}},
                ],
            },
            "4 is even.",
            {"error_code": "UNAVAILABLE", "error_message": "The model is overloaded."},
        ],
    )
    model = ScriptedModel.from_json(path)
    assert not model.multi_agent

    call_turn = await one(model)
    assert call_turn.content is not None
    call, data = call_turn.content.parts
    assert call.function_call == FunctionCall("c1", "is_even", {"number": 4})
    assert data.inline_data == Blob("image/png", b"\x00\x01")

    assert (await one(model)).content == Content("model", [Part(text="4 is even.")])
    error = await one(model)
    assert (error.error_code, error.error_message) == ("UNAVAILABLE", "The model is overloaded.")
    with pytest.raises(ScriptExhausted, match="3 turns"):
        await one(model)


async def test_from_json_multi_agent(tmp_path: Path) -> None:
    path = write(
        tmp_path,
        {
            "agents": {
                "root": [
                    {
                        "role": "model",
                        "parts": [
                            {
                                "functionCall": {
                                    "name": "transfer_to_agent",
                                    "args": {"agent_name": "math"},
                                }
                            }
                        ],
                    },
                    "Back to you.",
                ],
                "math": ["4 is even."],
            }
        },
    )
    model = ScriptedModel.from_json(path, model="demo")
    assert model.model == "demo"
    assert model.multi_agent
    assert model.remaining("root") == 2 and model.remaining("math") == 1

    transfer = await one(model, request(agent_name="root"))
    assert transfer.content is not None
    assert transfer.content.parts[0].function_call is not None
    assert transfer.content.parts[0].function_call.name == "transfer_to_agent"
    # Each agent follows its own script, whatever the order of the calls.
    math = await one(model, request(agent_name="math"))
    assert math.content is not None and math.content.text == "4 is even."
    back = await one(model, request(agent_name="root"))
    assert back.content is not None and back.content.text == "Back to you."

    with pytest.raises(ScriptExhausted) as info:
        await one(model, request(agent_name="math"))
    assert "agent 'math'" in str(info.value) and "1 turn." in str(info.value)
    with pytest.raises(ScriptExhausted) as info:
        await one(model, request(agent_name="stranger"))
    assert "'stranger'" in str(info.value) and "'root', 'math'" in str(info.value)


async def test_python_multi_agent_script() -> None:
    model = ScriptedModel({"a": ["from a"], "b": ["from b"]})
    b = await one(model, request(agent_name="b"))
    a = await one(model, request(agent_name="a"))
    assert (a.content and a.content.text, b.content and b.content.text) == ("from a", "from b")


@pytest.mark.parametrize(
    ("data", "match"),
    [
        ({"steps": []}, "agents"),
        ({"turns": [], "agents": {}}, "turns"),
        ({"turns": "hello"}, "turns"),
        ({"agents": {"root": "hello"}}, "root"),
        (42, "list of turns"),
        ([{"role": "model"}], "turn 0"),
        ([{"role": "model", "parts": [{"functionCall": {"args": {}}}]}], "turn 0"),
    ],
)
def test_from_json_rejects_bad_scripts(tmp_path: Path, data: Any, match: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(ValueError, match=match) as info:
        ScriptedModel.from_json(path)
    assert str(path) in str(info.value)


# -- streaming -------------------------------------------------------------------------------


async def test_streaming_a_text_turn() -> None:
    text = "Four is  an even number.\n"
    model = ScriptedModel([text])
    *partials, final = await ask(model, stream=True)
    pieces = [p.content.text for p in partials if p.content is not None]
    assert pieces == ["Four ", "is  ", "an ", "even ", "number.\n"]
    assert all(p.partial for p in partials)
    assert "".join(pieces) == text
    assert final.partial is False
    assert final.content == Content("model", [Part(text=text)])


async def test_streaming_a_function_call_turn_gives_one_response() -> None:
    model = ScriptedModel(
        [
            [Part.from_function_call("is_even", {"number": 4})],
            [Part.from_text("Checking. "), Part.from_function_call("is_even", {"number": 5})],
            {"error_code": "500", "error_message": "boom"},
        ]
    )
    # A turn holding a call is one final response even when streaming: no partial
    # pieces of text, the call whole, the parts in their order.
    [first] = await ask(model, stream=True)
    assert first.partial is False and first.error_code is None
    assert first.content == Content(
        "model", [Part(function_call=FunctionCall(id=None, name="is_even", args={"number": 4}))]
    )
    [second] = await ask(model, stream=True)
    assert second.partial is False
    assert second.content is not None
    assert [p.text for p in second.content.parts] == ["Checking. ", None]
    call = second.content.parts[1].function_call
    assert call is not None and (call.name, call.args) == ("is_even", {"number": 5})
    [third] = await ask(model, stream=True)
    assert third.partial is False and third.content is None
    assert (third.error_code, third.error_message) == ("500", "boom")


async def test_without_stream_a_text_turn_is_one_response() -> None:
    [response] = await ask(ScriptedModel(["several words here"]))
    assert response.partial is False


# -- imports ---------------------------------------------------------------------------------


def test_importing_agent_core_and_the_scripted_model_does_not_import_google_genai() -> None:
    code = (
        "import sys, agent_core, agent_core.models.scripted\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('google.genai'))\n"
        "assert not loaded, loaded\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# -- replay files ------------------------------------------------------------------------------


def test_from_json_reads_the_turns_of_a_replay_file(tmp_path: Path) -> None:
    path = write(tmp_path, {"prompts": ["hi"], "turns": ["Hello!"]})
    model = ScriptedModel.from_json(path)
    assert not model.multi_agent and model.remaining() == 1
    path = write(tmp_path, {"prompts": ["hi"], "agents": {"root": ["Hello!"]}})
    model = ScriptedModel.from_json(path)
    assert model.multi_agent and model.remaining("root") == 1


async def test_load_replay_gives_the_model_and_the_prompts(tmp_path: Path) -> None:
    prompts = [
        "delete r1",
        {"confirm": True},
        {"function_response": {"name": "start_job", "response": {"status": "done"}}},
    ]
    path = write(tmp_path, {"prompts": prompts, "turns": ["ok"]})
    model, loaded = load_replay(path)
    assert loaded == prompts
    assert (await one(model)).content == Content("model", [Part(text="ok")])
    model, loaded = load_replay(write(tmp_path, {"agents": {"a": ["x"]}}))
    assert loaded == [] and model.multi_agent


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (["just", "turns"], "replay file is an object"),
        ({"prompts": "hi", "turns": []}, "prompts"),
        ({"prompts": [42], "turns": []}, "prompt 0"),
        ({"prompts": [{"confirm": "yes"}], "turns": []}, "prompt 0"),
        ({"prompts": [{"function_response": {"name": "x"}}], "turns": []}, "prompt 0"),
        ({"prompts": ["hi"]}, "turns"),
        ({"prompts": ["hi"], "turns": [{"role": "model"}]}, "turn 0"),
    ],
)
def test_load_replay_rejects_bad_files(tmp_path: Path, data: Any, match: str) -> None:
    path = write(tmp_path, data)
    with pytest.raises(ValueError, match=match) as info:
        load_replay(path)
    assert str(path) in str(info.value)


def confirmation_request(request_id: str, call_id: str) -> Event:
    args = {"originalFunctionCall": {"id": call_id, "name": "delete", "args": {}}}
    return Event(
        author="agent",
        content=Content(
            "model", [Part.from_function_call("request_confirmation", args, id=request_id)]
        ),
    )


def test_replay_message_answers_pending_confirmations() -> None:
    assert replay_message("plain text", []) == "plain text"
    events = [confirmation_request("req-1", "call-1"), confirmation_request("req-2", "call-2")]
    # call-1 was answered since: only req-2 is still pending.
    events.append(
        Event(
            author="agent",
            content=Content(
                "user", [Part.from_function_response("delete", {"ok": 1}, id="call-1")]
            ),
        )
    )
    message = replay_message({"confirm": False}, events)
    assert isinstance(message, Content) and message.role == "user"
    (part,) = message.parts
    assert part.function_response is not None
    assert part.function_response.id == "req-2"
    assert part.function_response.name == "request_confirmation"
    assert part.function_response.response == {"confirmed": False}
    with pytest.raises(ValueError, match="nothing to confirm"):
        replay_message({"confirm": True}, events[2:])


def test_replay_message_answers_a_pending_long_running_call() -> None:
    call = Event(
        author="agent",
        content=Content("model", [Part.from_function_call("start_job", {}, id="call-7")]),
        long_running_tool_ids={"call-7"},
    )
    prompt = {"function_response": {"name": "start_job", "response": {"status": "done"}}}
    message = replay_message(prompt, [call])
    assert isinstance(message, Content)
    (part,) = message.parts
    assert part.function_response is not None
    assert (part.function_response.id, part.function_response.response) == (
        "call-7",
        {"status": "done"},
    )
    with pytest.raises(ValueError, match="start_job"):
        replay_message(prompt, [])
    named = {"function_response": {"name": "start_job", "response": {}, "id": "call-9"}}
    message = replay_message(named, [])
    assert isinstance(message, Content) and message.parts[0].function_response is not None
    assert message.parts[0].function_response.id == "call-9"


async def test_a_replay_file_drives_a_pause_and_its_resume(tmp_path: Path) -> None:
    deleted: list[str] = []

    @tool(require_confirmation=True)
    def delete(name: str) -> str:
        """Delete something."""
        deleted.append(name)
        return "deleted"

    path = write(
        tmp_path,
        {
            "prompts": ["delete a", {"confirm": True}],
            "turns": [
                {
                    "role": "model",
                    "parts": [{"functionCall": {"name": "delete", "args": {"name": "a"}}}],
                },
                "Deleted a.",
            ],
        },
    )
    model, prompts = load_replay(path)
    runner = Runner(Agent("admin", model, tools=[delete]), app_name="app")
    texts = []
    for prompt in prompts:
        session = await runner.session_service.get_session(
            app_name="app", user_id="u", session_id="s"
        )
        message = replay_message(prompt, session.events if session else [])
        async for event in runner.run_async(user_id="u", session_id="s", new_message=message):
            if event.content is not None and event.content.text:
                texts.append(event.content.text)
    await runner.aclose()
    assert deleted == ["a"] and texts == ["Deleted a."]
