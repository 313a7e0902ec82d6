"""What tracing costs: a tool call and an agent run with opentelemetry absent, present
with no tracer provider, and with the SDK exporting to a no-op exporter.

    .venv/bin/python benchmarks/bench_tracing.py            # about a minute
    .venv/bin/python benchmarks/bench_tracing.py --quick    # ~20 s, rougher numbers
    .venv/bin/python benchmarks/bench_tracing.py --only 1   # some sections only

Sections: 1 ``Scheduler.dispatch`` of no-op tools; 2 one agent run (a model turn with a
tool call, then an answer); 3 import time, and what tracing adds to it.

The states are switched round by round, in one process, so a slow phase of the machine
hits them alike: *absent* takes ``opentelemetry.trace`` out of ``sys.modules`` (what the
library looks at: with opentelemetry not installed it is never there), *api* puts it
back with no tracer provider set, *sdk* sets an SDK ``TracerProvider`` whose span
processor hands every span to an exporter that does nothing (*simple*: at once, on the
calling thread; *batch*: queued for a background thread, as production setups do).
Setting the provider again each round resets the API's set-once guard, as
opentelemetry's own test utilities do. Needs ``opentelemetry-sdk`` (the dev extra).
This is a script, not a test: nothing here fails a build.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import AsyncGenerator, Callable, Sequence
from pathlib import Path
from typing import Any

import opentelemetry.trace as otel_trace
from _timing import (
    Case,
    fmt_ns,
    fmt_ratio,
    load_avg,
    loop,
    measure,
    ratio,
    set_clock,
    table,
    verdict,
)
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.util._once import Once

from agent_core import Agent, BaseLlm, Content, LlmRequest, LlmResponse, Part, Runner
from tooling import Scheduler, ToolCall, tool

ROOT = Path(__file__).resolve().parent.parent
STATES = ("absent", "api", "sdk simple", "sdk batch")
HEADER = ["case", "absent", "api, no provider", "sdk + simple no-op", "sdk + batch no-op"]


class NoOpExporter(SpanExporter):
    """Takes spans and does nothing with them."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


_API_MODULE = sys.modules["opentelemetry.trace"]
_PROVIDERS = {
    "sdk simple": TracerProvider(),
    "sdk batch": TracerProvider(),
}
_PROVIDERS["sdk simple"].add_span_processor(SimpleSpanProcessor(NoOpExporter()))
_PROVIDERS["sdk batch"].add_span_processor(BatchSpanProcessor(NoOpExporter()))


def enter(state: str) -> Callable[[int], dict[str, Any]]:
    """A ``Case.setup`` that puts the process in ``state`` before each round."""

    def setup(n: int) -> dict[str, Any]:
        otel_trace._TRACER_PROVIDER_SET_ONCE = Once()  # type: ignore[attr-defined]
        otel_trace._TRACER_PROVIDER = None  # type: ignore[attr-defined]
        if state == "absent":
            sys.modules.pop("opentelemetry.trace", None)
            return {}
        sys.modules["opentelemetry.trace"] = _API_MODULE
        if state in _PROVIDERS:
            otel_trace.set_tracer_provider(_PROVIDERS[state])
        return {}

    return setup


# -- 1. a tool call through the scheduler --------------------------------------------------------


@tool(read_only=True, concurrency_safe=True)
async def noop_async(i: int) -> int:
    """Returns its argument."""
    return i


@tool(read_only=True, concurrency_safe=True)
def noop_sync(i: int) -> int:
    """Returns its argument (on a worker thread)."""
    return i


