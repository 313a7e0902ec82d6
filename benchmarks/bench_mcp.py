"""What MCP costs through ``tooling.mcp``, as ratios to the SDK measured in the same run.

    .venv/bin/python benchmarks/bench_mcp.py           # about two minutes
    .venv/bin/python benchmarks/bench_mcp.py --quick   # ~30 s, rougher numbers

Sections: 1 ``tools/call`` round trip over stdio for a no-op tool, ``McpServer`` vs the
same tool on the SDK's own ``MCPServer`` (and its low-level ``Server``, the floor), from
one SDK ``Client``; 2 calls per second from one client with 16 in flight, same servers;
3 ``McpTool.run`` (an ``McpToolset``'s tool) vs a bare ``ClientSession.call_tool`` to
the same kind of server; 4 a warm ``McpToolset.get_tools()``: its time, and the requests
the server got meanwhile.

Servers are real subprocesses (``_mcp_servers.py``). Cases are interleaved round by
round and each number is a median over rounds. Two clocks: wall time (what the targets
are about) and CPU time per call, ours and the server's together (read from ``/proc``;
steadier when the machine is busy, since time spent waiting for a core is not counted).
``ok?`` compares the wall ratio with the issue's target. A script, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import platform
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _timing import Case, dist_version, fmt_ns, fmt_ratio, load_avg, loop, measure, table, verdict
from mcp import Client, StdioServerParameters

from tooling.mcp import McpToolset, StdioServer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SERVERS = str(HERE / "_mcp_servers.py")
IN_FLIGHT = 16
HEADER = ["case", "ours", "baseline", "ratio", "CPU ratio", "target", "ok?"]


def params(kind: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[SERVERS, kind], cwd=ROOT)


# -- processes and their CPU time -------------------------------------------------------------


def children(kind: str) -> set[int]:
    """Our child processes running ``_mcp_servers.py kind``."""
    found = set()
    me = str(os.getpid())
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parent = stat.rsplit(")", 1)[1].split()[1]
        if parent == me and SERVERS.encode() in cmdline and kind.encode() in cmdline:
            found.add(int(entry))
    return found


def process_cpu_ns(pid: int | None) -> float:
    """User plus system CPU time of process ``pid`` (clock-tick resolution); 0 for None."""
    if pid is None:
        return 0.0
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = int(fields[11]) + int(fields[12])
    return ticks * 1e9 / os.sysconf("SC_CLK_TCK")


# -- timing ----------------------------------------------------------------------------------


@dataclass
class Timed:
    """One case: ``step()`` awaited ``n`` times per round; ``calls`` tool calls per step."""

    step: Callable[[], Awaitable[Any]]
    server_pid: int | None
    calls: int = 1
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


async def _repeat(step: Callable[[], Awaitable[Any]], n: int) -> None:
    for _ in range(n):
        await step()


def interleave(cases: dict[str, Timed], *, rounds: int, n: int) -> None:
    """Fill each case's per-call wall and CPU samples, rotating who goes first."""
    names = list(cases)
    for name in names:  # warm up
        loop().run_until_complete(_repeat(cases[name].step, max(1, n // 10)))
    for r in range(rounds):
        for name in names[r % len(names) :] + names[: r % len(names)]:
            case = cases[name]
            server0 = process_cpu_ns(case.server_pid)
            cpu0, wall0 = time.process_time_ns(), time.perf_counter_ns()
            loop().run_until_complete(_repeat(case.step, n))
            wall = time.perf_counter_ns() - wall0
            cpu = time.process_time_ns() - cpu0 + process_cpu_ns(case.server_pid) - server0
            case.wall.append(wall / (n * case.calls))
            case.cpu.append(cpu / (n * case.calls))


def med(values: list[float]) -> float:
    return statistics.median(values)


def ratio(a: float, b: float) -> float:
    return a / b if b > 0 else float("nan")


# -- connections kept open on the benchmark loop -------------------------------------------------


class Held:
    """An async context manager kept open on the benchmark loop by a task of its own
    (the SDK's task groups must be left in the task that entered them)."""

    def __init__(self, manager: Any) -> None:
        self.manager = manager
        self._release = asyncio.Event()
        self._ready: asyncio.Future[Any] = loop().create_future()
        self._task = loop().create_task(self._hold())

    async def _hold(self) -> None:
        try:
            async with self.manager as value:
                self._ready.set_result(value)
                await self._release.wait()
        except BaseException as exc:
            if not self._ready.done():
                self._ready.set_exception(exc)
            raise

    def value(self) -> Any:
        return loop().run_until_complete(self._ready)

    def close(self) -> None:
        self._release.set()
        loop().run_until_complete(asyncio.gather(self._task, return_exceptions=True))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run, rougher numbers")
    args = parser.parse_args()
    rounds, n = (5, 100) if args.quick else (9, 300)

    print(f"bench_mcp: Python {platform.python_version()}, mcp {dist_version('mcp')}, {load_avg()}")
    kinds = ("ours", "sdk", "lowlevel")
    held = {kind: Held(Client(params(kind), cache=None)) for kind in kinds}
    clients = {kind: h.value() for kind, h in held.items()}
    pids = {kind: next(iter(children(kind)), None) for kind in kinds}
    for client in clients.values():
        loop().run_until_complete(client.list_tools())
    versions = sorted({c.protocol_version for c in clients.values()})
    print(f"negotiated protocol: {', '.join(versions)}\n")

    # 1-2: round trip and throughput, ours vs the SDK's servers ------------------------------
    def one(client: Client) -> Callable[[], Awaitable[Any]]:
        return lambda: client.call_tool("noop", {})

    def burst(client: Client) -> Callable[[], Awaitable[Any]]:
        return lambda: asyncio.gather(*(client.call_tool("noop", {}) for _ in range(IN_FLIGHT)))

    single = {k: Timed(one(c), pids[k]) for k, c in clients.items()}
    many = {k: Timed(burst(c), pids[k], calls=IN_FLIGHT) for k, c in clients.items()}
    interleave(single, rounds=rounds, n=n)
    interleave(many, rounds=rounds, n=max(1, n // IN_FLIGHT))

    rows = []
    for base, label, target in (
        ("sdk", "SDK MCPServer", 1.15),
        ("lowlevel", "low-level Server", None),
    ):
        trip = ratio(med(single["ours"].wall), med(single[base].wall))
        rows.append(
            [
                f"tools/call round trip vs {label}",
                fmt_ns(med(single["ours"].wall)),
                fmt_ns(med(single[base].wall)),
                fmt_ratio(trip),
                fmt_ratio(ratio(med(single["ours"].cpu), med(single[base].cpu))),
                "" if target is None else f"≤ {target:.2f}×",
                "" if target is None else verdict(trip <= target),
            ]
        )
    for base, label, target in (
        ("sdk", "SDK MCPServer", 0.9),
        ("lowlevel", "low-level Server", None),
    ):
        ours_s, base_s = 1e9 / med(many["ours"].wall), 1e9 / med(many[base].wall)
        thr = ratio(ours_s, base_s)
        rows.append(
            [
                f"calls/s, {IN_FLIGHT} in flight, vs {label}",
                f"{ours_s:,.0f}/s",
                f"{base_s:,.0f}/s",
                fmt_ratio(thr),
                fmt_ratio(ratio(med(many[base].cpu), med(many["ours"].cpu))),
                "" if target is None else f"≥ {target:.2f}×",
                "" if target is None else verdict(thr >= target),
            ]
        )
    print(
        table(
            "1-2. McpServer over stdio, from one SDK Client (no-op async tool)",
            HEADER,
            rows,
            [
                "every server is a real subprocess with one Client, opened once",
                "CPU ratio: CPU per call of this process and the server together "
                "(for calls/s: the baseline's CPU per call over ours, so higher is better)",
            ],
        )
    )

    # 3-4: the toolset's overhead, and a warm get_tools ---------------------------------------
    before = children("ours")
    toolset = McpToolset(StdioServer(sys.executable, [SERVERS, "ours"], cwd=ROOT))
    tools = {t.name: t for t in loop().run_until_complete(toolset.get_tools())}
    toolset_pid = next(iter(children("ours") - before), None)
    noop, counter = tools["noop"], tools["requests"]
    session = clients["ours"].session
    cases = {
        "toolset": Timed(lambda: noop.run({}), toolset_pid),
        "bare": Timed(lambda: session.call_tool("noop", {}), pids["ours"]),
    }
    interleave(cases, rounds=rounds, n=n)
    over = ratio(med(cases["toolset"].wall), med(cases["bare"].wall))
    over_cpu = ratio(med(cases["toolset"].cpu), med(cases["bare"].cpu))

    seen_before = loop().run_until_complete(counter.run({}))
    warm = measure(
        {"warm": Case("await toolset.get_tools()", env={"toolset": toolset})},
        rounds=rounds,
        budget_ms=50,
    )["warm"]
    seen_after = loop().run_until_complete(counter.run({}))
    sent = sum(seen_after.values()) - sum(seen_before.values()) - 1  # the counter's own call
    rows = [
        [
            "McpTool.run vs ClientSession.call_tool",
            fmt_ns(med(cases["toolset"].wall)),
            fmt_ns(med(cases["bare"].wall)),
            fmt_ratio(over),
            fmt_ratio(over_cpu),
            "≤ 1.10×",
            verdict(over <= 1.1),
        ],
        ["warm get_tools()", fmt_ns(warm), "", "", "", "≤ 5 µs", verdict(warm <= 5000)],
        ["requests sent by warm get_tools()", str(sent), "", "", "", "0", verdict(sent == 0)],
    ]
    print(
        table(
            "3-4. McpToolset against McpServer over stdio",
            HEADER,
            rows,
            [
                "McpTool.run checks the arguments against inputSchema, then calls through "
                "the toolset's own SDK client; the bare call is an SDK ClientSession's "
                "call_tool",
            ],
        )
    )

    loop().run_until_complete(toolset.close())
    for h in held.values():
        h.close()


if __name__ == "__main__":
    started = time.perf_counter()
    main()
    print(f"({time.perf_counter() - started:.0f} s)")
