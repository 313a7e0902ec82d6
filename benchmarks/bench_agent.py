"""What the ``agent_core`` loop costs per round, and its import time, against baselines.

    .venv/bin/python benchmarks/bench_agent.py              # about a minute
    .venv/bin/python benchmarks/bench_agent.py --quick      # ~10 s, rougher numbers
    .venv/bin/python benchmarks/bench_agent.py --clock cpu  # steadier on a busy machine
    .venv/bin/python benchmarks/bench_agent.py --profile    # cProfile of the per-round path
    .venv/bin/python benchmarks/bench_agent.py --only 2     # some sections only

Sections: 1 loop overhead per tool round (one call, and 50 calls in one turn) with a
``ScriptedModel`` and in-memory sessions, measured as (run time - model time - tool
time) per round, side by side with google-adk's ``Runner`` driving an equivalent
scripted ``BaseLlm`` from its own venv (``.bench-venvs/adk``; that side is skipped when
the venv is missing, and always in CI); 2 ``import agent_core`` against ``from pydantic
import BaseModel, TypeAdapter, validate_call`` in fresh interpreters. Both sides of
section 1 run in alternating subprocesses (``_adk_agent_side.py``) on one thread, so
``--clock cpu`` is valid for them. Numbers are medians; ``ok?`` compares with the
issue's targets. This is a script, not a test: nothing here fails a build.
"""

from __future__ import annotations

import cProfile
import json
import os
import platform
import statistics
import subprocess
import sys
import time
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pydantic
from _timing import (
    base_parser,
    fmt_ns,
    fmt_ratio,
    import_section,
    load_avg,
    loop,
    profile_report,
    ratio,
    table,
    verdict,
)

import agent_core

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_ADK_VENV = ROOT / ".bench-venvs" / "adk"
SIDE = str(HERE / "_adk_agent_side.py")
LABELS = {
    "one": "1 call, 1 response (2 model turns)",
    "fifty": "50 calls in one turn, 1 response event (2 model turns)",
}


@dataclass(frozen=True)
class Config:
    pairs: int  # alternating subprocess pairs (ours, adk)
    rounds: int  # interleaved rounds inside each subprocess
    runs_one: int  # 1-call rounds per round of measurement
    runs_fifty: int  # 50-call rounds per round of measurement
    import_runs: int  # fresh interpreters per import case


FULL = Config(pairs=3, rounds=7, runs_one=20, runs_fifty=4, import_runs=11)
QUICK = Config(pairs=1, rounds=3, runs_one=8, runs_fifty=2, import_runs=5)


# -- 1. loop overhead ---------------------------------------------------------------------------


def adk_python(venv: Path) -> Path | None:
    """The venv's python when it exists and imports google.adk's runner; never builds it."""
    python = venv / "bin" / "python"
    if not python.exists():
        return None
    probe = subprocess.run([str(python), "-c", "import google.adk.runners"], capture_output=True)
    return python if probe.returncode == 0 else None


