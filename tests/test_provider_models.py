"""OpenAIModel (Responses and Chat Completions) and AnthropicModel on the wire.

The real SDK clients talk to a loopback server (``tests/_providers.py``) that speaks each
API's JSON and server-sent events; the tests read back the requests the SDK sent
(messages, tools, ids, ordering) and script recorded-shape replies. Most tests run once
per API. No real key is used and nothing leaves the machine.
"""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import sys
import warnings
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from _providers import no_proxies

from agent_core import (
    Agent,
    Content,
    Event,
    FunctionCall,
    FunctionResponse,
    Part,
    RunConfig,
    Runner,
)
from agent_core.models.anthropic import AnthropicModel
from agent_core.models.base import BaseLlm, LlmRequest, LlmResponse
from agent_core.models.gemini import GeminiModel
from agent_core.models.openai import OpenAIModel
from examples._replay import load_agent_module
from tests._providers import (
    DIALECTS,
    MODEL,
    AnthropicDialect,
    Call,
    Dialect,
    FakeServer,
    Reply,
    serving,
)
from tooling import Blob, ToolError, tool


@tool
def is_even(number: int) -> bool:
    """Tell whether a number is even."""
    return number % 2 == 0


@tool
def generate_random_number(max_value: int = 100) -> int:
    """Pick a random number between 0 and max_value."""
    return 4


TOOLS = {"is_even": is_even, "generate_random_number": generate_random_number}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    no_proxies(monkeypatch)
    with serving() as fake:
        yield fake


@pytest.fixture(params=DIALECTS, ids=lambda d: d.name)
def dialect(request: pytest.FixtureRequest) -> Dialect:
    chosen: Dialect = request.param
    return chosen


@pytest.fixture
async def model(server: FakeServer, dialect: Dialect) -> AsyncIterator[BaseLlm]:
    llm = dialect.model(server)
    yield llm
    await llm.aclose()  # type: ignore[attr-defined]


async def ask(model: BaseLlm, request: LlmRequest, stream: bool = False) -> list[LlmResponse]:
    return [r async for r in model.generate_content_async(request, stream=stream)]


def user(text: str) -> Content:
    return Content("user", [Part.from_text(text)])


def request(*contents: Content, **fields: Any) -> LlmRequest:
    return LlmRequest(model=MODEL, contents=list(contents), **fields)


# -- one call ------------------------------------------------------------------------------


async def test_one_call(server: FakeServer, dialect: Dialect, model: BaseLlm) -> None:
    server.reply(dialect.turn(calls=[Call("call_a1", "is_even", '{"number": 4}')], usage=(31, 9)))

    [response] = await ask(
        model, request(user("Is 4 even?"), system_instruction="You check numbers.", tools=TOOLS)
    )

    body = server.last_body
    assert body["model"] == MODEL
    assert dialect.instruction(body) == "You check numbers."
    assert dialect.texts(body) == [("user", "Is 4 even?")]
    declared = dialect.tools(body)
    assert set(declared) == {"is_even", "generate_random_number"}
    assert declared["is_even"]["description"] == is_even.description
    if isinstance(dialect, AnthropicDialect):
        assert declared["is_even"]["parameters"] == is_even.to_anthropic()["input_schema"]
    else:  # strict mode, since the schemas allow it
        assert declared["is_even"]["strict"] is True
        strict = is_even.to_openai(strict=True)["function"]["parameters"]
        assert declared["is_even"]["parameters"] == strict

    assert response.error_code is None and response.partial is False
    assert response.finish_reason == "STOP"
    assert response.usage == {"input_tokens": 31, "output_tokens": 9}
    assert response.content is not None and response.content.role == "model"
    [part] = response.content.parts
    assert part.function_call == FunctionCall(id="call_a1", name="is_even", args={"number": 4})


