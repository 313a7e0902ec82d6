"""Several agents: transfer (builtin tool and custom tools), escalate, skip_summarization,
other agents' turns as context, AgentTool, and toolsets."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from pydantic import BaseModel, Field

from agent_core import (
    Agent,
    AgentTool,
    Content,
    Event,
    InMemorySessionService,
    Part,
    Runner,
    ScriptedModel,
)
from agent_core.testing import run_script
from tooling import BaseTool, BaseToolset, FunctionTool, ReadonlyContext, ToolContext, tool

APP, USER, SID = "app", "u1", "s1"


def call(name: str, id: str | None = None, **args: Any) -> Part:
    return Part.from_function_call(name, args, id=id)


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


def texts(events: list[Event]) -> list[tuple[str, str]]:
    return [
        (e.author, e.content.text)
        for e in events
        if e.content is not None and e.content.text and not e.partial
    ]


def responses(event: Event) -> list[dict[str, Any]]:
    return [r.response for r in event.get_function_responses()]


def sent_text(model: ScriptedModel, turn: int) -> str:
    return str([c.to_dict() for c in model.requests[turn].contents])


# -- transfer ----------------------------------------------------------------------------


def support_desk(model: ScriptedModel, **root_kw: Any) -> Agent:
    billing = Agent("billing", model, description="Questions about invoices and payments.")
    shipping = Agent("shipping", model, description="Where a parcel is.")
    return Agent("desk", model, sub_agents=[billing, shipping], **root_kw)


async def test_transfer_hands_the_conversation_over_until_it_is_handed_back() -> None:
    model = ScriptedModel(
        {
            "desk": [[call("transfer_to_agent", agent_name="billing")], "Desk here again."],
            "billing": [
                "Your invoice is paid.",
                "It was paid on Monday.",
                [call("transfer_to_agent", agent_name="desk")],
            ],
        }
    )
    runner = Runner(support_desk(model), app_name=APP)

    events = await collect(runner, "is my invoice paid?")
    assert [e.author for e in events] == ["desk", "desk", "billing"]
    assert events[1].actions.transfer_to_agent == "billing"
    assert responses(events[1]) == [{"status": "transferred", "agent": "billing"}]
    assert texts(events) == [("billing", "Your invoice is paid.")]

    # The sub-agent keeps the conversation in the next run.
    events = await collect(runner, "when?")
    assert texts(events) == [("billing", "It was paid on Monday.")]

    # Until it transfers back (to its parent).
    events = await collect(runner, "something else")
    assert [e.author for e in events] == ["billing", "billing", "desk"]
    assert texts(events) == [("desk", "Desk here again.")]
    assert [r.agent_name for r in model.requests] == [
        "desk",
        "billing",
        "billing",
        "billing",
        "desk",
    ]

    # Each agent is offered transfer_to_agent, and told whom it can hand to.
    desk_request, billing_request = model.requests[0], model.requests[1]
    assert "transfer_to_agent" in desk_request.tools
    assert "billing: Questions about invoices" in desk_request.system_instruction
    assert "shipping: Where a parcel is." in desk_request.system_instruction
    assert "desk" in billing_request.system_instruction
    assert "shipping" not in billing_request.system_instruction


async def test_other_agents_turns_are_sent_as_context() -> None:
    model = ScriptedModel(
        {
            "desk": [[call("transfer_to_agent", agent_name="billing")], "ok"],
            "billing": ["The total is 42 EUR.", [call("transfer_to_agent", agent_name="desk")]],
        }
    )
    runner = Runner(support_desk(model), app_name=APP)
    await collect(runner, "invoice total?")
    await collect(runner, "thanks, back to the desk")

    billing_sees = model.requests[1].contents
    assert billing_sees[0].text == "invoice total?"
    # The desk's transfer is told to billing in the user's voice, as context.
    assert all(c.role == "user" for c in billing_sees)
    context = " ".join(c.text for c in billing_sees[1:])
    assert "[desk]" in context and "transfer_to_agent" in context and "billing" in context
    assert not any(p.function_call for c in billing_sees for p in c.parts)

    desk_sees = model.requests[3].contents
    desk_text = " ".join(c.text for c in desk_sees)
    assert "The total is 42 EUR." in desk_text and "[billing]" in desk_text
    # The desk's own turns keep their form.
    assert desk_sees[1].role == "model" and desk_sees[1].parts[0].function_call is not None


async def test_a_custom_tool_can_transfer() -> None:
    def route(topic: str, tool_context: ToolContext) -> str:
        """Route the user to the right team."""
        tool_context.actions.transfer_to_agent = "shipping" if topic == "parcel" else "billing"
        return "routed"

    model = ScriptedModel(
        {"desk": [[call("route", topic="parcel")]], "shipping": ["Your parcel is in Lyon."]}
    )
    runner = Runner(support_desk(model, tools=[route]), app_name=APP)
    events = await collect(runner, "where is my parcel?")
    assert events[1].actions.transfer_to_agent == "shipping"
    assert texts(events) == [("shipping", "Your parcel is in Lyon.")]


async def test_transfer_to_an_unknown_agent_is_an_error_event() -> None:
    model = ScriptedModel({"desk": [[call("transfer_to_agent", agent_name="legal")], "never"]})
    runner = Runner(support_desk(model), app_name=APP)
    events = await collect(runner, "sue them")
    assert events[-1].error_code == "agent.unknown_agent"
    assert "legal" in (events[-1].error_message or "")
    assert len(model.requests) == 1
    session = await stored(runner)
    assert session[-1].error_code == "agent.unknown_agent"
    # The stored response event does not claim a transfer, and the desk still answers.
    assert not any(e.actions.transfer_to_agent for e in session)


async def test_escalate_returns_control_to_the_parent() -> None:
    def give_up(reason: str, tool_context: ToolContext) -> str:
        """Hand the problem back to the parent agent."""
        tool_context.actions.escalate = True
        return "escalated"

    model = ScriptedModel(
        {
            "desk": [[call("transfer_to_agent", agent_name="billing")], "Desk: I'll take it."],
            "billing": [[call("give_up", reason="refund")]],
        }
    )
    billing = Agent("billing", model, tools=[give_up])
    desk = Agent("desk", model, sub_agents=[billing])
    runner = Runner(desk, app_name=APP)
    events = await collect(runner, "refund please")
    assert [e.author for e in events] == ["desk", "desk", "billing", "billing", "desk"]
    assert events[3].actions.escalate
    assert texts(events) == [("desk", "Desk: I'll take it.")]


async def test_skip_summarization_makes_the_response_final() -> None:
    def show_table(tool_context: ToolContext) -> dict[str, Any]:
        """Show a table to the user as is."""
        tool_context.actions.skip_summarization = True
        return {"rows": [[1, 2], [3, 4]]}

    model = ScriptedModel([[call("show_table")], "unused"])
    runner = Runner(Agent("a", model, tools=[show_table]), app_name=APP)
    events = await collect(runner, "table")
    assert len(events) == 2 and len(model.requests) == 1
    assert events[-1].actions.skip_summarization and events[-1].is_final_response()
    assert responses(events[-1]) == [{"rows": [[1, 2], [3, 4]]}]


# -- AgentTool ---------------------------------------------------------------------------


def researcher(turns: list[Any], **kw: Any) -> Agent:
    def note(fact: str, tool_context: ToolContext) -> str:
        """Record a fact in the state."""
        seen = tool_context.state.get("topic")
        tool_context.state["facts"] = [*tool_context.state.get("facts", []), fact]
        tool_context.state["user:researched"] = True
        tool_context.state["temp:scratch"] = "never leaves the child"
        return f"noted about {seen}"

    return Agent(
        "researcher",
        ScriptedModel(turns),
        description="Looks things up.",
        instruction="Research {topic}.",
        tools=[note],
        **kw,
    )


async def test_agent_tool_runs_the_child_in_its_own_session() -> None:
    child = researcher([[call("note", fact="cats purr")], "Cats purr."])
    parent_model = ScriptedModel(
        [[call("researcher", request="tell me about cats")], "Researcher says: cats purr."]
    )
    parent = Agent("lead", parent_model, tools=[AgentTool(child)])
    sessions = InMemorySessionService()
    await sessions.create_session(
        app_name=APP, user_id=USER, session_id=SID, state={"topic": "cats", "facts": ["old"]}
    )
    runner = Runner(parent, app_name=APP, session_service=sessions)

    events = await collect(runner, "research cats")

    assert responses(events[1]) == [{"result": "Cats purr."}]
    # The child's state changes flow back into the parent's delta (temp keys do not).
    assert events[1].actions.state_delta == {
        "facts": ["old", "cats purr"],
        "user:researched": True,
    }
    assert texts(events) == [("lead", "Researcher says: cats purr.")]
    # The child was seeded with the parent's state and saw only its own request.
    child_model = child.model
    assert isinstance(child_model, ScriptedModel)
    assert child_model.requests[0].system_instruction == "Research cats."
    assert [c.text for c in child_model.requests[0].contents] == ["tell me about cats"]
    child_response = child_model.requests[1].contents[2].parts[0].function_response
    assert child_response is not None
    assert child_response.response == {"result": "noted about cats"}
    parent_events = await stored(runner)
    assert responses(parent_events[2]) == [{"result": "Cats purr."}]
    # The parent's session holds only the parent's events.
    assert {e.author for e in parent_events} == {"user", "lead"}
    session = await sessions.get_session(app_name=APP, user_id=USER, session_id=SID)
    assert session is not None and session.state["facts"] == ["old", "cats purr"]
    assert "temp:scratch" not in session.state
    # The tool's declaration: one string parameter.
    declared = parent_model.requests[0].tools["researcher"]
    assert declared.parameters_json_schema["required"] == ["request"]
    assert declared.description == "Looks things up."


async def test_agent_tool_with_an_input_schema() -> None:
    class Query(BaseModel):
        city: str = Field(description="The city.")
        days: int = 3

    child_model = ScriptedModel(["Sunny for 2 days in Oslo."])
    child = Agent("forecaster", child_model, input_schema=Query)
    tool_ = AgentTool(child)
    schema = tool_.parameters_json_schema
    assert schema["required"] == ["city"]
    assert set(schema["properties"]) == {"city", "days"}
    assert "title" not in schema

    parent_model = ScriptedModel(
        [[call("forecaster", city="Oslo", days=2), call("forecaster", town="Oslo")], "Sunny."]
    )
    events = await collect(
        Runner(Agent("lead", parent_model, tools=[tool_]), app_name=APP), "weather?"
    )
    good, bad = responses(events[1])
    assert good == {"result": "Sunny for 2 days in Oslo."}
    assert bad["error"]["code"] == "tool.invalid_arguments"
    # The child got the validated input as JSON.
    sent = child_model.requests[0].contents[0].text
    assert Query.model_validate_json(sent) == Query(city="Oslo", days=2)


async def test_agent_tool_with_skip_summarization() -> None:
    child = Agent("poet", ScriptedModel(["Roses are red."]))
    parent_model = ScriptedModel([[call("poet", request="a poem")], "unused"])
    parent = Agent("lead", parent_model, tools=[AgentTool(child, skip_summarization=True)])
    events = await collect(Runner(parent, app_name=APP), "poem please")
    assert len(events) == 2 and len(parent_model.requests) == 1
    assert responses(events[-1]) == [{"result": "Roses are red."}]
    assert events[-1].is_final_response()


async def test_agent_tool_failure_is_a_tool_error_the_model_sees() -> None:
    child = Agent("broken", ScriptedModel([]))  # the child's script is empty
    parent_model = ScriptedModel([[call("broken", request="help")], "It failed."])
    events = await collect(
        Runner(Agent("lead", parent_model, tools=[AgentTool(child)]), app_name=APP),
        "go",
    )
    (failed,) = responses(events[1])
    assert failed["status"] == "error" and failed["error"]["code"] == "tool.failed"
    assert texts(events) == [("lead", "It failed.")]


def test_agent_tool_calls_leave_no_threads_behind() -> None:
    def shout(text: str) -> str:
        """A sync tool: runs on a worker thread."""
        return text.upper()

    rounds = 5
    child_turns: list[Any] = []
    for _ in range(rounds):
        child_turns += [[call("shout", text="hi")], "HI"]
    child = Agent("shouter", ScriptedModel(child_turns), tools=[shout])
    parent_turns: list[Any] = []
    for _ in range(rounds):
        parent_turns += [[call("shouter", request="shout hi")], "done"]
    parent = Agent("lead", ScriptedModel(parent_turns), tools=[AgentTool(child)])

    run_script(parent, "warm up")  # the first round may start shared threads
    before = set(threading.enumerate())

    def new_workers() -> list[threading.Thread]:
        # Only this project's worker threads: unrelated threads may come and go meanwhile.
        return [
            t
            for t in set(threading.enumerate()) - before
            if t.name.startswith(("agent-", "tooling"))
        ]

    run_script(parent, ["again"] * (rounds - 1))
    deadline = time.monotonic() + 5
    while new_workers() and time.monotonic() < deadline:
        time.sleep(0.01)  # stopped idle workers exit on their own
    assert new_workers() == []


def test_closing_the_runner_closes_toolsets_behind_agent_tools() -> None:
    child_toolset = WebToolset()
    child = Agent("child", ScriptedModel(["hi"]), tools=[child_toolset])
    parent = Agent("lead", ScriptedModel(["hello"]), tools=[AgentTool(child)])
    with Runner(parent, app_name=APP) as runner:
        assert runner.toolsets() == [child_toolset]
    assert child_toolset.closed == 1


# -- toolsets ----------------------------------------------------------------------------


def _tools() -> list[BaseTool]:
    def search(query: str) -> str:
        """Search."""
        return f"found {query}"

    def fetch(url: str) -> str:
        """Fetch."""
        return f"fetched {url}"

    def delete(url: str) -> str:
        """Delete."""
        return f"deleted {url}"

    return [FunctionTool(search), FunctionTool(fetch), FunctionTool(delete)]


class WebToolset(BaseToolset):
    def __init__(self, fail: bool = False, **kw: Any) -> None:
        super().__init__(**kw)
        self.fail = fail
        self.contexts: list[ReadonlyContext | None] = []
        self.closed = 0

    async def get_tools(self, readonly_context: ReadonlyContext | None = None) -> list[BaseTool]:
        self.contexts.append(readonly_context)
        if self.fail:
            raise ConnectionError("server unreachable")
        return _tools()

    async def close(self) -> None:
        self.closed += 1


async def test_toolset_filter_list_and_prefix() -> None:
    toolset = WebToolset(tool_filter=["search", "fetch"], tool_name_prefix="web")
    model = ScriptedModel(
        [[call("web_search", query="cats"), call("web_delete", url="x")], "Found cats."]
    )
    runner = Runner(Agent("a", model, tools=[toolset]), app_name=APP)
    events = await collect(runner, "search cats")
    assert sorted(model.requests[0].tools) == ["web_fetch", "web_search"]
    found, missing = responses(events[1])
    assert found == {"result": "found cats"}
    assert missing["error"]["code"] == "tool.not_found"
    # The context the toolset got describes the invocation.
    ctx = toolset.contexts[0]
    assert ctx is not None
    assert (ctx.agent_name, ctx.user_id, ctx.session_id) == ("a", USER, SID)
    assert ctx.invocation_id == events[0].invocation_id


async def test_toolset_filter_predicate_sees_the_context() -> None:
    def allowed(t: BaseTool, ctx: ReadonlyContext | None) -> bool:
        return t.name != "delete" or (ctx is not None and ctx.state.get("user:admin") is True)

    toolset = WebToolset(tool_filter=allowed)
    model = ScriptedModel(["hi", "hi admin"])
    sessions = InMemorySessionService()
    runner = Runner(Agent("a", model, tools=[toolset]), app_name=APP, session_service=sessions)
    await collect(runner, "hello")
    await sessions.create_session(
        app_name=APP, user_id="boss", session_id="s2", state={"user:admin": True}
    )
    await collect(runner, "hello", user_id="boss", session_id="s2")
    assert sorted(model.requests[0].tools) == ["fetch", "search"]
    assert sorted(model.requests[1].tools) == ["delete", "fetch", "search"]


async def test_toolset_tools_are_listed_once_per_invocation() -> None:
    toolset = WebToolset()
    model = ScriptedModel(
        [[call("search", query="a")], [call("fetch", url="b")], "done", "second run"]
    )
    runner = Runner(Agent("a", model, tools=[toolset]), app_name=APP)
    await collect(runner, "one")
    assert len(toolset.contexts) == 1  # three model turns, one listing
    await collect(runner, "two")
    assert len(toolset.contexts) == 2
    first, second = toolset.contexts
    assert first is not None and second is not None
    assert first.invocation_id != second.invocation_id


async def test_duplicate_tool_names_from_a_toolset_are_an_error_event() -> None:
    def search(query: str) -> str:
        """Another search."""
        return "mine"

    model = ScriptedModel(["never"])
    runner = Runner(Agent("a", model, tools=[search, WebToolset()]), app_name=APP)
    (event,) = await collect(runner, "go")
    assert event.error_code == "agent.duplicate_tool"
    assert "search" in (event.error_message or "")
    assert model.requests == []


async def test_a_failing_toolset_is_a_visible_error_event() -> None:
    model = ScriptedModel(["never"])
    runner = Runner(Agent("a", model, tools=[WebToolset(fail=True)]), app_name=APP)
    (event,) = await collect(runner, "go")
    assert event.error_code == "agent.toolset_failed"
    assert "WebToolset" in (event.error_message or "")
    # Its type is told; its text (which may hold secrets) goes to the log only.
    assert "ConnectionError" in (event.error_message or "")
    assert "server unreachable" not in (event.error_message or "")
    assert model.requests == []
    assert (await stored(runner))[-1].error_code == "agent.toolset_failed"


def test_toolsets_close_with_a_sync_runner() -> None:
    sub_toolset, root_toolset = WebToolset(), WebToolset()
    sub = Agent("sub", ScriptedModel([]), tools=[sub_toolset])
    root = Agent("root", ScriptedModel(["hi"]), tools=[root_toolset], sub_agents=[sub])
    with Runner(root, app_name=APP) as runner:
        assert [
            e.content.text
            for e in runner.run(user_id=USER, session_id=SID, new_message="x")
            if e.content
        ] == ["hi"]
        assert root_toolset.closed == 0
    assert (root_toolset.closed, sub_toolset.closed) == (1, 1)
    runner.close()  # closing twice closes once
    assert root_toolset.closed == 1


async def test_toolsets_close_with_an_async_runner() -> None:
    class BrokenClose(WebToolset):
        async def close(self) -> None:
            raise RuntimeError("cannot close")

    toolset = WebToolset()
    async with Runner(
        Agent("a", ScriptedModel(["hi"]), tools=[BrokenClose(), toolset]), app_name=APP
    ) as runner:
        await collect(runner, "go")
    # One toolset failing to close does not keep the others open.
    assert toolset.closed == 1


@pytest.mark.parametrize("bad", ["with space", "x" * 130])
async def test_a_prefix_making_an_invalid_name_is_an_error_event(bad: str) -> None:
    model = ScriptedModel(["never"])
    runner = Runner(Agent("a", model, tools=[WebToolset(tool_name_prefix=bad)]), app_name=APP)
    (event,) = await collect(runner, "go")
    assert event.error_code == "agent.toolset_failed"


async def test_a_tool_decorated_long_running_in_a_toolset_keeps_its_flags() -> None:
    @tool(long_running=True)
    def start() -> None:
        """Start."""

    class Jobs(BaseToolset):
        async def get_tools(
            self, readonly_context: ReadonlyContext | None = None
        ) -> list[BaseTool]:
            return [start]

    model = ScriptedModel([[call("jobs_start")]])
    runner = Runner(Agent("a", model, tools=[Jobs(tool_name_prefix="jobs")]), app_name=APP)
    (event,) = await collect(runner, "go")
    assert event.long_running_tool_ids == {event.get_function_calls()[0].id}
