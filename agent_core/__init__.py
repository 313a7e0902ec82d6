"""The agent loop: ask a model, dispatch its tool calls through ``tooling``, keep sessions.

``Agent`` holds a model, an instruction and tools; ``Runner`` runs it on a session and
yields ``Event``s. ``ScriptedModel`` plays a fixed script (tests, offline demos);
``GeminiModel`` talks to Gemini (``google.genai`` is imported only when it is used).
"""

from typing import TYPE_CHECKING, Any

from ._agent import Agent, AgentTool
from ._content import Content, FunctionCall, FunctionResponse, Part
from ._events import Event, EventActions
from ._runner import RunConfig, Runner
from .models.base import BaseLlm, LlmRequest, LlmResponse
from .models.scripted import ScriptedModel
from .services.artifacts import InMemoryArtifactService, SqliteArtifactService
from .services.memory import InMemoryMemoryService
from .sessions.base import Session
from .sessions.memory import InMemorySessionService
from .sessions.sqlite import SqliteSessionService

if TYPE_CHECKING:
    from .models.gemini import GeminiModel

__all__ = [
    "Agent",
    "AgentTool",
    "BaseLlm",
    "Content",
    "Event",
    "EventActions",
    "FunctionCall",
    "FunctionResponse",
    "GeminiModel",
    "InMemoryArtifactService",
    "InMemoryMemoryService",
    "InMemorySessionService",
    "LlmRequest",
    "LlmResponse",
    "Part",
    "RunConfig",
    "Runner",
    "ScriptedModel",
    "Session",
    "SqliteArtifactService",
    "SqliteSessionService",
]


def __getattr__(name: str) -> Any:
    if name == "GeminiModel":  # imports google.genai: only when asked for
        from .models.gemini import GeminiModel

        return GeminiModel
    raise AttributeError(f"module 'agent_core' has no attribute {name!r}")