async def test_plain_text_turn(server: FakeServer, dialect: Dialect, model: BaseLlm) -> None:
    server.reply(dialect.turn(text="Hello!"))
    [response] = await ask(model, request(user("Hi")))
    assert "tools" not in server.last_body
    assert dialect.instruction(server.last_body) is None
    assert response.content is not None and response.content.text == "Hello!"
    assert response.finish_reason == "STOP"


# -- several calls, and the round trip -------------------------------------------------------


async def test_two_parallel_calls_round_trip_in_call_order(
    server: FakeServer, dialect: Dialect, model: BaseLlm
) -> None:
    server.reply(
        dialect.turn(
            text="Let me check.",
            calls=[
                Call("call_r", "generate_random_number", "{}"),
                Call("call_e", "is_even", '{"number": 5}'),
            ],
        ),
        dialect.turn(text="You got 4, and 5 is odd."),
    )
    history = [user("A random number, and is 5 even?")]
    [first] = await ask(model, request(*history, tools=TOOLS))
    assert first.content is not None
    calls = [p.function_call for p in first.content.parts if p.function_call]
    assert [(c.id, c.name, c.args) for c in calls] == [
        ("call_r", "generate_random_number", {}),
        ("call_e", "is_even", {"number": 5}),
    ]
    assert first.content.text == "Let me check."

    # The responses come back out of order: they go on the wire in call order.
    history += [
        first.content,
        Content(
            "user",
            [
                Part.from_function_response("is_even", {"result": False}, id="call_e"),
                Part.from_function_response("generate_random_number", {"result": 4}, id="call_r"),
            ],
        ),
    ]
    [second] = await ask(model, request(*history, tools=TOOLS))

    body = server.last_body
    assert dialect.calls(body) == [
        ("call_r", "generate_random_number", {}),
        ("call_e", "is_even", {"number": 5}),
    ]
    results = dialect.results(body)
    assert [(r.call_id, json.loads(r.text)) for r in results] == [
        ("call_r", {"result": 4}),
        ("call_e", {"result": False}),
    ]
    assert dialect.texts(body) == [
        ("user", "A random number, and is 5 even?"),
        ("assistant", "Let me check."),
    ]
    assert second.content is not None and second.content.text == "You got 4, and 5 is odd."


async def test_calls_stored_without_ids_get_paired_ids(
    server: FakeServer, dialect: Dialect, model: BaseLlm
) -> None:
    server.reply(dialect.turn(text="Both done."))
    contents = [
        user("Pick a number and check 5."),
        Content(
            "model",
            [
                Part.from_function_call("generate_random_number", {}),
                Part.from_function_call("is_even", {"number": 5}),
            ],
        ),
        Content(
            "user",
            [
                Part.from_function_response("generate_random_number", {"result": 4}),
                Part.from_function_response("is_even", {"result": False}),
            ],
        ),
    ]
    await ask(model, request(*contents))
    body = server.last_body
    call_ids = [c[0] for c in dialect.calls(body)]
    assert len(set(call_ids)) == 2 and all(call_ids)
    assert [r.call_id for r in dialect.results(body)] == call_ids


async def test_a_call_error_goes_back_as_the_tools_error(
    server: FakeServer, dialect: Dialect, model: BaseLlm
) -> None:
    server.reply(dialect.turn(text="The tool failed."))
    error = ToolError("the number is too large", code="tool.failed").to_response()
    contents = [
        user("Is 10**100 even?"),
        Content("model", [Part.from_function_call("is_even", {"number": 1}, id="call_x")]),
        Content("user", [Part.from_function_response("is_even", error, id="call_x")]),
    ]
    await ask(model, request(*contents, tools=TOOLS))
    [result] = dialect.results(server.last_body)
    assert result.call_id == "call_x"
    assert json.loads(result.text) == error
    if isinstance(dialect, AnthropicDialect):
        assert result.is_error is True


