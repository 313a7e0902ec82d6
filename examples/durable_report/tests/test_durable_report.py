"""The durable_report example: the chat answers pending (and joins), then a worker
process started with ``agent-core worker`` finishes the job after the chat is over."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

from agent_core import JobStatus, SqliteJobStore, SqliteSessionService
from examples._snapshots import check_snapshot, replay_offline

EXAMPLE = Path(__file__).resolve().parent.parent
ROOT = EXAMPLE.parent.parent


def test_replay_matches_snapshot() -> None:
    replay = check_snapshot(EXAMPLE)
    first = replay.exchanges[0].events[1].get_function_responses()[0]
    second = replay.exchanges[1].events[1].get_function_responses()[0]
    assert first.response["status"] == "pending" and first.will_continue
    assert second.response["job_id"] == first.response["job_id"]
    assert second.response["joined"] is True


async def test_a_worker_process_finishes_the_report_after_the_chat_exits(tmp_path: Path) -> None:
    db = tmp_path / "reports.db"
    replay = await asyncio.to_thread(
        replay_offline, EXAMPLE, session_service=SqliteSessionService(db)
    )
    job_id = replay.exchanges[0].events[1].get_function_responses()[0].response["job_id"]
    env = {**os.environ, "DURABLE_REPORT_SECTION_S": "0", "PYTHONPATH": str(ROOT)}
    worker = subprocess.Popen(
        [sys.executable, "-m", "agent_core.cli", "worker", str(EXAMPLE),
         "--session-db", str(db), "--resume", "append"],
        stdout=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    store = SqliteJobStore(db)
    try:
        assert worker.stdout is not None
        assert worker.stdout.readline().startswith("worker ")
        for _ in range(400):
            job = await store.get(job_id)
            if job is not None and job.delivered_at is not None:
                break
            await asyncio.sleep(0.05)
    finally:
        worker.terminate()
        worker.wait(timeout=20)
    assert job is not None and job.status is JobStatus.SUCCEEDED
    assert job.progress == {"written": ["revenue", "costs", "headcount", "outlook"], "of": 4}
    assert worker.returncode == 0, "SIGTERM stops the worker cleanly"

    listing = subprocess.run(
        [sys.executable, "-m", "agent_core.cli", "jobs", "--job-db", str(db), "list"],
        capture_output=True, text=True, env=env, cwd=ROOT, check=True,
    )  # fmt: skip
    assert job_id in listing.stdout and "SUCCEEDED" in listing.stdout
    shown = subprocess.run(
        [sys.executable, "-m", "agent_core.cli", "jobs", "--job-db", str(db), "show", job_id],
        capture_output=True, text=True, env=env, cwd=ROOT, check=True,
    )  # fmt: skip
    whole = json.loads(shown.stdout)
    assert whole["id"] == job_id and whole["status"] == "SUCCEEDED"
    assert whole["response"]["title"] == "EMEA report, 2026-Q3" and len(whole["call_ids"]) == 2

    sessions = SqliteSessionService(db)
    [session_id] = [s.id for s in await sessions.list_sessions(app_name="durable_report")]
    user_id = (await sessions.list_sessions(app_name="durable_report"))[0].user_id
    session = await sessions.get_session(
        app_name="durable_report", user_id=user_id, session_id=session_id
    )
    assert session is not None
    finals = [
        r.response
        for e in session.events
        for r in e.get_function_responses()
        if not r.will_continue
    ]
    # Both calls (the first and the one that joined) have the one report.
    assert len(finals) == 2 and all(f["title"] == "EMEA report, 2026-Q3" for f in finals)
    await store.close()
