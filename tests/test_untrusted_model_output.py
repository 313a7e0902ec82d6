"""The loop trusts nothing a model returns: malformed calls are answered, never raised.

Whatever a model (or a tool) sends, ``run_async`` does not raise, each call gets its
response (an error response when the call is malformed), and every session left behind
loads again, with each stored call paired to its response, in memory and in SQLite.
"""

from __future__ import annotations

import asyncio
import datetime
import json
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_core import (
    Agent,
    Content,
    Event,
    FunctionCall,
    FunctionResponse,
    InMemorySessionService,
    Part,
    Runner,
    ScriptedModel,
    Session,
    SqliteSessionService,
)
from agent_core.sessions.base import BaseSessionService
from tooling import Blob, ToolContext, tool

APP, USER = "app", "u1"


@tool
def echo(text: str) -> str:
    """Say the text back.

    Args:
        text: What to say.
    """
    return text


@tool
def add(a: int, b: int = 0) -> int:
    """Add two numbers.

    Args:
        a: The first.
        b: The second.
    """
    return a + b


@tool
def huge() -> int:
    """A number JSON text cannot hold."""
    return 10**5000


@tool
def lone_surrogate() -> dict[str, str]:
    """A string that is not UTF-8."""
    return {"text": "half \ud800 a character"}


@tool
def remember_when(tool_context: ToolContext) -> str:
    """Write a datetime to the state."""
    tool_context.state["when"] = datetime.datetime(2026, 1, 1)
    return "remembered"


@tool
def sneak_into_delta(tool_context: ToolContext) -> str:
    """Write a datetime straight into the actions' delta, past the state's check."""
    tool_context.actions.state_delta["when"] = datetime.datetime(2026, 1, 1)
    return "sneaked"


@tool
async def save_badly_named(tool_context: ToolContext) -> str:
    """Save an artifact whose name is not UTF-8."""
    await tool_context.save_artifact("report-\udc80.txt", "text")
    return "saved"


TOOLS = [echo, add, huge, lone_surrogate, remember_when, sneak_into_delta, save_badly_named]


# -- sessions ---------------------------------------------------------------------------------