async def test_an_image_in_a_tool_result(
    server: FakeServer, dialect: Dialect, model: BaseLlm
) -> None:
    server.reply(dialect.turn(text="A red square."))
    png = b"\x89PNG\r\n\x1a\n-fake-image"
    response = FunctionResponse(
        id="call_img",
        name="render",
        response={"result": {"part": 0, "mime_type": "image/png"}},
        parts=[Part(inline_data=Blob("image/png", png))],
    )
    contents = [
        user("Render it."),
        Content("model", [Part.from_function_call("render", {}, id="call_img")]),
        Content("user", [Part(function_response=response)]),
    ]
    await ask(model, request(*contents))
    [result] = dialect.results(server.last_body)
    assert json.loads(result.text.splitlines()[0]) == response.response
    if dialect.name == "openai-chat":  # no images in tool messages: a stand-in names the part
        assert result.images == []
        assert "part 0" in result.text and "image/png" in result.text
    else:
        assert result.images == [f"data:image/png;base64,{base64.b64encode(png).decode()}"]


# -- streaming -------------------------------------------------------------------------------


async def test_streamed_turn_with_a_call(
    server: FakeServer, dialect: Dialect, model: BaseLlm
) -> None:
    arguments = '{"number": 6}'
    server.reply(
        dialect.streamed(
            text="Checking the number now.",
            calls=[Call("call_s", "is_even", arguments)],
            usage=(40, 17),
        )
    )
    responses = await ask(model, request(user("Is 6 even?"), tools=TOOLS), stream=True)
    if dialect.name != "anthropic":
        assert server.last_body["stream"] is True
    *partials, final = responses
    assert partials and all(r.partial for r in partials)
    assert "".join(r.content.text for r in partials if r.content) == "Checking the number now."
    assert len(partials) > 1  # pieces as they arrive
    assert final.partial is False and final.error_code is None
    assert final.finish_reason == "STOP"
    assert final.usage == {"input_tokens": 40, "output_tokens": 17}
    assert final.content is not None
    text, call = final.content.parts
    assert text.text == "Checking the number now."
    assert call.function_call == FunctionCall(id="call_s", name="is_even", args={"number": 6})


async def test_streamed_text_only(server: FakeServer, dialect: Dialect, model: BaseLlm) -> None:
    server.reply(dialect.streamed(text="Four is even, as it happens."))
    *partials, final = await ask(model, request(user("Is 4 even?")), stream=True)
    assert "".join(r.content.text for r in partials if r.content) == final.content.text  # type: ignore[union-attr]
    assert final.content is not None and len(final.content.parts) == 1


# -- malformed output ------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_arguments_that_are_not_json_stay_text(
    server: FakeServer, dialect: Dialect, model: BaseLlm, stream: bool
) -> None:
    if isinstance(dialect, AnthropicDialect) and not stream:
        pytest.skip("Anthropic sends a whole call's input as a JSON object")
    bad = '{"number": 4'
    calls = [Call("call_bad", "is_even", bad), Call("call_ok", "is_even", '{"number": 2}')]
    server.reply(dialect.streamed(calls=calls) if stream else dialect.turn(calls=calls))
    responses = await ask(model, request(user("Check 4 and 2."), tools=TOOLS), stream=stream)
    final = responses[-1]
    assert final.error_code is None and final.content is not None
    first, second = (p.function_call for p in final.content.parts)
    assert first is not None and second is not None
    assert (first.id, first.args) == ("call_bad", bad)
    assert second.args == {"number": 2}
    # What the loop then does with it: that call alone is tool.invalid_arguments.
    with pytest.raises(ToolError) as info:
        await is_even.run(first.args)
    assert info.value.code == "tool.invalid_arguments"


