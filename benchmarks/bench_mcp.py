"""What MCP costs through ``tooling.mcp``, as ratios to the SDK measured in the same run.

    .venv/bin/python benchmarks/bench_mcp.py           # about a minute
    .venv/bin/python benchmarks/bench_mcp.py --quick   # ~20 s, rougher numbers

Sections: 1 ``tools/call`` round trip over stdio for a no-op tool, ``McpServer`` vs the
same tool on the SDK's own ``MCPServer`` (and its low-level ``Server``, the floor), from
one SDK ``Client``; 2 calls per second from one client with 16 in flight, same servers;
3 ``McpTool.run`` (an ``McpToolset``'s tool) vs a bare ``ClientSession.call_tool`` to the
same server; 4 a warm ``McpToolset.get_tools()``: its time, and the requests the server
got meanwhile. Servers are real subprocesses (``_mcp_servers.py``); every case is timed
on the wall clock (they wait on other processes and threads), as medians of interleaved
rounds. ``ok?`` compares with the issue's targets. A script, not a test.
"""

from __future__ import annotations

import argparse
import asyncio
import platform
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from _timing import (
    Case,
    dist_version,
    fmt_ns,
    fmt_ratio,
    load_avg,
    loop,
    measure,
    ratio,
    table,
    verdict,
)
from mcp import Client, StdioServerParameters

from tooling.mcp import McpToolset, StdioServer

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
SERVERS = str(HERE / "_mcp_servers.py")
HEADER = ["case", "ours", "baseline", "ratio", "target", "ok?"]
IN_FLIGHT = 16


def params(kind: str) -> StdioServerParameters:
    return StdioServerParameters(command=sys.executable, args=[SERVERS, kind], cwd=ROOT)


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


async def burst(call: Callable[[], Awaitable[Any]]) -> None:
    await asyncio.gather(*(call() for _ in range(IN_FLIGHT)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a short run, rougher numbers")
    args = parser.parse_args()
    rounds, budget = (5, 150) if args.quick else (9, 400)

    print(
        f"bench_mcp: Python {platform.python_version()}, mcp {dist_version('mcp')}, {load_avg()}\n"
    )
    held = {kind: Held(Client(params(kind), cache=None)) for kind in ("ours", "sdk", "lowlevel")}
    clients = {kind: h.value() for kind, h in held.items()}
    for client in clients.values():
        loop().run_until_complete(client.list_tools())
    versions = {kind: c.protocol_version for kind, c in clients.items()}
    print(f"negotiated protocol: {versions}\n")

    # 1-2: round trip and throughput, ours vs the SDK's servers ------------------------------
    env = {f"c_{kind}": c for kind, c in clients.items()} | {"burst": burst}
    one = {
        kind: Case(f"await c_{kind}.call_tool('noop', {{}})", env=env, wall=True)
        for kind in clients
    }
    many = {
        f"{kind}x16": Case(
            f"await burst(lambda: c_{kind}.call_tool('noop', {{}}))", env=env, wall=True
        )
        for kind in clients
    }
    med = measure(one | many, rounds=rounds, budget_ms=budget)
    trip = ratio(med["ours"], med["sdk"])
    floor = ratio(med["ours"], med["lowlevel"])
    per_s = {k: IN_FLIGHT / (med[f"{k}x16"] / 1e9) for k in clients}
    thr = ratio(per_s["ours"], per_s["sdk"])
    thr_floor = ratio(per_s["ours"], per_s["lowlevel"])
    rows = [
        [
            "tools/call round trip vs SDK MCPServer",
            fmt_ns(med["ours"]),
            fmt_ns(med["sdk"]),
            fmt_ratio(trip),
            "≤ 1.15×",
            verdict(None if trip is None else trip <= 1.15),
        ],
        [
            "tools/call round trip vs SDK low-level Server",
            fmt_ns(med["ours"]),
            fmt_ns(med["lowlevel"]),
            fmt_ratio(floor),
            "",
            "",
        ],
        [
            f"calls/s, {IN_FLIGHT} in flight, vs SDK MCPServer",
            f"{per_s['ours']:,.0f}/s",
            f"{per_s['sdk']:,.0f}/s",
            fmt_ratio(thr),
            "≥ 0.90×",
            verdict(None if thr is None else thr >= 0.9),
        ],
        [
            f"calls/s, {IN_FLIGHT} in flight, vs SDK low-level Server",
            f"{per_s['ours']:,.0f}/s",
            f"{per_s['lowlevel']:,.0f}/s",
            fmt_ratio(thr_floor),
            "",
            "",
        ],
    ]
    print(
        table(
            "1-2. McpServer over stdio, from one SDK Client (no-op async tool)",
            HEADER,
            rows,
            ["every server is a real subprocess; one Client each, opened once"],
        )
    )

    # 3-4: the toolset's overhead, and a warm get_tools ---------------------------------------
    toolset = McpToolset(StdioServer(sys.executable, [SERVERS, "ours"], cwd=ROOT))
    tools = {t.name: t for t in loop().run_until_complete(toolset.get_tools())}
    noop, counter = tools["noop"], tools["requests"]
    session = clients["ours"].session
    env = {"noop": noop, "session": session, "toolset": toolset}
    cases = {
        "toolset": Case("await noop.run({})", env=env, wall=True),
        "bare": Case("await session.call_tool('noop', {})", env=env, wall=True),
    }
    med = measure(cases, rounds=rounds, budget_ms=budget)
    over = ratio(med["toolset"], med["bare"])

    before = loop().run_until_complete(counter.run({}))
    warm = measure(
        {"warm": Case("await toolset.get_tools()", env=env)}, rounds=rounds, budget_ms=budget / 4
    )["warm"]
    after = loop().run_until_complete(counter.run({}))
    sent = sum(after.values()) - sum(before.values()) - 1  # the second counter call itself
    rows = [
        [
            "McpTool.run vs ClientSession.call_tool",
            fmt_ns(med["toolset"]),
            fmt_ns(med["bare"]),
            fmt_ratio(over),
            "≤ 1.10×",
            verdict(None if over is None else over <= 1.1),
        ],
        ["warm get_tools()", fmt_ns(warm), "", "", "≤ 5 µs", verdict(warm <= 5000)],
        ["requests sent by warm get_tools()", str(sent), "", "", "0", verdict(sent == 0)],
    ]
    print(
        table(
            "3-4. McpToolset against McpServer over stdio",
            HEADER,
            rows,
            [
                "McpTool.run validates against inputSchema and hops to the toolset's "
                "connection thread; the bare call is the same SDK session's call_tool",
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
