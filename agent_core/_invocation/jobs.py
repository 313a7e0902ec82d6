"""A durable tool's call in a dispatch: the job is committed, the call answers "pending".

The scheduler runs a :class:`JobSubmitter` in the durable tool's place, so validation,
scopes and confirmation happen exactly as for any tool, before the job exists. Its
response is the pending answer (``will_continue``: the call stays open, listed in the
model event's ``long_running_tool_ids``); a job loop runs the tool later and delivers the
final response to the session.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from tooling import BaseTool, CheckedArguments, ToolContext, ToolError, ToolResponse
from tooling.integration import call_fingerprint

from ..jobs.base import JobCall, JobStore

__all__: list[str] = []

logger = logging.getLogger("agent_core")


class JobSubmitter(BaseTool):
    """``tool`` as the scheduler sees it in a run: each call becomes (or joins) a job."""

    long_running = True

    def __init__(self, tool: BaseTool, store: JobStore, app_name: str) -> None:
        assert tool.durable is not None
        self.tool = tool
        self.store = store
        self.app_name = app_name
        self.options = tool.durable
        self.name = tool.name
        self.description = tool.description
        self.parameters_json_schema = tool.parameters_json_schema
        self.response_json_schema = tool.response_json_schema
        for flag in (
            "read_only",
            "concurrency_safe",
            "idempotent",
            "destructive",
            "require_confirmation",
            "scopes",
            "conflict_key",
        ):
            setattr(self, flag, getattr(tool, flag))
        self.durable = tool.durable

    def check_arguments(self, args: Mapping[str, Any] | str | bytes) -> CheckedArguments:
        """The durable tool's own check: the job holds validated arguments only."""
        return self.tool.check_arguments(args)

    def to_gemini(self, *, legacy: bool = False) -> Any:
        """The durable tool's declaration."""
        return self.tool.to_gemini(legacy=legacy)

    def to_openai(self, *, strict: bool = False) -> dict[str, Any]:
        """The durable tool's declaration."""
        return self.tool.to_openai(strict=strict)

    def to_anthropic(self) -> dict[str, Any]:
        """The durable tool's declaration."""
        return self.tool.to_anthropic()

    def to_mcp(self) -> dict[str, Any]:
        """The durable tool's declaration."""
        return self.tool.to_mcp()

    async def run(
        self, args: Mapping[str, Any] | str, ctx: ToolContext | None = None
    ) -> dict[str, Any]:
        """Submit the job; the pending answer."""
        response = await self.respond(self.check_arguments(args), ctx)
        return response.response

    async def respond(
        self, arguments: CheckedArguments, ctx: ToolContext | None = None, **_: Any
    ) -> ToolResponse:
        """Commit the job (or join the active one with the same key); answer pending."""
        if ctx is None:
            raise ToolError(f"durable tool {self.name!r} runs inside an agent run only")
        values = arguments.values
        fingerprint = call_fingerprint(self.name, values)
        dedupe = self.options.dedupe
        key = None
        if dedupe != "none":
            scope = {
                "session": (self.app_name, ctx.user_id, ctx.session_id),
                "user": (self.app_name, ctx.user_id),
                "app": (self.app_name,),
            }[dedupe]
            key = "\x1f".join((*scope, fingerprint))
        call = JobCall(ctx.function_call_id, ctx.user_id, ctx.session_id, ctx.agent_name)
        try:
            job, joined = await self.store.submit(
                key=key,
                app_name=self.app_name,
                call=call,
                tool=self.name,
                args=values,
                fingerprint=fingerprint,
                max_attempts=self.options.max_attempts if self.tool.idempotent else 1,
                idempotent=self.tool.idempotent,
                lease=self.options.lease,
            )
        except Exception as exc:
            logger.warning("job store failed for %s", self.name, exc_info=True)
            raise ToolError(
                f"the job for {self.name!r} could not be stored ({type(exc).__name__}); "
                "it was not started"
            ) from exc
        body: dict[str, Any] = {
            "status": "pending",
            "job_id": job.id,
            "message": (
                f"{self.name} runs as a job (job_id); its result is delivered to this "
                "conversation when it finishes. Do not call it again for the same request."
            ),
        }
        if joined:
            body["joined"] = True
        return ToolResponse(id=ctx.function_call_id, name=self.name, response=body)


def is_job_answer(tool: BaseTool | None, response: Mapping[str, Any]) -> bool:
    """Whether a final response is a durable call's pending answer."""
    return (
        isinstance(tool, JobSubmitter)
        and response.get("status") == "pending"
        and isinstance(response.get("job_id"), str)
    )