async def test_arguments_that_are_not_json_are_that_calls_invalid_arguments_in_a_run(
    server: FakeServer, dialect: Dialect
) -> None:
    model = dialect.model(server)
    agent = Agent("checker", model=model, tools=[is_even])
    calls = [
        Call("call_bad", "is_even", '{"number": 4'),
        Call("call_ok", "is_even", '{"number": 2}'),
    ]
    server.reply(dialect.streamed(calls=calls), dialect.streamed(text="2 is even."))
    runner = Runner(agent, app_name="checks")
    try:
        events = [
            e
            async for e in runner.run_async(
                user_id="u",
                session_id="s",
                new_message="4 and 2?",
                run_config=RunConfig(stream=True),
            )
        ]
    finally:
        await model.aclose()  # type: ignore[attr-defined]
    responses = next(e for e in events if e.get_function_responses()).get_function_responses()
    bad, ok = (r.response for r in responses)
    assert bad["status"] == "error" and bad["error"]["code"] == "tool.invalid_arguments"
    assert ok == {"result": True}
    assert events[-1].content is not None and events[-1].content.text == "2 is even."
    # The call goes back to the model, paired with its error.
    assert [r.call_id for r in dialect.results(server.last_body)] == ["call_bad", "call_ok"]


# -- errors ----------------------------------------------------------------------------------


@pytest.mark.parametrize("status", [400, 401, 429])
@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
async def test_api_errors_become_error_responses(
    server: FakeServer, dialect: Dialect, model: BaseLlm, status: int, stream: bool
) -> None:
    server.reply(*(dialect.error(status) for _ in range(3)))
    responses = await ask(model, request(user("hi")), stream=stream)
    # A 429 is retried by the SDK (twice, by default); a 400 or 401 is not.
    assert len(server.requests) == (3 if status == 429 else 1)
    [response] = responses
    message, code = dialect.error_text(status)
    assert response.error_code == str(status)
    assert response.error_message == f"{message} ({code})"
    assert response.content is None


async def test_incomplete_turn_maps_to_max_tokens(
    server: FakeServer, dialect: Dialect, model: BaseLlm
) -> None:
    from tests import _providers as p

    if dialect.name == "openai-responses":
        reply = Reply(p.responses_body([], status="incomplete", incomplete="max_output_tokens"))
    elif dialect.name == "openai-chat":
        reply = Reply(p.chat_body("", finish="length"))
    else:
        reply = Reply(p.anthropic_body(None, stop="max_tokens"))
    server.reply(reply)
    [response] = await ask(model, request(user("Write a long story.")))
    assert response.finish_reason == "MAX_TOKENS"
    assert response.error_code == "MAX_TOKENS" and response.error_message


# -- settings --------------------------------------------------------------------------------


