"""A job worker process for the kill tests: runs the durable tools below from a store.

    python tests/_job_worker.py SESSION_DB EFFECTS_FILE [--die-at before-marker|after-finish]

Each tool appends ``start <order>`` to the effects file when its body begins, holds for
``JOB_HOLD_S`` seconds (default 30: long enough to be killed mid-run), then appends
``done <order>``. ``--die-at`` makes the process kill itself (SIGKILL) at that moment:
just before the started marker would be committed, or just after the job's result is
committed and before it is delivered.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

from agent_core import Agent, Runner, ScriptedModel, SqliteSessionService
from tooling import JobOptions, tool

EFFECTS = Path(os.environ.get("JOB_EFFECTS", "/dev/null"))
HOLD_S = float(os.environ.get("JOB_HOLD_S", "30"))
LEASE = JobOptions(lease=0.5)


def _effect(line: str) -> None:
    with EFFECTS.open("a") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


@tool(durable=LEASE)
def charge(order: str) -> dict[str, Any]:
    """Charge an order (not idempotent: a second charge is a second payment).

    Args:
        order: The order id.
    """
    _effect(f"start {order}")
    time.sleep(HOLD_S)
    _effect(f"done {order}")
    return {"charged": order}


@tool(durable=LEASE, idempotent=True)
def refresh(order: str) -> dict[str, Any]:
    """Refresh an order's status (idempotent: running it twice is harmless).

    Args:
        order: The order id.
    """
    _effect(f"start {order}")
    time.sleep(HOLD_S)
    _effect(f"done {order}")
    return {"refreshed": order}


def agent(model: Any = None) -> Agent:
    return Agent("shop", model or ScriptedModel([]), tools=[charge, refresh])


def _die() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


async def main(db: str, die_at: str | None) -> None:
    runner = Runner(
        agent(), app_name="shop", session_service=SqliteSessionService(db), job_resume="append"
    )
    store = runner.job_store
    if die_at == "before-marker":

        async def mark_started(job_id: str, owner: str) -> bool:
            _die()
            return False

        store.mark_started = mark_started  # type: ignore[method-assign]
    elif die_at == "after-finish":
        finish = store.finish

        async def finish_then_die(*args: Any, **kwargs: Any) -> bool:
            done = await finish(*args, **kwargs)
            _die()
            return done

        store.finish = finish_then_die  # type: ignore[method-assign]
    print("ready", flush=True)
    await runner.run_jobs(until_idle=False)


if __name__ == "__main__":
    die = sys.argv[sys.argv.index("--die-at") + 1] if "--die-at" in sys.argv else None
    os.environ.setdefault("JOB_EFFECTS", sys.argv[2])
    EFFECTS = Path(sys.argv[2])
    asyncio.run(main(sys.argv[1], die))
