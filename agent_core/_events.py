"""``Event``: one thing that happened in a session, and ``EventActions``, what it changes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from tooling import ToolProgress

from ._content import Content, FunctionCall, FunctionResponse
from ._ids import new_id, now

__all__ = ["Event", "EventActions", "UsageMetadata"]

# Event.usage keys and their names in Gemini's usageMetadata.
_USAGE_WIRE = (("input_tokens", "promptTokenCount"), ("output_tokens", "candidatesTokenCount"))


@dataclass(frozen=True, slots=True)
class UsageMetadata:
    """A model turn's token count under google-genai's (and google-adk's) names: what
    ``Event.usage_metadata`` and ``LlmResponse.usage_metadata`` give."""

    prompt_token_count: int | None = None
    candidates_token_count: int | None = None
    total_token_count: int | None = None

    @classmethod
    def from_usage(cls, usage: dict[str, int] | None) -> UsageMetadata | None:
        """Our ``{"input_tokens", "output_tokens"}`` count as google-adk's (None for None)."""
        if usage is None:
            return None
        prompt, candidates = usage.get("input_tokens"), usage.get("output_tokens")
        total = None if prompt is None and candidates is None else (prompt or 0) + (candidates or 0)
        return cls(prompt, candidates, total)


@dataclass(slots=True)
class EventActions:
    """What an event changes or asks for.

    ``state_delta`` and ``artifact_delta`` are applied to the session when the event is
    stored; ``transfer_to_agent`` hands the conversation over; ``escalate`` returns
    control to the parent agent; ``skip_summarization`` makes a tool response final;
    ``requested_tool_confirmations`` / ``requested_auth_configs`` map a function call id
    to what the user is asked for.
    """

    skip_summarization: bool = False
    state_delta: dict[str, Any] = field(default_factory=dict)
    artifact_delta: dict[str, int] = field(default_factory=dict)
    transfer_to_agent: str | None = None
    escalate: bool = False
    requested_tool_confirmations: dict[str, dict[str, Any]] = field(default_factory=dict)
    requested_auth_configs: dict[str, dict[str, Any]] = field(default_factory=dict)

    def is_empty(self) -> bool:
        """True when the actions change and ask for nothing."""
        return not (
            self.skip_summarization
            or self.state_delta
            or self.artifact_delta
            or self.transfer_to_agent
            or self.escalate
            or self.requested_tool_confirmations
            or self.requested_auth_configs
        )

    def to_dict(self) -> dict[str, Any]:
        """The wire shape (camelCase), leaving out what is unset."""
        out: dict[str, Any] = {}
        if self.skip_summarization:
            out["skipSummarization"] = True
        if self.state_delta:
            out["stateDelta"] = self.state_delta
        if self.artifact_delta:
            out["artifactDelta"] = self.artifact_delta
        if self.transfer_to_agent:
            out["transferToAgent"] = self.transfer_to_agent
        if self.escalate:
            out["escalate"] = True
        if self.requested_tool_confirmations:
            out["requestedToolConfirmations"] = self.requested_tool_confirmations
        if self.requested_auth_configs:
            out["requestedAuthConfigs"] = self.requested_auth_configs
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EventActions:
        """Read the wire shape (camelCase), as :meth:`to_dict` writes it."""
        return cls(
            skip_summarization=bool(data.get("skipSummarization", False)),
            state_delta=dict(data.get("stateDelta") or {}),
            artifact_delta=dict(data.get("artifactDelta") or {}),
            transfer_to_agent=data.get("transferToAgent"),
            escalate=bool(data.get("escalate", False)),
            requested_tool_confirmations=dict(data.get("requestedToolConfirmations") or {}),
            requested_auth_configs=dict(data.get("requestedAuthConfigs") or {}),
        )


@dataclass(slots=True)
class Event:
    """One entry of a session: a message, a model turn, tool responses, progress or an error.

    ``author`` is ``"user"`` or the agent's name. ``partial`` events (streamed text,
    intermediate tool responses) and ``progress`` events are shown as they happen but
    never sent back to the model. ``long_running_tool_ids`` names calls still pending.
    ``usage`` is a model turn's token count (``{"input_tokens": n, "output_tokens": m}``),
    when the model reported it; on the wire it is Gemini's ``usageMetadata``
    (``promptTokenCount``, ``candidatesTokenCount``). ``citations`` are the sources a
    model turn cites, from any provider's grounding or annotations: ``[{"title", "uri",
    "start", "end"}]`` (``start``/``end``: the cited span's offsets in the turn's text, as
    the provider reports them, when it does). ``output`` is an ``output_schema`` agent's
    validated final answer.
    """

    author: str
    content: Content | None = None
    invocation_id: str = ""
    actions: EventActions = field(default_factory=EventActions)
    id: str = field(default_factory=lambda: new_id("e"))
    timestamp: float = field(default_factory=now)
    partial: bool = False
    long_running_tool_ids: set[str] | None = None
    progress: ToolProgress | None = None
    error_code: str | None = None
    error_message: str | None = None
    finish_reason: str | None = None
    usage: dict[str, int] | None = None
    citations: list[dict[str, Any]] | None = None
    #: The validated final answer of an agent with ``output_schema`` (the model instance;
    #: its JSON once the event is read back from a store).
    output: Any = None

    @property
    def usage_metadata(self) -> UsageMetadata | None:
        """google-adk's name and shape of :attr:`usage` (``prompt_token_count``, ...)."""
        return UsageMetadata.from_usage(self.usage)

    def get_function_calls(self) -> list[FunctionCall]:
        """The function calls in this event's content, in order."""
        if self.content is None:
            return []
        return [p.function_call for p in self.content.parts if p.function_call is not None]

    def get_function_responses(self) -> list[FunctionResponse]:
        """The function responses in this event's content, in order."""
        if self.content is None:
            return []
        return [p.function_response for p in self.content.parts if p.function_response is not None]

    def is_final_response(self) -> bool:
        """Whether this event ends the agent's answer for now (what a UI shows as the reply).

        True for a non-partial event with no function calls or responses, an error, a
        tool response marked ``skip_summarization``, or a turn left waiting on
        long-running calls.
        """
        if self.actions.skip_summarization or self.long_running_tool_ids:
            return True
        if self.progress is not None or self.partial:
            return False
        return not self.get_function_calls() and not self.get_function_responses()

    def to_dict(self) -> dict[str, Any]:
        """The Gemini wire shape (camelCase), JSON-safe."""
        out: dict[str, Any] = {
            "id": self.id,
            "invocationId": self.invocation_id,
            "author": self.author,
            "timestamp": self.timestamp,
        }
        if self.content is not None:
            out["content"] = self.content.to_dict()
        actions = self.actions.to_dict()
        if actions:
            out["actions"] = actions
        if self.partial:
            out["partial"] = True
        if self.long_running_tool_ids:
            out["longRunningToolIds"] = sorted(self.long_running_tool_ids)
        if self.progress is not None:
            p = self.progress
            out["progress"] = {"id": p.id, "name": p.name, "stream": p.stream, "chunk": p.chunk}
            if p.dropped:
                out["progress"]["dropped"] = p.dropped
        if self.error_code is not None:
            out["errorCode"] = self.error_code
        if self.error_message is not None:
            out["errorMessage"] = self.error_message
        if self.finish_reason is not None:
            out["finishReason"] = self.finish_reason
        if self.usage is not None:
            out["usageMetadata"] = {
                wire: self.usage[key] for key, wire in _USAGE_WIRE if key in self.usage
            }
        if self.citations:
            out["citations"] = self.citations
        if self.output is not None:
            dump = getattr(self.output, "model_dump", None)
            out["output"] = dump(mode="json") if dump is not None else self.output
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Event:
        """Read the wire shape (camelCase), as :meth:`to_dict` writes it."""
        progress = data.get("progress")
        lr = data.get("longRunningToolIds")
        usage = data.get("usageMetadata")
        return cls(
            id=data.get("id") or new_id("e"),
            invocation_id=data.get("invocationId", ""),
            author=data.get("author", "user"),
            timestamp=float(data.get("timestamp", 0.0)),
            content=Content.from_dict(data["content"]) if data.get("content") is not None else None,
            actions=EventActions.from_dict(data.get("actions") or {}),
            partial=bool(data.get("partial", False)),
            long_running_tool_ids=set(lr) if lr else None,
            progress=(
                ToolProgress(
                    id=progress.get("id", ""),
                    name=progress.get("name", ""),
                    stream=progress.get("stream", ""),
                    chunk=progress.get("chunk", ""),
                    dropped=int(progress.get("dropped", 0)),
                )
                if progress
                else None
            ),
            error_code=data.get("errorCode"),
            error_message=data.get("errorMessage"),
            finish_reason=data.get("finishReason"),
            usage=(
                {key: int(usage[wire]) for key, wire in _USAGE_WIRE if wire in usage}
                if isinstance(usage, dict)
                else None
            ),
            citations=_citations(data.get("citations")),
            output=data.get("output"),
        )

    def to_json(self) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), ensure_ascii=False, default=str)

    @classmethod
    def from_json(cls, text: str) -> Event:
        """Read one event from JSON text, as :meth:`to_json` writes it."""
        return cls.from_dict(json.loads(text))


def _citations(raw: Any) -> list[dict[str, Any]] | None:
    if not isinstance(raw, list):
        return None
    return [dict(c) for c in raw if isinstance(c, dict)] or None