async def test_generation_settings_and_tool_choice(
    server: FakeServer, dialect: Dialect, model: BaseLlm
) -> None:
    server.reply(dialect.turn(text="ok"), dialect.turn(text="ok"))
    config = {
        "temperature": 0.25,
        "maxOutputTokens": 64,
        "tool_config": {
            "function_calling_config": {"mode": "ANY", "allowed_function_names": ["is_even"]}
        },
        "system_instruction": "You are terse.",
    }
    asked = request(user("hi"), system_instruction="Check numbers.", tools=TOOLS, config=config)
    if dialect.name == "anthropic":  # sampling settings are deprecated there
        with pytest.warns(UserWarning, match="temperature not used"):
            await ask(model, asked)
    else:
        await ask(model, asked)
    body = server.last_body
    assert body.get("temperature") == (None if dialect.name == "anthropic" else 0.25)
    assert dialect.instruction(body) == "You are terse.\n\nCheck numbers."
    assert set(dialect.tools(body)) == {"is_even"}
    if dialect.name == "openai-responses":
        assert body["max_output_tokens"] == 64
        assert body["tool_choice"] == {"type": "function", "name": "is_even"}
    elif dialect.name == "openai-chat":
        assert body["max_completion_tokens"] == 64
        assert body["tool_choice"] == {"type": "function", "function": {"name": "is_even"}}
    else:
        assert body["max_tokens"] == 64
        assert body["tool_choice"] == {"type": "tool", "name": "is_even"}

    from google.genai import types

    genai_config = types.GenerateContentConfig(
        stop_sequences=["END"],
        tool_config=types.ToolConfig(
            function_calling_config=types.FunctionCallingConfig(
                mode=types.FunctionCallingConfigMode.NONE
            )
        ),
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # stop sequences: not in the Responses API
        await ask(model, request(user("hi"), tools=TOOLS, config=genai_config))
    body = server.last_body
    if dialect.name != "openai-responses":
        assert body.get("stop", body.get("stop_sequences")) == ["END"]
    expected_none = {"type": "none"} if dialect.name == "anthropic" else "none"
    assert body["tool_choice"] == expected_none


def test_unused_settings_are_warned_about_once(server: FakeServer) -> None:
    model = OpenAIModel(MODEL, api_key="sk-test", base_url=server.base_url)
    config = {"stop_sequences": ["END"], "temperature": 0.1}
    with pytest.warns(UserWarning, match="stop_sequences"):
        model.request_body(request(user("hi"), config=config))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        model.request_body(request(user("hi"), config=config))


def test_a_tool_strict_mode_cannot_express_is_declared_plainly() -> None:
    @tool
    def tally(counts: dict[str, int]) -> int:
        """Add up the counts."""
        return sum(counts.values())

    model = OpenAIModel(MODEL, api_key="sk-test")
    with pytest.warns(UserWarning, match="tally: declared to OpenAI without strict mode"):
        body = model.request_body(request(user("hi"), tools={"tally": tally, "is_even": is_even}))
    tools = {t["name"]: t for t in body["tools"]}
    assert tools["tally"]["strict"] is False
    assert tools["tally"]["parameters"] == tally.parameters_json_schema
    assert tools["is_even"]["strict"] is True


# -- keys, names and imports -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("cls", "variable"), [(OpenAIModel, "OPENAI_API_KEY"), (AnthropicModel, "ANTHROPIC_API_KEY")]
)
async def test_missing_key_is_a_clear_error_at_first_call(
    monkeypatch: pytest.MonkeyPatch, cls: type[BaseLlm], variable: str
) -> None:
    monkeypatch.delenv(variable, raising=False)
    llm = cls(MODEL)  # building it needs no key
    with pytest.raises(RuntimeError, match=variable) as info:
        await ask(llm, request(user("hi")))
    assert "api_key=" in str(info.value)


async def test_keys_and_base_urls_from_the_environment(
    server: FakeServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests import _providers as p

    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", f"{server.base_url}/v1")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-from-env")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    server.reply(
        Reply(p.responses_body([p.responses_message("ok")])), Reply(p.anthropic_body("ok"))
    )
    for llm in (Agent("a", model="openai:gpt-x").model, Agent("b", model="anthropic:c").model):
        [response] = await ask(llm, LlmRequest(model=llm.model, contents=[user("hi")]))
        assert response.content is not None and response.content.text == "ok"
        await llm.aclose()  # type: ignore[attr-defined]
    openai_request, anthropic_request = server.requests
    assert openai_request["path"] == "/v1/responses"
    assert openai_request["authorization"] == "Bearer sk-from-env"
    assert openai_request["body"]["model"] == "gpt-x"
    assert anthropic_request["path"] == "/v1/messages"
    # x-api-key, or (as recent SDKs send it) a bearer token.
    sent_key = anthropic_request["x-api-key"] or anthropic_request["authorization"]
    assert sent_key in ("sk-ant-from-env", "Bearer sk-ant-from-env")
    assert anthropic_request["body"]["model"] == "c"