@pytest.fixture(params=["memory", "sqlite"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    return Store(request.param, tmp_path / "sessions.db")


class Store:
    """A session service of one kind, and a way to load what it stored from scratch."""

    def __init__(self, kind: str, path: Path) -> None:
        self.kind = kind
        self.path = path
        self.service: BaseSessionService = (
            InMemorySessionService() if kind == "memory" else SqliteSessionService(path)
        )

    async def reload(self, session_id: str) -> Session:
        """The session as a fresh service sees it (SQLite), or as stored (in memory)."""
        if self.kind == "memory":
            service = self.service
        else:
            service = SqliteSessionService(self.path)
        try:
            session = await service.get_session(app_name=APP, user_id=USER, session_id=session_id)
        finally:
            if service is not self.service:
                await service.aclose()  # type: ignore[attr-defined]
        assert session is not None
        return session

    async def aclose(self) -> None:
        if isinstance(self.service, SqliteSessionService):
            await self.service.aclose()


async def run_turns(
    store: Store, turns: list[Any], message: str = "go", session_id: str = "s1"
) -> list[Event]:
    agent = Agent("helper", ScriptedModel(turns), tools=TOOLS)
    runner = Runner(agent, app_name=APP, session_service=store.service)
    try:
        return [
            e
            async for e in runner.run_async(
                user_id=USER, session_id=session_id, new_message=message
            )
        ]
    finally:
        await runner.aclose()


def assert_paired(events: list[Event]) -> None:
    """Every stored function call has its response, in call order, in the next event."""
    for index, event in enumerate(events):
        calls = event.get_function_calls()
        if not calls or event.author == "user":
            continue
        assert index + 1 < len(events), "a stored call has no response event after it"
        responses = events[index + 1].get_function_responses()
        assert [r.id for r in responses] == [c.id for c in calls]
        assert [r.name for r in responses] == [c.name for c in calls]
        assert all(c.id for c in calls)


def codes(event: Event) -> list[str | None]:
    out = []
    for r in event.get_function_responses():
        error = r.response.get("error") if r.response.get("status") == "error" else None
        out.append(error["code"] if error else None)
    return out


def model_turn(*parts: dict[str, Any]) -> dict[str, Any]:
    return {"role": "model", "parts": list(parts)}


def wire_call(name: str, args: Any, id: str | None = None) -> dict[str, Any]:
    call: dict[str, Any] = {"name": name, "args": args}
    if id is not None:
        call["id"] = id
    return {"functionCall": call}


# -- 1. arguments that are not an object ----------------------------------------------------


NOT_OBJECTS = [[1, 2], "text", '{"text": "hi"}', 3, None, True, 2.5]


@pytest.mark.parametrize("args", NOT_OBJECTS, ids=repr)
@pytest.mark.parametrize("shape", ["wire", "objects"])
async def test_a_call_whose_args_are_not_an_object_gets_invalid_arguments(store, args, shape):
    if shape == "wire":
        turn: Any = model_turn(
            wire_call("echo", {"text": "before"}, "c1"),
            wire_call("echo", args, "c2"),
            wire_call("echo", {"text": "after"}, "c3"),
        )
    else:
        turn = [
            Part.from_function_call("echo", {"text": "before"}, id="c1"),
            Part(function_call=FunctionCall(id="c2", name="echo", args=args)),
            Part.from_function_call("echo", {"text": "after"}, id="c3"),
        ]
    try:
        events = await run_turns(store, [turn, "done"])
        responses = next(e for e in events if e.get_function_responses())
        assert codes(responses) == [None, "tool.invalid_arguments", None]
        bad = responses.get_function_responses()[1].response["error"]["message"]
        assert "JSON object" in bad
        assert events[-1].content is not None and events[-1].content.text == "done"
        session = await store.reload("s1")
        assert_paired(session.events)
        assert session.events[1].get_function_calls()[1].args == args  # kept as sent
    finally:
        await store.aclose()


# -- 2. what JSON text cannot hold -----------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (wire_call("add", {"a": 10**5000}, "c2"), "tool.invalid_arguments"),
        (wire_call("echo", {"text": "x\ud800y"}, "c2"), "tool.invalid_arguments"),
        (wire_call("echo", {"te\udfffxt": "y"}, "c2"), "tool.invalid_arguments"),
        (wire_call("ec\ud800ho", {"text": "y"}, "c2"), "tool.not_found"),
        (wire_call("huge", {}, "c2"), "tool.failed"),
        (wire_call("lone_surrogate", {}, "c2"), "tool.failed"),
        (wire_call("remember_when", {}, "c2"), "tool.failed"),
        (wire_call("sneak_into_delta", {}, "c2"), "tool.failed"),
        (wire_call("save_badly_named", {}, "c2"), "tool.failed"),
    ],
    ids=[
        "big-int-arg",
        "surrogate-arg",
        "surrogate-key",
        "surrogate-name",
        "big-int-result",
        "surrogate-result",
        "datetime-state",
        "datetime-delta",
        "surrogate-artifact-name",
    ],
)
async def test_what_cannot_be_stored_is_an_error_response_and_the_session_loads(
    store, call, expected
):
    turn = model_turn(wire_call("echo", {"text": "fine"}, "c1"), call)
    try:
        events = await run_turns(store, [turn, "done"])
        responses = next(e for e in events if e.get_function_responses())
        assert codes(responses) == [None, expected]
        session = await store.reload("s1")
        assert_paired(session.events)
        assert "when" not in session.state
        # Everything stored is JSON text that loads the same way again.
        for event in session.events:
            assert Event.from_json(event.to_json()).to_dict() == event.to_dict()
        # The next run goes on: the call is answered, not pending.
        again = await run_turns(store, ["still here"], message="and?")
        assert again[-1].content is not None and again[-1].content.text == "still here"
    finally:
        await store.aclose()


async def test_model_text_that_is_not_utf8_is_stored_escaped(store):
    try:
        events = await run_turns(store, ["half \ud83d a smile"])
        assert events[-1].content is not None
        session = await store.reload("s1")
        text = session.events[-1].content.text  # type: ignore[union-attr]
        assert text.encode("utf-8")  # storable
        assert "half" in text and "a smile" in text
    finally:
        await store.aclose()


# -- 3. wire-shape dicts -----------------------------------------------------------------------


def test_wire_shape_dicts_are_converted_at_construction():
    part = Part(function_call={"name": "echo", "args": {"text": "hi"}, "id": "c1"})  # type: ignore[arg-type]
    assert part.function_call == FunctionCall(id="c1", name="echo", args={"text": "hi"})
    answer = Part(function_response={"name": "echo", "response": {"result": "hi"}})  # type: ignore[arg-type]
    assert answer.function_response == FunctionResponse(
        id=None, name="echo", response={"result": "hi"}
    )
    data = Part(inline_data={"mime_type": "image/png", "data": b"\x89PNG"})  # type: ignore[arg-type]
    assert data.inline_data == Blob("image/png", b"\x89PNG")
    content = Content(role="model", parts=[{"text": "hi"}])  # type: ignore[list-item]
    assert content.parts == [Part(text="hi")]