def run_side(python: str, impl: str, cfg: Config, clock: str) -> dict[str, Any]:
    args = [
        "--impl",
        impl,
        "--rounds",
        str(cfg.rounds),
        "--runs-one",
        str(cfg.runs_one),
        "--runs-fifty",
        str(cfg.runs_fifty),
        "--clock",
        clock,
    ]
    out = subprocess.run(
        [python, SIDE, *args], cwd=str(HERE), check=True, capture_output=True, text=True
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def bench_loop(cfg: Config, adk: Path | None, clock: str, why_not: str) -> str:
    runs: dict[str, list[dict[str, Any]]] = {"ours": [], "adk": []}
    for _ in range(cfg.pairs):  # alternate: ours, adk, ours, adk, ...
        runs["ours"].append(run_side(sys.executable, "ours", cfg, clock))
        if adk is not None:
            runs["adk"].append(run_side(str(adk), "adk", cfg, clock))

    def med(impl: str, case: str, metric: str) -> float | None:
        values = [r["results"][case][metric] for r in runs[impl]]
        return statistics.median(values) if values else None

    rows, detail = [], []
    for case, label in LABELS.items():
        ours, theirs = med("ours", case, "overhead"), med("adk", case, "overhead")
        r = ratio(ours, theirs)
        rows.append(
            [
                label,
                fmt_ns(ours),
                fmt_ns(theirs),
                fmt_ratio(r),
                "≤ 0.30×",
                verdict(None if r is None else r <= 0.3),
            ]
        )
        for impl in ("ours", "adk"):
            if not runs[impl]:
                continue
            detail.append(
                [
                    label,
                    impl if impl == "ours" else "google-adk",
                    fmt_ns(med(impl, case, "total")),
                    fmt_ns(med(impl, case, "model")),
                    fmt_ns(med(impl, case, "tool")),
                    fmt_ns(med(impl, case, "overhead")),
                    f"{med(impl, case, 'events'):.0f}",
                ]
            )
    version = runs["ours"][0]["version"]
    versions = f"agent-tooling {version}" + (
        f", google-adk {runs['adk'][0]['version']}" if runs["adk"] else ""
    )
    notes = [
        f"{cfg.pairs} alternating subprocess pairs, each the median of {cfg.rounds}"
        f" interleaved rounds of {cfg.runs_one} (1-call) / {cfg.runs_fifty} (50-call) runs;"
        f" {clock} clock; {versions}.",
        "one run = user message -> model turn with the call(s) -> tool(s) -> response event"
        " -> model's final text, on a fresh in-memory session made outside the timing.",
        "overhead per round = run time - time inside the scripted model - time inside the"
        " tool (an async no-op returning a small dict; read_only + concurrency_safe on ours,"
        " so both sides run the 50 calls together).",
    ]
    if adk is None:
        notes.append(f"google-adk: {why_not}")
    text = table(
        "1. Agent-loop overhead per round vs google-adk's Runner (scripted model, in-memory)",
        ["case", "ours", "google-adk", "ratio", "target", "ok?"],
        rows,
        notes,
    )
    text += "\n" + table(
        "1b. Where a round's time goes (medians per run)",
        ["case", "side", "run", "model", "tool", "overhead", "events yielded"],
        detail,
        [
            "model: ours = ScriptedModel.generate_content_async (deep-copies the request's"
            " contents and the turn); google-adk = a BaseLlm subclass deep-copying the turn.",
        ],
    )
    return text


# -- 2. import time -----------------------------------------------------------------------------


def bench_import(cfg: Config) -> str:
    # Run from benchmarks/, not the project root: import what is installed, as a user would.
    return import_section(
        "2. Import time in a fresh interpreter (wall time minus `python -c pass`)",
        "agent_core",
        2.0,
        runs=cfg.import_runs,
        cwd=str(HERE),
        heavy={"google", "httpx", "requests", "openai", "mcp", "anyio", "sqlite3", "aiohttp"},
    )


# -- profile ------------------------------------------------------------------------------------


def profile_hot_spots() -> str:
    """cProfile of our per-round path: many 1-call rounds, then many 50-call rounds."""
    import _adk_agent_side as side

    out = []
    ev = loop()
    made = side.ours(2_000)
    for case, repeat in (("one", 1_000), ("fifty", 60)):
        drive, sessions = made[case]
        ev.run_until_complete(drive(ev.run_until_complete(sessions(1))[0]))
        ids = ev.run_until_complete(sessions(repeat))

        async def many(ids: list[str] = ids, drive: Any = drive) -> None:
            for session_id in ids:
                await drive(session_id)

        prof = cProfile.Profile()
        prof.enable()
        ev.run_until_complete(many())
        prof.disable()
        out.append(profile_report(prof, f"{repeat:,} rounds: {LABELS[case]}"))
    return "\n".join(out)


# -- main -------------------------------------------------------------------------------------


def main() -> int:
    parser = base_parser(
        "Benchmark the agent_core loop.", adk_venv=DEFAULT_ADK_VENV, only_example="1"
    )
    opts = parser.parse_args()
    cfg = QUICK if opts.quick else FULL
    only = {s.strip() for s in opts.only.split(",") if s.strip()}
    warnings.simplefilter("ignore")

    def wanted(section: str) -> bool:
        return not only or section in only

    started = time.perf_counter()
    print(
        f"agent loop benchmark ({'quick' if opts.quick else 'full'}):"
        f" Python {platform.python_version()}, pydantic {pydantic.VERSION},"
        f" {os.cpu_count()} CPUs, {load_avg()}, {opts.clock} clock\n"
        f"agent_core from {Path(agent_core.__file__).parent}\n",
        flush=True,
    )
    mark = [time.perf_counter()]

    def show(text: str) -> None:
        now = time.perf_counter()
        took = f"section took {now - mark[0]:.1f} s; {load_avg()}"
        print(f"{text.rstrip()}\n  ({took})\n", flush=True)
        mark[0] = now

    if wanted("1"):
        if opts.no_adk:
            adk, why_not = None, "skipped (--no-adk)."
        elif os.environ.get("CI"):
            adk, why_not = None, "skipped in CI."
        else:
            adk = adk_python(opts.adk_venv)
            why_not = (
                f"skipped (no venv with google-adk at {opts.adk_venv};"
                " `bench_tooling.py --adk` builds it)."
            )
        show(bench_loop(cfg, adk, opts.clock, why_not))
    if wanted("2"):
        show(bench_import(cfg))
    if opts.profile:
        print(profile_hot_spots())
    print(f"total time {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
