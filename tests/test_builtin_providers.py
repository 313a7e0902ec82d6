"""Built-in tools on each provider's wire: the request bodies, what the provider's tool
produced kept in the session and sent back verbatim, citations, and what happens where a
provider lacks a built-in (fallback, optional, tool.unsupported, Gemini 2.x's rule).

The servers are loopback HTTP servers speaking each API's JSON (tests/_providers.py); the
reply shapes are those of the providers' SDK types.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest
from _providers import MODEL, FakeServer, Reply, anthropic_body, no_proxies, responses_body, serving

from agent_core import Agent, Event, GeminiModel, InMemorySessionService, Runner, ScriptedModel
from agent_core.models.anthropic import AnthropicModel
from agent_core.models.base import BaseLlm
from agent_core.models.openai import OpenAIModel
from tooling import tool
from tooling.builtin import CodeExecution, WebFetch, WebSearch


@tool
def is_even(number: int) -> bool:
    """Whether a number is even.

    Args:
        number: The number to check.
    """
    return number % 2 == 0


@tool
def local_search(query: str) -> dict[str, Any]:
    """Search the local index.

    Args:
        query: What to look for.
    """
    return {"hits": [f"local hit for {query}"]}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    no_proxies(monkeypatch)
    with serving() as fake:
        yield fake


SESSIONS = InMemorySessionService()


async def run(model: BaseLlm, tools: list[Any], message: str, *, session: str = "") -> list[Event]:
    """One run; runs in one test share their session (a fresh one per test)."""
    session = session or f"s-{id(tools)}"
    runner = Runner(
        Agent("helper", model, instruction="Help.", tools=tools),
        app_name="app",
        session_service=SESSIONS,
    )
    try:
        return [
            e async for e in runner.run_async(user_id="u", session_id=session, new_message=message)
        ]
    finally:
        await model.aclose()  # type: ignore[attr-defined]


def gemini(server: FakeServer, name: str = "gemini-3-pro-preview") -> GeminiModel:
    return GeminiModel(name, api_key="test-key", base_url=server.base_url)


def gemini_reply(*parts: dict[str, Any], grounding: dict[str, Any] | None = None) -> Reply:
    candidate: dict[str, Any] = {
        "content": {"role": "model", "parts": list(parts)},
        "finishReason": "STOP",
    }
    if grounding is not None:
        candidate["groundingMetadata"] = grounding
    return Reply({"candidates": [candidate]})


GROUNDING = {
    "webSearchQueries": ["moon distance"],
    "groundingChunks": [
        {"web": {"uri": "https://example.org/moon", "title": "example.org"}},
        {"web": {"uri": "https://example.net/space", "title": "example.net"}},
    ],
    "groundingSupports": [
        {
            "segment": {"startIndex": 0, "endIndex": 24, "text": "The moon is 384,400 km"},
            "groundingChunkIndices": [0],
        },
    ],
}


# -- Gemini --------------------------------------------------------------------------------


async def test_gemini_3_gets_built_ins_beside_functions_and_keeps_code_parts(
    server: FakeServer,
) -> None:
    code = {"executableCode": {"language": "PYTHON", "code": "print(384400 / 2)"}}
    result = {"codeExecutionResult": {"outcome": "OUTCOME_OK", "output": "192200.0\n"}}
    server.reply(
        gemini_reply(code, result, {"text": "The moon is 384,400 km away."}, grounding=GROUNDING),
        gemini_reply({"text": "Half of it is 192,200 km."}),
    )
    tools = [WebSearch(), CodeExecution(), is_even]
    events = await run(gemini(server), tools, "How far is the moon?")
    [answer] = events
    assert answer.content is not None
    kinds = [p.provider_part.kind for p in answer.content.parts if p.provider_part]
    assert kinds == ["executableCode", "codeExecutionResult"]
    assert answer.content.text == "The moon is 384,400 km away."
    assert answer.citations == [
        {"title": "example.org", "uri": "https://example.org/moon", "start": 0, "end": 24},
        {"title": "example.net", "uri": "https://example.net/space", "start": None, "end": None},
    ]
    first = server.requests[0]["body"]
    declared = first["tools"]
    assert {"googleSearch": {}} in declared and {"codeExecution": {}} in declared
    [functions] = [t for t in declared if "functionDeclarations" in t]
    assert [d["name"] for d in functions["functionDeclarations"]] == ["is_even"]

    await run(gemini(server), tools, "And half of it?")
    second = server.requests[1]["body"]
    model_turn = second["contents"][1]
    assert model_turn["role"] == "model"
    assert model_turn["parts"][:2] == [code, result]  # sent back as Gemini sent them


async def test_gemini_2_asks_for_a_built_in_in_a_request_of_its_own(server: FakeServer) -> None:
    server.reply(
        gemini_reply({"functionCall": {"name": "web_search", "args": {"request": "moon km"}}}),
        gemini_reply({"text": "About 384,400 km."}, grounding=GROUNDING),
        gemini_reply({"text": "The moon is about 384,400 km away."}),
    )
    events = await run(gemini(server, "gemini-2.5-flash"), [WebSearch(), is_even], "moon?")
    first, search, answer = (r["body"] for r in server.requests)
    # 1: functions only, the built-in declared as a function taking a request.
    [functions] = first["tools"]
    names = [d["name"] for d in functions["functionDeclarations"]]
    assert names == ["web_search", "is_even"]
    # 2: the built-in alone, with the request as the user's text.
    assert search["tools"] == [{"googleSearch": {}}]
    assert search["contents"][0]["parts"][0]["text"] == "moon km"
    # 3: the answer went back as the function's response, with its citations.
    [response_part] = answer["contents"][-1]["parts"]
    response = response_part["functionResponse"]["response"]
    assert response["result"] == "About 384,400 km."
    assert response["citations"][0]["uri"] == "https://example.org/moon"
    assert events[-1].content is not None and "384,400" in events[-1].content.text


# -- OpenAI --------------------------------------------------------------------------------


WEB_SEARCH_CALL = {
    "type": "web_search_call",
    "id": "ws_1",
    "status": "completed",
    "action": {"type": "search", "query": "moon distance"},
}


def cited_message(text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": "msg_1",
        "status": "completed",
        "role": "assistant",
        "content": [
            {
                "type": "output_text",
                "text": text,
                "logprobs": [],
                "annotations": [
                    {
                        "type": "url_citation",
                        "start_index": 0,
                        "end_index": 8,
                        "url": "https://example.org/moon",
                        "title": "Moon facts",
                    }
                ],
            }
        ],
    }


async def test_openai_responses_web_search_round_trip(server: FakeServer) -> None:
    server.reply(
        Reply(responses_body([WEB_SEARCH_CALL, cited_message("384,400 km, says the web.")])),
        Reply(responses_body([cited_message("Yes.")])),
    )
    model = OpenAIModel(MODEL, api_key="sk-test", base_url=f"{server.base_url}/v1")
    tools = [WebSearch(allowed_domains=["example.org"]), is_even]
    [answer] = await run(model, tools, "moon?")
    assert answer.content is not None and answer.content.text == "384,400 km, says the web."
    [kept] = [p.provider_part for p in answer.content.parts if p.provider_part]
    assert kept.kind == "web_search_call" and kept.summary == "searched: moon distance"
    assert answer.citations == [
        {"title": "Moon facts", "uri": "https://example.org/moon", "start": 0, "end": 8}
    ]
    body = server.requests[0]["body"]
    assert {"type": "web_search", "filters": {"allowed_domains": ["example.org"]}} in body["tools"]
    assert any(t.get("name") == "is_even" for t in body["tools"])

    model = OpenAIModel(MODEL, api_key="sk-test", base_url=f"{server.base_url}/v1")
    await run(model, tools, "sure?")
    sent = server.requests[1]["body"]["input"]
    assert WEB_SEARCH_CALL in sent  # the output item goes back verbatim


async def test_chat_completions_runs_no_built_in_and_says_so_before_any_request(
    server: FakeServer,
) -> None:
    model = OpenAIModel(MODEL, api_key="sk-test", base_url=f"{server.base_url}/v1", api="chat")
    [event] = await run(model, [WebSearch(), is_even], "moon?")
    assert event.error_code == "tool.unsupported"
    assert "'web_search'" in (event.error_message or "")
    assert "openai" in (event.error_message or "")
    assert server.requests == []


async def test_a_fallback_is_offered_where_the_provider_lacks_the_built_in(
    server: FakeServer,
) -> None:
    server.reply(Reply(responses_body([cited_message("ok")])))
    model = OpenAIModel(MODEL, api_key="sk-test", base_url=f"{server.base_url}/v1")
    await run(model, [WebFetch(fallback=local_search), is_even], "read example.org")
    names = [t.get("name") for t in server.requests[0]["body"]["tools"]]
    assert names == ["local_search", "is_even"]


async def test_an_optional_built_in_is_dropped_with_one_warning(
    server: FakeServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.reply(Reply(responses_body([cited_message("ok")])), Reply(responses_body([])))
    fetch = WebFetch(optional=True)
    with caplog.at_level(logging.WARNING, logger="agent_core"):
        model = OpenAIModel("gpt-optional", api_key="sk-test", base_url=f"{server.base_url}/v1")
        await run(model, [fetch, is_even], "hi")
        model = OpenAIModel("gpt-optional", api_key="sk-test", base_url=f"{server.base_url}/v1")
        await run(model, [fetch, is_even], "again", session="s2")
    names = [t.get("name") for t in server.requests[0]["body"]["tools"]]
    assert names == ["is_even"]
    warned = [r for r in caplog.records if "web_fetch" in r.getMessage()]
    assert len(warned) == 1


# -- Anthropic -----------------------------------------------------------------------------


SERVER_TOOL_USE = {
    "type": "server_tool_use",
    "id": "srvtoolu_1",
    "name": "web_search",
    "input": {"query": "moon distance"},
}
SEARCH_RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [
        {
            "type": "web_search_result",
            "url": "https://example.org/moon",
            "title": "Moon facts",
            "encrypted_content": "Eq0CCkYIBxgCKkA",
        }
    ],
}
CITED_TEXT = {
    "type": "text",
    "text": "The moon is 384,400 km away.",
    "citations": [
        {
            "type": "web_search_result_location",
            "url": "https://example.org/moon",
            "title": "Moon facts",
            "encrypted_index": "EpIBCioIBxgC",
            "cited_text": "384,400 km",
        }
    ],
}


async def test_anthropic_server_tool_blocks_round_trip(server: FakeServer) -> None:
    first = anthropic_body(None)
    first["content"] = [
        {"type": "text", "text": "Let me look. "},
        SERVER_TOOL_USE,
        SEARCH_RESULT,
        CITED_TEXT,
    ]
    server.reply(Reply(first), Reply(anthropic_body("Yes.")))
    model = AnthropicModel(MODEL, api_key="sk-ant-test", base_url=server.base_url)
    tools = [WebSearch(max_uses=2), is_even]
    [answer] = await run(model, tools, "moon?")
    assert answer.content is not None
    kinds = [p.provider_part.kind for p in answer.content.parts if p.provider_part]
    assert kinds == ["server_tool_use", "web_search_tool_result"]
    assert answer.content.text == "Let me look. The moon is 384,400 km away."
    assert answer.citations == [
        {"title": "Moon facts", "uri": "https://example.org/moon", "start": 13, "end": 41}
    ]
    declared = server.requests[0]["body"]["tools"]
    assert {"type": "web_search_20250305", "name": "web_search", "max_uses": 2} in declared

    model = AnthropicModel(MODEL, api_key="sk-ant-test", base_url=server.base_url)
    await run(model, tools, "sure?")
    assistant = server.requests[1]["body"]["messages"][1]
    assert assistant["role"] == "assistant"
    assert SERVER_TOOL_USE in assistant["content"]
    assert SEARCH_RESULT in assistant["content"]


async def test_a_session_moved_to_another_provider_gets_text_stand_ins(
    server: FakeServer,
) -> None:
    first = anthropic_body(None)
    first["content"] = [SERVER_TOOL_USE, SEARCH_RESULT, CITED_TEXT]
    server.reply(Reply(first), gemini_reply({"text": "Still 384,400 km."}))
    tools = [WebSearch(), is_even]
    await run(AnthropicModel(MODEL, api_key="k", base_url=server.base_url), tools, "moon?")
    await run(gemini(server), tools, "again?")
    model_turn = server.requests[1]["body"]["contents"][1]
    texts = [p.get("text", "") for p in model_turn["parts"]]
    assert texts[0] == "[server_tool_use run by anthropic] moon distance"
    assert texts[1] == "[web_search_tool_result run by anthropic]"
    assert not any("encrypted" in str(p) for p in model_turn["parts"])


# -- the scripted model: replays offline, and the same rules ---------------------------------


async def test_scripted_model_replays_a_search_turn_with_citations() -> None:
    model = ScriptedModel(
        [
            {
                "role": "model",
                "parts": [{"text": "384,400 km."}],
                "citations": [{"title": "Moon", "uri": "https://example.org/moon"}],
            }
        ]
    )
    runner = Runner(Agent("a", model, tools=[WebSearch()]), app_name="app")
    [answer] = [e async for e in runner.run_async(user_id="u", session_id="s", new_message="?")]
    assert answer.citations == [{"title": "Moon", "uri": "https://example.org/moon"}]
    assert Event.from_dict(answer.to_dict()).citations == answer.citations
    assert "web_search" in model.requests[0].tools


async def test_scripted_model_without_the_built_in_ends_before_asking() -> None:
    model = ScriptedModel(["never"], builtins=())
    runner = Runner(Agent("a", model, tools=[CodeExecution()]), app_name="app")
    [event] = [e async for e in runner.run_async(user_id="u", session_id="s", new_message="?")]
    assert event.error_code == "tool.unsupported"
    assert model.requests == []
