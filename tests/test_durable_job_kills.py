"""Durable jobs across real process deaths: a worker process is SIGKILLed at the named
moment, another process takes over, and the effects file says how often the tool ran.

- killed mid-run (after the started marker), a non-idempotent job is in doubt: the
  session gets ``tool.in_doubt`` and the tool is never run again by itself;
- killed mid-run, an idempotent job runs again and succeeds;
- killed before the marker, the job runs again;
- killed between finishing and delivering, the result is delivered once.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from _job_worker import agent

from agent_core import JobStatus, Runner, ScriptedModel, SqliteSessionService

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
KILLS = int(os.environ.get("JOB_KILLS", "3"))


def call_turn(name: str, order: str, call_id: str) -> dict[str, Any]:
    return {
        "role": "model",
        "parts": [{"functionCall": {"name": name, "args": {"order": order}, "id": call_id}}],
    }


def worker(db: Path, effects: Path, *extra: str, hold: float = 30.0) -> subprocess.Popen[str]:
    env = {**os.environ, "JOB_HOLD_S": str(hold), "PYTHONPATH": f"{ROOT}{os.pathsep}{HERE}"}
    process = subprocess.Popen(
        [sys.executable, str(HERE / "_job_worker.py"), str(db), str(effects), *extra],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "ready"
    return process


async def wait_for(predicate: Any, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if hasattr(found, "__await__"):
            found = await found
        if found:
            return
        await asyncio.sleep(0.02)
    raise AssertionError("timed out waiting")


def lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []


async def start_job(db: Path, tool_name: str, order: str) -> tuple[Runner, str]:
    front = Runner(
        agent(ScriptedModel([call_turn(tool_name, order, "c1"), "Working on it."])),
        app_name="shop",
        session_service=SqliteSessionService(db),
        job_resume="append",
        run_jobs=False,
    )
    events = [e async for e in front.run_async(user_id="u", session_id="s", new_message="go")]
    return front, events[1].get_function_responses()[0].response["job_id"]


async def final_answer(front: Runner) -> dict[str, Any]:
    session = await front.session_service.get_session(app_name="shop", user_id="u", session_id="s")
    assert session is not None
    finals = [
        r.response
        for e in session.events
        for r in e.get_function_responses()
        if r.id == "c1" and not r.will_continue
    ]
    assert len(finals) == 1, finals
    return finals[0]


async def takeover(
    db: Path, effects: Path, front: Runner, job_id: str, *, hold: float = 0.0
) -> None:
    """A second worker, until the job is delivered (then it is stopped)."""
    second = worker(db, effects, hold=hold)
    try:

        async def delivered() -> bool:
            job = await _get(front, job_id)
            return job is not None and job.delivered_at is not None

        await wait_for(delivered)
    finally:
        second.kill()
        second.wait()


async def _get(front: Runner, job_id: str) -> Any:
    from agent_core import SqliteJobStore

    store = SqliteJobStore(front.session_service.path)  # type: ignore[attr-defined]
    try:
        return await store.get(job_id)
    finally:
        await store.close()


@pytest.mark.parametrize("round_", range(KILLS))
async def test_killed_mid_run_a_non_idempotent_job_is_in_doubt_and_never_run_again(
    tmp_path: Path, round_: int
) -> None:
    db, effects = tmp_path / "shop.db", tmp_path / "effects.txt"
    front, job_id = await start_job(db, "charge", f"o{round_}")
    first = worker(db, effects)
    await wait_for(lambda: lines(effects) == [f"start o{round_}"])
    first.send_signal(signal.SIGKILL)
    first.wait()
    await takeover(db, effects, front, job_id)
    assert lines(effects) == [f"start o{round_}"], "the card was charged once, at most"
    answer = await final_answer(front)
    assert answer["error"]["code"] == "tool.in_doubt"
    job = await _get(front, job_id)
    assert job.status is JobStatus.IN_DOUBT


async def test_killed_mid_run_an_idempotent_job_runs_again(tmp_path: Path) -> None:
    db, effects = tmp_path / "shop.db", tmp_path / "effects.txt"
    front, job_id = await start_job(db, "refresh", "o1")
    first = worker(db, effects)
    await wait_for(lambda: lines(effects) == ["start o1"])
    first.send_signal(signal.SIGKILL)
    first.wait()
    await takeover(db, effects, front, job_id)
    assert lines(effects) == ["start o1", "start o1", "done o1"]
    assert await final_answer(front) == {"refreshed": "o1"}
    job = await _get(front, job_id)
    assert job.status is JobStatus.SUCCEEDED and job.attempt == 2


async def test_killed_before_the_marker_the_job_runs_again(tmp_path: Path) -> None:
    db, effects = tmp_path / "shop.db", tmp_path / "effects.txt"
    front, job_id = await start_job(db, "charge", "o1")
    first = worker(db, effects, "--die-at", "before-marker")
    first.wait(timeout=20)
    assert first.returncode == -signal.SIGKILL and lines(effects) == []
    await takeover(db, effects, front, job_id)
    assert lines(effects) == ["start o1", "done o1"]
    assert await final_answer(front) == {"charged": "o1"}


async def test_killed_between_finishing_and_delivering_the_result_is_delivered_once(
    tmp_path: Path,
) -> None:
    db, effects = tmp_path / "shop.db", tmp_path / "effects.txt"
    front, job_id = await start_job(db, "charge", "o1")
    first = worker(db, effects, "--die-at", "after-finish", hold=0.0)
    first.wait(timeout=20)
    assert first.returncode == -signal.SIGKILL
    job = await _get(front, job_id)
    assert job.status is JobStatus.SUCCEEDED and job.delivered_at is None
    await takeover(db, effects, front, job_id)
    assert lines(effects) == ["start o1", "done o1"]
    assert await final_answer(front) == {"charged": "o1"}
