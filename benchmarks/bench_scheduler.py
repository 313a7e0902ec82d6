"""What ``tooling.Scheduler`` costs, as ratios to baselines measured in the same run.

    .venv/bin/python benchmarks/bench_scheduler.py              # about a minute
    .venv/bin/python benchmarks/bench_scheduler.py --quick      # ~15 s, rougher numbers
    .venv/bin/python benchmarks/bench_scheduler.py --clock cpu  # steadier on a busy machine
    .venv/bin/python benchmarks/bench_scheduler.py --profile    # cProfile of dispatch()
    .venv/bin/python benchmarks/bench_scheduler.py --only 1,3   # some sections only

Sections: 1 dispatch() overhead on no-op tools vs ``asyncio.gather`` of ``tool.run``;
2 fifty 10 ms sleeps in one turn vs a bare ``gather`` / a bare 50-thread executor;
3 progress throughput through ``Scheduler.stream`` to a fast consumer; 4 google-adk's
``handle_function_calls_async`` on the same 50-call turns, from its own venv
(``.bench-venvs/adk``; skipped when it is missing, and always in CI); 5 a warm
``isolation="process"`` call vs a bare ``ProcessPoolExecutor`` round trip; 6 twenty
writes to different ``conflict_key``s vs twenty bare overlapped sleeps. ``--clock cpu``
applies to the cases that run on one thread only (async no-ops); anything that waits
on worker threads or sleeps is timed on the wall clock. Numbers are medians of
interleaved rounds; ``ok?`` compares with the issue's targets. This is a script, not a
test: nothing here fails a build.
"""

from __future__ import annotations

import asyncio
import cProfile
import json
import os
import platform
import statistics
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pydantic
from _timing import (
    Case,
    base_parser,
    fmt_ns,
    fmt_ratio,
    load_avg,
    loop,
    measure,
    profile_report,
    ratio,
    set_clock,
    table,
    verdict,
)

