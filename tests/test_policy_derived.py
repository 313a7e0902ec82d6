"""Tools made from tools: ``bind`` (values the model never sees and cannot spoof),
``transform`` (renamed, redescribed, hidden parameters) and ``FunctionTool.from_schema``
(a schema validated with jsonschema)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_core import Agent, Part, Runner, ScriptedModel
from tooling import (
    FunctionTool,
    Scheduler,
    SimpleToolContext,
    ToolCall,
    ToolContext,
    ToolError,
    tool,
)


@tool
def search_orders(customer_id: str, query: str, limit: int = 10) -> dict:
    """Search a customer's orders.

    Args:
        customer_id: Whose orders.
        query: What to look for.
        limit: At most this many.
    """
    return {"customer": customer_id, "query": query, "limit": limit}


async def one(t: Any, args: Any, ctx: ToolContext | None = None) -> Any:
    def factory(call: ToolCall) -> ToolContext:
        return ctx if ctx is not None else SimpleToolContext(caller="t", function_call_id=call.id)

    [response] = await Scheduler([t]).dispatch(
        [ToolCall("c1", t.name, args)], context_factory=factory
    )
    return response


async def test_a_bound_value_is_not_in_the_schema_and_cannot_be_spoofed() -> None:
    mine = search_orders.bind(customer_id="c-42")
    assert list(mine.parameters_json_schema["properties"]) == ["query", "limit"]
    assert mine.parameters_json_schema["required"] == ["query"]
    assert "customer_id" not in str(mine.to_openai(strict=True))
    ok = await one(mine, {"query": "shoes"})
    assert ok.response == {"customer": "c-42", "query": "shoes", "limit": 10}
    spoofed = await one(mine, {"query": "shoes", "customer_id": "c-1"})
    assert spoofed.error is not None and spoofed.error.code == "tool.invalid_arguments"
    assert spoofed.response["error"]["details"][0]["loc"] == ["customer_id"]
    # The original is untouched.
    assert "customer_id" in search_orders.parameters_json_schema["properties"]


async def test_a_bound_callable_is_given_the_context_and_may_be_async() -> None:
    async def from_session(ctx: ToolContext) -> str:
        return str(ctx.state["user:customer"])

    mine = search_orders.bind(customer_id=from_session, limit=lambda ctx: 3)
    ctx = SimpleToolContext(caller="t", state={"user:customer": "c-7"}, function_call_id="c1")
    response = await one(mine, {"query": "hats"}, ctx)
    assert response.response == {"customer": "c-7", "query": "hats", "limit": 3}


async def test_a_failing_bound_callable_is_that_calls_tool_failed() -> None:
    def broken(ctx: ToolContext) -> str:
        raise KeyError("no customer")

    response = await one(search_orders.bind(customer_id=broken), {"query": "x"})
    assert response.error is not None and response.error.code == "tool.failed"


def test_binding_an_unknown_parameter_is_an_error() -> None:
    with pytest.raises(ValueError, match="cannot bind"):
        search_orders.bind(nope=1)


async def test_transform_renames_redescribes_and_hides() -> None:
    shown = search_orders.transform(
        name="find_orders",
        description="Find orders.",
        rename={"query": "text"},
        describe={"query": "Words in the order."},
        hide={"customer_id": "c-9", "limit": 5},
    )
    schema = shown.parameters_json_schema
    assert shown.name == "find_orders" and shown.description == "Find orders."
    assert schema["properties"] == {
        "text": {"description": "Words in the order.", "type": "string"}
    }
    assert schema["required"] == ["text"]
    assert shown.to_anthropic()["name"] == "find_orders"
    response = await one(shown, {"text": "boots"})
    assert response.name == "find_orders"
    assert response.response == {"customer": "c-9", "query": "boots", "limit": 5}
    refused = await one(shown, {"query": "boots"})
    assert refused.error is not None and refused.error.code == "tool.invalid_arguments"


def test_hiding_a_parameter_without_a_default_needs_a_value() -> None:
    assert (
        "limit" not in search_orders.transform(hide=["limit"]).parameters_json_schema["properties"]
    )
    with pytest.raises(ValueError, match="no default"):
        search_orders.transform(hide=["query"])


@settings(max_examples=60, deadline=None)
@given(
    hidden=st.sets(st.sampled_from(["customer_id", "query", "limit"])),
    renamed=st.booleans(),
)
async def test_a_derived_schema_is_the_original_less_what_is_hidden(
    hidden: set[str], renamed: bool
) -> None:
    values = {"customer_id": "c", "query": "q", "limit": 2}
    rename = {n: f"new_{n}" for n in values if n not in hidden} if renamed else {}
    shown = search_orders.transform(hide={n: values[n] for n in hidden}, rename=rename)
    expected = [rename.get(n, n) for n in values if n not in hidden]
    assert list(shown.parameters_json_schema["properties"]) == expected
    sent = {rename.get(n, n): v for n, v in values.items() if n not in hidden}
    assert (await one(shown, sent)).response == {
        "customer": "c",
        "query": "q",
        "limit": 2,
    }


SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}, "days": {"type": "integer", "minimum": 1}},
    "required": ["city"],
    "additionalProperties": False,
}


async def test_from_schema_validates_with_jsonschema_and_runs_in_a_loop() -> None:
    runs: list[dict[str, Any]] = []

    def forecast(city: str, days: int = 1) -> dict:
        runs.append({"city": city, "days": days})
        return {"city": city, "days": days, "sky": "clear"}

    made = FunctionTool.from_schema("forecast", "A weather forecast.", SCHEMA, forecast)
    assert made.to_openai()["function"]["parameters"] == SCHEMA
    bad = await one(made, {"city": "Lisbon", "days": 0})
    assert bad.error is not None and bad.error.code == "tool.invalid_arguments"
    assert bad.response["error"]["details"][0]["loc"] == ["days"]
    extra = await one(made, {"city": "Lisbon", "hours": 3})
    assert extra.error is not None and extra.error.code == "tool.invalid_arguments"

    model = ScriptedModel(
        [[Part.from_function_call("forecast", {"city": "Porto", "days": 2})], "Clear."]
    )
    runner = Runner(Agent("a", model, tools=[made]), app_name="d")
    events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message="?")]
    assert events[1].get_function_responses()[0].response["sky"] == "clear"
    assert runs == [{"city": "Porto", "days": 2}] and len(model.requests) == 2


def test_from_schema_refuses_a_schema_that_is_not_valid() -> None:
    with pytest.raises(ValueError, match="not valid"):
        FunctionTool.from_schema("f", "F.", {"type": "object", "properties": 3}, lambda: 1)


async def test_a_schema_built_tool_bounds_argument_text_as_every_tool_does() -> None:
    open_schema = {"type": "object", "properties": {"a": {}}}
    made = FunctionTool.from_schema("echo", "Echo.", open_schema, lambda **kw: kw)
    deep = '{"a": ' + "[" * 100 + "]" * 100 + "}"
    with pytest.raises(ToolError) as raised:
        made.check_arguments(deep)
    assert raised.value.code == "tool.invalid_arguments"
    assert made.check_arguments('{"a": [1]}').values == {"a": [1]}