def test_model_names_pick_the_adapter() -> None:
    openai_model = Agent("a", model="openai:gpt-5-mini").model
    assert isinstance(openai_model, OpenAIModel)
    assert (openai_model.model, openai_model.api, openai_model.provider) == (
        "gpt-5-mini",
        "responses",
        "openai",
    )
    claude = Agent("b", model="anthropic:claude-sonnet-4-5").model
    assert isinstance(claude, AnthropicModel)
    assert (claude.model, claude.max_tokens, claude.provider) == (
        "claude-sonnet-4-5",
        4096,
        "anthropic",
    )
    for name in ("google:gemini-2.5-flash", "gemini-2.5-flash"):
        gemini = Agent("c", model=name).model
        assert isinstance(gemini, GeminiModel) and gemini.model == "gemini-2.5-flash"
        assert gemini.provider == "gcp.gemini"
    for bad in ("gpt-4o", "openai:", "mistral:large"):
        with pytest.raises(ValueError, match="not a known model name"):
            _ = Agent("d", model=bad).model


def test_referencing_the_classes_imports_no_sdk() -> None:
    code = (
        "import sys, agent_core\n"
        "agent_core.OpenAIModel, agent_core.AnthropicModel\n"
        "assert 'openai' not in sys.modules and 'anthropic' not in sys.modules\n"
        "agent_core.OpenAIModel('m')\n"
        "assert 'openai' in sys.modules and 'anthropic' not in sys.modules\n"
        "agent_core.AnthropicModel('m')\n"
        "assert 'anthropic' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


# -- the loop --------------------------------------------------------------------------------


def test_usage_is_on_the_model_event_and_survives_the_wire() -> None:
    event = Event(author="a", usage={"input_tokens": 3, "output_tokens": 4})
    wire = event.to_dict()
    assert wire["usageMetadata"] == {"promptTokenCount": 3, "candidatesTokenCount": 4}
    assert Event.from_dict(wire).usage == {"input_tokens": 3, "output_tokens": 4}
    assert "usageMetadata" not in Event(author="a").to_dict()


EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


async def test_the_function_tools_example_runs_on_each_api(
    server: FakeServer, dialect: Dialect
) -> None:
    root = load_agent_module(EXAMPLES / "function_tools").root_agent
    model = dialect.model(server)
    root.model = model
    server.reply(
        dialect.turn(
            calls=[
                Call("call_1", "generate_random_number", "{}"),
                Call("call_2", "is_even", '{"number": 5}'),
            ],
            usage=(50, 20),
        ),
        dialect.turn(text="The random number is 1. And 5 is odd.", usage=(80, 12)),
    )
    runner = Runner(root, app_name="function_tools")
    events = [
        e
        async for e in runner.run_async(
            user_id="u", session_id="s", new_message="random number and is 5 even"
        )
    ]
    await model.aclose()  # type: ignore[attr-defined]

    calls_event, responses_event, answer = events
    assert [(c.id, c.name) for c in calls_event.get_function_calls()] == [
        ("call_1", "generate_random_number"),
        ("call_2", "is_even"),
    ]
    assert calls_event.usage == {"input_tokens": 50, "output_tokens": 20}
    assert [(r.id, r.response) for r in responses_event.get_function_responses()] == [
        ("call_1", {"result": 1}),
        ("call_2", {"result": False}),
    ]
    assert answer.is_final_response() and answer.content is not None
    assert answer.content.text == "The random number is 1. And 5 is odd."
    assert answer.usage == {"input_tokens": 80, "output_tokens": 12}

    first, second = (r["body"] for r in server.requests)
    assert dialect.instruction(first) == root.instruction
    assert set(dialect.tools(first)) == {"generate_random_number", "is_even"}
    assert dialect.calls(second) == [
        ("call_1", "generate_random_number", {}),
        ("call_2", "is_even", {"number": 5}),
    ]
    assert [(r.call_id, json.loads(r.text)) for r in dialect.results(second)] == [
        ("call_1", {"result": 1}),
        ("call_2", {"result": False}),
    ]
    session = await runner.session_service.get_session(
        app_name="function_tools", user_id="u", session_id="s"
    )
    assert session is not None
    assert [e.usage for e in session.events if e.author == root.name and e.usage] == [
        {"input_tokens": 50, "output_tokens": 20},
        {"input_tokens": 80, "output_tokens": 12},
    ]


async def test_streamed_run_shows_partial_text(server: FakeServer, dialect: Dialect) -> None:
    root = load_agent_module(EXAMPLES / "function_tools").root_agent
    model = dialect.model(server)
    root.model = model
    server.reply(
        dialect.streamed(calls=[Call("call_1", "is_even", '{"number": 8}')]),
        dialect.streamed(text="Yes: 8 is an even number."),
    )
    runner = Runner(root, app_name="function_tools")
    events = [
        e
        async for e in runner.run_async(
            user_id="u",
            session_id="s",
            new_message="is 8 even",
            run_config=RunConfig(stream=True),
        )
    ]
    await model.aclose()  # type: ignore[attr-defined]
    partial = [e for e in events if e.partial]
    assert len(partial) > 1
    assert "".join(e.content.text for e in partial if e.content) == "Yes: 8 is an even number."
    assert events[-1].content is not None
    assert events[-1].content.text == "Yes: 8 is an even number."
    assert events[1].get_function_responses()[0].response == {"result": True}


def test_agent_core_run_with_a_model_flag(server: FakeServer, tmp_path: Path) -> None:
    from tests import _providers as p

    server.reply(
        Reply(
            p.responses_body(
                [
                    p.responses_call(Call("call_1", "generate_random_number", "{}")),
                    p.responses_call(Call("call_2", "is_even", '{"number": 5}')),
                ]
            )
        ),
        Reply(p.responses_body([p.responses_message("You got 1; 5 is odd.")])),
    )
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("GOOGLE_API_KEY", "GEMINI_API_KEY") and not k.lower().endswith("_proxy")
    }
    env.update(
        OPENAI_API_KEY="sk-test",
        OPENAI_BASE_URL=f"{server.base_url}/v1",
        NO_PROXY="127.0.0.1",
        FUNCTION_TOOLS_COUNTER="1",
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "agent_core.cli",
            "run",
            str(EXAMPLES / "function_tools"),
            "--model",
            "openai:gpt-test",
        ],
        input="random number and is 5 even\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "live run: every agent uses openai:gpt-test" in result.stderr
    assert "[function_tools] You got 1; 5 is odd." in result.stdout
    assert [r["body"]["model"] for r in server.requests] == ["gpt-test", "gpt-test"]


