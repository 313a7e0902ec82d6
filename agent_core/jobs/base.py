"""``Job``, ``JobStatus`` and ``JobStore``: durable tool calls, kept where any process
sharing the store can run, watch, settle and deliver them.

A job moves ``PENDING`` -> ``RUNNING`` (claimed under a lease) -> ``SUCCEEDED`` or
``FAILED``; a holder that dies leaves it ``RUNNING`` with a lapsed lease, and the next
claim decides: not started yet (no started marker) -> run again; started and the tool
``idempotent`` -> run again up to ``max_attempts`` (then ``FAILED`` with
``job.attempts_exhausted``); started and not idempotent -> ``IN_DOUBT``, never run again
unless :meth:`JobStore.resolve` says ``rerun=True``. ``CANCELLED`` ends a job from any
state but a finished one. Every ended job is delivered once to the sessions of its calls.

Times are the database's clock (seconds since the epoch), never a process's.
"""

from __future__ import annotations

import enum
import json
from abc import ABC, abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Job", "JobStatus", "JobStore"]


class JobStatus(enum.StrEnum):
    """Where a job is in its life."""

    PENDING = "PENDING"
    RUNNING = "RUNNING"
    SUCCEEDED = "SUCCEEDED"
    FAILED = "FAILED"
    IN_DOUBT = "IN_DOUBT"
    CANCELLED = "CANCELLED"

    @property
    def active(self) -> bool:
        """Still to run (or running): a new call with the same key joins it."""
        return self in (JobStatus.PENDING, JobStatus.RUNNING)


ENDED = (JobStatus.SUCCEEDED, JobStatus.FAILED, JobStatus.IN_DOUBT, JobStatus.CANCELLED)


