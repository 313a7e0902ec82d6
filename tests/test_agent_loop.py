"""The agent loop under ScriptedModel: the function_tools scenario, what the model is sent,
sync and async runs, cancellation, callbacks, instructions, state, long-running tools,
failures, streaming, artifacts and memory, and the event wire shape."""

from __future__ import annotations

import asyncio
import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from agent_core import (
    Agent,
    Content,
    Event,
    InMemoryArtifactService,
    InMemoryMemoryService,
    InMemorySessionService,
    LlmRequest,
    LlmResponse,
    Part,
    RunConfig,
    Runner,
    ScriptedModel,
)
from agent_core._invocation.requests import GENERATED_ID_PREFIX
from agent_core._invocation.tool_context import InvocationToolContext
from agent_core.testing import deterministic_ids, normalize_events, run_script
from tooling import BaseTool, ExecutionStrategy, ToolContext, tool

APP, USER, SID = "app", "u1", "s1"


def call(name: str, id: str | None = None, **args: Any) -> Part:
    return Part.from_function_call(name, args, id=id)


async def collect(runner: Runner, message: str | Content, **kw: Any) -> list[Event]:
    kw.setdefault("user_id", USER)
    kw.setdefault("session_id", SID)
    return [e async for e in runner.run_async(new_message=message, **kw)]


async def stored(runner: Runner, session_id: str = SID, user_id: str = USER) -> list[Event]:
    session = await runner.session_service.get_session(
        app_name=runner.app_name, user_id=user_id, session_id=session_id
    )
    assert session is not None
    return session.events


def stored_sync(runner: Runner, session_id: str = SID) -> list[Event]:
    return asyncio.run(stored(runner, session_id))


def response_dicts(event: Event) -> list[dict[str, Any]]:
    return [r.response for r in event.get_function_responses()]


def expected_contents(events: list[Event]) -> list[dict[str, Any]]:
    """What a single-agent model should be sent: the stored events' contents in order,
    generated call ids stripped, model-given ids kept."""
    out = []
    for event in events:
        assert event.content is not None
        data = event.content.to_dict()
        for part in data["parts"]:
            for key in ("functionCall", "functionResponse"):
                if key in part and part[key].get("id", "").startswith(GENERATED_ID_PREFIX):
                    del part[key]["id"]
        out.append(data)
    return out


def sent(request: LlmRequest) -> list[dict[str, Any]]:
    return [c.to_dict() for c in request.contents]


# -- the function_tools scenario ---------------------------------------------------------


class Numbers:
    """The scenario's two tools; the "random" numbers count 1, 2, 3..."""

    def __init__(self) -> None:
        self._next = itertools.count(1)
        counter = self._next

        def generate_random_number(max_value: int = 100) -> int:
            """Generate a random number between 1 and max_value.

            Args:
                max_value: The largest number that may come out.
            """
            return next(counter)

        def is_even(number: int) -> bool:
            """Tell whether a number is even.

            Args:
                number: The number to check.
            """
            return number % 2 == 0

        self.tools: list[Callable[..., Any]] = [generate_random_number, is_even]


def test_a_random_number_stores_four_events_and_yields_three() -> None:
    model = ScriptedModel([[call("generate_random_number")], "Your random number is 1."])
    runner = Runner(Agent("numbers", model, tools=Numbers().tools), app_name=APP)

    events = list(runner.run(user_id=USER, session_id=SID, new_message="a random number"))

    session = stored_sync(runner)
    assert [e.author for e in session] == ["user", "numbers", "numbers", "numbers"]
    assert session[0].content is not None and session[0].content.text == "a random number"
    assert [e.id for e in events] == [e.id for e in session[1:]]
    call_event, response_event, text_event = events
    (fc,) = call_event.get_function_calls()
    (fr,) = response_event.get_function_responses()
    assert fc.name == fr.name == "generate_random_number"
    assert fc.id and fc.id == fr.id  # a generated id pairs them in the session
    assert fr.response == {"result": 1}
    assert text_event.is_final_response() and not call_event.is_final_response()
    assert text_event.content is not None and text_event.content.text == "Your random number is 1."
    assert all(e.invocation_id == session[0].invocation_id for e in session)

    # Each turn the model is sent the session so far, generated ids stripped.
    first, second = model.requests
    assert sent(first) == expected_contents(session[:1])
    assert sent(second) == expected_contents(session[:3])
    assert "id" not in sent(second)[1]["parts"][0]["functionCall"]
    assert "id" not in sent(second)[2]["parts"][0]["functionResponse"]
    assert set(first.tools) == {"generate_random_number", "is_even"}


def test_a_random_number_and_check_even_takes_two_model_turns() -> None:
    model = ScriptedModel(
        [
            [call("generate_random_number", max_value=10)],
            [call("is_even", number=1)],
            "Your number is 1, which is odd.",
        ]
    )
    runner = Runner(Agent("numbers", model, tools=Numbers().tools), app_name=APP)

    events = list(
        runner.run(user_id=USER, session_id=SID, new_message="a random number and check even")
    )

    session = stored_sync(runner)
    assert len(session) == 6 and len(events) == 5
    kinds = [
        "call" if e.get_function_calls() else "response" if e.get_function_responses() else "text"
        for e in session[1:]
    ]
    assert kinds == ["call", "response", "call", "response", "text"]
    assert response_dicts(session[2]) == [{"result": 1}]
    assert response_dicts(session[4]) == [{"result": False}]
    assert len(model.requests) == 3
    for i, request in enumerate(model.requests):
        assert sent(request) == expected_contents(session[: 1 + 2 * i])


