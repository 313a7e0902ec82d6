"""GeminiModel on the wire: the real google-genai client against a loopback HTTP server.

The server (127.0.0.1, port 0) speaks the Gemini API's ``generateContent`` and
``streamGenerateContent?alt=sse`` endpoints; the tests read the JSON bodies the client
sends and script the replies. No real key is used and nothing leaves the machine.
"""

from __future__ import annotations

import asyncio
import base64
import gc
import json
import re
import threading
import warnings
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from _providers import no_proxies
from google.genai import types

from agent_core import Content, FunctionCall, FunctionResponse, Part
from agent_core.models.base import LlmRequest, LlmResponse
from agent_core.models.gemini import (
    GeminiModel,
    build_config,
    part_from_genai,
    part_to_genai,
)
from tooling import Blob, FileRef, tool

MODEL = "gemini-test"
GENERATE_PATH = re.compile(rf"^/v1(beta)?/models/{MODEL}:generateContent$")
STREAM_PATH = re.compile(rf"^/v1(beta)?/models/{MODEL}:streamGenerateContent\?alt=sse$")


@tool
def is_even(number: int) -> bool:
    """Tell whether a number is even."""
    return number % 2 == 0


@tool
def generate_random_number(max_value: int = 100) -> int:
    """Pick a random number between 0 and max_value."""
    return 4


# -- the loopback server ---------------------------------------------------------------------


@dataclass
class Reply:
    """What the server answers next: a JSON body with a status, or server-sent events."""

    body: Any = None
    status: int = 200
    events: list[Any] | None = None


@dataclass
class FakeGemini:
    base_url: str = ""
    replies: list[Reply] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)

    def reply(self, *replies: Reply) -> None:
        self.replies.extend(replies)

    @property
    def last_body(self) -> dict[str, Any]:
        body: dict[str, Any] = self.requests[-1]["body"]
        return body


def _candidate(*parts: dict[str, Any], finish: str | None = "STOP") -> dict[str, Any]:
    candidate: dict[str, Any] = {"content": {"role": "model", "parts": list(parts)}}
    if finish is not None:
        candidate["finishReason"] = finish
    return {"candidates": [candidate]}


def _make_handler(fake: FakeGemini) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            fake.requests.append(
                {
                    "path": self.path,
                    "api_key": self.headers.get("x-goog-api-key"),
                    "body": json.loads(raw),
                }
            )
            if not fake.replies:
                self._send(500, {"error": {"code": 500, "message": "no reply scripted"}})
                return
            reply = fake.replies.pop(0)
            if reply.events is None:
                self._send(reply.status, reply.body)
                return
            # Server-sent events, as the Gemini API sends them: "data: <json>" and a blank line.
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            for event in reply.events:
                self.wfile.write(f"data: {json.dumps(event)}\r\n\r\n".encode())
                self.wfile.flush()
            self.close_connection = True

        def _send(self, status: int, body: Any) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json; charset=UTF-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    return Handler


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGemini]:
    no_proxies(monkeypatch)
    fake = FakeGemini()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _make_handler(fake))
    fake.base_url = f"http://127.0.0.1:{httpd.server_port}"
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield fake
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)


@pytest.fixture
async def model(server: FakeGemini) -> AsyncIterator[GeminiModel]:
    gemini = GeminiModel(MODEL, api_key="test-key", base_url=server.base_url)
    yield gemini
    await gemini.aclose()


async def ask(model: GeminiModel, request: LlmRequest, stream: bool = False) -> list[LlmResponse]:
    return [r async for r in model.generate_content_async(request, stream=stream)]


def user(text: str) -> Content:
    return Content("user", [Part.from_text(text)])


# -- requests and replies --------------------------------------------------------------------


