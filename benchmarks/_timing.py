"""A small timing harness: generated loops, interleaved rounds, medians (stdlib only).

Each case is one statement (``await`` allowed) compiled into a loop function, so the
only overhead per iteration is the ``for`` itself, which is measured once and
subtracted. Cases measured together are interleaved round by round, so a slow phase of
the machine hits all of them alike; the result of a case is the median over rounds.
"""

from __future__ import annotations

import asyncio
import gc
import os
import statistics
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Case",
    "clock",
    "fmt_ns",
    "fmt_ratio",
    "fresh_process_ns",
    "load_avg",
    "loop",
    "measure",
    "ratio",
    "set_clock",
    "table",
    "verdict",
]

_clock = time.perf_counter_ns


def set_clock(name: str) -> None:
    """``"wall"`` (``perf_counter_ns``, the default) or ``"cpu"`` (``thread_time_ns``).

    The CPU clock of the measuring thread ignores time spent descheduled, which makes
    single-threaded cases far steadier on a busy machine; it must not be used for cases
    that wait on other threads (a worker-thread hop), which pass ``wall=True``.
    """
    global _clock
    _clock = {"wall": time.perf_counter_ns, "cpu": time.thread_time_ns}[name]


def clock() -> Callable[[], int]:
    """The clock chosen by :func:`set_clock` (a nanosecond counter), for hand-made timing."""
    return _clock


#: The one event loop every async case runs in (created on first use).
_event_loop: asyncio.AbstractEventLoop | None = None


def loop() -> asyncio.AbstractEventLoop:
    """The benchmark's event loop, shared by every async measurement of this process."""
    global _event_loop
    if _event_loop is None:
        _event_loop = asyncio.new_event_loop()
        asyncio.set_event_loop(_event_loop)
    return _event_loop


_TEMPLATE = """\
{kw}def _loop(_n, _clock):
    _t0 = _clock()
    for _i in range(_n):
        {stmt}
    return _clock() - _t0
"""


@dataclass
class Case:
    """One statement to time.

    ``env`` holds the names the statement uses. ``setup(n)``, when given, runs before
    every round outside the timing and returns names to (re)bind for it: a list of
    ``n`` fresh functions for a cold build, say. ``n`` fixes the iterations per round
    (default: calibrated to the round's time budget).
    """

    stmt: str
    env: dict[str, Any] = field(default_factory=dict)
    setup: Callable[[int], dict[str, Any]] | None = None
    n: int | None = None
    wall: bool = False  # always use the wall clock (the case waits on other threads)

    def __post_init__(self) -> None:
        self.is_async = "await " in self.stmt
        source = _TEMPLATE.format(kw="async " if self.is_async else "", stmt=self.stmt)
        self.namespace: dict[str, Any] = dict(self.env)
        exec(compile(source, f"<bench {self.stmt}>", "exec"), self.namespace)
        self._fn = self.namespace["_loop"]

    def run(self, n: int) -> int:
        """Total nanoseconds for ``n`` iterations (setup excluded, automatic gc off)."""
        if self.setup is not None:
            self.namespace.update(self.setup(n))
        clock = time.perf_counter_ns if self.wall else _clock
        gc.disable()  # garbage made while timing is collected after, outside the timing
        try:
            if self.is_async:
                return int(loop().run_until_complete(self._fn(n, clock)))
            return int(self._fn(n, clock))
        finally:
            gc.enable()


_overhead: list[float] = []


def _loop_overhead() -> float:
    """Nanoseconds per iteration of an empty loop (the ``for`` alone)."""
    if not _overhead:
        case = Case("pass")
        _overhead.append(min(case.run(200_000) / 200_000 for _ in range(5)))
    return _overhead[0]


def _calibrate(case: Case, budget_ns: int) -> int:
    n = 1
    while True:
        spent = case.run(n)
        if spent >= budget_ns // 10 or n >= 10_000_000:
            per = max(spent / n, 1.0)
            return max(1, min(int(budget_ns / per), 10_000_000))
        n *= 4 if spent < budget_ns // 100 else 2


def measure(cases: dict[str, Case], *, rounds: int, budget_ms: float) -> dict[str, float]:
    """Median nanoseconds per iteration of each case, over ``rounds`` interleaved rounds.

    ``budget_ms`` is the time one round of one case should take (calibrated cases).
    """
    budget_ns = int(budget_ms * 1e6)
    gc.collect()
    counts = {name: c.n or _calibrate(c, budget_ns) for name, c in cases.items()}
    samples: dict[str, list[float]] = {name: [] for name in cases}
    names = list(cases)
    for r in range(rounds):
        order = names[r % len(names) :] + names[: r % len(names)]  # rotate who goes first
        for name in order:
            case = cases[name]
            n = counts[name]
            spent = case.run(n)
            samples[name].append(spent / n - _loop_overhead())
    return {name: max(statistics.median(s), 0.0) for name, s in samples.items()}


def fmt_ns(ns: float | None) -> str:
    """Nanoseconds as a human-readable duration, in µs below 10 ms."""
    if ns is None:
        return "n/a"
    us = ns / 1000
    if us < 1:
        return f"{us:.3f} µs"
    if us < 100:
        return f"{us:.2f} µs"
    if us < 10_000:
        return f"{us:,.0f} µs"
    return f"{us / 1000:,.1f} ms"


