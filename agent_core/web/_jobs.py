"""The Jobs part of the inspector: durable jobs of each app, one job, cancel and resolve.

``GET /api/jobs?status=&user=&session=`` lists the app's jobs, newest first (a summary of
each); ``GET /api/jobs/{id}`` gives one job whole (its arguments, progress, response or
error); ``POST /api/jobs/{id}/cancel`` cancels a pending or running job; ``POST
/api/jobs/{id}/resolve`` settles a job in doubt or failed with ``{"response": {...}}``,
``{"error": "..."}`` or ``{"rerun": true}``. The jobs are the runner's job store's (by
default the session service's database). A job of another app is not found.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tooling.web import HttpError, Reply, Request, WebServer

from .._runner import Runner
from ..jobs.base import Job, JobStatus

__all__: list[str] = []

MAX_JOBS = 500
_RESOLVE_SHAPES = '{"response": {...}}, {"error": "a message"} or {"rerun": true}'


#: What the list shows of a job (``Job.to_json``'s keys).
_SUMMARY = (
    "id",
    "status",
    "tool",
    "user_id",
    "session_id",
    "attempt",
    "max_attempts",
    "progress",
    "error_code",
    "cancel_requested",
    "created_at",
    "started_at",
    "finished_at",
)


def job_summary(job: Job) -> dict[str, Any]:
    """What the list shows of a job."""
    whole = job.to_json()
    return {key: whole[key] for key in _SUMMARY}


def job_detail(job: Job) -> dict[str, Any]:
    """One job whole: the summary, its arguments, calls and outcome."""
    return {
        **job.to_json(),
        "can_cancel": job.status.active,
        "can_resolve": job.status in (JobStatus.IN_DOUBT, JobStatus.FAILED),
    }


class JobsApi:
    """The jobs of one app, read and settled through its runner's job store."""

    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    async def jobs(
        self, *, status: JobStatus | None, user_id: str | None, session_id: str | None, limit: int
    ) -> list[dict[str, Any]]:
        found = await self.runner.job_store.list_jobs(
            app_name=self.runner.app_name,
            user_id=user_id,
            session_id=session_id,
            status=status,
            limit=limit,
        )
        return [job_summary(job) for job in found]

    async def job(self, job_id: str) -> Job:
        """The app's job ``job_id``; a 404 when there is none."""
        job = await self.runner.get_job(job_id)
        if job is None or job.app_name != self.runner.app_name:
            raise HttpError(404, f"there is no job {job_id!r} in app {self.runner.app_name!r}")
        return job

    async def cancel(self, job_id: str) -> dict[str, Any]:
        job = await self.job(job_id)
        if not job.status.active:
            raise HttpError(
                409,
                f"job {job_id} is {job.status.value}: only a pending or running job is cancelled",
            )
        cancelled = await self.runner.cancel_job(job_id)
        return job_detail(cancelled if cancelled is not None else job)

    async def resolve(self, job_id: str, body: Any) -> dict[str, Any]:
        response, error, rerun = _resolution(body)
        job = await self.job(job_id)
        if job.status not in (JobStatus.IN_DOUBT, JobStatus.FAILED):
            raise HttpError(
                409,
                f"job {job_id} is {job.status.value}: only a job in doubt or failed is resolved",
            )
        try:
            resolved = await self.runner.resolve_job(
                job_id, response=response, error=error, rerun=rerun
            )
        except ValueError as exc:  # its state changed in between
            raise HttpError(409, str(exc)) from None
        return job_detail(resolved)


def _resolution(body: Any) -> tuple[dict[str, Any] | None, str | None, bool]:
    """``(response, error, rerun)`` from a resolve request's body, exactly one given."""
    if not isinstance(body, Mapping):
        raise HttpError(400, f"the body must be a JSON object: {_RESOLVE_SHAPES}")
    given = [key for key in ("response", "error", "rerun") if key in body]
    if len(given) != 1:
        raise HttpError(400, f"give exactly one of {_RESOLVE_SHAPES}")
    if given == ["response"]:
        if not isinstance(body["response"], Mapping):
            raise HttpError(400, 'response must be a JSON object, as in {"response": {...}}')
        return dict(body["response"]), None, False
    if given == ["error"]:
        error = body["error"]
        if not isinstance(error, str) or not error.strip():
            raise HttpError(400, "error must be a message saying why the job failed")
        return None, error, False
    if body["rerun"] is not True:
        raise HttpError(400, 'rerun must be true, as in {"rerun": true}')
    return None, None, True


def _status(request: Request) -> JobStatus | None:
    text = request.query.get("status")
    if not text:
        return None
    try:
        return JobStatus(text.upper())
    except ValueError:
        names = ", ".join(s.value for s in JobStatus)
        raise HttpError(400, f"status must be one of {names}, got {text!r}") from None


def add_job_routes(server: WebServer, apps: Mapping[str, JobsApi]) -> None:
    """Serve the jobs API for ``apps`` (``?app=`` picks one, the first by default)."""

    def pick(request: Request) -> JobsApi:
        app = request.query.get("app")
        if not app:
            return next(iter(apps.values()))
        if app not in apps:
            raise HttpError(404, f"no app named {app!r}")
        return apps[app]

    def list_jobs(request: Request) -> Reply:
        found = server.run(
            pick(request).jobs(
                status=_status(request),
                user_id=request.query.get("user") or None,
                session_id=request.query.get("session") or None,
                limit=request.int_query("limit", 200, low=1, high=MAX_JOBS),
            )
        )
        return Reply({"jobs": found})

    def one_job(request: Request) -> Reply:
        return Reply(job_detail(server.run(pick(request).job(request.params["id"]))))

    def cancel(request: Request) -> Reply:
        return Reply(server.run(pick(request).cancel(request.params["id"])))

    def resolve(request: Request) -> Reply:
        body = request.json()
        return Reply(server.run(pick(request).resolve(request.params["id"], body)))

    server.route("GET", "/api/jobs", list_jobs)
    server.route("GET", r"/api/jobs/(?P<id>[^/]+)", one_job)
    server.route("POST", r"/api/jobs/(?P<id>[^/]+)/cancel", cancel)
    server.route("POST", r"/api/jobs/(?P<id>[^/]+)/resolve", resolve)