async def test_request_carries_declarations_instruction_and_contents(
    server: FakeGemini, model: GeminiModel
) -> None:
    server.reply(Reply(_candidate({"functionCall": {"name": "is_even", "args": {"number": 4}}})))
    request = LlmRequest(
        model=MODEL,
        contents=[user("Is 4 even?")],
        system_instruction="You check numbers.",
        tools={"is_even": is_even, "generate_random_number": generate_random_number},
    )

    [response] = await ask(model, request)

    sent = server.requests[0]
    assert GENERATE_PATH.match(sent["path"]), sent["path"]
    assert sent["api_key"] == "test-key"
    body = sent["body"]
    assert body["contents"] == [{"role": "user", "parts": [{"text": "Is 4 even?"}]}]
    assert [p["text"] for p in body["systemInstruction"]["parts"]] == ["You check numbers."]
    [gemini_tool] = body["tools"]
    declarations = {d["name"]: d for d in gemini_tool["functionDeclarations"]}
    assert set(declarations) == {"is_even", "generate_random_number"}
    for name, tool_ in (("is_even", is_even), ("generate_random_number", generate_random_number)):
        declaration = declarations[name]
        schema = declaration.get("parametersJsonSchema", declaration.get("parameters_json_schema"))
        assert schema == tool_.parameters_json_schema
        assert declaration["description"] == tool_.description
    # Automatic function calling is the SDK's own business: nothing about it goes on the wire.
    assert "automaticFunctionCalling" not in json.dumps(body)

    assert response.error_code is None
    assert response.partial is False
    assert response.finish_reason == "STOP"
    assert response.content is not None and response.content.role == "model"
    [part] = response.content.parts
    assert part.function_call is not None
    assert (part.function_call.id, part.function_call.name) == (None, "is_even")
    assert part.function_call.args == {"number": 4}


async def test_no_tools_means_no_tools_field(server: FakeGemini, model: GeminiModel) -> None:
    server.reply(Reply(_candidate({"text": "Hello!"})))
    [response] = await ask(model, LlmRequest(model=MODEL, contents=[user("Hi")]))
    assert "tools" not in server.last_body
    assert "systemInstruction" not in server.last_body
    assert response.content is not None and response.content.text == "Hello!"


async def test_function_call_ids_and_responses_go_back_on_the_wire(
    server: FakeGemini, model: GeminiModel
) -> None:
    server.reply(
        Reply(
            _candidate({"functionCall": {"id": "call-1", "name": "is_even", "args": {"number": 7}}})
        ),
        Reply(_candidate({"text": "7 is odd."})),
    )
    history = [user("Is 7 even?")]
    request = LlmRequest(model=MODEL, contents=history, tools={"is_even": is_even})
    [first] = await ask(model, request)
    assert first.content is not None
    call = first.content.parts[0].function_call
    assert call is not None and call.id == "call-1"

    history += [
        first.content,
        Content("user", [Part.from_function_response("is_even", {"result": False}, id="call-1")]),
    ]
    [second] = await ask(
        model, LlmRequest(model=MODEL, contents=history, tools={"is_even": is_even})
    )

    contents = server.last_body["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user"]
    assert contents[1]["parts"] == [
        {"functionCall": {"id": "call-1", "name": "is_even", "args": {"number": 7}}}
    ]
    assert contents[2]["parts"] == [
        {"functionResponse": {"id": "call-1", "name": "is_even", "response": {"result": False}}}
    ]
    assert second.content is not None and second.content.text == "7 is odd."


async def test_calls_without_ids_go_back_without_ids(
    server: FakeGemini, model: GeminiModel
) -> None:
    server.reply(Reply(_candidate({"text": "Both done."})))
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
    await ask(model, LlmRequest(model=MODEL, contents=contents))
    sent = server.last_body["contents"]
    assert sent[1]["parts"] == [
        {"functionCall": {"name": "generate_random_number", "args": {}}},
        {"functionCall": {"name": "is_even", "args": {"number": 5}}},
    ]
    assert sent[2]["parts"] == [
        {"functionResponse": {"name": "generate_random_number", "response": {"result": 4}}},
        {"functionResponse": {"name": "is_even", "response": {"result": False}}},
    ]


async def test_binary_data_and_file_references_on_the_wire(
    server: FakeGemini, model: GeminiModel
) -> None:
    server.reply(Reply(_candidate({"text": "A cat."})))
    png = b"\x89PNG\r\n\x1a\n-fake"
    response = FunctionResponse(
        id=None,
        name="render",
        response={"result": {"part": 0, "mime_type": "image/png"}},
        parts=[Part(inline_data=Blob("image/png", png))],
    )
    contents = [
        Content(
            "user",
            [
                Part.from_text("What is this?"),
                Part(inline_data=Blob("image/png", png)),
                Part(file_data=FileRef("https://example.com/cat.pdf", "application/pdf")),
            ],
        ),
        Content("model", [Part.from_function_call("render", {})]),
        Content("user", [Part(function_response=response)]),
    ]
    await ask(model, LlmRequest(model=MODEL, contents=contents))
    sent = server.last_body["contents"]
    encoded = base64.b64encode(png).decode()
    text, inline, file = sent[0]["parts"]
    assert text == {"text": "What is this?"}
    assert _data(inline["inlineData"]) == ("image/png", encoded)
    assert _key(file["fileData"], "file_uri") == "https://example.com/cat.pdf"
    assert _data(file["fileData"]) == ("application/pdf", None)
    [response_part] = sent[2]["parts"][0]["functionResponse"]["parts"]
    assert _data(_key(response_part, "inline_data")) == ("image/png", encoded)


