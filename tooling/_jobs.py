"""``JobOptions`` and ``JobInfo``: what a durable tool asks of its job, and what it is told.

A tool declared ``@tool(durable=True)`` (or ``durable=JobOptions(...)``) runs as a job
that outlives the process that started it: the call answers "pending" at once, and a job
loop (in any process sharing the job store) runs it under a lease and delivers its
result to the session. The store and the loop live in ``agent_core``; these are the
tool-side names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["JobInfo", "JobOptions"]

Dedupe = Literal["session", "user", "app", "none"]


@dataclass(frozen=True, slots=True)
class JobOptions:
    """How a durable tool's jobs are keyed, retried and leased.

    ``dedupe``: a call whose key (app, user, session and the call's fingerprint: the tool's
    name and validated arguments) matches an active job joins that job instead of starting
    another; ``"user"`` and ``"app"`` drop the session (and the user) from the key,
    ``"none"`` never joins. ``max_attempts``: how often an ``idempotent`` tool's job is run
    again after its holder died mid-run. ``lease``: seconds a holder's claim lasts without
    renewal (another process takes over after it lapses).
    """

    dedupe: Dedupe = "session"
    max_attempts: int = 3
    lease: float = 10.0

    def __post_init__(self) -> None:
        if self.dedupe not in ("session", "user", "app", "none"):
            raise ValueError(
                f"dedupe must be 'session', 'user', 'app' or 'none', not {self.dedupe!r}"
            )
        if self.max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        if not self.lease > 0:
            raise ValueError("lease must be a positive number of seconds")


@dataclass(frozen=True, slots=True)
class JobInfo:
    """The job a durable tool's call runs as (``tool_context.job``).

    ``idempotency_key`` is stable across attempts of one job: pass it to the outside
    system (a payment API's idempotency key) so a repeated attempt has one effect.
    """

    job_id: str
    attempt: int
    idempotency_key: str


def job_options(durable: bool | JobOptions | None) -> JobOptions | None:
    """``durable=`` as given to ``@tool``, read: None, or the options."""
    if durable is None or durable is False:
        return None
    if durable is True:
        return JobOptions()
    if isinstance(durable, JobOptions):
        return durable
    raise TypeError(f"durable= takes True, False or a JobOptions, not {type(durable).__name__}")
