"""The jobs table: its columns, its schema, a transaction's cursor, reading a row."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from .base import Job, JobCall, JobStatus

__all__: list[str] = []

COLUMNS = (
    "id, status, app_name, user_id, session_id, tool, args, fingerprint, job_key, calls,"
    " attempt, max_attempts, idempotent, lease_s, progress, response, error_code,"
    " error_message, state_delta, created_at, started_at, finished_at, delivered_at,"
    " lease_owner, lease_until, cancel_requested, deliverer, deliver_until, resolutions"
)

SCHEMA = """
CREATE TABLE IF NOT EXISTS {table} (
    id TEXT PRIMARY KEY,
    status TEXT NOT NULL,
    app_name TEXT NOT NULL,
    user_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    tool TEXT NOT NULL,
    args TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    job_key TEXT,
    calls TEXT NOT NULL,
    attempt INTEGER NOT NULL DEFAULT 0,
    max_attempts INTEGER NOT NULL DEFAULT 1,
    idempotent INTEGER NOT NULL DEFAULT 0,
    lease_s DOUBLE PRECISION NOT NULL,
    progress TEXT,
    response TEXT,
    error_code TEXT,
    error_message TEXT,
    state_delta TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    started_at DOUBLE PRECISION,
    finished_at DOUBLE PRECISION,
    delivered_at DOUBLE PRECISION,
    lease_owner TEXT,
    lease_until DOUBLE PRECISION,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    deliverer TEXT,
    deliver_until DOUBLE PRECISION,
    resolutions INTEGER NOT NULL DEFAULT 0
)
"""

INDEXES = (
    "CREATE INDEX IF NOT EXISTS {table}_due ON {table} (status, tool, created_at)",
    "CREATE INDEX IF NOT EXISTS {table}_key ON {table} (job_key, status)",
    "CREATE INDEX IF NOT EXISTS {table}_session ON {table} (app_name, user_id, session_id)",
)


class Tx:
    """A transaction's cursor: ``?`` placeholders, ``{now}`` for the database's clock."""

    def __init__(self, cursor: Any, placeholder: str, now: str, table: str) -> None:
        self._cursor = cursor
        self._placeholder = placeholder
        self._now = now
        self.table = table

    def run(self, sql: str, params: Sequence[Any] = ()) -> Any:
        text = sql.replace("{now}", self._now).replace("{table}", self.table)
        if self._placeholder != "?":
            text = text.replace("?", self._placeholder)
        self._cursor.execute(text, tuple(params))
        return self._cursor

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return list(self.run(sql, params).fetchall())

    def one(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        row: tuple[Any, ...] | None = self.run(sql, params).fetchone()
        return row

    def changed(self, sql: str, params: Sequence[Any] = ()) -> int:
        return int(self.run(sql, params).rowcount)


def read_job(row: Sequence[Any]) -> Job:
    (
        job_id, status, app, user, session, tool, args, fingerprint, _key, calls,
        attempt, max_attempts, idempotent, lease, progress, response, error_code,
        error_message, state_delta, created, started, finished, delivered,
        _owner, _until, cancel, _deliverer, _deliver_until, resolutions,
    ) = row  # fmt: skip
    return Job(
        id=job_id,
        status=JobStatus(status),
        app_name=app,
        user_id=user,
        session_id=session,
        tool=tool,
        args=json.loads(args),
        fingerprint=fingerprint,
        calls=[JobCall.from_json(c) for c in json.loads(calls)],
        attempt=int(attempt),
        max_attempts=int(max_attempts),
        idempotent=bool(idempotent),
        lease=float(lease),
        progress=json.loads(progress) if progress is not None else None,
        response=json.loads(response) if response is not None else None,
        error_code=error_code,
        error_message=error_message,
        state_delta=json.loads(state_delta) if state_delta else {},
        created_at=float(created),
        started_at=started,
        finished_at=finished,
        delivered_at=delivered,
        cancel_requested=bool(cancel),
        resolutions=int(resolutions or 0),
    )