import tooling
from tooling import (
    ExecutionStrategy,
    Scheduler,
    ToolCall,
    ToolContext,
    ToolProgress,
    ToolRuntime,
    tool,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_ADK_VENV = ROOT / ".bench-venvs" / "adk"
HEADER = ["case", "ours", "baseline", "ratio", "target", "ok?"]
CHUNK = "0123456789abcdef"  # 16 bytes of progress per chunk


@dataclass(frozen=True)
class Config:
    rounds: int  # interleaved rounds per measurement (median taken)
    budget_ms: float  # time per round per calibrated case
    thread_rounds: int  # the same for cases that hop to worker threads (noisier)
    thread_budget_ms: float
    sleep_n: int  # 50-sleep turns per round per case
    chunks: int  # progress chunks one call emits
    progress_runs: int  # interleaved runs per progress case
    adk_rounds: int  # alternating subprocess pairs (ours, adk)
    adk_inner: tuple[int, float]  # rounds, budget_ms inside each subprocess


FULL = Config(
    rounds=15,
    budget_ms=10,
    thread_rounds=25,
    thread_budget_ms=25,
    sleep_n=4,
    chunks=20_000,
    progress_runs=9,
    adk_rounds=3,
    adk_inner=(5, 20),
)
QUICK = Config(
    rounds=7,
    budget_ms=3,
    thread_rounds=9,
    thread_budget_ms=8,
    sleep_n=2,
    chunks=5_000,
    progress_runs=3,
    adk_rounds=1,
    adk_inner=(3, 8),
)


# -- the tools --------------------------------------------------------------------------------


async def noop_async(i: int) -> int:
    """Return the number given."""
    return i


def noop_sync(i: int) -> int:
    """Return the number given."""
    return i


async def nap_async(i: int) -> int:
    """Sleep 10 ms without blocking the event loop."""
    await asyncio.sleep(0.01)
    return i


def nap_sync(i: int) -> int:
    """Sleep 10 ms, blocking the thread."""
    time.sleep(0.01)
    return i


async def emit_async(n: int, tool_context: ToolContext) -> int:
    """Emit ``n`` progress chunks, giving the event loop a turn after each."""
    for _ in range(n):
        tool_context.emit_progress("stdout", CHUNK)
        await asyncio.sleep(0)
    return n


async def emit_burst(n: int, tool_context: ToolContext) -> int:
    """Emit ``n`` progress chunks without ever awaiting."""
    for _ in range(n):
        tool_context.emit_progress("stdout", CHUNK)
    return n


def emit_sync(n: int, tool_context: ToolContext) -> int:
    """Emit ``n`` progress chunks from a worker thread."""
    for _ in range(n):
        tool_context.emit_progress("stdout", CHUNK)
    return n


def calls_to(name: str, count: int, **args: Any) -> list[ToolCall]:
    return [ToolCall(id=f"call-{i}", name=name, args={"i": i, **args}) for i in range(count)]


def safe(func: Any, name: str | None = None) -> Any:
    """``func`` as a read-only, concurrency-safe tool (AUTO runs such calls together)."""
    return tool(func, name=name or func.__name__, read_only=True, concurrency_safe=True)


# -- 1. overhead on no-ops ----------------------------------------------------------------------


def bench_overhead(cfg: Config) -> str:
    ev = loop()
    a_safe = safe(noop_async)
    a_plain = tool(noop_async, name="noop_async_plain")
    s_safe = safe(noop_sync)
    scheduler = Scheduler([a_safe, a_plain, s_safe])
    rows_spec = [
        # label, tool, calls, wall clock?
        ("1 async no-op", a_safe, 1, False),
        ("50 async no-ops (read_only+concurrency_safe)", a_safe, 50, False),
        ("50 async no-ops (plain flags: AUTO runs them one by one)", a_plain, 50, False),
        ("1 sync no-op [thread]", s_safe, 1, True),
        ("50 sync no-ops [threads] (read_only+concurrency_safe)", s_safe, 50, True),
    ]
    cases: dict[str, Case] = {}
    for label, t, count, wall in rows_spec:
        calls = calls_to(t.name, count)
        args = [c.args for c in calls]
        ev.run_until_complete(scheduler.dispatch(calls))  # warm: specs, worker threads
        ev.run_until_complete(asyncio.gather(*(t.run(a) for a in args)))
        cases[f"{label} ours"] = Case(
            "await s.dispatch(c)", {"s": scheduler, "c": calls}, wall=wall
        )
        cases[f"{label} base"] = Case(
            "await gather(*(t.run(a) for a in A))",
            {"gather": asyncio.gather, "t": t, "A": args},
            wall=wall,
        )
        if wall:  # the same gather on the scheduler's own pool: what the pool alone explains
            cases[f"{label} pool"] = Case(
                "await gather(*(t.respond(t.check_arguments(a), runtime=r) for a in A))",
                {"gather": asyncio.gather, "t": t, "A": args, "r": ToolRuntime(scheduler.pool)},
                wall=wall,
            )
    # Single-thread cases (any clock) and thread-hop cases (wall clock, more and longer
    # rounds: they are far noisier on a busy machine) are measured apart.
    threaded = {k: c for k, c in cases.items() if c.wall}
    res = measure(
        {k: c for k, c in cases.items() if not c.wall}, rounds=cfg.rounds, budget_ms=cfg.budget_ms
    )
    res |= measure(threaded, rounds=cfg.thread_rounds, budget_ms=cfg.thread_budget_ms)
    scheduler.close()
    rows = []
    for label, _, count, _ in rows_spec:
        ours, base = res[f"{label} ours"], res[f"{label} base"]
        same_pool = res.get(f"{label} pool")
        r = ratio(ours, base)
        info = "plain flags" in label
        limit = 1.2 if label.startswith("50 async") else 1.3
        rows.append(
            [
                label,
                fmt_ns(ours),
                fmt_ns(base),
                fmt_ratio(r),
                "—" if info else f"≤ {limit:.2f}×",
                "" if info else verdict(None if r is None else r <= limit),
                fmt_ns((ours - base) / count),
                ""
                if same_pool is None
                else f"{fmt_ns(same_pool)} ({fmt_ratio(ratio(ours, same_pool))})",
            ]
        )
    return table(
        "1. dispatch() of no-op calls vs asyncio.gather(*(tool.run(a) for a in args))",
        [*HEADER, "extra per call", "gather on the scheduler's pool (ratio)"],
        rows,
        [
            "ours: await Scheduler(AUTO).dispatch(calls);"
            " baseline: the same tools' run() gathered.",
            "sync rows run on worker threads (wall clock): ours on the scheduler's pool (64"
            " threads), baseline on tool.run()'s process-wide pool"
            f" ({tooling._workers.threads.default_executor().max_threads} threads); the last column"
            " gathers tool.respond(..., runtime=ToolRuntime(scheduler.pool)) instead, to"
            " separate the pool's share from the scheduler's.",
            "the plain-flags row is informative: AUTO treats those calls as barriers and runs"
            " them in turn, inline (no tasks); its baseline still gathers them.",
        ],
    )


# -- 2. fifty sleeps in one turn ----------------------------------------------------------------


def bench_sleeps(cfg: Config) -> str:
    ev = loop()
    auto = Scheduler([safe(nap_async), safe(nap_sync)])
    parallel = Scheduler([safe(nap_sync)], strategy=ExecutionStrategy.PARALLEL)
    bare_pool = ThreadPoolExecutor(max_workers=50, thread_name_prefix="bench-bare")
    async_calls, sync_calls = calls_to("nap_async", 50), calls_to("nap_sync", 50)
    fifty = range(50)

    async def bare_threads() -> None:
        await asyncio.gather(*(ev.run_in_executor(bare_pool, time.sleep, 0.01) for _ in fifty))

    # Warm every pool to its 50 threads before timing.
    ev.run_until_complete(auto.dispatch(sync_calls))
    ev.run_until_complete(parallel.dispatch(sync_calls))
    ev.run_until_complete(bare_threads())
    n = cfg.sleep_n
    cases = {
        "async ours": Case("await s.dispatch(c)", {"s": auto, "c": async_calls}, n=n, wall=True),
        "async base": Case(
            "await gather(*(sleep(0.01) for _ in R))",
            {"gather": asyncio.gather, "sleep": asyncio.sleep, "R": fifty},
            n=n,
            wall=True,
        ),
        "sync auto": Case("await s.dispatch(c)", {"s": auto, "c": sync_calls}, n=n, wall=True),
        "sync parallel": Case(
            "await s.dispatch(c)", {"s": parallel, "c": sync_calls}, n=n, wall=True
        ),
        "sync base": Case("await bare()", {"bare": bare_threads}, n=n, wall=True),
    }
    res = measure(cases, rounds=cfg.rounds, budget_ms=cfg.budget_ms)
    auto.close()
    parallel.close()
    bare_pool.shutdown()
    rows = []
    for label, ours_key, base_key, limit in (
        ("50 x await asyncio.sleep(0.01), AUTO", "async ours", "async base", 1.2),
        ("50 x time.sleep(0.01) [threads], AUTO", "sync auto", "sync base", 1.3),
        ("50 x time.sleep(0.01) [threads], PARALLEL", "sync parallel", "sync base", 1.3),
    ):
        ours, base = res[ours_key], res[base_key]
        r = ratio(ours, base)
        rows.append(
            [
                label,
                fmt_ns(ours),
                fmt_ns(base),
                fmt_ratio(r),
                f"≤ {limit:.2f}×",
                verdict(None if r is None else r <= limit),
                fmt_ns(ours - 10e6),
                fmt_ns(base - 10e6),
            ]
        )
    return table(
        "2. Fifty 10 ms sleeps in one turn (wall clock)",
        [*HEADER, "ours - 10 ms", "baseline - 10 ms"],
        rows,
        [
            "tools are read_only + concurrency_safe, so AUTO runs the 50 calls together.",
            "async baseline: await asyncio.gather(*(asyncio.sleep(0.01) for _ in range(50))).",
            "thread baseline: a warm ThreadPoolExecutor(max_workers=50) running time.sleep(0.01)"
            " 50 times via loop.run_in_executor, gathered.",
            f"{n} turns per round per case.",
        ],
    )


# -- 3. progress throughput ---------------------------------------------------------------------


async def _stream_once(scheduler: Scheduler, name: str, n: int) -> tuple[int, int, int, int]:
    """One call emitting ``n`` chunks, read by a fast consumer: ns, delivered, dropped, markers."""
    delivered = dropped = markers = 0
    start = time.perf_counter_ns()
    async with scheduler.stream([ToolCall(id="p", name=name, args={"n": n})]) as items:
        async for item in items:
            if isinstance(item, ToolProgress):
                if item.dropped:
                    dropped += item.dropped
                    markers += 1
                else:
                    delivered += 1
    return time.perf_counter_ns() - start, delivered, dropped, markers


async def _queue_once(kind: str, n: int, pool: Any) -> tuple[int, int, int, int]:
    """The same through a bare asyncio.Queue (the baseline): ns, delivered, dropped, 0."""
    ev = asyncio.get_running_loop()
    delivered = dropped = 0
    done = object()
    start = time.perf_counter_ns()
    if kind == "sync":
        # A worker thread hands each chunk to the loop: unbounded, nothing dropped.
        q: asyncio.Queue[Any] = asyncio.Queue()

        def produce_in_thread() -> None:
            for _ in range(n):
                ev.call_soon_threadsafe(q.put_nowait, CHUNK)
            ev.call_soon_threadsafe(q.put_nowait, done)

        worker = ev.run_in_executor(pool, produce_in_thread)
    else:
        q = asyncio.Queue(maxsize=256)  # the scheduler's queue bound; drop when full

        async def produce() -> None:
            nonlocal dropped
            for _ in range(n):
                try:
                    q.put_nowait(CHUNK)
                except asyncio.QueueFull:
                    dropped += 1
                if kind == "async":
                    await asyncio.sleep(0)
            await q.put(done)

        worker = asyncio.ensure_future(produce())
    while await q.get() is not done:
        delivered += 1
    await worker
    return time.perf_counter_ns() - start, delivered, dropped, 0


def bench_progress(cfg: Config) -> str:
    ev = loop()
    scheduler = Scheduler([emit_async, emit_burst, emit_sync])
    pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="bench-progress")
    n = cfg.chunks
    kinds = {"async": "emit_async", "burst": "emit_burst", "sync": "emit_sync"}
    for kind, name in kinds.items():  # warm
        ev.run_until_complete(_stream_once(scheduler, name, 100))
        ev.run_until_complete(_queue_once(kind, 100, pool))
    samples: dict[str, list[tuple[int, int, int, int]]] = {}
    for r in range(cfg.progress_runs):
        for kind, name in kinds.items():
            pair = [
                (f"{kind} ours", lambda name=name: _stream_once(scheduler, name, n)),
                (f"{kind} base", lambda kind=kind: _queue_once(kind, n, pool)),
            ]
            if r % 2:
                pair.reverse()
            for key, make in pair:
                samples.setdefault(key, []).append(ev.run_until_complete(make()))
    scheduler.close()
    pool.shutdown()

    def summary(key: str) -> tuple[float, float, float, float, float]:
        runs = samples[key]
        rate = statistics.median(d / (ns / 1e9) for ns, d, _, _ in runs)
        return (
            rate,
            statistics.median(ns for ns, _, _, _ in runs),
            statistics.median(d for _, d, _, _ in runs),
            statistics.median(x for _, _, x, _ in runs),
            statistics.median(m for _, _, _, m in runs),
        )

    rows = []
    for kind, label in (
        ("async", "async tool, awaits after each chunk"),
        ("burst", "async tool, burst (never awaits)"),
        ("sync", "sync tool on a worker thread"),
    ):
        o_rate, o_ns, o_del, o_drop, o_mark = summary(f"{kind} ours")
        b_rate, b_ns, b_del, b_drop, _ = summary(f"{kind} base")
        rows.append(
            [
                f"{label}, {n:,} chunks",
                f"{o_rate:,.0f}/s",
                f"{b_rate:,.0f}/s",
                fmt_ratio(ratio(o_rate, b_rate)),
                "—",
                "",
                f"{o_del:,.0f} / {o_drop:,.0f} ({o_mark:.0f} markers)",
                f"{b_del:,.0f} / {b_drop:,.0f}",
                f"{fmt_ns(o_ns)} / {fmt_ns(b_ns)}",
                f"{n / (o_ns / 1e9):,.0f}/s",
            ]
        )
    return table(
        "3. Progress throughput: chunks delivered per second to a fast consumer (wall clock)",
        [
            *HEADER,
            "ours delivered / dropped",
            "baseline delivered / dropped",
            "elapsed ours / baseline",
            "ours emitted",
        ],
        rows,
        [
            "ours: one call through `async with Scheduler.stream(...)`, the consumer counting"
            " ToolProgress items (markers' `dropped` summed); rate = delivered / elapsed;"
            " the ratio is ours / baseline throughput (higher is better).",
            "baseline: an asyncio.Queue(maxsize=256) filled with put_nowait (dropping when full)"
            " for async producers; for the thread, loop.call_soon_threadsafe(q.put_nowait, chunk)"
            " into an unbounded queue (no bound, no drops).",
            "ours emitted = chunks the tool emitted (delivered or dropped) per second of the"
            " whole stream.",
            f"{len(CHUNK)}-byte chunks; medians of {cfg.progress_runs} interleaved runs.",
        ],
    )