@dataclass(frozen=True, slots=True)
class JobCall:
    """One function call answered by a job: where its final response goes."""

    call_id: str
    user_id: str
    session_id: str
    agent_name: str

    def to_json(self) -> dict[str, str]:
        """The stored form."""
        return {
            "id": self.call_id,
            "user": self.user_id,
            "session": self.session_id,
            "agent": self.agent_name,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> JobCall:
        """Read the stored form."""
        return cls(str(data["id"]), str(data["user"]), str(data["session"]), str(data["agent"]))


@dataclass(slots=True)
class Job:
    """A durable tool call and what became of it.

    ``call_ids`` are the function calls it answers (more than one when later calls joined
    it); ``progress`` the latest value the tool reported (≤ 64 KiB); ``response`` the
    final response dict once ``SUCCEEDED``; ``error_code``/``error_message`` once it
    failed, was cancelled or is in doubt. Times are seconds since the epoch, by the
    database's clock.
    """

    id: str
    status: JobStatus
    app_name: str
    user_id: str
    session_id: str
    tool: str
    args: dict[str, Any]
    fingerprint: str
    calls: list[JobCall] = field(default_factory=list)
    attempt: int = 0
    max_attempts: int = 1
    idempotent: bool = False
    lease: float = 10.0
    progress: Any = None
    response: dict[str, Any] | None = None
    error_code: str | None = None
    error_message: str | None = None
    state_delta: dict[str, Any] = field(default_factory=dict)
    created_at: float = 0.0
    started_at: float | None = None
    finished_at: float | None = None
    delivered_at: float | None = None
    cancel_requested: bool = False
    #: How often the job was resolved by hand (each resolution is delivered anew).
    resolutions: int = 0

    @property
    def call_ids(self) -> list[str]:
        """The ids of the function calls this job answers, in the order they came."""
        return [c.call_id for c in self.calls]

    def to_json(self) -> dict[str, Any]:
        """The job as a JSON object (what ``agent-core jobs show`` prints and the
        inspector's API answers): its fields, ``status`` as text, ``call_ids`` for the calls."""
        return {
            "id": self.id,
            "status": self.status.value,
            "app_name": self.app_name,
            "user_id": self.user_id,
            "session_id": self.session_id,
            "tool": self.tool,
            "args": self.args,
            "fingerprint": self.fingerprint,
            "call_ids": self.call_ids,
            "attempt": self.attempt,
            "max_attempts": self.max_attempts,
            "idempotent": self.idempotent,
            "progress": self.progress,
            "response": self.response,
            "error_code": self.error_code,
            "error_message": self.error_message,
            "created_at": self.created_at,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "delivered_at": self.delivered_at,
            "cancel_requested": self.cancel_requested,
        }

    def final_response(self) -> dict[str, Any]:
        """What each of its calls is answered with, once the job ended."""
        if self.status is JobStatus.SUCCEEDED and self.response is not None:
            return self.response
        return {
            "status": "error",
            "error": {
                "code": self.error_code or "tool.failed",
                "message": self.error_message or f"job {self.id} ended {self.status.value}",
            },
        }


class JobStore(ABC):
    """Where durable jobs are kept; every process sharing one sees the same jobs.

    Implementations: ``InMemoryJobStore`` (one process), ``SqliteJobStore`` (processes of
    one machine), ``PostgresJobStore`` (many machines). Each operation is atomic.
    """

    @abstractmethod
    async def submit(
        self,
        *,
        key: str | None,
        app_name: str,
        call: JobCall,
        tool: str,
        args: dict[str, Any],
        fingerprint: str,
        max_attempts: int,
        idempotent: bool,
        lease: float,
    ) -> tuple[Job, bool]:
        """Create a job for ``call``, or join the active job with the same ``key``;
        returns the job and whether the call joined one."""

    @abstractmethod
    async def claim(self, tools: Collection[str], owner: str) -> Job | None:
        """The next job of one of ``tools`` to run, now held by ``owner`` under its lease
        (a lapsed holder's job is taken over, or settled as the rules above say)."""

    @abstractmethod
    async def mark_started(self, job_id: str, owner: str) -> bool:
        """Commit the started marker; False when ``owner`` no longer holds the job."""

    @abstractmethod
    async def renew(self, job_id: str, owner: str) -> str:
        """Extend ``owner``'s lease: ``"ok"``, ``"cancel"`` (a cancel was asked for) or
        ``"lost"`` (another holder, or the job ended)."""

    @abstractmethod
    async def finish(
        self,
        job_id: str,
        owner: str,
        *,
        status: JobStatus,
        response: dict[str, Any] | None = None,
        error_code: str | None = None,
        error_message: str | None = None,
        state_delta: dict[str, Any] | None = None,
    ) -> bool:
        """End a job ``owner`` holds; False when it no longer holds it."""

    @abstractmethod
    async def set_progress(self, job_id: str, value: Any) -> None:
        """Record the latest progress value (JSON)."""

    @abstractmethod
    async def take_deliveries(self, owner: str, *, limit: int = 20) -> list[Job]:
        """Ended, undelivered jobs, each held by ``owner`` for delivery for a while."""

    @abstractmethod
    async def mark_delivered(self, job_id: str) -> None:
        """The job's final response is in its sessions."""

    @abstractmethod
    async def get(self, job_id: str) -> Job | None:
        """One job, or None."""

    @abstractmethod
    async def list_jobs(
        self,
        *,
        app_name: str | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        status: JobStatus | None = None,
        limit: int = 100,
    ) -> list[Job]:
        """Jobs, newest first."""

    @abstractmethod
    async def cancel(self, job_id: str) -> Job | None:
        """Cancel a job: a pending one ends ``CANCELLED`` at once; a running one is asked
        to stop (its holder sees it at its next renewal). None when there is no such job."""

    @abstractmethod
    async def resolve(
        self,
        job_id: str,
        *,
        response: dict[str, Any] | None = None,
        error: str | None = None,
        rerun: bool = False,
    ) -> Job:
        """Settle a job in doubt (or failed): give its response, fail it with ``error``,
        or run it again (``rerun=True``). Raises ``ValueError`` for a job in another state."""

    async def close(self) -> None:  # noqa: B027 - optional hook
        """Release connections. Default: nothing."""


def dumps(value: Any) -> str:
    """JSON text for a stored value."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def calls_json(calls: Sequence[JobCall]) -> str:
    """The stored form of a job's calls."""
    return dumps([c.to_json() for c in calls])
