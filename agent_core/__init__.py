"""The agent loop: ask a model, dispatch its tool calls through ``tooling``, keep sessions.

``Agent`` holds a model, an instruction and tools; ``Runner`` runs it on a session and
yields ``Event``s. ``ScriptedModel`` plays a fixed script (tests, offline demos);
``GeminiModel``, ``OpenAIModel`` and ``AnthropicModel`` talk to those providers (each
SDK is imported only when such a model is built).

The folders, lowest layer first::

    _content _events _config ...   the shared vocabulary (and each family's base)
    _db/           SQLite files and PostgreSQL pools shared by the stores
    sessions/  services/  models/  the session, artifact and memory stores; model adapters
    _agent.py      what an agent is
    _invocation/   one invocation: model turns, tool calls, requests waiting on the user
    _runner.py     Runner; cli.py, web/: the commands and the inspector
"""

from typing import TYPE_CHECKING, Any

from ._agent import Agent
from ._agent_tool import AgentTool
from ._content import Content, FunctionCall, FunctionResponse, Part, ProviderPart
from ._events import Event, EventActions, UsageMetadata
from ._runner import RunConfig, Runner
from ._service_urls import (
    artifact_service_from_url,
    credential_service_from_url,
    job_store_from_url,
    session_service_from_url,
)
from ._tool_search import ToolSearch
from .jobs import InMemoryJobStore, Job, JobStatus, JobStore, PostgresJobStore, SqliteJobStore
from .models.base import BaseLlm, LlmRequest, LlmResponse
from .models.scripted import ScriptedModel
from .services.artifacts import InMemoryArtifactService, SqliteArtifactService
from .services.credentials import SqliteCredentialService
from .services.memory import InMemoryMemoryService
from .services.postgres_artifacts import PostgresArtifactService
from .services.postgres_credentials import PostgresCredentialService
from .sessions.base import AlreadyExistsError, Session, SessionExistsError
from .sessions.memory import InMemorySessionService
from .sessions.postgres import PostgresSessionService
from .sessions.sqlite import SqliteSessionService

if TYPE_CHECKING:
    from .models.anthropic import AnthropicModel
    from .models.gemini import GeminiModel
    from .models.openai import OpenAIModel

__all__ = [
    "Agent",
    "AgentTool",
    "AlreadyExistsError",
    "AnthropicModel",
    "BaseLlm",
    "Content",
    "Event",
    "EventActions",
    "FunctionCall",
    "FunctionResponse",
    "GeminiModel",
    "InMemoryArtifactService",
    "InMemoryJobStore",
    "InMemoryMemoryService",
    "InMemorySessionService",
    "Job",
    "JobStatus",
    "JobStore",
    "LlmRequest",
    "LlmResponse",
    "OpenAIModel",
    "Part",
    "PostgresArtifactService",
    "PostgresCredentialService",
    "PostgresJobStore",
    "PostgresSessionService",
    "ProviderPart",
    "RunConfig",
    "Runner",
    "ScriptedModel",
    "Session",
    "SessionExistsError",
    "SqliteArtifactService",
    "SqliteCredentialService",
    "SqliteJobStore",
    "SqliteSessionService",
    "ToolSearch",
    "UsageMetadata",
    "artifact_service_from_url",
    "credential_service_from_url",
    "job_store_from_url",
    "session_service_from_url",
]


def __getattr__(name: str) -> Any:
    if name == "GeminiModel":  # imports google.genai: only when asked for
        from .models.gemini import GeminiModel

        return GeminiModel
    if name == "OpenAIModel":  # the openai SDK is imported when one is built
        from .models.openai import OpenAIModel

        return OpenAIModel
    if name == "AnthropicModel":  # the anthropic SDK is imported when one is built
        from .models.anthropic import AnthropicModel

        return AnthropicModel
    raise AttributeError(f"module 'agent_core' has no attribute {name!r}")
