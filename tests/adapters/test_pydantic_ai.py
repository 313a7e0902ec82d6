"""Our tools in pydantic-ai, through an ``Agent`` run on its ``FunctionModel`` (the
model's turns are a function; the tool calls go through pydantic-ai's own tool path)."""

from __future__ import annotations

import json
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (
    ModelMessage,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from tests.adapters._ours import MEETING, blocking, lookup
from tooling.adapters import to_pydantic_ai


class Script:
    """A FunctionModel that makes the given calls, then answers; records what it saw."""

    def __init__(self, *calls: tuple[str, dict[str, Any]]) -> None:
        self.calls = list(calls)
        self.returns: list[ToolReturnPart] = []
        self.retries: list[Any] = []
        self.schemas: dict[str, Any] = {}

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.schemas = {t.name: t.parameters_json_schema for t in info.function_tools}
        for message in messages[-1:]:
            for part in message.parts:
                # A retry prompt: a RetryPromptPart, or (pydantic-ai 2) a return part
                # whose outcome is "retried".
                if isinstance(part, RetryPromptPart) or getattr(part, "retry", None):
                    self.retries.append(part)
                elif isinstance(part, ToolReturnPart):
                    self.returns.append(part)
        if self.calls:
            name, args = self.calls.pop(0)
            return ModelResponse(
                parts=[ToolCallPart(name, args, tool_call_id=f"p{len(self.calls)}")]
            )
        return ModelResponse(parts=[TextPart("done")])


async def run(script: Script, *tools: Any) -> None:
    agent = Agent(FunctionModel(script), tools=list(tools))
    result = await agent.run("go")
    assert result.output == "done"


async def test_the_context_is_hidden_and_cannot_be_spoofed() -> None:
    script = Script(("lookup", {"city": "Lisbon"}), ("lookup", {"city": "x", "tool_context": 1}))
    await run(script, to_pydantic_ai(lookup))
    assert set(script.schemas["lookup"]["properties"]) == {"city", "days"}
    assert script.returns[0].content["call"] == "p1"
    assert "tool_context" in str(script.retries[0].content)  # refused: a retry prompt


async def test_the_artifact_is_metadata_the_model_never_gets() -> None:
    script = Script(("lookup", {"city": "Porto", "days": 2}))
    await run(script, to_pydantic_ai(lookup))
    [returned] = script.returns
    assert returned.content == {"city": "Porto", "days": 2, "call": "p0"}
    assert returned.metadata == {"raw": ["Porto", "Porto"]}


async def test_a_failure_is_an_error_result_and_bad_arguments_a_retry_prompt() -> None:
    script = Script(
        ("lookup", {"city": "Atlantis"}),
        ("lookup", {"city": "crash"}),
        ("lookup", {"city": "Faro", "days": "many"}),
    )
    await run(script, to_pydantic_ai(lookup))
    told, crashed = script.returns
    assert told.content["error"]["code"] == "weather.unknown"
    assert crashed.content["error"]["code"] == "tool.failed"
    assert "abc123" not in json.dumps(crashed.content)
    [retry] = script.retries
    assert "days" in str(retry.content)


async def test_sync_tools_run_off_the_event_loop() -> None:
    script = Script(("blocking", {}))
    await MEETING.run(run(script, to_pydantic_ai(blocking)))
    assert script.returns[0].content == {"result": "released"}


async def test_an_optional_parameter_stays_optional() -> None:
    script = Script(("lookup", {"city": "Braga"}), ("lookup", {"city": "Braga", "days": None}))
    await run(script, to_pydantic_ai(lookup))
    assert script.schemas["lookup"]["required"] == ["city"]
    assert [r.content["days"] for r in script.returns] == [3, 3]


def test_flags_become_sequential_and_requires_approval() -> None:
    from tooling import tool

    @tool(read_only=True, concurrency_safe=True)
    def read() -> str:
        """Read."""
        return "x"

    @tool(require_confirmation=True)
    def delete() -> str:
        """Delete."""
        return "x"

    assert to_pydantic_ai(read).sequential is False
    assert to_pydantic_ai(delete).sequential is True
    assert to_pydantic_ai(delete).requires_approval is True


async def test_bad_arguments_past_the_retries_are_an_error_result_not_an_exception() -> None:
    bad = ("lookup", {"city": "Faro", "days": "many"})
    script = Script(bad, bad, bad, bad)
    await run(script, to_pydantic_ai(lookup))  # the run ends normally
    assert len(script.retries) >= 1
    assert script.returns[-1].content["error"]["code"] == "tool.invalid_arguments"


async def test_images_go_to_the_model_as_binary_content() -> None:
    from pydantic_ai.messages import BinaryContent, UserPromptPart

    from tooling import Blob, tool

    @tool
    def chart() -> dict:
        """Draw a chart."""
        return {"image": Blob("image/png", b"PNG")}

    seen: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("chart", {}, tool_call_id="c1")])
        seen.extend(p for p in messages[-1].parts if isinstance(p, UserPromptPart))
        return ModelResponse(parts=[TextPart("done")])

    await Agent(FunctionModel(model), tools=[to_pydantic_ai(chart)]).run("draw")
    [prompt] = seen
    [image] = [c for c in prompt.content if isinstance(c, BinaryContent)]
    assert (image.data, image.media_type) == (b"PNG", "image/png")
