"""``AgentTool``: another agent used as a tool, run in its own session."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from tooling import BaseTool, Blob, MemoryHit, SimpleToolContext, ToolContext, ToolError
from tooling.integration import error_details_from_validation, input_schema

from ._agent import Agent
from ._invocation.tool_context import InvocationToolContext
from ._runner import Runner
from .services.base import BaseArtifactService, BaseMemoryService
from .sessions.base import Session
from .sessions.memory import InMemorySessionService
from .sessions.state import TEMP_PREFIX

__all__ = ["AgentTool"]


class AgentTool(BaseTool):
    """Another agent used as a tool.

    The child runs in its own session seeded with the caller's state; its state changes
    flow back into the caller's delta, and its final text is the result. The tool takes
    one string parameter ``request``, or the agent's ``input_schema``.
    """

    def __init__(self, agent: Agent, *, skip_summarization: bool = False) -> None:
        self.agent = agent
        self.name = agent.name
        self.description = agent.description or f"Ask the {agent.name} agent."
        self.skip_summarization = skip_summarization
        if agent.input_schema is not None:
            schema = input_schema(agent.input_schema)
        else:
            schema = {
                "type": "object",
                "properties": {
                    "request": {"type": "string", "description": "What to ask the agent."}
                },
                "required": ["request"],
                "additionalProperties": False,
            }
        self.parameters_json_schema = schema
        self.response_json_schema = {
            "type": "object",
            "properties": {"result": {"type": "string"}},
            "required": ["result"],
        }

    async def run(
        self, args: Mapping[str, Any] | str, ctx: ToolContext | None = None
    ) -> dict[str, Any]:
        """Run the agent on the request in its own session; its final text is the result."""
        values = self.validated_arguments(args)
        if self.agent.input_schema is not None:
            try:
                model = self.agent.input_schema.model_validate(values)
            except ValidationError as exc:
                errors = exc.errors(include_url=False, include_context=False)
                names = list(self.parameters_json_schema.get("properties", {}))
                details = error_details_from_validation(errors, names)
                summary = "; ".join(
                    f"{'.'.join(map(str, d['loc'])) or '(arguments)'}: {d['msg']}" for d in details
                )
                raise ToolError(
                    f"invalid arguments for agent {self.name}: {summary}",
                    code="tool.invalid_arguments",
                    details=details,
                ) from None
            message = model.model_dump_json()
        else:
            request = values.get("request")
            if not isinstance(request, str) or set(values) - {"request"}:
                raise ToolError(
                    f"agent tool {self.name} takes one string argument 'request'",
                    code="tool.invalid_arguments",
                    details=[
                        {
                            "loc": ["request"],
                            "msg": "Input should be a valid string",
                            "type": "string_type",
                        }
                    ],
                )
            message = request
        if ctx is None:
            ctx = SimpleToolContext(caller="user")

        seed = {k: v for k, v in ctx.state.items() if not k.startswith(TEMP_PREFIX)}
        sessions = InMemorySessionService()
        session = await sessions.create_session(
            app_name=f"agent-tool:{self.name}", user_id=ctx.user_id or "user", state=seed
        )
        # The child's artifacts and memory are its caller's, reached through the caller's
        # context (whatever kind it is): what the child saves, the caller's session keeps.
        runner = Runner(
            self.agent,
            app_name=session.app_name,
            session_service=sessions,
            artifact_service=_CallerArtifacts(ctx),
            memory_service=_CallerMemory(ctx),
        )
        final_text = ""
        error: str | None = None
        try:
            # The child runs under its caller's settings: scopes, timeouts, redaction.
            async for event in runner.run_async(
                user_id=session.user_id,
                session_id=session.id,
                new_message=message,
                run_config=ctx.run_config if isinstance(ctx, InvocationToolContext) else None,
            ):
                if event.error_code:
                    error = f"{event.error_code}: {event.error_message}"
                if event.content is not None and not event.partial and event.content.text:
                    final_text = event.content.text
        finally:
            # The child's runner is only for this call: stop its worker threads (its
            # toolsets stay open; the parent's runner closes them).
            runner.pool.shutdown()
        if error is not None and not final_text:
            raise ToolError(f"agent {self.name} failed: {error}")
        child = await sessions.get_session(
            app_name=session.app_name, user_id=session.user_id, session_id=session.id
        )
        if child is not None:
            for key, value in child.state.items():
                if key.startswith(TEMP_PREFIX):
                    continue
                if key not in seed or seed[key] != value:
                    ctx.state[key] = value
        if self.skip_summarization:
            ctx.actions.skip_summarization = True
        return {"result": final_text}


class _CallerArtifacts(BaseArtifactService):
    """The artifact service of a child run: every call goes to the caller's context."""

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx

    async def save_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str, artifact: Blob
    ) -> int:
        return await self._ctx.save_artifact(filename, artifact)

    async def load_artifact(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        filename: str,
        version: int | None = None,
    ) -> Blob | None:
        return await self._ctx.load_artifact(filename, version)

    async def list_artifact_keys(
        self, *, app_name: str, user_id: str, session_id: str
    ) -> list[str]:
        return await self._ctx.list_artifacts()

    async def list_versions(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> list[int]:
        versions: list[int] = []
        while await self._ctx.load_artifact(filename, len(versions)) is not None:
            versions.append(len(versions))
        return versions

    async def delete_artifact(
        self, *, app_name: str, user_id: str, session_id: str, filename: str
    ) -> None:
        raise ToolError(
            f"an agent used as a tool cannot delete its caller's artifact {filename!r}",
            code="tool.forbidden",
        )


class _CallerMemory(BaseMemoryService):
    """The memory service of a child run: searches go to the caller's context."""

    def __init__(self, ctx: ToolContext) -> None:
        self._ctx = ctx

    async def add_session_to_memory(self, session: Session) -> None:
        """A child's session is not remembered: it is part of its caller's."""

    async def search_memory(self, *, app_name: str, user_id: str, query: str) -> list[MemoryHit]:
        return await self._ctx.search_memory(query)