def bench_dispatch(rounds: int, budget_ms: float) -> str:
    scheduler = Scheduler([noop_async, noop_sync])
    rows_spec = [
        ("1 async call", "noop_async", 1, False),
        ("10 async calls, concurrent", "noop_async", 10, False),
        ("1 sync call [thread]", "noop_sync", 1, True),
    ]
    results: dict[str, dict[str, float]] = {}
    for label, name, count, wall in rows_spec:
        calls = [ToolCall(f"c{i}", name, {"i": i}) for i in range(count)]
        for state in STATES:  # warm every path: specs, threads, tracers
            enter(state)(0)
            loop().run_until_complete(scheduler.dispatch(calls))
        cases = {
            state: Case(
                "await s.dispatch(c)", {"s": scheduler, "c": calls}, enter(state), wall=wall
            )
            for state in STATES
        }
        results[label] = measure(cases, rounds=rounds, budget_ms=budget_ms)
    enter("absent")(0)
    scheduler.close()
    rows = []
    for label, _, count, _ in rows_spec:
        res = results[label]
        base = res["absent"]
        row = [label, fmt_ns(base)]
        for state in STATES[1:]:
            extra = fmt_ns((res[state] - base) / count)
            row.append(f"{extra} ({fmt_ratio(ratio(res[state], base))})")
        extra_api = (res["api"] - base) / count
        row.append(verdict(extra_api <= 2000))
        rows.append(row)
    return table(
        "1. Scheduler.dispatch of no-op tools: extra per call over opentelemetry absent",
        [*HEADER, "api ≤ 2 µs?"],
        rows,
        [
            "absent: the whole dispatch; other columns: the extra per call over it (the whole"
            " dispatch as a ratio of absent's in brackets).",
            "api, no provider: a dictionary lookup and an attribute read per dispatch, a None"
            " check per hook; sdk: one execute_tool span per call with about 12 attributes,"
            " made current while the call runs.",
        ],
    )


# -- 2. one agent run -----------------------------------------------------------------------------


class ToolThenAnswer(BaseLlm):
    """Calls ``noop_async`` once, then answers (for as many runs as asked)."""

    def __init__(self) -> None:
        super().__init__("bench-model")

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1]
        if any(p.function_response is not None for p in last.parts):
            yield LlmResponse(content=Content(role="model", parts=[Part.from_text("done")]))
        else:
            call = Part.from_function_call("noop_async", {"i": 1}, id="c1")
            yield LlmResponse(content=Content(role="model", parts=[call]))


def bench_run(rounds: int, budget_ms: float) -> str:
    runner = Runner(Agent("bench", ToolThenAnswer(), tools=[noop_async]), app_name="bench")
    ids = itertools.count()

    async def one() -> None:
        async for _ in runner.run_async(user_id="u", session_id=f"s{next(ids)}", new_message="go"):
            pass

    for state in STATES:
        enter(state)(0)
        loop().run_until_complete(one())
    cases = {state: Case("await one()", {"one": one}, enter(state)) for state in STATES}
    res = measure(cases, rounds=rounds, budget_ms=budget_ms)
    enter("absent")(0)
    base = res["absent"]
    row = ["1 run: model call, tool call, model call", fmt_ns(base)]
    for state in STATES[1:]:
        row.append(f"{fmt_ns(res[state] - base)} ({fmt_ratio(ratio(res[state], base))})")
    return table(
        "2. One agent run (in-memory session): extra per run over opentelemetry absent",
        HEADER,
        [row],
        ["sdk: 4 spans per run (invoke_agent, 2 × chat, execute_tool)."],
    )


# -- 3. import time ---------------------------------------------------------------------------


