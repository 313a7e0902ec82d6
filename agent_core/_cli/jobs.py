"""``agent-core worker`` and ``agent-core jobs``: a process that only runs durable jobs,
and the commands that look at, cancel and settle them."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import signal
from pathlib import Path
from typing import Any

from tooling.integration import EXIT_OK, CliError, CliParser, load_agent_dir

from .._job_loop import JobLoop, durable_tools
from .._runner import Runner
from ..jobs.base import Job, JobStatus
from .support import artifact_service, open_job_store, root_agent, session_service

__all__: list[str] = []


def add_job_commands(commands: Any) -> None:
    """Register ``worker`` and ``jobs`` on the ``agent-core`` parser's subcommands."""
    worker = commands.add_parser(
        "worker",
        help="run the durable jobs of FOLDER's agent until stopped",
        description=(
            "Run the durable tools' jobs of AGENT_DIR/agent.py's root_agent, sharing the "
            "sessions (and, by default, the jobs) of --session-db, until SIGINT or SIGTERM."
        ),
    )
    worker.add_argument("agent_dir", metavar="AGENT_DIR", help="a folder with agent.py")
    worker.add_argument("--session-db", metavar="URL", required=True, help="the sessions")
    worker.add_argument("--job-db", metavar="URL", help="the jobs (default: --session-db)")
    worker.add_argument(
        "--concurrency", type=int, default=4, metavar="N", help="jobs run at once (default 4)"
    )
    worker.add_argument(
        "--resume",
        choices=("auto", "append", "none"),
        default="auto",
        help="after delivering: the model answers (auto, the default), or append only",
    )
    worker.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    worker.set_defaults(handler=cmd_worker)

    jobs = commands.add_parser("jobs", help="list, show, cancel or resolve durable jobs")
    jobs.add_argument("--job-db", metavar="URL", required=True, help="where the jobs are")
    jobs.add_argument("--debug", action="store_true", help=argparse.SUPPRESS)
    what = jobs.add_subparsers(dest="jobs_command", required=True, parser_class=CliParser)
    listing = what.add_parser("list", help="jobs, newest first")
    listing.add_argument("--status", choices=[s.value for s in JobStatus])
    listing.add_argument("--user", metavar="USER")
    listing.add_argument("--session", metavar="ID")
    show = what.add_parser("show", help="one job, as JSON")
    show.add_argument("job_id", metavar="JOB_ID")
    cancel = what.add_parser("cancel", help="cancel a pending or running job")
    cancel.add_argument("job_id", metavar="JOB_ID")
    resolve = what.add_parser("resolve", help="settle a job in doubt")
    resolve.add_argument("job_id", metavar="JOB_ID")
    how = resolve.add_mutually_exclusive_group(required=True)
    how.add_argument("--response", metavar="JSON", help="its response: a JSON object")
    how.add_argument("--error", metavar="TEXT", help="fail it with this message")
    how.add_argument("--rerun", action="store_true", help="run it again")
    jobs.set_defaults(handler=cmd_jobs)


def cmd_worker(args: argparse.Namespace) -> int:
    """Run jobs until a signal stops the process."""
    folder = Path(args.agent_dir)
    root = root_agent(load_agent_dir(folder), folder)
    if not durable_tools(root):
        raise CliError(f"{folder / 'agent.py'}'s agent has no durable tools (@tool(durable=...))")
    runner = Runner(
        root,
        app_name=folder.resolve().name,
        session_service=session_service(args.session_db),
        artifact_service=artifact_service(args.session_db),
        job_store=open_job_store(args.job_db or args.session_db),
    )

    async def serve() -> None:
        loop = JobLoop(runner, runner.job_store, resume=args.resume, concurrency=args.concurrency)
        task = asyncio.ensure_future(loop.run())
        running = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            running.add_signal_handler(sig, task.cancel)
        print(f"worker {loop.owner}: running jobs of {', '.join(sorted(loop.tools))}", flush=True)
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await runner.aclose()

    asyncio.run(serve())
    return EXIT_OK


def _summary(job: Job) -> str:
    return f"{job.id}  {job.status.value:<9}  {job.tool}  session {job.session_id}"


def cmd_jobs(args: argparse.Namespace) -> int:
    """``jobs list|show|cancel|resolve``."""
    store = open_job_store(args.job_db)

    async def act() -> int:
        try:
            if args.jobs_command == "list":
                status = JobStatus(args.status) if args.status else None
                for listed in await store.list_jobs(
                    user_id=args.user, session_id=args.session, status=status
                ):
                    print(_summary(listed))
                return EXIT_OK
            job: Job | None
            if args.jobs_command == "cancel":
                job = await store.cancel(args.job_id)
            elif args.jobs_command == "resolve":
                response = None
                if args.response is not None:
                    response = json.loads(args.response)
                    if not isinstance(response, dict):
                        raise CliError("--response must be a JSON object")
                try:
                    job = await store.resolve(
                        args.job_id, response=response, error=args.error, rerun=args.rerun
                    )
                except ValueError as exc:
                    raise CliError(str(exc)) from exc
            else:
                job = await store.get(args.job_id)
            if job is None:
                raise CliError(f"there is no job {args.job_id!r}")
            print(json.dumps(job.to_json(), indent=2, ensure_ascii=False))
            return EXIT_OK
        finally:
            await store.close()

    return asyncio.run(act())