def _key(wire: dict[str, Any], snake: str) -> Any:
    """A field by its snake_case or camelCase name: google-genai sends some nested keys
    (``mime_type``, ``file_uri``) in snake_case, which the API reads as well."""
    head, *rest = snake.split("_")
    return wire.get(snake, wire.get(head + "".join(w.title() for w in rest)))


def _data(wire: dict[str, Any]) -> tuple[str, str | None]:
    """(MIME type, base64 data) of a wire blob or file reference."""
    return _key(wire, "mime_type"), wire.get("data")


async def test_thoughts_and_several_parts_convert(server: FakeGemini, model: GeminiModel) -> None:
    server.reply(
        Reply(
            _candidate(
                {"text": "Checking parity.", "thought": True},
                {"text": "Let me check. "},
                {"functionCall": {"name": "is_even", "args": {"number": 2}}},
            )
        )
    )
    [response] = await ask(model, LlmRequest(model=MODEL, contents=[user("Is 2 even?")]))
    assert response.content is not None
    thought, text, call = response.content.parts
    assert (thought.text, thought.thought) == ("Checking parity.", True)
    assert (text.text, text.thought) == ("Let me check. ", None)
    assert call.function_call is not None and call.function_call.name == "is_even"
    assert response.content.text == "Let me check. "


async def test_config_and_system_instruction_are_merged(
    server: FakeGemini, model: GeminiModel
) -> None:
    server.reply(Reply(_candidate({"text": "ok"})), Reply(_candidate({"text": "ok"})))
    config = types.GenerateContentConfig(temperature=0.25, max_output_tokens=64)
    request = LlmRequest(
        model=MODEL, contents=[user("hi")], system_instruction="Be brief.", config=config
    )
    await ask(model, request)
    body = server.last_body
    assert body["generationConfig"]["temperature"] == 0.25
    assert body["generationConfig"]["maxOutputTokens"] == 64
    assert config.automatic_function_calling is None  # the caller's config is not changed

    request = LlmRequest(
        model=MODEL,
        contents=[user("hi")],
        system_instruction="Be brief.",
        config={"temperature": 0.5, "system_instruction": "You are a parity checker."},
    )
    await ask(model, request)
    body = server.last_body
    assert body["generationConfig"]["temperature"] == 0.5
    instruction = "".join(p["text"] for p in body["systemInstruction"]["parts"])
    assert instruction == "You are a parity checker.\n\nBe brief."


def test_build_config_turns_automatic_function_calling_off() -> None:
    config = build_config(LlmRequest(model=MODEL, tools={"is_even": is_even}))
    assert config.automatic_function_calling is not None
    assert config.automatic_function_calling.disable is True
    assert config.tools is not None
    [gemini_tool] = config.tools
    assert isinstance(gemini_tool, types.Tool)
    assert gemini_tool.function_declarations == [is_even.to_gemini()]
    with pytest.raises(TypeError, match="GenerateContentConfig"):
        build_config(LlmRequest(model=MODEL, config=42))


# -- errors ----------------------------------------------------------------------------------

INVALID_KEY = {
    "error": {
        "code": 400,
        "message": "API key not valid. Please pass a valid API key.",
        "status": "INVALID_ARGUMENT",
    }
}


@pytest.mark.parametrize("stream", [False, True])
async def test_api_error_becomes_an_error_response(
    server: FakeGemini, model: GeminiModel, stream: bool
) -> None:
    server.reply(Reply(INVALID_KEY, status=400))
    responses = await ask(model, LlmRequest(model=MODEL, contents=[user("hi")]), stream=stream)
    assert len(server.requests) == 1  # a 4xx is not retried
    [response] = responses
    assert response.error_code == "400"
    assert response.error_message == "API key not valid. Please pass a valid API key."
    assert response.content is None


