"""What a model is offered: ``available=`` asked once per turn, tools hidden by scopes,
and ``ToolSearch`` revealing tools from a large catalog, remembered by the session and
offered in a stable order. Scripted models; each test counts requests and runs."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agent_core import Agent, Event, Part, RunConfig, Runner, ScriptedModel, ToolSearch
from tooling import FunctionTool, ReadonlyContext, tool


def call(tool_name: str, /, **args: Any) -> list[Part]:
    return [Part.from_function_call(tool_name, args)]


async def collect(runner: Runner, config: RunConfig | None = None) -> list[Event]:
    return [
        e
        async for e in runner.run_async(
            user_id="u", session_id="s", new_message="go", run_config=config
        )
    ]


def codes(events: list[Event]) -> list[str | None]:
    return [
        r.response.get("error", {}).get("code") for e in events for r in e.get_function_responses()
    ]


async def test_available_is_asked_once_per_turn_and_hides_the_tool() -> None:
    asked: list[Any] = []
    runs: list[int] = []

    def open_hours(ctx: ReadonlyContext) -> bool:
        asked.append(dict(ctx.state))
        return bool(ctx.state.get("open"))

    @tool(available=open_hours)
    def order(item: str) -> str:
        """Order."""
        runs.append(1)
        return item

    @tool
    def menu() -> str:
        """Menu."""
        return "soup"

    model = ScriptedModel([call("order", item="soup"), "closed"])
    runner = Runner(Agent("a", model, tools=[order, menu]), app_name="o")
    events = await collect(runner)
    assert list(model.requests[0].tools) == ["menu"]
    assert codes(events) == ["tool.not_found"] and runs == []
    assert len(asked) == 2  # one per model turn

    await runner.session_service.create_session(
        app_name="o", user_id="u", session_id="s2", state={"open": True}
    )
    model2 = ScriptedModel([call("order", item="soup"), "ordered"])
    runner2 = Runner(
        Agent("a", model2, tools=[order, menu]),
        app_name="o",
        session_service=runner.session_service,
    )
    events = [e async for e in runner2.run_async(user_id="u", session_id="s2", new_message="go")]
    assert list(model2.requests[0].tools) == ["order", "menu"]
    assert codes(events) == [None] and runs == [1]


async def test_a_predicate_that_raises_or_hangs_hides_its_tool_for_the_turn() -> None:
    def broken(ctx: ReadonlyContext) -> bool:
        raise RuntimeError("boom")

    def hangs(ctx: ReadonlyContext) -> bool:
        time.sleep(2)
        return True

    async def hangs_async(ctx: ReadonlyContext) -> bool:
        await asyncio.sleep(30)
        return True

    tools = [
        FunctionTool(lambda: 1, name="a", available=broken),
        FunctionTool(lambda: 2, name="b", available=hangs),
        FunctionTool(lambda: 3, name="c", available=hangs_async),
        FunctionTool(lambda: 4, name="d"),
    ]
    model = ScriptedModel(["fine"])
    started = time.monotonic()
    events = await collect(
        Runner(Agent("x", model, tools=tools), app_name="o"), RunConfig(tool_timeout=0.3)
    )
    assert time.monotonic() - started < 1.8
    assert list(model.requests[0].tools) == ["d"]
    assert events[-1].content is not None and events[-1].content.text == "fine"


async def test_a_tool_whose_scopes_are_not_granted_is_not_offered_and_still_refused() -> None:
    runs: list[int] = []

    @tool(scopes=["admin"])
    def drop_table(name: str) -> str:
        """Drop a table."""
        runs.append(1)
        return name

    @tool
    def select() -> str:
        """Select."""
        return "rows"

    model = ScriptedModel([call("drop_table", name="users"), "no"])
    events = await collect(Runner(Agent("a", model, tools=[drop_table, select]), app_name="o"))
    assert list(model.requests[0].tools) == ["select"]
    assert codes(events) == ["tool.forbidden"] and runs == []

    model = ScriptedModel(["ok"])
    await collect(
        Runner(Agent("a", model, tools=[drop_table, select]), app_name="o"),
        RunConfig(granted_scopes=frozenset({"admin"})),
    )
    assert list(model.requests[0].tools) == ["drop_table", "select"]


def catalog() -> list[FunctionTool[..., Any]]:
    topics = [
        ("create_calendar_event", "Create an event in the user's calendar."),
        ("list_calendar_events", "List the events of the user's calendar for a day."),
        ("send_email", "Send an email message."),
        ("search_email", "Search the user's mailbox."),
        ("help", "Say what this assistant can do."),
    ]
    made = [FunctionTool(lambda: 1, name=n, description=d) for n, d in topics]
    made += [
        FunctionTool(lambda: 1, name=f"report_{i:02d}", description=f"Sales report number {i}.")
        for i in range(40)
    ]
    return made


async def test_tool_search_reveals_tools_for_the_session_in_a_stable_order() -> None:
    runs: list[str] = []

    @tool
    def create_calendar_event(title: str) -> str:
        """Create an event in the user's calendar."""
        runs.append(title)
        return "created"

    tools = [create_calendar_event if t.name == "create_calendar_event" else t for t in catalog()]
    search = ToolSearch(always=["help"], max_results=2)
    model = ScriptedModel(
        [
            call("search_tools", query="calendar event"),
            call("create_calendar_event", title="Lunch"),
            "Booked.",
        ]
    )
    runner = Runner(Agent("a", model, tools=tools, tool_search=search), app_name="o")
    events = await collect(runner)
    first, second, third = (list(r.tools) for r in model.requests)
    assert first == ["help", "search_tools"]
    assert second == ["create_calendar_event", "list_calendar_events", "help", "search_tools"]
    assert third == second
    found = events[1].get_function_responses()[0].response
    assert [t["name"] for t in found["tools"]] == [
        "create_calendar_event",
        "list_calendar_events",
    ]
    assert runs == ["Lunch"]

    # A later run on the session still offers what was revealed.
    model2 = ScriptedModel([call("search_tools", query="email"), "ok"])
    runner2 = Runner(
        Agent("a", model2, tools=tools, tool_search=search),
        app_name="o",
        session_service=runner.session_service,
    )
    [e async for e in runner2.run_async(user_id="u", session_id="s", new_message="mail")]
    assert list(model2.requests[0].tools) == second
    assert list(model2.requests[1].tools) == [
        "create_calendar_event",
        "list_calendar_events",
        "send_email",
        "search_email",
        "help",
        "search_tools",
    ]