@pytest.mark.parametrize("strategy", [ExecutionStrategy.AUTO, ExecutionStrategy.PARALLEL])
def test_random_number_and_is_5_even_gives_one_response_event(strategy: ExecutionStrategy) -> None:
    numbers = Numbers()
    generate, is_even = numbers.tools

    @tool(read_only=True, concurrency_safe=True)
    async def slow_random(max_value: int = 100) -> int:
        """A random number, slowly."""
        await asyncio.sleep(0.05)  # finishes after is_even: responses still in call order
        return int(generate(max_value))

    model = ScriptedModel(
        [
            # The model named its second call itself; the first comes without an id.
            [call("slow_random"), call("is_even", id="model-id-7", number=5)],
            "Your number is 1, and 5 is odd.",
        ]
    )
    agent = Agent("numbers", model, tools=[slow_random, is_even], tool_strategy=strategy)
    runner = Runner(agent, app_name=APP)

    events = list(
        runner.run(user_id=USER, session_id=SID, new_message="random number and is 5 even")
    )

    session = stored_sync(runner)
    assert len(session) == 4 and len(events) == 3
    calls = session[1].get_function_calls()
    responses = session[2].get_function_responses()
    assert [c.name for c in calls] == [r.name for r in responses] == ["slow_random", "is_even"]
    assert [c.id for c in calls] == [r.id for r in responses]
    assert calls[0].id is not None and calls[0].id.startswith(GENERATED_ID_PREFIX)
    assert calls[1].id == "model-id-7"
    assert [r.response for r in responses] == [{"result": 1}, {"result": False}]

    second = sent(model.requests[1])
    assert second == expected_contents(session[:3])
    assert second[1]["parts"] == [
        {"functionCall": {"name": "slow_random", "args": {}}},
        {"functionCall": {"name": "is_even", "args": {"number": 5}, "id": "model-id-7"}},
    ]
    assert [p["functionResponse"].get("id") for p in second[2]["parts"]] == [None, "model-id-7"]


def test_the_model_is_never_sent_partial_or_progress_events() -> None:
    @tool(long_running=True)
    def crunch(tool_context: ToolContext) -> Any:
        """Crunch, reporting as it goes."""
        tool_context.emit_progress("stdout", "working")
        yield {"percent": 50}
        return {"percent": 100}

    model = ScriptedModel([[call("crunch")], "Crunched."])
    runner = Runner(Agent("a", model, tools=[crunch]), app_name=APP)
    events = list(
        runner.run(
            user_id=USER, session_id=SID, new_message="go", run_config=RunConfig(stream=True)
        )
    )
    assert any(e.progress is not None for e in events)
    assert any(e.partial and e.progress is None for e in events)
    session = stored_sync(runner)
    assert not any(e.partial or e.progress is not None for e in session)
    assert sent(model.requests[1]) == expected_contents(session[:3])
    assert session[2].get_function_responses()[0].response == {"percent": 100}


# -- run() and run_async() ---------------------------------------------------------------


def _scenario_runner() -> Runner:
    model = ScriptedModel([[call("generate_random_number")], [call("is_even", number=1)], "odd"])
    return Runner(Agent("numbers", model, tools=Numbers().tools), app_name=APP)


async def test_run_and_run_async_give_the_same_events() -> None:
    with deterministic_ids():
        async_events = await collect(_scenario_runner(), "go")
    with deterministic_ids():
        # run() inside a running event loop: it drives its own loop on a worker thread.
        sync_events = list(_scenario_runner().run(user_id=USER, session_id=SID, new_message="go"))
    assert [e.to_dict() for e in sync_events] == [e.to_dict() for e in async_events]
    assert len(sync_events) == 5


async def test_run_works_inside_a_running_loop_and_leaves_it_usable() -> None:
    runner = _scenario_runner()
    events = list(runner.run(user_id=USER, session_id=SID, new_message="go"))
    assert events[-1].content is not None and events[-1].content.text == "odd"
    await asyncio.sleep(0)  # this loop is still fine
    assert len(await stored(runner)) == 6


def test_run_accepts_content_as_the_new_message() -> None:
    model = ScriptedModel(["hi"])
    runner = Runner(Agent("a", model), app_name=APP)
    message = Content(role="user", parts=[Part.from_text("hello")])
    events = list(runner.run(user_id=USER, session_id=SID, new_message=message))
    assert [e.content.text for e in events if e.content] == ["hi"]
    assert model.requests[0].contents[0].to_dict() == message.to_dict()


def test_closing_the_run_generator_cancels_the_run() -> None:
    started, cancelled = threading.Event(), threading.Event()

    async def wait_forever() -> str:
        """Wait for something that never comes."""
        started.set()
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    model = ScriptedModel([[call("wait_forever")], "after", "second run"])
    runner = Runner(Agent("a", model, tools=[wait_forever]), app_name=APP)
    events = runner.run(user_id=USER, session_id=SID, new_message="go")
    first = next(events)
    assert first.get_function_calls()[0].name == "wait_forever"
    assert started.wait(5)
    t0 = time.monotonic()
    events.close()
    assert cancelled.is_set() and time.monotonic() - t0 < 5
    # Nothing half-written: the call was never stored without its response.
    assert [e.author for e in stored_sync(runner)] == ["user"]
    # The session is free again.
    again = list(runner.run(user_id=USER, session_id=SID, new_message="again"))
    assert again[-1].content is not None and again[-1].content.text == "after"


