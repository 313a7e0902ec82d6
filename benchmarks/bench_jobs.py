"""What durable jobs cost: answering pending, taking over after a kill, many workers.

    python benchmarks/bench_jobs.py            # all three
    python benchmarks/bench_jobs.py --quick    # fewer runs and jobs

1. A run whose model calls a durable tool (the job committed, the call answered
   "pending", the model's reply stored), p50/p95 over 100 runs on SQLite sessions and
   jobs; the baseline in the same run is the same run calling a plain long-running tool
   (no job). Goal: p95 ≤ 50 ms.
2. Takeover: a worker process SIGKILLed mid-run (lease 0.5 s); a second worker, already
   polling, settles the job; the time from the kill to the job's delivery. Goal ≤ lease + 1 s.
3. 4 job loops sharing one PostgreSQL store (4 jobs at once each) run 400 jobs of 50 ms;
   the ideal is 400 × 50 ms / 16. Goal ≤ 2 × ideal + 2 s. PostgreSQL: ``--dsn`` or
   ``AGENT_CORE_TEST_POSTGRES``, else a throwaway server (``tests/_pg_server.py``).

Not run in CI.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _timing import load_avg, table

HERE = Path(__file__).parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from agent_core import (  # noqa: E402
    Agent,
    PostgresJobStore,
    Runner,
    ScriptedModel,
    SqliteJobStore,
    SqliteSessionService,
)
from agent_core.jobs.base import JobCall  # noqa: E402
from tooling import JobOptions, tool  # noqa: E402


@tool(durable=True)
def durable_noop(n: int) -> int:
    """Return n.

    Args:
        n: A number.
    """
    return n


@tool(long_running=True)
def plain_noop(n: int) -> None:
    """Start something and return.

    Args:
        n: A number.
    """


@tool(durable=JobOptions(dedupe="none"))
async def sleep_50ms(n: int) -> int:
    """Sleep 50 ms.

    Args:
        n: A number.
    """
    await asyncio.sleep(0.05)
    return n


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def bench_pending(runs: int, folder: Path) -> list[str]:
    def turns(name: str) -> list[dict[str, object]]:
        out: list[dict[str, object]] = []
        for i in range(runs):
            out.append(
                {"role": "model", "parts": [{"functionCall": {"name": name, "args": {"n": i}}}]}
            )
            out.append({"role": "model", "parts": [{"text": "ok"}]})
        return out

    timings: dict[str, list[float]] = {}
    for name, tool_ in (("durable_noop", durable_noop), ("plain_noop", plain_noop)):
        db = folder / f"{name}.db"
        model = ScriptedModel(turns(name))
        runner = Runner(
            Agent("a", model, tools=[tool_]),
            app_name="bench",
            session_service=SqliteSessionService(db),
            job_store=SqliteJobStore(db),
            run_jobs=False,
        )
        times = []
        for i in range(runs):
            started = time.perf_counter()
            async for _ in runner.run_async(user_id="u", session_id=f"s{i}", new_message="go"):
                pass
            times.append(time.perf_counter() - started)
        timings[name] = times
        await runner.aclose()
    ours, base = timings["durable_noop"], timings["plain_noop"]
    return [
        f"call -> pending, SQLite ({runs} runs)",
        f"{_p(ours, 0.5):.1f} / {_p(ours, 0.95):.1f} ms",
        f"{_p(base, 0.5):.1f} / {_p(base, 0.95):.1f} ms",
        "≤ 50 ms p95",
        "yes" if _p(ours, 0.95) <= 50 else "NO",
    ]


async def bench_takeover(folder: Path) -> list[str]:
    from _job_worker import agent

    db, effects = folder / "shop.db", folder / "effects.txt"
    call = {"name": "charge", "args": {"order": "o1"}, "id": "c1"}
    front = Runner(
        agent(ScriptedModel([{"role": "model", "parts": [{"functionCall": call}]}, "ok"])),
        app_name="shop",
        session_service=SqliteSessionService(db),
        run_jobs=False,
        job_resume="append",
    )  # fmt: skip
    events = [e async for e in front.run_async(user_id="u", session_id="s", new_message="go")]
    job_id = events[1].get_function_responses()[0].response["job_id"]
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'tests'}"}

    def start(hold: str) -> subprocess.Popen[str]:
        p = subprocess.Popen(
            [sys.executable, str(ROOT / "tests" / "_job_worker.py"), str(db), str(effects)],
            stdout=subprocess.PIPE, text=True, env={**env, "JOB_HOLD_S": hold},
        )  # fmt: skip
        assert p.stdout is not None and p.stdout.readline().strip() == "ready"
        return p

    first = start("30")
    while not (effects.exists() and effects.read_text()):
        await asyncio.sleep(0.01)
    second = start("0")
    store = SqliteJobStore(db)
    killed = time.perf_counter()
    first.send_signal(signal.SIGKILL)
    while True:
        job = await store.get(job_id)
        if job is not None and job.delivered_at is not None:
            break
        await asyncio.sleep(0.01)
    took = time.perf_counter() - killed
    second.kill()
    first.wait()
    second.wait()
    await store.close()
    return [
        "kill -> taken over and delivered (lease 0.5 s)",
        f"{took:.2f} s",
        "",
        "≤ 1.5 s",
        "yes" if took <= 1.5 else "NO",
    ]


async def bench_workers(dsn: str, jobs: int) -> list[str]:
    table_name = f"bench_jobs_{os.getpid()}"
    submitter = PostgresJobStore(dsn, table=table_name)
    for i in range(jobs):
        await submitter.submit(
            key=None, app_name="bench", call=JobCall(f"c{i}", "u", f"s{i}", "a"),
            tool="sleep_50ms", args={"n": i}, fingerprint="f", max_attempts=1,
            idempotent=False, lease=10,
        )  # fmt: skip
    runners = [
        Runner(
            Agent("a", ScriptedModel([]), tools=[sleep_50ms]),
            app_name="bench",
            job_store=PostgresJobStore(dsn, table=table_name),
            job_resume="none",
        )
        for _ in range(4)
    ]
    started = time.perf_counter()
    await asyncio.gather(*(r.run_jobs() for r in runners))
    took = time.perf_counter() - started
    done = await submitter.list_jobs(limit=jobs + 10)
    assert sum(j.status.value == "SUCCEEDED" for j in done) == jobs, "every job ran once"
    ideal = jobs * 0.05 / 16
    for r in runners:
        await r.job_store.close()
    await submitter.close()
    return [
        f"4 loops x {jobs} jobs of 50 ms, PostgreSQL",
        f"{took:.2f} s",
        f"ideal {ideal:.2f} s",
        f"≤ {2 * ideal + 2:.2f} s",
        "yes" if took <= 2 * ideal + 2 else "NO",
    ]


async def main() -> None:
    parser = argparse.ArgumentParser(description="Benchmark durable jobs.")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--dsn", default=os.environ.get("AGENT_CORE_TEST_POSTGRES", ""))
    opts = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        rows.append(await bench_pending(30 if opts.quick else 100, Path(folder)))
        rows.append(await bench_takeover(Path(folder)))
    server = None
    dsn = opts.dsn
    if not dsn:
        from _pg_server import PgServer

        server = PgServer.start()
        dsn = server.dsn
    try:
        rows.append(await bench_workers(dsn, 100 if opts.quick else 400))
    finally:
        if server is not None:
            server.stop()
    print(
        table(
            "durable jobs",
            ["case", "ours (p50 / p95)", "baseline", "goal", "met"],
            rows,
            [f"Python {sys.version.split()[0]}, {load_avg()}"],
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