# -- 4. google-adk ----------------------------------------------------------------------------


def adk_python(venv: Path) -> Path | None:
    """The venv's python when it exists and imports google.adk; never builds it."""
    python = venv / "bin" / "python"
    if not python.exists():
        return None
    probe = subprocess.run(
        [str(python), "-c", "import google.adk.flows.llm_flows.functions"], capture_output=True
    )
    return python if probe.returncode == 0 else None


def run_side(python: str, script: str, args: list[str]) -> dict[str, Any]:
    out = subprocess.run(
        [python, script, *args],
        cwd=str(HERE),
        check=True,
        capture_output=True,
        text=True,
        timeout=900,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_adk(cfg: Config, adk: Path, clock: str) -> str:
    inner_rounds, budget = cfg.adk_inner
    script = str(HERE / "_adk_scheduler_side.py")
    flags = ["--rounds", str(inner_rounds), "--budget-ms", str(budget), "--clock", clock]
    runs: dict[str, list[dict[str, Any]]] = {"ours": [], "adk": []}
    for _ in range(cfg.adk_rounds):  # alternate: ours, adk, ours, adk, ...
        runs["ours"].append(run_side(sys.executable, script, ["--impl", "ours", *flags]))
        runs["adk"].append(run_side(str(adk), script, ["--impl", "adk", *flags]))

    def med(impl: str, case: str) -> float | None:
        values = [r["results"].get(case) for r in runs[impl]]
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    rows = []
    for label, ours_case, adk_case in (
        ("50 x await asyncio.sleep(0.01)", "async_sleep", "async_sleep"),
        ("50 x time.sleep(0.01), adk inline (its default)", "sync_sleep", "sync_sleep"),
        ("50 x time.sleep(0.01), adk thread pool (64)", "sync_sleep", "sync_sleep_pool"),
        ("50 async no-ops", "async_noop", "async_noop"),
        ("50 sync no-ops, adk inline (its default)", "sync_noop", "sync_noop"),
        ("50 sync no-ops, adk thread pool (64)", "sync_noop", "sync_noop_pool"),
    ):
        ours, theirs = med("ours", ours_case), med("adk", adk_case)
        sleeps = "sleep" in label
        rows.append(
            [
                label,
                fmt_ns(ours),
                fmt_ns(theirs),
                fmt_ratio(ratio(ours, theirs)),
                "—",
                "",
                fmt_ns(ours - 10e6) if sleeps and ours is not None else "",
                fmt_ns(theirs - 10e6) if sleeps and theirs is not None else "",
            ]
        )
    versions = f"agent-tooling {runs['ours'][0]['version']}, google-adk {runs['adk'][0]['version']}"
    return table(
        "4. One 50-call turn vs google-adk's handle_function_calls_async",
        ["case", "ours", "google-adk", "ratio", "target", "ok?", "ours - 10 ms", "adk - 10 ms"],
        rows,
        [
            f"{cfg.adk_rounds} alternating subprocess pairs (ours, adk), medians; {versions}.",
            "ours: await Scheduler(AUTO).dispatch(50 ToolCalls), tools read_only +"
            " concurrency_safe; sync tools on the scheduler's thread pool.",
            "google-adk: await handle_function_calls_async(invocation_context,"
            " function_call_event, tools_dict) with FunctionTools on an LlmAgent and an"
            " InMemorySessionService session; it also merges the 50 responses into one Event"
            " (ours returns the ToolResponse list; the agent loop builds the event, see"
            " bench_agent.py).",
            "google-adk runs sync tools inline on the event loop (one after another) unless"
            " RunConfig.tool_thread_pool_config is set; both are shown.",
            f"sleep and sync rows on the wall clock; async no-ops on the {clock} clock.",
        ],
    )


# -- profile ------------------------------------------------------------------------------------


def profile_hot_spots() -> str:
    """cProfile of dispatch(): 50 async no-ops, 1 async no-op, 50 sync no-ops."""
    out = []
    ev = loop()
    scheduler = Scheduler([safe(noop_async), safe(noop_sync)])
    for name, count, repeat in (
        ("noop_async", 50, 400),
        ("noop_async", 1, 10_000),
        ("noop_sync", 50, 200),
    ):
        calls = calls_to(name, count)
        ev.run_until_complete(scheduler.dispatch(calls))

        async def many(calls: list[ToolCall] = calls, repeat: int = repeat) -> None:
            for _ in range(repeat):
                await scheduler.dispatch(calls)

        prof = cProfile.Profile()
        prof.enable()
        ev.run_until_complete(many())
        prof.disable()
        out.append(profile_report(prof, f"{repeat:,} x dispatch() of {count} {name} call(s)"))
    scheduler.close()

    streaming = Scheduler([emit_async, emit_burst])
    for name in ("emit_async", "emit_burst"):
        ev.run_until_complete(_stream_once(streaming, name, 100))
        prof = cProfile.Profile()
        prof.enable()
        for _ in range(5):
            ev.run_until_complete(_stream_once(streaming, name, 10_000))
        prof.disable()
        out.append(
            profile_report(prof, f"5 x Scheduler.stream() of one {name} call, 10,000 chunks")
        )
    streaming.close()
    return "\n".join(out)


# -- 5. process isolation ----------------------------------------------------------------------


def _p50_ns(samples: list[int]) -> float:
    return float(statistics.median(samples))


def bench_isolation(cfg: Config) -> str:
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    from _isolated import square, square_tool

    ev = loop()
    scheduler = Scheduler([square_tool], max_processes=1)
    bare = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("forkserver"))
    call = [ToolCall("c", "square", {"x": 3})]
    processes = scheduler.processes

    async def ours_dispatch() -> None:
        await scheduler.dispatch(call)

    async def ours_tool() -> None:
        await square_tool.respond(
            square_tool.check_arguments({"x": 3}), runtime=ToolRuntime(processes=processes)
        )

    async def base_async() -> None:
        await asyncio.wrap_future(bare.submit(square, 3))

    async def base_sync() -> None:
        bare.submit(square, 3).result()

    cases = {
        "dispatch": ours_dispatch,
        "execute": ours_tool,
        "base": base_async,
        "base sync": base_sync,
    }
    cold_started = time.perf_counter()
    ev.run_until_complete(ours_dispatch())  # the first call starts the worker
    cold = time.perf_counter() - cold_started
    for fn in cases.values():  # warm both pools
        for _ in range(50):
            ev.run_until_complete(fn())
    samples: dict[str, list[int]] = {name: [] for name in cases}
    n = 60 * cfg.rounds

    async def sample() -> None:
        for r in range(n):
            names = list(cases)
            for name in names[r % 4 :] + names[: r % 4]:
                t0 = time.perf_counter_ns()
                await cases[name]()
                samples[name].append(time.perf_counter_ns() - t0)

    ev.run_until_complete(sample())
    scheduler.close()
    bare.shutdown()
    p50 = {name: _p50_ns(s) for name, s in samples.items()}
    r_dispatch = ratio(p50["dispatch"], p50["base"])
    r_tool = ratio(p50["execute"], p50["base"])
    rows = [
        [
            "warm isolated call, dispatch() p50",
            fmt_ns(p50["dispatch"]),
            "5 ms",
            fmt_ratio(p50["dispatch"] / 5e6),
            "≤ 1.00×",
            verdict(p50["dispatch"] <= 5e6),
        ],
        [
            "warm isolated call, dispatch() vs bare pool",
            fmt_ns(p50["dispatch"]),
            fmt_ns(p50["base"]),
            fmt_ratio(r_dispatch),
            "≤ 3.00×",
            verdict(None if r_dispatch is None else r_dispatch <= 3.0),
        ],
        [
            "warm isolated call, tool.respond() vs bare pool",
            fmt_ns(p50["execute"]),
            fmt_ns(p50["base"]),
            fmt_ratio(r_tool),
            "",
            "",
        ],
        [
            "bare pool, submit().result() (sync)",
            fmt_ns(p50["base sync"]),
            fmt_ns(p50["base"]),
            fmt_ratio(ratio(p50["base sync"], p50["base"])),
            "",
            "",
        ],
    ]
    return table(
        "5. A call in a worker process (isolation='process'), warm pool, p50 of one round trip",
        HEADER,
        rows,
        [
            "function: def square(x: int) -> int (module-level, benchmarks/_isolated.py).",
            "baseline: await asyncio.wrap_future(ProcessPoolExecutor(1).submit(square, 3)),"
            " forkserver workers, warm.",
            "ours: Scheduler.dispatch of one call (validation, JSON both ways, a socket round"
            " trip, a reader thread back to the loop).",
            f"{n} interleaved samples per case; cold first call (interpreter start + imports):"
            f" {cold * 1000:.0f} ms.",
        ],
    )