async def test_two_concurrent_runs_on_one_session_are_serialized() -> None:
    async def slow(step: int) -> int:
        """Take a while."""
        await asyncio.sleep(0.03)
        return step

    turns: list[Any] = []
    for i in range(2):
        turns += [[call("slow", step=i)], [call("slow", step=i + 10)], f"done {i}"]
    model = ScriptedModel(turns)
    runner = Runner(Agent("a", model, tools=[slow]), app_name=APP)

    results = await asyncio.gather(collect(runner, "first"), collect(runner, "second"))

    session = await stored(runner)
    assert len(session) == 12
    invocations = [e.invocation_id for e in session]
    assert invocations == [invocations[0]] * 6 + [invocations[6]] * 6
    assert invocations[0] != invocations[6]
    # Each run saw its own turns whole: model call, response, call, response, text.
    for events in results:
        assert len(events) == 5 and len({e.invocation_id for e in events}) == 1
    # The second run's model was sent the whole first run.
    assert len(model.requests[3].contents) == 7


def test_sync_runs_from_two_threads_on_one_session_are_serialized() -> None:
    async def slow(step: int) -> int:
        """Take a while."""
        await asyncio.sleep(0.02)
        return step

    model = ScriptedModel([[call("slow", step=1)], "one", [call("slow", step=2)], "two"])
    runner = Runner(Agent("a", model, tools=[slow]), app_name=APP)
    results: list[list[Event]] = []

    def run(message: str) -> None:
        results.append(list(runner.run(user_id=USER, session_id=SID, new_message=message)))

    threads = [threading.Thread(target=run, args=(m,)) for m in ("first", "second")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert [len(r) for r in results] == [3, 3]
    invocations = [e.invocation_id for e in stored_sync(runner)]
    assert invocations == [invocations[0]] * 4 + [invocations[4]] * 4


async def test_a_run_cancelled_mid_turn_stores_nothing_half_written() -> None:
    started, release = asyncio.Event(), asyncio.Event()
    cancelled: list[bool] = []

    @tool(read_only=True, concurrency_safe=True)
    async def quick() -> str:
        """Answers at once."""
        return "quick"

    @tool(read_only=True, concurrency_safe=True)
    async def blocker() -> str:
        """Waits for a release that never comes."""
        started.set()
        try:
            await release.wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "released"

    model = ScriptedModel(
        [[call("quick")], [call("quick"), call("blocker")], "never reached", "later"]
    )
    runner = Runner(Agent("a", model, tools=[quick, blocker]), app_name=APP)
    seen: list[Event] = []

    async def consume() -> None:
        async for event in runner.run_async(user_id=USER, session_id=SID, new_message="go"):
            seen.append(event)

    task = asyncio.create_task(consume())
    await asyncio.wait_for(started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert cancelled == [True]

    session = await stored(runner)
    # The first, finished round is stored; the cancelled round left no trace.
    assert len(session) == 3
    called = {c.id for e in session for c in e.get_function_calls()}
    answered = {r.id for e in session for r in e.get_function_responses()}
    assert called == answered
    assert len(seen) == 3  # call, response, and the second call event (never stored)
    assert seen[2].id not in {e.id for e in session}

    # The lock is released and the session usable.
    events = await collect(runner, "again")
    assert events[-1].content is not None and events[-1].content.text == "never reached"


class SlowStore(InMemorySessionService):
    """Takes a while to store a model turn with calls (like a busy database)."""

    def __init__(self) -> None:
        super().__init__()
        self.slow = False
        self.storing = asyncio.Event()

    async def append_event(self, session: Any, event: Event) -> Event:
        if self.slow and event.get_function_calls():
            self.storing.set()
            await asyncio.sleep(0.1)
        return await super().append_event(session, event)


async def test_a_run_cancelled_while_storing_finishes_storing_before_the_next_run() -> None:
    async def quick() -> str:
        """Answers at once."""
        return "quick"

    sessions = SlowStore()
    model = ScriptedModel([[call("quick")], "answer"])
    runner = Runner(Agent("a", model, tools=[quick]), app_name=APP, session_service=sessions)
    sessions.slow = True
    task = asyncio.create_task(collect(runner, "first"))
    await asyncio.wait_for(sessions.storing.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    sessions.slow = False
    await collect(runner, "second")

    session = await stored(runner)
    # The cancelled run's call and response were stored whole, before the next run began.
    assert [e.invocation_id for e in session] == [session[0].invocation_id] * 3 + [
        session[3].invocation_id
    ] * 2
    assert [e.content.text for e in session if e.content and e.content.text] == [
        "first",
        "second",
        "answer",
    ]


# -- callbacks, output_key, instructions -------------------------------------------------


@pytest.mark.parametrize("is_async", [False, True])
async def test_before_model_callback_replaces_the_model_call(is_async: bool) -> None:
    seen: list[LlmRequest] = []

    def before(ctx: ToolContext, request: LlmRequest) -> LlmResponse | None:
        seen.append(request)
        return LlmResponse(content=Content("model", [Part.from_text("from the callback")]))

    async def before_async(ctx: ToolContext, request: LlmRequest) -> LlmResponse | None:
        return before(ctx, request)

    model = ScriptedModel([])
    agent = Agent("a", model, before_model_callback=before_async if is_async else before)
    events = await collect(Runner(agent, app_name=APP), "hi")
    assert model.requests == []
    assert [e.content.text for e in events if e.content] == ["from the callback"]
    assert seen[0].contents[0].text == "hi"


@pytest.mark.parametrize("is_async", [False, True])
async def test_after_model_callback_replaces_the_response(is_async: bool) -> None:
    def after(ctx: ToolContext, response: LlmResponse) -> LlmResponse | None:
        assert response.content is not None
        if response.content.text == "keep me":
            return None
        return LlmResponse(content=Content("model", [Part.from_text("censored")]))

    async def after_async(ctx: ToolContext, response: LlmResponse) -> LlmResponse | None:
        return after(ctx, response)

    model = ScriptedModel(["secret answer", "keep me"])
    agent = Agent("a", model, after_model_callback=after_async if is_async else after)
    runner = Runner(agent, app_name=APP)
    assert [e.content.text for e in await collect(runner, "hi") if e.content] == ["censored"]
    assert [e.content.text for e in await collect(runner, "hi") if e.content] == ["keep me"]
    assert len(model.requests) == 2


def test_a_before_model_callback_returning_none_lets_the_model_answer() -> None:
    calls: list[str] = []
    agent = Agent(
        "a",
        ScriptedModel(["model answer"]),
        before_model_callback=lambda ctx, req: calls.append(ctx.agent_name),
        after_model_callback=lambda ctx, resp: None,
    )
    events = run_script(agent, "hi")
    assert [e.content.text for e in events if e.content] == ["model answer"]
    assert calls == ["a"]


@pytest.mark.parametrize("is_async", [False, True])
async def test_before_tool_callback_replaces_the_result_without_running_the_tool(
    is_async: bool,
) -> None:
    ran: list[int] = []

    def double(n: int, scale: int = 2) -> int:
        """Double n."""
        ran.append(n)
        return n * scale

    seen: list[tuple[str, dict[str, Any]]] = []

    def before(t: BaseTool, args: dict[str, Any], ctx: ToolContext) -> dict[str, Any] | None:
        seen.append((t.name, args))
        return {"result": -1} if args["n"] == 13 else None

    async def before_async(t: BaseTool, args: dict[str, Any], ctx: ToolContext) -> Any:
        return before(t, args, ctx)

    model = ScriptedModel([[call("double", n=13), call("double", n=4)], "ok"])
    agent = Agent(
        "a", model, tools=[double], before_tool_callback=before_async if is_async else before
    )
    events = await collect(Runner(agent, app_name=APP), "go")
    assert response_dicts(events[1]) == [{"result": -1}, {"result": 8}]
    assert ran == [4]
    # The callback gets the validated arguments, defaults filled in.
    assert seen == [("double", {"n": 13, "scale": 2}), ("double", {"n": 4, "scale": 2})]
    # The model sees the replaced result.
    assert sent(model.requests[1])[2]["parts"][0]["functionResponse"]["response"] == {"result": -1}


@pytest.mark.parametrize("is_async", [False, True])
async def test_after_tool_callback_replaces_the_result(is_async: bool) -> None:
    ran: list[str] = []

    def lookup(key: str) -> dict[str, Any]:
        """Look a key up."""
        ran.append(key)
        return {"value": key.upper(), "password": "hunter2"}

    def after(
        t: BaseTool, args: dict[str, Any], ctx: ToolContext, response: dict[str, Any]
    ) -> dict[str, Any] | None:
        if "password" not in response:
            return None
        return {k: v for k, v in response.items() if k != "password"}

    async def after_async(t: BaseTool, args: dict[str, Any], ctx: ToolContext, r: Any) -> Any:
        return after(t, args, ctx, r)

    model = ScriptedModel([[call("lookup", key="x")], "ok"])
    agent = Agent(
        "a", model, tools=[lookup], after_tool_callback=after_async if is_async else after
    )
    events = await collect(Runner(agent, app_name=APP), "go")
    assert ran == ["x"]
    assert response_dicts(events[1]) == [{"value": "X"}]
    assert "hunter2" not in str(sent(model.requests[1]))


async def test_callbacks_can_write_state() -> None:
    def before_model(ctx: ToolContext, request: LlmRequest) -> None:
        ctx.state["turns"] = ctx.state.get("turns", 0) + 1

    def before_tool(t: BaseTool, args: dict[str, Any], ctx: ToolContext) -> None:
        ctx.state["last_tool"] = t.name

    model = ScriptedModel([[call("is_even", number=2)], "even"])
    agent = Agent(
        "a",
        model,
        tools=Numbers().tools,
        before_model_callback=before_model,
        before_tool_callback=before_tool,
    )
    runner = Runner(agent, app_name=APP)
    call_event, response, text = await collect(runner, "go")
    assert call_event.actions.state_delta == {"turns": 1}
    assert response.actions.state_delta == {"last_tool": "is_even"}
    assert text.actions.state_delta == {"turns": 2}
    session = await runner.session_service.get_session(app_name=APP, user_id=USER, session_id=SID)
    assert session is not None and session.state == {"turns": 2, "last_tool": "is_even"}


async def test_output_key_saves_the_final_text_to_state() -> None:
    model = ScriptedModel([[call("generate_random_number")], "The number is 1."])
    agent = Agent("a", model, tools=Numbers().tools, output_key="last_answer")
    runner = Runner(agent, app_name=APP)
    events = await collect(runner, "go")
    assert events[-1].actions.state_delta == {"last_answer": "The number is 1."}
    session = await runner.session_service.get_session(app_name=APP, user_id=USER, session_id=SID)
    assert session is not None and session.state["last_answer"] == "The number is 1."


async def test_instruction_placeholders_are_filled_from_state() -> None:
    model = ScriptedModel(["hello Ann", "again"])
    agent = Agent(
        "a",
        model,
        instruction="You help {user:name} with {topic}. Mood: {mood?}. Plan: {app:plan}.",
    )
    sessions = InMemorySessionService()
    await sessions.create_session(
        app_name=APP,
        user_id=USER,
        session_id=SID,
        state={"user:name": "Ann", "topic": "taxes", "app:plan": {"tier": 1}},
    )
    runner = Runner(agent, app_name=APP, session_service=sessions)
    await collect(runner, "hi")
    assert model.requests[0].system_instruction == (
        'You help Ann with taxes. Mood: . Plan: {"tier": 1}.'
    )


async def test_a_missing_instruction_key_is_an_error_event() -> None:
    model = ScriptedModel(["never"])
    runner = Runner(Agent("a", model, instruction="Hello {name}"), app_name=APP)
    events = await collect(runner, "hi")
    assert len(events) == 1
    assert events[0].error_code == "agent.instruction"
    assert "name" in (events[0].error_message or "")
    assert model.requests == []
    assert (await stored(runner))[-1].error_code == "agent.instruction"


# -- state through tools -----------------------------------------------------------------


async def test_state_scopes_through_tools() -> None:
    def remember(tool_context: ToolContext) -> str:
        """Write one key of each scope."""
        s = tool_context.state
        s["app:color"] = "blue"
        s["user:lang"] = "fr"
        s["temp:scratch"] = "draft"
        s["note"] = "session only"
        return "ok"

    def recall(key: str, tool_context: ToolContext) -> Any:
        """Read a key."""
        return tool_context.state.get(key)

    model = ScriptedModel(
        [
            [call("remember")],
            [call("recall", key="temp:scratch")],  # same invocation: visible
            "done",
            [call("recall", key="temp:scratch")],  # next invocation: gone
            "done again",
        ]
    )
    sessions = InMemorySessionService()
    runner = Runner(
        Agent("a", model, tools=[remember, recall]), app_name=APP, session_service=sessions
    )
    events = await collect(runner, "remember")
    assert response_dicts(events[3]) == [{"result": "draft"}]
    events = await collect(runner, "recall")
    assert response_dicts(events[1]) == [{"result": None}]

    session = await sessions.get_session(app_name=APP, user_id=USER, session_id=SID)
    assert session is not None
    assert session.state == {"app:color": "blue", "user:lang": "fr", "note": "session only"}
    for event in session.events:
        assert not any(k.startswith("temp:") for k in event.actions.state_delta)
    assert session.events[2].actions.state_delta == {
        "app:color": "blue",
        "user:lang": "fr",
        "note": "session only",
    }
    other = await sessions.create_session(app_name=APP, user_id=USER, session_id="s2")
    assert other.state == {"app:color": "blue", "user:lang": "fr"}
    stranger = await sessions.create_session(app_name=APP, user_id="u2", session_id="s3")
    assert stranger.state == {"app:color": "blue"}


async def test_deltas_of_several_calls_merge_in_call_order() -> None:
    def put(key: str, value: int, tool_context: ToolContext) -> int:
        """Write state."""
        tool_context.state[key] = value
        return value

    def get(key: str, tool_context: ToolContext) -> Any:
        """Read state."""
        return tool_context.state.get(key)

    model = ScriptedModel(
        [
            [
                call("put", key="k", value=1),
                call("put", key="other", value=3),
                call("get", key="k"),  # sees the calls that finished before it
                call("put", key="k", value=2),
            ],
            "ok",
        ]
    )
    runner = Runner(Agent("a", model, tools=[put, get]), app_name=APP)
    events = await collect(runner, "go")
    response = events[1]
    assert response_dicts(response) == [{"result": 1}, {"result": 3}, {"result": 1}, {"result": 2}]
    assert list(response.actions.state_delta.items()) == [("k", 2), ("other", 3)]
    session = await runner.session_service.get_session(app_name=APP, user_id=USER, session_id=SID)
    assert session is not None and session.state == {"k": 2, "other": 3}


# -- long-running tools ------------------------------------------------------------------


async def test_generator_tool_intermediate_responses_are_partial_events() -> None:
    @tool(long_running=True)
    def download(url: str) -> Any:
        """Download a file, reporting progress."""
        for percent in (25, 50, 75):
            yield {"status": "downloading", "percent": percent}
        return {"status": "done", "bytes": 1024}

    model = ScriptedModel([[call("download", url="http://x")], "Downloaded 1024 bytes."])
    runner = Runner(Agent("a", model, tools=[download]), app_name=APP)
    events = await collect(runner, "download it")

    partials = [e for e in events if e.partial]
    assert [response_dicts(e) for e in partials] == [
        [{"status": "downloading", "percent": p}] for p in (25, 50, 75)
    ]
    for e in partials:
        (fr,) = e.get_function_responses()
        assert fr.will_continue is True and fr.id == events[0].get_function_calls()[0].id
        assert not e.is_final_response()
    session = await stored(runner)
    assert len(session) == 4 and not any(e.partial for e in session)
    assert response_dicts(session[2]) == [{"status": "done", "bytes": 1024}]
    assert sent(model.requests[1])[2]["parts"][0]["functionResponse"]["response"] == {
        "status": "done",
        "bytes": 1024,
    }
    # The call finished within the run: the model event is not left waiting on it, so it
    # is not a final response (only calls still pending when the turn ends are named).
    assert not session[1].long_running_tool_ids
    assert not session[1].is_final_response()


async def test_progress_surfaces_as_progress_events_never_stored_or_sent() -> None:
    async def build(target: str, tool_context: ToolContext) -> str:
        """Build a target."""
        for line in ("compiling", "linking"):
            tool_context.emit_progress("stdout", line)
            await asyncio.sleep(0)
        return "built"

    model = ScriptedModel([[call("build", target="all")], "Built."])
    runner = Runner(Agent("a", model, tools=[build]), app_name=APP)
    events = await collect(runner, "build")
    progress_events = [e for e in events if e.progress is not None]
    progress = [e.progress for e in progress_events if e.progress is not None]
    call_id = events[0].get_function_calls()[0].id
    assert [(p.stream, p.chunk) for p in progress] == [
        ("stdout", "compiling"),
        ("stdout", "linking"),
    ]
    assert all(p.id == call_id and p.name == "build" for p in progress)
    assert all(not e.is_final_response() for e in progress_events)
    session = await stored(runner)
    assert not any(e.progress is not None for e in session)
    assert "compiling" not in str(sent(model.requests[1]))


# -- runaway guard and failures ----------------------------------------------------------


async def test_max_model_calls_ends_a_runaway_loop() -> None:
    model = ScriptedModel([[call("generate_random_number")]] * 10)
    runner = Runner(Agent("a", model, tools=Numbers().tools), app_name=APP)
    events = await collect(runner, "loop", run_config=RunConfig(max_model_calls=3))
    assert len(model.requests) == 3
    assert len(events) == 7
    assert events[-1].error_code == "agent.max_model_calls"
    assert "3" in (events[-1].error_message or "")
    assert events[-1].is_final_response()
    assert (await stored(runner))[-1].error_code == "agent.max_model_calls"


async def test_the_default_guard_is_25_model_calls() -> None:
    model = ScriptedModel([[call("generate_random_number")]] * 30)
    runner = Runner(Agent("a", model, tools=Numbers().tools), app_name=APP)
    events = await collect(runner, "loop")
    assert len(model.requests) == 25 and events[-1].error_code == "agent.max_model_calls"


async def test_an_exhausted_script_is_an_error_event() -> None:
    model = ScriptedModel([[call("generate_random_number")]])
    runner = Runner(Agent("a", model, tools=Numbers().tools), app_name=APP)
    events = await collect(runner, "go")  # no exception
    assert events[-1].error_code == "model.failed"
    assert "ran out of turns" in (events[-1].error_message or "")
    assert len(await stored(runner)) == 4


async def test_a_model_error_response_is_an_error_event() -> None:
    model = ScriptedModel(
        [LlmResponse(error_code="RESOURCE_EXHAUSTED", error_message="quota exceeded"), "fine"]
    )
    runner = Runner(Agent("a", model), app_name=APP)
    (event,) = await collect(runner, "go")
    assert (event.error_code, event.error_message) == ("RESOURCE_EXHAUSTED", "quota exceeded")
    assert event.is_final_response()
    # The next run works, and the failed turn is not shown to the model as content.
    (event,) = await collect(runner, "again")
    assert event.content is not None and event.content.text == "fine"
    assert [c.text for c in model.requests[1].contents] == ["go", "again"]


async def test_a_tool_failure_is_a_response_the_model_sees() -> None:
    def explode() -> str:
        """Fail."""
        raise ValueError("the secret is 42")

    model = ScriptedModel([[call("explode"), call("is_even", number=2)], "It failed."])
    runner = Runner(Agent("a", model, tools=[explode, Numbers().tools[1]]), app_name=APP)
    events = await collect(runner, "go")
    failed, ok = response_dicts(events[1])
    assert failed["status"] == "error" and failed["error"]["code"] == "tool.failed"
    assert "ValueError" in failed["error"]["message"]
    assert "secret" not in str(failed)
    assert ok == {"result": True}
    assert events[-1].content is not None and events[-1].content.text == "It failed."
    assert "tool.failed" in str(sent(model.requests[1])[2])


async def test_expose_errors_and_unknown_tools() -> None:
    def explode() -> str:
        """Fail."""
        raise ValueError("the detail")

    model = ScriptedModel([[call("explode"), call("nope")], "ok"])
    runner = Runner(Agent("a", model, tools=[explode]), app_name=APP)
    events = await collect(runner, "go", run_config=RunConfig(expose_errors=True))
    failed, unknown = response_dicts(events[1])
    assert "the detail" in failed["error"]["message"]
    assert unknown["error"]["code"] == "tool.not_found"
    assert "explode" in unknown["error"]["message"]


async def test_run_config_reaches_the_scheduler() -> None:
    @tool(scopes=["files:write"])
    def write() -> str:
        """Write."""
        return "written"

    async def sleepy() -> str:
        """Sleep."""
        await asyncio.sleep(5)
        return "woke"

    model = ScriptedModel([[call("write"), call("sleepy")], "ok", [call("write")], "ok"])
    runner = Runner(Agent("a", model, tools=[write, sleepy]), app_name=APP)
    events = await collect(runner, "go", run_config=RunConfig(tool_timeout=0.05))
    forbidden, timed_out = response_dicts(events[1])
    assert forbidden["error"]["code"] == "tool.forbidden"
    assert timed_out["error"]["code"] == "tool.timeout"
    config = RunConfig(granted_scopes=frozenset({"files:write"}))
    events = await collect(runner, "again", run_config=config)
    assert response_dicts(events[1]) == [{"result": "written"}]


async def test_max_concurrency_reaches_the_scheduler() -> None:
    running, peak = 0, 0

    async def work(n: int) -> int:
        """Work a little."""
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1
        return n

    turns: list[Any] = []
    for _ in range(2):
        turns += [[call("work", n=i) for i in range(4)], "ok"]
    model = ScriptedModel(turns)
    agent = Agent("a", model, tools=[work], tool_strategy=ExecutionStrategy.PARALLEL)
    runner = Runner(agent, app_name=APP)
    await collect(runner, "go", run_config=RunConfig(max_concurrency=1))
    assert peak == 1
    await collect(runner, "go")
    assert peak == 4


# -- streaming ---------------------------------------------------------------------------


async def test_stream_yields_partial_text_and_stores_the_aggregate() -> None:
    model = ScriptedModel([[call("is_even", number=3)], "Three is odd, friend."])
    runner = Runner(Agent("a", model, tools=Numbers().tools), app_name=APP)
    events = await collect(runner, "go", run_config=RunConfig(stream=True))
    partial = [e for e in events if e.partial]
    assert len(partial) == 4
    assert "".join(e.content.text for e in partial if e.content) == "Three is odd, friend."
    assert not any(e.is_final_response() for e in partial)
    final = events[-1]
    assert not final.partial and final.content is not None
    assert final.content.text == "Three is odd, friend."
    session = await stored(runner)
    assert [e.partial for e in session] == [False] * 4
    assert session[-1].content is not None
    assert session[-1].content.text == "Three is odd, friend."
    # Without stream=True the same model gives no partial events.
    model2 = ScriptedModel(["Three is odd, friend."])
    events = await collect(Runner(Agent("a", model2), app_name=APP), "go")
    assert [e.partial for e in events] == [False]


# -- artifacts and memory ----------------------------------------------------------------


async def test_artifacts_through_tool_context() -> None:
    async def write_report(text: str, tool_context: ToolContext) -> dict[str, Any]:
        """Save a report twice."""
        first = await tool_context.save_artifact("report.txt", text)
        second = await tool_context.save_artifact("report.txt", text.upper())
        await tool_context.save_artifact("data.bin", b"\x00\x01", mime_type="application/x-raw")
        return {"versions": [first, second]}

    async def read_report(tool_context: ToolContext) -> dict[str, Any]:
        """Read the reports."""
        latest = await tool_context.load_artifact("report.txt")
        first = await tool_context.load_artifact("report.txt", version=0)
        missing = await tool_context.load_artifact("nope.txt")
        assert latest is not None and first is not None and missing is None
        return {
            "names": await tool_context.list_artifacts(),
            "latest": latest.data.decode(),
            "first": first.data.decode(),
            "mime": latest.mime_type,
        }

    artifacts = InMemoryArtifactService()
    model = ScriptedModel([[call("write_report", text="q3")], [call("read_report")], "done"])
    runner = Runner(
        Agent("a", model, tools=[write_report, read_report]),
        app_name=APP,
        artifact_service=artifacts,
    )
    events = await collect(runner, "go")
    assert response_dicts(events[1]) == [{"versions": [0, 1]}]
    assert events[1].actions.artifact_delta == {"report.txt": 1, "data.bin": 0}
    assert response_dicts(events[3]) == [
        {"names": ["data.bin", "report.txt"], "latest": "Q3", "first": "q3", "mime": "text/plain"}
    ]
    versions = await artifacts.list_versions(
        app_name=APP, user_id=USER, session_id=SID, filename="report.txt"
    )
    assert versions == [0, 1]
    blob = await artifacts.load_artifact(
        app_name=APP, user_id=USER, session_id=SID, filename="data.bin"
    )
    assert blob is not None and blob.data == b"\x00\x01" and blob.mime_type == "application/x-raw"


async def test_memory_through_tool_context() -> None:
    async def recall(query: str, tool_context: ToolContext) -> list[dict[str, Any]]:
        """Search past conversations."""
        hits = await tool_context.search_memory(query)
        return [{"text": h.text, "author": h.author, "session": h.session_id} for h in hits]

    memory = InMemoryMemoryService()
    model = ScriptedModel(
        [
            "Noted: your favourite city is Lisbon.",
            [call("recall", query="favourite city")],
            "You said Lisbon.",
        ]
    )
    runner = Runner(Agent("a", model, tools=[recall]), app_name=APP, memory_service=memory)
    await collect(runner, "My favourite city is Lisbon.", session_id="old")
    old = await runner.session_service.get_session(app_name=APP, user_id=USER, session_id="old")
    assert old is not None
    await memory.add_session_to_memory(old)

    events = await collect(runner, "what is my favourite city?", session_id="new")
    hits = response_dicts(events[1])[0]["result"]
    assert {h["session"] for h in hits} == {"old"}
    assert {h["author"] for h in hits} == {"user", "a"}
    assert any("Lisbon" in h["text"] for h in hits)


async def test_memory_with_nothing_stored_finds_nothing() -> None:
    async def recall(query: str, tool_context: ToolContext) -> int:
        """Search."""
        return len(await tool_context.search_memory(query))

    model = ScriptedModel([[call("recall", query="x")], "none"])
    events = await collect(Runner(Agent("a", model, tools=[recall]), app_name=APP), "go")
    assert response_dicts(events[1]) == [{"result": 0}]


async def test_memory_without_a_service_finds_nothing() -> None:
    ctx = InvocationToolContext(
        app_name=APP,
        invocation_id="inv",
        agent_name="a",
        user_id=USER,
        session_id=SID,
        state={},
        artifact_service=InMemoryArtifactService(),
        memory_service=None,
    )
    assert await ctx.search_memory("anything") == []


# -- the event wire shape ----------------------------------------------------------------


async def test_events_of_a_run_round_trip_through_json() -> None:
    @tool(long_running=True)
    def job(tool_context: ToolContext) -> Any:
        """A job with progress."""
        tool_context.emit_progress("log", "step")
        tool_context.state["user:seen"] = True
        yield {"step": 1}
        return {"done": True}

    model = ScriptedModel(
        [
            [call("job"), call("is_even", id="mine", number=4)],
            "All done.",
            LlmResponse(error_code="E", error_message="broken"),
        ]
    )
    runner = Runner(
        Agent("a", model, tools=[job, Numbers().tools[1]], output_key="out"), app_name=APP
    )
    events = await collect(runner, "go", run_config=RunConfig(stream=True))
    events += await collect(runner, "again")
    everything = events + await stored(runner)
    kinds = {
        "progress" if e.progress else "partial" if e.partial else "error" if e.error_code else "x"
        for e in everything
    }
    assert kinds == {"progress", "partial", "error", "x"}
    for event in everything:
        data = event.to_dict()
        assert Event.from_dict(data) == event
        assert Event.from_json(event.to_json()) == event
    wire = str([e.to_dict() for e in everything])
    for key in (
        "invocationId",
        "functionCall",
        "functionResponse",
        "stateDelta",
        "willContinue",
        "errorCode",
        "errorMessage",
    ):
        assert f"'{key}'" in wire
    for snake in ("invocation_id", "function_call", "state_delta", "long_running_tool_ids"):
        assert snake not in wire


# -- agent_core.testing ------------------------------------------------------------------


def test_normalize_events_replaces_ids_and_times_in_order() -> None:
    def run_once() -> list[Event]:
        model = ScriptedModel(
            [[call("generate_random_number"), call("is_even", id="model-given", number=2)], "ok"]
        )
        return run_script(Agent("numbers", model, tools=Numbers().tools), ["first", "second"])

    first, second = run_once(), run_once()
    assert first[0].id != second[0].id
    normalized = normalize_events(first)
    assert normalized == normalize_events(second)
    call_event, response_event, text_event = normalized[:3]
    assert [call_event["id"], response_event["id"], text_event["id"]] == [
        "<id-1>",
        "<id-2>",
        "<id-3>",
    ]
    assert call_event["invocationId"] == "<inv-1>" and text_event["invocationId"] == "<inv-1>"
    assert call_event["timestamp"] == 0.0
    call_ids = [p["functionCall"]["id"] for p in call_event["content"]["parts"]]
    response_ids = [p["functionResponse"]["id"] for p in response_event["content"]["parts"]]
    assert call_ids == response_ids == ["<call-1>", "model-given"]
    assert normalized[3]["invocationId"] == "<inv-2>"  # the second prompt's error event
    assert normalized[3]["errorCode"] == "model.failed"


def test_normalize_events_covers_ids_inside_requests() -> None:
    @tool(require_confirmation=True)
    def wipe() -> str:
        """Wipe."""
        return "wiped"

    model = ScriptedModel([[call("wipe")]])
    events = normalize_events(run_script(Agent("a", model, tools=[wipe]), "wipe"))
    call_event, request = events
    assert call_event["content"]["parts"][0]["functionCall"]["id"] == "<call-1>"
    req_call = request["content"]["parts"][0]["functionCall"]
    assert req_call["id"] == "<req-1>"
    assert req_call["args"]["originalFunctionCall"]["id"] == "<call-1>"
    assert list(request["actions"]["requestedToolConfirmations"]) == ["<call-1>"]
    assert request["longRunningToolIds"] == ["<req-1>"]


def test_deterministic_ids_and_run_script() -> None:
    model = ScriptedModel([[call("is_even", number=1)], "odd", "bye"])
    sessions = InMemorySessionService()
    with deterministic_ids(start_time=100.0, step=0.5):
        events = run_script(
            Agent("a", model, tools=Numbers().tools),
            ["is 1 even?", "bye"],
            session_service=sessions,
        )
    assert [e.id for e in events] == ["e-2", "e-3", "e-4", "e-6"]
    assert [e.invocation_id for e in events] == ["inv-1"] * 3 + ["inv-2"]
    assert events[0].get_function_calls()[0].id == "call-1"
    assert all(e.timestamp >= 100.0 for e in events)
    session = asyncio.run(
        sessions.get_session(app_name="test_app", user_id="test_user", session_id="test_session")
    )
    assert session is not None and len(session.events) == 6


@pytest.mark.parametrize("which", ["before_model_callback", "after_model_callback"])
def test_a_failing_model_callback_is_an_error_event_not_an_exception(which: str) -> None:
    def broken(ctx: Any, value: Any) -> None:
        raise RuntimeError("callback bug")

    agent = Agent("a", ScriptedModel(["hello"]), **{which: broken})
    events = list(Runner(agent, app_name="app").run(user_id="u", session_id="s", new_message="hi"))
    assert [e.error_code for e in events] == ["agent.callback_failed"]
    assert which in (events[0].error_message or "")
    # The exception's type, not its text (it may hold secrets): that goes to the log.
    assert "RuntimeError" in (events[0].error_message or "")
    assert "callback bug" not in (events[0].error_message or "")