async def test_blocked_prompt_and_empty_safety_stop_are_errors(
    server: FakeGemini, model: GeminiModel
) -> None:
    server.reply(
        Reply({"promptFeedback": {"blockReason": "SAFETY"}}),
        Reply({"candidates": [{"finishReason": "SAFETY"}]}),
    )
    request = LlmRequest(model=MODEL, contents=[user("something unsafe")])
    [blocked] = await ask(model, request)
    assert blocked.error_code == "SAFETY"
    assert blocked.error_message and "blocked" in blocked.error_message
    [stopped] = await ask(model, request)
    assert stopped.error_code == "SAFETY"
    assert stopped.finish_reason == "SAFETY"
    assert stopped.error_message


async def test_missing_key_is_a_clear_error_at_first_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    monkeypatch.delenv("GEMINI_API_KEY", raising=False)
    gemini = GeminiModel(MODEL)  # building it needs no key
    with pytest.raises(RuntimeError, match="GOOGLE_API_KEY") as info:
        await ask(gemini, LlmRequest(model=MODEL, contents=[user("hi")]))
    assert "api_key=" in str(info.value)


async def test_key_from_the_environment(
    server: FakeGemini, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "fake-env-key")
    server.reply(Reply(_candidate({"text": "ok"})))
    gemini = GeminiModel(MODEL, base_url=server.base_url)
    await ask(gemini, LlmRequest(model=MODEL, contents=[user("hi")]))
    await gemini.aclose()
    assert server.requests[0]["api_key"] == "fake-env-key"


# -- streaming -------------------------------------------------------------------------------


async def test_streaming_yields_partials_then_the_aggregate(
    server: FakeGemini, model: GeminiModel
) -> None:
    server.reply(
        Reply(
            events=[
                _candidate({"text": "Four"}, finish=None),
                _candidate({"text": " is"}, finish=None),
                _candidate({"text": " even."}, finish="STOP"),
            ]
        )
    )
    responses = await ask(
        model, LlmRequest(model=MODEL, contents=[user("Is 4 even?")]), stream=True
    )

    assert STREAM_PATH.match(server.requests[0]["path"]), server.requests[0]["path"]
    assert server.last_body["contents"] == [{"role": "user", "parts": [{"text": "Is 4 even?"}]}]
    *partials, final = responses
    assert [r.partial for r in partials] == [True, True, True]
    assert [r.content.text for r in partials if r.content] == ["Four", " is", " even."]
    assert final.partial is False
    assert final.finish_reason == "STOP"
    assert final.content is not None
    assert [p.text for p in final.content.parts] == ["Four is even."]


async def test_streamed_function_call_comes_whole_in_the_final_response(
    server: FakeGemini, model: GeminiModel
) -> None:
    server.reply(
        Reply(
            events=[
                _candidate({"text": "Checking."}, finish=None),
                _candidate({"functionCall": {"name": "is_even", "args": {"number": 6}}}),
            ]
        )
    )
    request = LlmRequest(model=MODEL, contents=[user("Is 6 even?")], tools={"is_even": is_even})
    responses = await ask(model, request, stream=True)
    assert [r.partial for r in responses] == [True, False]
    final = responses[-1]
    assert final.content is not None
    text, call = final.content.parts
    assert text.text == "Checking."
    assert call.function_call is not None and call.function_call.args == {"number": 6}
    assert server.last_body["tools"][0]["functionDeclarations"][0]["name"] == "is_even"


def test_each_event_loop_gets_a_working_client(server: FakeGemini) -> None:
    """``asyncio.run`` twice (as a sync runner may do): connections don't cross loops.

    The first loop's client cannot be closed once its loop is gone; its sockets are
    reclaimed by the garbage collector (a ResourceWarning in development mode).
    """
    server.reply(Reply(_candidate({"text": "one"})), Reply(_candidate({"text": "two"})))
    gemini = GeminiModel(MODEL, api_key="test-key", base_url=server.base_url)
    request = LlmRequest(model=MODEL, contents=[user("hi")])

    async def once(close: bool) -> str:
        [response] = await ask(gemini, request)
        if close:
            await gemini.aclose()
        assert response.content is not None
        return response.content.text

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        assert asyncio.run(once(close=False)) == "one"
        assert asyncio.run(once(close=True)) == "two"
        gc.collect()


