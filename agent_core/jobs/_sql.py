"""The job store's rules in SQL, shared by SQLite and PostgreSQL.

Each operation is one transaction run on a worker thread (the event loop never waits on
the database). A dialect gives the connection, its placeholder style, the database's
clock as SQL, and how to lock what a transaction reads (``BEGIN IMMEDIATE`` in SQLite,
``FOR UPDATE SKIP LOCKED`` and an advisory lock on the job key in PostgreSQL).
"""

from __future__ import annotations

import asyncio
import uuid
from abc import abstractmethod
from collections.abc import Collection
from contextlib import AbstractContextManager
from typing import Any

from ._rows import COLUMNS, INDEXES, SCHEMA, Tx, read_job
from .base import ENDED, Job, JobCall, JobStatus, JobStore, calls_json, dumps

__all__: list[str] = []

#: Progress values kept per job (JSON text), at most.
MAX_PROGRESS_BYTES = 64 * 1024
#: How long a process holds an ended job for delivery before another may deliver it.
DELIVERY_HOLD_S = 30.0

IN_DOUBT_MESSAGE = (
    "the job running tool {tool!r} stopped while the tool was running: it may or may not "
    "have completed its work, and it was not run again (the tool is not idempotent). "
    "Tell the user; it is settled by resolving job {id}."
)