# -- 6. keyed writes ------------------------------------------------------------------------------


async def keyed_nap(key: str) -> str:
    """Sleep 10 ms without blocking the event loop (a write to ``key``)."""
    await asyncio.sleep(0.01)
    return key


def keyed_nap_sync(key: str) -> str:
    """Sleep 10 ms, blocking the thread (a write to ``key``)."""
    time.sleep(0.01)
    return key


def bench_keyed(cfg: Config) -> str:
    ev = loop()
    keyed = Scheduler(
        [
            tool(keyed_nap, conflict_key="key"),
            tool(keyed_nap_sync, conflict_key="key"),
        ]
    )
    unkeyed = Scheduler([tool(keyed_nap)])
    bare_pool = ThreadPoolExecutor(max_workers=20, thread_name_prefix="bench-keyed")
    writes = [ToolCall(f"w{i}", "keyed_nap", {"key": f"file-{i}"}) for i in range(20)]
    sync_writes = [ToolCall(f"w{i}", "keyed_nap_sync", {"key": f"file-{i}"}) for i in range(20)]
    twenty = range(20)

    async def bare_threads() -> None:
        await asyncio.gather(*(ev.run_in_executor(bare_pool, time.sleep, 0.01) for _ in twenty))

    ev.run_until_complete(keyed.dispatch(sync_writes))
    ev.run_until_complete(bare_threads())
    n = cfg.sleep_n
    cases = {
        "keyed": Case("await s.dispatch(c)", {"s": keyed, "c": writes}, n=n, wall=True),
        "base": Case(
            "await gather(*(sleep(0.01) for _ in R))",
            {"gather": asyncio.gather, "sleep": asyncio.sleep, "R": twenty},
            n=n,
            wall=True,
        ),
        "keyed sync": Case("await s.dispatch(c)", {"s": keyed, "c": sync_writes}, n=n, wall=True),
        "sync base": Case("await bare()", {"bare": bare_threads}, n=n, wall=True),
    }
    res = measure(cases, rounds=cfg.rounds, budget_ms=cfg.budget_ms)
    serial = measure(
        {"unkeyed": Case("await s.dispatch(c)", {"s": unkeyed, "c": writes}, n=1, wall=True)},
        rounds=3,
        budget_ms=cfg.budget_ms,
    )["unkeyed"]
    keyed.close()
    unkeyed.close()
    bare_pool.shutdown()
    rows = []
    for label, ours_key, base_key in (
        ("20 writes to 20 keys, await asyncio.sleep(0.01)", "keyed", "base"),
        ("20 writes to 20 keys, time.sleep(0.01) [threads]", "keyed sync", "sync base"),
    ):
        r = ratio(res[ours_key], res[base_key])
        rows.append(
            [
                label,
                fmt_ns(res[ours_key]),
                fmt_ns(res[base_key]),
                fmt_ratio(r),
                "≤ 1.30×",
                verdict(None if r is None else r <= 1.3),
            ]
        )
    rows.append(
        [
            "the same 20 writes without conflict_key (barriers)",
            fmt_ns(serial),
            fmt_ns(res["base"]),
            fmt_ratio(ratio(serial, res["base"])),
            "(for scale)",
            "",
        ]
    )
    return table(
        "6. Twenty writes to different conflict keys in one turn, AUTO (wall clock)",
        HEADER,
        rows,
        [
            "tools: @tool(conflict_key='key'), not read_only: without the key AUTO runs them"
            " one by one.",
            "baselines: gather of 20 asyncio.sleep(0.01); 20 time.sleep(0.01) on a warm"
            " ThreadPoolExecutor(20).",
            f"{n} turns per round per case.",
        ],
    )


