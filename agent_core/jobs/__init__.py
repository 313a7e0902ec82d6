"""Durable tool jobs: ``Job``, ``JobStatus`` and the stores that keep them."""

from __future__ import annotations

from .base import Job, JobStatus, JobStore
from .postgres import PostgresJobStore
from .sqlite import InMemoryJobStore, SqliteJobStore

__all__ = [
    "InMemoryJobStore",
    "Job",
    "JobStatus",
    "JobStore",
    "PostgresJobStore",
    "SqliteJobStore",
]