class SqlJobStore(JobStore):
    """The job rules over a SQL database; a dialect subclass supplies the connection."""

    placeholder = "?"
    now_sql = ""
    lock_suffix = ""  # appended to the SELECT of a claim ("FOR UPDATE SKIP LOCKED")

    def __init__(self, *, table: str = "agent_jobs") -> None:
        if not table.replace("_", "").isalnum():
            raise ValueError(f"table name {table!r} must be letters, digits and '_'")
        self.table = table

    # -- what a dialect gives ----------------------------------------------------------

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Any]:
        """A context manager yielding a cursor inside one transaction (commit at exit)."""

    def lock_key(self, tx: Tx, key: str) -> None:
        """Serialize submissions of one key (PostgreSQL); SQLite's writes are serial."""

    # -- plumbing ------------------------------------------------------------------------

    async def _do(self, work: Any, *args: Any) -> Any:
        return await asyncio.to_thread(self._in_tx, work, *args)

    def _in_tx(self, work: Any, *args: Any) -> Any:
        with self.transaction() as cursor:
            return work(Tx(cursor, self.placeholder, self.now_sql, self.table), *args)

    def create_tables(self) -> None:
        with self.transaction() as cursor:
            tx = Tx(cursor, self.placeholder, self.now_sql, self.table)
            tx.run(SCHEMA)
            for index in INDEXES:
                tx.run(index)

    def _get(self, tx: Tx, job_id: str) -> Job | None:
        row = tx.one(f"SELECT {COLUMNS} FROM {{table}} WHERE id = ?", (job_id,))
        return read_job(row) if row is not None else None

    # -- the operations ------------------------------------------------------------------

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
        def work(tx: Tx) -> tuple[Job, bool]:
            if key is not None:
                self.lock_key(tx, key)
                row = tx.one(
                    f"SELECT {COLUMNS} FROM {{table}} WHERE job_key = ?"
                    " AND status IN ('PENDING', 'RUNNING') ORDER BY created_at LIMIT 1",
                    (key,),
                )
                if row is not None:
                    job = read_job(row)
                    if call.call_id not in job.call_ids:
                        job.calls.append(call)
                        tx.run(
                            "UPDATE {table} SET calls = ? WHERE id = ?",
                            (calls_json(job.calls), job.id),
                        )
                    return job, True
            job_id = f"job_{uuid.uuid4().hex}"
            tx.run(
                "INSERT INTO {table} (id, status, app_name, user_id, session_id, tool, args,"
                " fingerprint, job_key, calls, attempt, max_attempts, idempotent, lease_s,"
                " created_at, cancel_requested) VALUES"
                " (?, 'PENDING', ?, ?, ?, ?, ?, ?, ?, ?, 0, ?, ?, ?, {now}, 0)",
                (
                    job_id, app_name, call.user_id, call.session_id, tool, dumps(args),
                    fingerprint, key, calls_json([call]), max_attempts, int(idempotent),
                    lease,
                ),
            )  # fmt: skip
            made = self._get(tx, job_id)
            assert made is not None
            return made, False

        result: tuple[Job, bool] = await self._do(work)
        return result

    async def claim(self, tools: Collection[str], owner: str) -> Job | None:
        names = sorted(set(tools))
        if not names:
            return None

        def work(tx: Tx) -> Job | None:
            marks = ", ".join("?" for _ in names)
            while True:
                row = tx.one(
                    f"SELECT {COLUMNS} FROM {{table}} WHERE tool IN ({marks}) AND"
                    " (status = 'PENDING' OR (status = 'RUNNING' AND lease_until < {now}))"
                    f" ORDER BY created_at LIMIT 1 {self.lock_suffix}",
                    names,
                )
                if row is None:
                    return None
                job = read_job(row)
                verdict = _takeover(job)
                if verdict is None:
                    tx.run(
                        "UPDATE {table} SET status = 'RUNNING', lease_owner = ?,"
                        " lease_until = {now} + lease_s, attempt = attempt + 1,"
                        " started_at = NULL WHERE id = ?",
                        (owner, job.id),
                    )
                    return self._get(tx, job.id)
                status, code, message = verdict
                tx.run(
                    "UPDATE {table} SET status = ?, error_code = ?, error_message = ?,"
                    " finished_at = {now}, lease_owner = NULL, lease_until = NULL WHERE id = ?",
                    (status.value, code, message, job.id),
                )

        claimed: Job | None = await self._do(work)
        return claimed

    async def mark_started(self, job_id: str, owner: str) -> bool:
        def work(tx: Tx) -> bool:
            return (
                tx.changed(
                    "UPDATE {table} SET started_at = {now} WHERE id = ? AND lease_owner = ?"
                    " AND status = 'RUNNING'",
                    (job_id, owner),
                )
                == 1
            )

        done: bool = await self._do(work)
        return done

    async def renew(self, job_id: str, owner: str) -> str:
        def work(tx: Tx) -> str:
            tx.run(
                "UPDATE {table} SET lease_until = {now} + lease_s WHERE id = ? AND"
                " lease_owner = ? AND status = 'RUNNING'",
                (job_id, owner),
            )
            row = tx.one(
                "SELECT lease_owner, status, cancel_requested FROM {table} WHERE id = ?",
                (job_id,),
            )
            if row is None or row[0] != owner or row[1] != "RUNNING":
                return "lost"
            return "cancel" if row[2] else "ok"

        verdict: str = await self._do(work)
        return verdict

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
        def work(tx: Tx) -> bool:
            return (
                tx.changed(
                    "UPDATE {table} SET status = ?, response = ?, error_code = ?,"
                    " error_message = ?, state_delta = ?, finished_at = {now},"
                    " lease_owner = NULL, lease_until = NULL"
                    " WHERE id = ? AND lease_owner = ? AND status = 'RUNNING'",
                    (
                        status.value,
                        dumps(response) if response is not None else None,
                        error_code,
                        error_message,
                        dumps(state_delta or {}),
                        job_id,
                        owner,
                    ),
                )
                == 1
            )

        done: bool = await self._do(work)
        return done

    async def set_progress(self, job_id: str, value: Any) -> None:
        text = dumps(value)
        if len(text.encode()) > MAX_PROGRESS_BYTES:
            text = dumps({"truncated": True, "text": text[: MAX_PROGRESS_BYTES // 2]})
        await self._do(
            lambda tx: tx.run("UPDATE {table} SET progress = ? WHERE id = ?", (text, job_id))
        )

    async def take_deliveries(self, owner: str, *, limit: int = 20) -> list[Job]:
        ended = ", ".join(f"'{s.value}'" for s in ENDED)

        def work(tx: Tx) -> list[Job]:
            rows = tx.rows(
                f"SELECT {COLUMNS} FROM {{table}} WHERE status IN ({ended})"
                " AND delivered_at IS NULL AND (deliver_until IS NULL OR deliver_until < {now})"
                f" ORDER BY finished_at LIMIT ? {self.lock_suffix}",
                (limit,),
            )
            jobs = [read_job(r) for r in rows]
            for job in jobs:
                tx.run(
                    f"UPDATE {{table}} SET deliverer = ?, deliver_until = {{now}} + "
                    f"{DELIVERY_HOLD_S} WHERE id = ?",
                    (owner, job.id),
                )
            return jobs

        taken: list[Job] = await self._do(work)
        return taken

    async def mark_delivered(self, job_id: str) -> None:
        await self._do(
            lambda tx: tx.run(
                "UPDATE {table} SET delivered_at = {now}, deliverer = NULL WHERE id = ?",
                (job_id,),
            )
        )

    async def get(self, job_id: str) -> Job | None:
        found: Job | None = await self._do(self._get, job_id)
        return found

    async def list_jobs(
        self,
        *,
        app_name: str | None = None,
        user_id: str | None = None,
        session_id: str | None = None,
        status: JobStatus | None = None,
        limit: int = 100,
    ) -> list[Job]:
        where, params = [], []
        for column, value in (
            ("app_name", app_name),
            ("user_id", user_id),
            ("session_id", session_id),
            ("status", status.value if status is not None else None),
        ):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        clause = f" WHERE {' AND '.join(where)}" if where else ""

        def work(tx: Tx) -> list[Job]:
            rows = tx.rows(
                f"SELECT {COLUMNS} FROM {{table}}{clause} ORDER BY created_at DESC LIMIT ?",
                [*params, limit],
            )
            return [read_job(r) for r in rows]

        found: list[Job] = await self._do(work)
        return found

    async def cancel(self, job_id: str) -> Job | None:
        def work(tx: Tx) -> Job | None:
            tx.run(
                "UPDATE {table} SET status = 'CANCELLED', error_code = 'job.cancelled',"
                " error_message = 'the job was cancelled before it ran', finished_at = {now}"
                " WHERE id = ? AND status = 'PENDING'",
                (job_id,),
            )
            tx.run(
                "UPDATE {table} SET cancel_requested = 1 WHERE id = ? AND status = 'RUNNING'",
                (job_id,),
            )
            return self._get(tx, job_id)

        found: Job | None = await self._do(work)
        return found

    async def resolve(
        self,
        job_id: str,
        *,
        response: dict[str, Any] | None = None,
        error: str | None = None,
        rerun: bool = False,
    ) -> Job:
        if sum((response is not None, error is not None, rerun)) != 1:
            raise ValueError("give exactly one of response=, error= or rerun=True")

        def work(tx: Tx) -> Job:
            job = self._get(tx, job_id)
            if job is None:
                raise ValueError(f"there is no job {job_id!r}")
            if job.status not in (JobStatus.IN_DOUBT, JobStatus.FAILED):
                raise ValueError(
                    f"job {job_id} is {job.status.value}: only a job in doubt or failed is resolved"
                )
            if rerun:
                tx.run(
                    "UPDATE {table} SET status = 'PENDING', error_code = NULL,"
                    " error_message = NULL, finished_at = NULL, started_at = NULL,"
                    " delivered_at = NULL, deliverer = NULL, deliver_until = NULL,"
                    " attempt = 0, resolutions = resolutions + 1 WHERE id = ?",
                    (job_id,),
                )
            elif response is not None:
                tx.run(
                    "UPDATE {table} SET status = 'SUCCEEDED', response = ?, error_code = NULL,"
                    " error_message = NULL, delivered_at = NULL, deliverer = NULL,"
                    " deliver_until = NULL, resolutions = resolutions + 1 WHERE id = ?",
                    (dumps(response), job_id),
                )
            else:
                tx.run(
                    "UPDATE {table} SET status = 'FAILED', error_code = 'job.resolved_failed',"
                    " error_message = ?, delivered_at = NULL, deliverer = NULL,"
                    " deliver_until = NULL, resolutions = resolutions + 1 WHERE id = ?",
                    (error, job_id),
                )
            resolved = self._get(tx, job_id)
            assert resolved is not None
            return resolved

        result: Job = await self._do(work)
        return result


def _takeover(job: Job) -> tuple[JobStatus, str, str] | None:
    """What a claim does with a job: None runs it; else the status it ends in."""
    if job.status is JobStatus.PENDING or job.started_at is None:
        return None  # never started (or its holder died before the marker): run it
    if job.cancel_requested:
        return JobStatus.CANCELLED, "job.cancelled", "the job was cancelled while it ran"
    if job.idempotent:
        if job.attempt < job.max_attempts:
            return None
        return (
            JobStatus.FAILED,
            "job.attempts_exhausted",
            f"the job stopped mid-run {job.attempt} times (max_attempts={job.max_attempts})",
        )
    return JobStatus.IN_DOUBT, "tool.in_doubt", IN_DOUBT_MESSAGE.format(tool=job.tool, id=job.id)
