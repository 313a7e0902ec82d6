"""``BaseLlm`` and what goes in and out of a model call."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._content import Content
from .._events import UsageMetadata

if TYPE_CHECKING:
    from tooling import BaseTool
    from tooling.builtin import BuiltinTool

__all__ = ["BaseLlm", "LlmRequest", "LlmResponse"]


@dataclass(slots=True)
class LlmRequest:
    """One model turn's input.

    ``contents`` is the conversation so far (no partial or progress events);
    ``tools`` maps each name to the ``BaseTool`` offered this turn; ``config`` carries
    generation settings (``Agent.generate_content_config``), passed through as given.
    ``agent_name`` names the agent asking (a multi-agent ``ScriptedModel`` script keys
    its turns by it).
    """

    model: str
    contents: list[Content] = field(default_factory=list)
    system_instruction: str = ""
    tools: dict[str, BaseTool] = field(default_factory=dict)
    config: Any = None
    agent_name: str = ""

    @property
    def tools_dict(self) -> dict[str, BaseTool]:
        """google-adk's name of :attr:`tools`."""
        return self.tools


@dataclass(slots=True)
class LlmResponse:
    """One model output: content, or an error.

    ``partial`` marks a streamed piece (its text is also in the final, aggregated
    response). ``error_code``/``error_message`` report a failed call. ``finish_reason``
    uses Gemini's values (``STOP``, ``MAX_TOKENS``, ``SAFETY``, ...) whatever the provider.
    ``usage`` is the call's token count, ``{"input_tokens": n, "output_tokens": m}``, when
    the provider reports it. ``citations`` are the sources the answer cites
    (``[{"title", "uri", "start", "end"}]``), from the provider's grounding or annotations.
    """

    content: Content | None = None
    partial: bool = False
    error_code: str | None = None
    error_message: str | None = None
    finish_reason: str | None = None
    usage: dict[str, int] | None = None
    citations: list[dict[str, Any]] | None = None

    @property
    def usage_metadata(self) -> UsageMetadata | None:
        """google-adk's name and shape of :attr:`usage` (``prompt_token_count``, ...)."""
        return UsageMetadata.from_usage(self.usage)


class BaseLlm(ABC):
    """A language model the agent loop can ask.

    Subclasses implement :meth:`generate_content_async`: an async generator of
    ``LlmResponse``; one item when ``stream`` is false, partial items then a final one
    when it is true.

    ``provider`` names the service behind the model, as OpenTelemetry's
    ``gen_ai.provider.name`` spells it (``"openai"``, ``"anthropic"``, ``"gcp.gemini"``);
    empty for a model that calls no service.
    """

    provider: str = ""

    def __init__(self, model: str) -> None:
        self.model = model

    @abstractmethod
    def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        """Ask the model; yield its response(s)."""

    def supports_builtin(self, tool: BuiltinTool) -> bool:
        """Whether this model's provider runs the built-in ``tool`` (a web search, code
        execution). The default: no; each provider's adapter says which it runs."""
        return False

    @property
    def builtins_beside_functions(self) -> bool:
        """Whether one request may hold built-in tools beside function declarations
        (Gemini before 3 refuses it; the loop then asks for the built-ins separately)."""
        return True

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model!r})"