def test_agent_core_run_model_flag_needs_its_key_or_a_replay(tmp_path: Path) -> None:
    (tmp_path / "app").mkdir()
    (tmp_path / "app" / "agent.py").write_text(
        "from agent_core import Agent\nroot_agent = Agent('a', model='gemini-2.5-flash')\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "ANTHROPIC_API_KEY"}
    result = subprocess.run(
        [sys.executable, "-m", "agent_core.cli", "run", "app", "--model", "anthropic:claude-x"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert "set ANTHROPIC_API_KEY or pass --replay FILE" in result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "agent_core.cli", "run", "app", "--model", "gpt-4o"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 2
    assert "--model: model 'gpt-4o' is not a known model name" in result.stderr


def test_agent_core_run_is_live_with_the_key_of_the_agents_own_provider(
    server: FakeServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    from agent_core.cli import main
    from tests import _providers as p

    folder = tmp_path / "claude_app"
    folder.mkdir()
    (folder / "agent.py").write_text(
        "from agent_core import Agent\n"
        "root_agent = Agent('claude_app', model='anthropic:claude-test', instruction='Be brief.')\n"
    )
    server.reply(Reply(p.anthropic_body("Hello from the loopback.")))
    for variable in ("GOOGLE_API_KEY", "GEMINI_API_KEY"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
    monkeypatch.setattr(sys, "stdin", io.StringIO("hello\n"))

    assert main(["run", str(folder)]) == 0
    captured = capsys.readouterr()
    assert "live run: the agents use their own models (ANTHROPIC_API_KEY is set)" in captured.err
    assert "[claude_app] Hello from the loopback." in captured.out
    assert server.last_body["model"] == "claude-test"
    assert server.last_body["system"] == "Be brief."