# -- main -------------------------------------------------------------------------------------


def main() -> int:
    parser = base_parser(
        "Benchmark tooling.Scheduler.", adk_venv=DEFAULT_ADK_VENV, only_example="1,3"
    )
    opts = parser.parse_args()
    cfg = QUICK if opts.quick else FULL
    set_clock(opts.clock)
    only = {s.strip() for s in opts.only.split(",") if s.strip()}

    def wanted(section: str) -> bool:
        return not only or section in only

    started = time.perf_counter()
    print(
        f"scheduler benchmark ({'quick' if opts.quick else 'full'}):"
        f" Python {platform.python_version()}, pydantic {pydantic.VERSION},"
        f" {os.cpu_count()} CPUs, {load_avg()}, {opts.clock} clock for single-thread cases,"
        f" medians of {cfg.rounds} interleaved rounds\n"
        f"tooling from {Path(tooling.__file__).parent}\n",
        flush=True,
    )
    mark = [time.perf_counter()]

    def show(text: str) -> None:
        now = time.perf_counter()
        print(
            f"{text.rstrip()}\n  (section took {now - mark[0]:.1f} s; {load_avg()})\n", flush=True
        )
        mark[0] = now

    if wanted("1"):
        show(bench_overhead(cfg))
    if wanted("2"):
        show(bench_sleeps(cfg))
    if wanted("3"):
        show(bench_progress(cfg))
    if wanted("4"):
        adk = None if opts.no_adk or os.environ.get("CI") else adk_python(opts.adk_venv)
        if opts.no_adk:
            print("4. google-adk: skipped (--no-adk).\n")
        elif os.environ.get("CI"):
            print("4. google-adk: skipped in CI.\n")
        elif adk is None:
            print(
                f"4. google-adk: skipped (no venv with google-adk at {opts.adk_venv};"
                " `bench_tooling.py --adk` builds it).\n"
            )
        else:
            show(bench_adk(cfg, adk, opts.clock))
    if wanted("5"):
        show(bench_isolation(cfg))
    if wanted("6"):
        show(bench_keyed(cfg))
    if opts.profile:
        print(profile_hot_spots())
    alive = threading.active_count()
    print(f"total time {time.perf_counter() - started:.1f} s; threads alive {alive}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
