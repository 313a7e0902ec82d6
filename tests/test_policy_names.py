"""Names every provider accepts: each exporter fits a tool's name to its provider's rule
with a map back, the scheduler and the loop take a provider's name for the tool, and
two tools one provider would see under one name are refused."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Mapping
from typing import Any

import pytest
from _providers import no_proxies
from hypothesis import given, settings
from hypothesis import strategies as st
from mcp.shared.tool_name_validation import validate_tool_name as mcp_validate

from agent_core import Agent, Part, Runner, ScriptedModel
from tests._mcp_helpers import ROOT
from tests._providers import DIALECTS, Call, Dialect, FakeServer, serving
from tooling import BaseTool, Scheduler, ToolCall, ToolContext, tool
from tooling.integration import provider_aliases, provider_name
from tooling.mcp import McpToolset, StdioServer

NAMED_SERVER = str(ROOT / "tests" / "_mcp_named_server.py")

# Each provider's rule, as its API reference states it (written out here, independently
# of the code under test).
OPENAI = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
ANTHROPIC = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
GEMINI = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_.:-]{0,63}$")

MCP_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./"


class Echo(BaseTool):
    """A hand-written tool answering with its own name: which tool ran."""

    description = "Say which tool ran."

    def __init__(self, name: str) -> None:
        self.name = name

    async def run(self, args: Mapping[str, Any] | str, ctx: ToolContext | None = None) -> dict:
        return {"ran": self.name}


def exported_names(t: BaseTool) -> dict[str, str]:
    return {
        "openai": t.to_openai()["function"]["name"],
        "openai-strict": t.to_openai(strict=True)["function"]["name"],
        "anthropic": t.to_anthropic()["name"],
        "gemini": t.to_gemini().name or "",
        "gemini-legacy": t.to_gemini(legacy=True).name or "",
        "mcp": t.to_mcp()["name"],
    }


def fits_its_provider(kind: str, name: str) -> bool:
    if kind.startswith("openai"):
        return OPENAI.fullmatch(name) is not None
    if kind == "anthropic":
        return ANTHROPIC.fullmatch(name) is not None
    if kind.startswith("gemini"):
        return GEMINI.fullmatch(name) is not None
    return mcp_validate(name).is_valid


names = st.text(MCP_CHARS, min_size=1, max_size=128)
prefixes = st.text(MCP_CHARS, min_size=1, max_size=40)


@settings(max_examples=150, deadline=None)
@given(name=names, prefix=st.none() | prefixes)
async def test_every_exporters_name_fits_its_provider_and_maps_back(
    name: str, prefix: str | None
) -> None:
    full = name if prefix is None else f"{prefix}_{name}"[:128]
    original = Echo(full).renamed(full)
    other = Echo("plain_neighbour")
    scheduler = Scheduler([original, other])
    aliases = provider_aliases([full, other.name])
    for kind, wire in exported_names(original).items():
        assert fits_its_provider(kind, wire), (kind, wire)
        assert aliases[wire] == full
        [response] = await scheduler.dispatch([ToolCall("c1", wire, {})])
        assert response.error is None, response.response
        assert response.response == {"ran": full}


@settings(max_examples=100, deadline=None)
@given(first=names, second=names)
def test_two_names_never_meet_at_a_provider(first: str, second: str) -> None:
    if first == second:
        return
    for provider in ("openai", "anthropic", "gemini", "mcp"):
        assert provider_name(first, provider) != provider_name(second, provider)


def test_names_that_fit_are_left_as_they_are() -> None:
    @tool
    def get_weather(city: str) -> str:
        """Weather."""
        return city

    assert set(exported_names(get_weather).values()) == {"get_weather"}
    assert exported_names(Echo("github.issues-list"))["gemini"] == "github.issues-list"
    assert exported_names(Echo("github.issues-list"))["mcp"] == "github.issues-list"


def test_two_tools_one_provider_would_confuse_are_refused_when_the_agent_is_built() -> None:
    dotted = Echo("a.b")
    twin = Echo(provider_name("a.b", "openai"))  # the name OpenAI is given for "a.b"
    with pytest.raises(ValueError, match="would both be named"):
        Agent("a", ScriptedModel(["hi"]), tools=[dotted, twin])
    with pytest.raises(ValueError, match="would both be named"):
        Scheduler([dotted, twin])


async def test_the_loop_maps_a_providers_name_back_and_stores_the_tools_own() -> None:
    long_name = "crm.accounts/" + "x" * 90
    runs: list[str] = []

    class Counting(Echo):
        async def run(self, args: Mapping[str, Any] | str, ctx: ToolContext | None = None) -> dict:
            runs.append(self.name)
            return {"ran": self.name}

    wire = provider_name(long_name, "openai")
    model = ScriptedModel([[Part.from_function_call(wire, {})], "done"])
    runner = Runner(Agent("a", model, tools=[Counting(long_name)]), app_name="names")
    events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message="go")]
    assert runs == [long_name]
    assert len(model.requests) == 2
    [call] = events[0].get_function_calls()
    [response] = events[1].get_function_responses()
    assert call.name == long_name and response.name == long_name
    assert response.response == {"ran": long_name}


# -- MCP's names through a real MCP server, to each provider's API ---------------------------


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeServer]:
    no_proxies(monkeypatch)
    with serving() as fake:
        yield fake


@pytest.mark.parametrize("dialect", DIALECTS, ids=lambda d: d.name)
async def test_mcp_names_with_dots_slashes_and_prefixes_reach_every_provider(
    api: FakeServer, dialect: Dialect
) -> None:
    toolset = McpToolset(
        StdioServer(sys.executable, [NAMED_SERVER], cwd=ROOT), tool_name_prefix="corp"
    )
    model = dialect.model(api)
    try:
        listed = await toolset.get_tools_with_prefix()
        own = {t.name for t in listed}
        assert "corp_github.issues/create" in own
        long_name = next(n for n in own if len(n) > 64)
        kind = "anthropic" if dialect.name == "anthropic" else "openai"
        wire = provider_name(long_name, kind)
        api.reply(dialect.turn(calls=[Call("call_1", wire, '{"title": "Bug"}')]))
        api.reply(dialect.turn(text="Filed."))
        runner = Runner(Agent("a", model, tools=[toolset]), app_name="names")
        events = [e async for e in runner.run_async(user_id="u", session_id="s", new_message="go")]

        first, second = api.requests[0]["body"], api.requests[1]["body"]
        declared = dialect.tools(first)
        assert len(declared) == 3
        assert all(OPENAI.fullmatch(n) for n in declared)
        assert wire in declared
        [response] = events[1].get_function_responses()
        remote = long_name.removeprefix("corp_")
        assert response.name == long_name
        assert response.response == {"called": remote, "args": {"title": "Bug"}}
        # The history sent back names the call as the provider knows it.
        assert [name for _, name, _ in dialect.calls(second)] == [wire]
        assert events[-1].content is not None and events[-1].content.text == "Filed."
    finally:
        await model.aclose()  # type: ignore[attr-defined]
        await toolset.close()