def table(title: str, header: list[str], rows: list[list[str]], notes: Sequence[str] = ()) -> str:
    """A plain-text table with a title line and notes under it."""
    widths = [len(h) for h in header]
    for row in rows:
        for i, cell in enumerate(row):
            widths[i] = max(widths[i], len(cell))

    def line(cells: list[str]) -> str:
        return " | ".join(
            (c.ljust(w) if i == 0 else c.rjust(w)) for i, (c, w) in enumerate(zip(cells, widths))
        ).rstrip()

    out = [title, "=" * len(title), line(header), "-+-".join("-" * w for w in widths)]
    out += [line(row) for row in rows]
    out += [f"  note: {n}" for n in notes]
    return "\n".join(out) + "\n"


def ratio(ours: float | None, base: float | None) -> float | None:
    """``ours / base``, or None when either is missing or the base is not positive."""
    if ours is None or base is None or base <= 0:
        return None
    return ours / base


def fmt_ratio(r: float | None) -> str:
    return "n/a" if r is None else f"{r:.2f}×"


def verdict(ok: bool | None) -> str:
    """``yes``/``NO`` against a target; empty when there is no target or no number."""
    return "" if ok is None else ("yes" if ok else "NO")


def load_avg() -> str:
    """``load avg 1.00 0.90 0.80`` (1, 5, 15 minutes), or empty where unknown."""
    try:
        return "load avg " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return ""


def fresh_process_ns(
    python: str, commands: Mapping[str, str], *, runs: int, cwd: str
) -> dict[str, float]:
    """Median wall time of ``python -c CODE`` for each command, in fresh interpreters.

    Each command runs once first (file cache, ``.pyc`` files), then ``runs`` times,
    interleaved with the others. ``PYTHON*`` variables are not passed on.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}

    def once(code: str) -> int:
        start = time.perf_counter_ns()
        subprocess.run([python, "-c", code], cwd=cwd, env=env, check=True)
        return time.perf_counter_ns() - start

    for code in commands.values():
        once(code)
    samples: dict[str, list[int]] = {name: [] for name in commands}
    for _ in range(runs):
        for name, code in commands.items():
            samples[name].append(once(code))
    return {name: statistics.median(s) for name, s in samples.items()}


# -- shared by the benchmark scripts -----------------------------------------------------------


def profile_report(prof: Any, title: str, limit: int = 25) -> str:
    """A cProfile run's top entries, by own time and by cumulative time."""
    import io
    import pstats

    parts = []
    for order in ("tottime", "cumulative"):
        buf = io.StringIO()
        pstats.Stats(prof, stream=buf).sort_stats(order).print_stats(limit)
        parts.append(f"== {title} (by {order}) ==\n{buf.getvalue()}")
    return "\n".join(parts)


def base_parser(description: str, *, adk_venv: Any, only_example: str) -> Any:
    """The options every benchmark script takes: --quick, --adk-venv, --no-adk,
    --profile, --clock and --only."""
    import argparse

    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--quick", action="store_true", help="a short run with rougher numbers")
    parser.add_argument(
        "--adk-venv", type=type(adk_venv), default=adk_venv, help=f"google-adk's venv ({adk_venv})"
    )
    parser.add_argument(
        "--no-adk", action="store_true", help="skip google-adk even if its venv exists"
    )
    parser.add_argument("--profile", action="store_true", help="also print cProfile hot spots")
    parser.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="wall: perf_counter_ns (default); cpu: thread_time_ns of the measuring thread,"
        " steadier on a busy machine (thread hops and imports stay on the wall clock)",
    )
    parser.add_argument(
        "--only", default="", help=f"comma-separated section numbers, e.g. {only_example}"
    )
    return parser


def dist_version(dist: str) -> str:
    """The installed version of distribution ``dist``, or ``"?"``."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return "?"


def import_section(
    title: str, package: str, target: float, *, runs: int, cwd: str, heavy: set[str]
) -> str:
    """Import time of ``package`` in fresh interpreters against the pydantic import it
    builds on, and whether it loads google.genai (it must not)."""
    import json
    import sys

    py = sys.executable
    commands = {
        "empty": "pass",
        package: f"import {package}",
        "pydantic": "from pydantic import BaseModel, TypeAdapter, validate_call",
    }
    med = fresh_process_ns(py, commands, runs=runs, cwd=cwd)
    ours, base = med[package] - med["empty"], med["pydantic"] - med["empty"]
    r = ratio(ours, base)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    probe = subprocess.run(
        [py, "-c", f"import json, sys, {package}; print(json.dumps(sorted(sys.modules)))"],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        text=True,
    )
    modules = json.loads(probe.stdout)
    genai = "google.genai" in modules
    loaded = sorted({m.split(".")[0] for m in modules} & heavy)
    rows = [
        [
            f"import {package}",
            fmt_ns(ours),
            fmt_ns(base),
            fmt_ratio(r),
            f"≤ {target:.2f}×",
            verdict(None if r is None else r <= target),
        ],
        [
            f"google.genai imported by `import {package}`",
            "yes" if genai else "no",
            "",
            "",
            "no",
            verdict(not genai),
        ],
    ]
    return table(
        title,
        ["case", "ours", "baseline", "ratio", "target", "ok?"],
        rows,
        [
            "baseline: python -c 'from pydantic import BaseModel, TypeAdapter, validate_call'.",
            f"medians of {runs} runs each, interleaved;"
            f" `python -c pass` took {fmt_ns(med['empty'])}.",
            f"top-level packages of note loaded by `import {package}`:"
            f" {', '.join(loaded) or 'none'}; {len(modules)} modules in all.",
        ],
    )