def _python(code: str, block_otel: bool, *flags: str) -> str:
    prefix = "import sys; sys.modules['opentelemetry'] = None\n" if block_otel else ""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    done = subprocess.run(
        [sys.executable, *flags, "-c", prefix + code],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout + done.stderr


def bench_imports(runs: int) -> str:
    probe = (
        "import sys, json, tooling, agent_core\nfrom tooling import Scheduler\n"
        "print(json.dumps(sorted(m for m, v in sys.modules.items()"
        " if m.startswith('opentelemetry') and v is not None)))"
    )
    loaded_installed = json.loads(_python(probe, block_otel=False).splitlines()[-1])
    loaded_blocked = json.loads(_python(probe, block_otel=True).splitlines()[-1])
    _python("import agent_core", block_otel=True)  # warm: .pyc files
    self_us: dict[str, list[int]] = {"tooling._tracing": [], "agent_core._invocation.tracing": []}
    total_us: dict[str, list[int]] = {"tooling": [], "agent_core": []}
    for _ in range(runs):
        out = _python("import agent_core\nfrom agent_core import Runner", True, "-X", "importtime")
        for line in out.splitlines():
            if not line.startswith("import time:"):
                continue
            own, cumulative, name = (p.strip() for p in line[len("import time:") :].split("|"))
            if name in self_us:
                self_us[name].append(int(own))
            if name in total_us:
                total_us[name].append(int(cumulative))
    del out

    def med(xs: list[int]) -> float:
        return sorted(xs)[len(xs) // 2] * 1000.0 if xs else 0.0

    added = med(self_us["tooling._tracing"]) + med(self_us["agent_core._invocation.tracing"])
    whole = med(total_us["agent_core"])
    rows = [
        [
            "opentelemetry modules loaded by importing tooling, agent_core, Scheduler",
            f"{len(loaded_installed)} (installed), {len(loaded_blocked)} (absent)",
            "0",
            verdict(not loaded_installed and not loaded_blocked),
        ],
        ["import tooling (never loads the tracing modules)", "0 µs added", "0", verdict(True)],
        [
            "import agent_core: its own time (opentelemetry absent)",
            fmt_ns(whole),
            "",
            "",
        ],
        [
            "  of which tooling._tracing + agent_core._invocation.tracing",
            f"{fmt_ns(added)} ({added / whole:.2%})" if whole else "n/a",
            "",
            "",
        ],
    ]
    return table(
        "3. Import time with opentelemetry absent (python -X importtime, fresh processes)",
        ["case", "measured", "target", "ok?"],
        rows,
        [
            f"medians of {runs} fresh interpreters; 'absent' blocks the opentelemetry package"
            " (sys.modules['opentelemetry'] = None) before importing.",
            "the two tracing modules import nothing heavy (opentelemetry, hashlib and pydantic"
            " are imported inside the functions that need them, once tracing is on).",
        ],
    )


def main() -> int:
    parser = argparse.ArgumentParser(description="Benchmark tracing's overhead.")
    parser.add_argument("--quick", action="store_true", help="a short run with rougher numbers")
    parser.add_argument("--only", default="", help="comma-separated section numbers, e.g. 1,3")
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="cpu",
        help="cpu (default): thread_time_ns of the measuring thread for single-thread cases,"
        " steadier on a busy machine; the thread-hop case always uses the wall clock",
    )
    opts = parser.parse_args()
    set_clock(opts.clock)
    only = {s.strip() for s in opts.only.split(",") if s.strip()}
    rounds, budget_ms, runs = (9, 5.0, 5) if opts.quick else (25, 10.0, 15)
    started = time.perf_counter()
    print(
        f"tracing benchmark ({'quick' if opts.quick else 'full'}): Python"
        f" {platform.python_version()}, opentelemetry-api {_version('opentelemetry-api')},"
        f" sdk {_version('opentelemetry-sdk')}, {os.cpu_count()} CPUs, {load_avg()},"
        f" medians of {rounds} interleaved rounds, {opts.clock} clock\n",
        flush=True,
    )
    if not only or "1" in only:
        print(bench_dispatch(rounds, budget_ms), flush=True)
    if not only or "2" in only:
        print(bench_run(rounds, budget_ms), flush=True)
    if not only or "3" in only:
        print(bench_imports(runs), flush=True)
    for provider in _PROVIDERS.values():
        provider.shutdown()
    print(f"total time {time.perf_counter() - started:.1f} s; {load_avg()}")
    return 0


def _version(dist: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


if __name__ == "__main__":
    asyncio.set_event_loop(loop())
    sys.exit(main())