@pytest.mark.parametrize(
    "make",
    [
        lambda: Part(function_call=42),  # type: ignore[arg-type]
        lambda: Part(function_call={"args": {}}),  # type: ignore[arg-type]
        lambda: Part(function_response="done"),  # type: ignore[arg-type]
        lambda: Part(inline_data=b"raw"),  # type: ignore[arg-type]
        lambda: Content(role="model", parts=["text"]),  # type: ignore[list-item]
    ],
    ids=["int", "no-name", "str-response", "bytes-blob", "str-part"],
)
def test_anything_else_is_a_type_error_at_construction(make):
    with pytest.raises(TypeError):
        make()


async def test_a_dict_function_call_runs_through_the_loop(store):
    turn = [Part(function_call={"name": "echo", "args": {"text": "hi"}})]  # type: ignore[arg-type]
    try:
        events = await run_turns(store, [turn, "done"])
        responses = next(e for e in events if e.get_function_responses())
        assert [r.response for r in responses.get_function_responses()] == [{"result": "hi"}]
        assert_paired((await store.reload("s1")).events)
    finally:
        await store.aclose()


# -- 9. Runner.run raises what happened -----------------------------------------------------


class Unavailable(Exception):
    """The session store is down."""


class DownService(InMemorySessionService):
    async def get_session(self, **kwargs: Any) -> Session | None:
        raise Unavailable("the store is down")


def test_runner_run_raises_the_real_exception_every_time():
    agent = Agent("helper", ScriptedModel(["hi"]))
    runner = Runner(agent, app_name=APP, session_service=DownService())
    for _ in range(40):
        with pytest.raises(Unavailable):
            list(runner.run(user_id=USER, session_id="s1", new_message="hi"))
    runner.close()


# -- the property: random model turns never break the loop ---------------------------------

_names = st.one_of(
    st.sampled_from(["echo", "add", "huge", "lone_surrogate", "nope", ""]),
    st.text(max_size=12),
    st.just("ec\ud800ho"),
)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([4400, 5000]).map(lambda digits: -(10**digits)),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.just("lone \udc00 surrogate"),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
_args = st.one_of(
    _json,
    st.fixed_dictionaries({"text": st.text(max_size=10)}),
    st.fixed_dictionaries({"a": st.integers(), "b": st.integers()}),
)
_ids = st.one_of(st.none(), st.sampled_from(["c1", "c2", "dup"]), st.text(max_size=6))
_call = st.builds(
    lambda name, args, id: Part(function_call=FunctionCall(id=id, name=name, args=args)),
    _names,
    _args,
    _ids,
)
_text = st.builds(Part.from_text, st.text(max_size=20) | st.just("\ud800"))
_turn = st.lists(st.one_of(_call, _call, _text), min_size=1, max_size=6)


async def _fuzz_once(kind: str, path: Path, turns: list[list[Part]]) -> None:
    store = Store(kind, path)
    try:
        await run_turns(store, [*turns, "the end"])
        session = await store.reload("s1")
        assert_paired(session.events)
        for event in session.events:
            json.loads(event.to_json())
            event.to_json().encode("utf-8")
    finally:
        await store.aclose()


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
@settings(
    max_examples=25 if os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci" else 200,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(turns=st.lists(_turn, min_size=1, max_size=3))
def test_random_model_turns_never_break_the_loop(kind, tmp_path_factory, turns):
    path = tmp_path_factory.mktemp("fuzz") / "sessions.db"
    asyncio.run(_fuzz_once(kind, path, turns))


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
async def test_a_turn_of_500_calls_with_duplicate_ids_is_answered_in_order(kind, tmp_path):
    store = Store(kind, tmp_path / "sessions.db")
    parts = [
        Part(
            function_call=FunctionCall(
                id=("dup" if i % 7 == 0 else f"c{i}") if i % 5 else None,
                name=["echo", "add", "nope"][i % 3],
                args=[{"text": str(i)}, {"a": i, "b": 1}, [i]][i % 3],
            )
        )
        for i in range(500)
    ]
    try:
        events = await run_turns(store, [parts, "done"])
        responses = next(e for e in events if e.get_function_responses())
        assert len(responses.get_function_responses()) == 500
        session = await store.reload("s1")
        assert_paired(session.events)
    finally:
        await store.aclose()


# -- 17. naming GeminiModel does not import google.genai -------------------------------------


def test_referencing_gemini_model_does_not_import_google_genai_building_one_does():
    import subprocess
    import sys

    code = (
        "import sys, agent_core\n"
        "from agent_core import GeminiModel, ScriptedModel\n"
        "assert not issubclass(ScriptedModel, agent_core.GeminiModel)\n"
        "assert not isinstance(ScriptedModel([]), GeminiModel)\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('google.genai'))\n"
        "assert not loaded, loaded\n"
        "GeminiModel('gemini-test', api_key='k')\n"
        "assert 'google.genai' in sys.modules\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