# -- conversions -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "part",
    [
        Part.from_text("hello"),
        Part(text="pondering", thought=True),
        Part.from_function_call("is_even", {"number": 3}, id="c-9"),
        Part(
            function_call=FunctionCall(id=None, name="is_even", args={"number": 3}),
            thought_signature=b"\x01sig",
        ),
        Part.from_function_call("is_even", {"number": 3}),
        Part.from_function_response("is_even", {"result": False}, id="c-9"),
        Part(
            function_response=FunctionResponse(
                id=None,
                name="fetch",
                response={"status": "pending"},
                will_continue=True,
                parts=[
                    Part(inline_data=Blob("image/png", b"\x00\x01")),
                    Part(file_data=FileRef("gs://bucket/a.pdf", "application/pdf")),
                ],
            )
        ),
        Part(inline_data=Blob("audio/wav", b"RIFF....")),
        Part(file_data=FileRef("https://example.com/x.txt", "text/plain")),
    ],
)
def test_part_round_trip(part: Part) -> None:
    assert part_from_genai(part_to_genai(part)) == part
    assert Part.from_dict(part.to_dict()) == part  # and through our own wire shape


def test_parts_we_cannot_carry_are_left_out() -> None:
    empty = types.Part(video_metadata=types.VideoMetadata(fps=1.0))
    assert part_from_genai(empty) is None


def test_code_execution_parts_are_kept_and_go_back_to_gemini_as_they_came() -> None:
    code = types.Part(executable_code=types.ExecutableCode(code="print(1)", language="PYTHON"))
    result = types.Part(
        code_execution_result=types.CodeExecutionResult(outcome="OUTCOME_OK", output="1\n")
    )
    for original in (code, result):
        ours = part_from_genai(original)
        assert ours is not None and ours.provider_part is not None
        assert ours.provider_part.provider == "gemini"
        assert Part.from_dict(ours.to_dict()) == ours  # stored and read back unchanged
        assert part_to_genai(ours) == original


async def test_concurrent_first_calls_share_one_client(
    server: FakeGemini, model: GeminiModel
) -> None:
    server.reply(*(Reply(_candidate({"text": f"answer {i}"})) for i in range(3)))
    request = LlmRequest(model=MODEL, contents=[user("hi")])
    results = await asyncio.gather(*(ask(model, request) for _ in range(3)))
    texts = sorted(r.content.text for [r] in results if r.content is not None)
    assert texts == ["answer 0", "answer 1", "answer 2"]


@pytest.mark.parametrize("args", [[1, 2], "text", 3, None])
def test_a_call_with_arguments_that_are_not_an_object_converts_for_the_history(args: Any) -> None:
    # The loop answered it tool.invalid_arguments; the history still goes to Gemini.
    part = part_to_genai(Part(function_call=FunctionCall(id="c1", name="echo", args=args)))
    assert part.function_call is not None
    assert part.function_call.name == "echo" and part.function_call.args == {}


@pytest.mark.parametrize("stream", [False, True])
async def test_token_usage_is_on_the_response(
    server: FakeGemini, model: GeminiModel, stream: bool
) -> None:
    usage = {"promptTokenCount": 21, "candidatesTokenCount": 7, "thoughtsTokenCount": 3}
    reply = {**_candidate({"text": "Even."}), "usageMetadata": usage}
    server.reply(Reply(events=[reply]) if stream else Reply(reply))
    responses = await ask(model, LlmRequest(model=MODEL, contents=[user("4?")]), stream=stream)
    # Thinking tokens are output the model produced, as the other adapters count them.
    assert responses[-1].usage == {"input_tokens": 21, "output_tokens": 10}
    assert model.provider == "gcp.gemini"


async def test_an_output_schema_agents_answer_alone_is_asked_in_json_mode(
    server: FakeGemini, model: GeminiModel
) -> None:
    from pydantic import BaseModel

    from agent_core import Agent, Runner

    class Trip(BaseModel):
        city: str
        nights: int = 1

    server.reply(Reply(_candidate({"text": '{"city": "Rome"}'})))
    agent = Agent("a", model, output_schema=Trip, output_key="trip")
    runner = Runner(agent, app_name="json")
    events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message="?")]
    body = server.last_body
    assert "tools" not in body
    config = body.get("generationConfig", {})
    assert config["responseMimeType"] == "application/json"
    assert config["responseJsonSchema"]["required"] == ["city"]
    assert events[-1].output == Trip(city="Rome")
    assert events[-1].actions.state_delta["trip"] == {"city": "Rome", "nights": 1}
