"""The ``ToolContext`` a tool gets inside an agent run: the session's services, wired in."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from tooling import Blob, MemoryHit, ToolActions, ToolContext

from ..services.base import BaseArtifactService, BaseMemoryService
from .storable import clean

if TYPE_CHECKING:
    from .._config import RunConfig

__all__: list[str] = []


class InvocationToolContext(ToolContext):
    """A tool call's view of its invocation: session state, artifacts, memory.

    Also serves callbacks (``function_call_id`` empty): their state writes are recorded
    the same way and land in the next event the loop stores.
    """

    def __init__(
        self,
        *,
        app_name: str,
        invocation_id: str,
        agent_name: str,
        user_id: str,
        session_id: str,
        state: Mapping[str, Any],
        artifact_service: BaseArtifactService,
        memory_service: BaseMemoryService | None,
        function_call_id: str = "",
        auth_responses: Mapping[str, Mapping[str, Any]] | None = None,
        actions: ToolActions | None = None,
        run_config: RunConfig | None = None,
    ) -> None:
        super().__init__(
            invocation_id=invocation_id,
            agent_name=agent_name,
            user_id=user_id,
            session_id=session_id,
            state=state,
            function_call_id=function_call_id,
            actions=actions,
            auth_responses=auth_responses,
        )
        self.app_name = app_name
        self._run_config = run_config
        self._artifacts = artifact_service
        self._memory = memory_service

    @property
    def run_config(self) -> RunConfig | None:
        """The run's settings; an ``AgentTool``'s child agent runs under them too."""
        return self._run_config

    def _where(self) -> dict[str, str]:
        return {"app_name": self.app_name, "user_id": self.user_id, "session_id": self.session_id}

    async def _save_artifact(self, name: str, blob: Blob) -> int:
        """A new version of artifact ``name`` in the session's artifact service.

        ``name`` must be text every store can hold (``ValueError`` otherwise).
        """
        if not isinstance(name, str) or not name or clean(name)[1] is not None:
            raise ValueError(f"an artifact name must be non-empty UTF-8 text, not {name!r:.80}")
        version = await self._artifacts.save_artifact(**self._where(), filename=name, artifact=blob)
        self._record_artifact(name, version)
        return version

    async def _load_artifact(self, name: str, version: int | None) -> Blob | None:
        return await self._artifacts.load_artifact(**self._where(), filename=name, version=version)

    async def list_artifacts(self) -> list[str]:
        """The session's artifact names, sorted."""
        return sorted(await self._artifacts.list_artifact_keys(**self._where()))

    async def search_memory(self, query: str) -> list[MemoryHit]:
        """What the memory service finds for ``query`` in the user's past sessions."""
        if self._memory is None:
            return []
        return await self._memory.search_memory(
            app_name=self.app_name, user_id=self.user_id, query=query
        )
