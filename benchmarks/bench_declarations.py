"""What declaring tools costs, as ratios to baselines measured in the same run.

    .venv/bin/python benchmarks/bench_declarations.py           # about half a minute
    .venv/bin/python benchmarks/bench_declarations.py --quick   # rougher numbers
    .venv/bin/python benchmarks/bench_declarations.py --clock cpu

Sections: 1 one more declaration (a freshly compiled function made into a tool and its
Gemini declaration) vs google-genai's ``FunctionDeclaration.from_callable`` on the same
function; 2 the memory 500 declared tools hold, vs google-adk's ``FunctionTool``
declarations (from its own venv, ``.bench-venvs/adk``, when it exists; see
``bench_tooling.py --adk``) and vs google-genai's declarations. Numbers are medians of
interleaved rounds; ``ok?`` compares with the targets. A script, not a test.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import _functions as F
import pydantic
from _timing import (
    Case,
    base_parser,
    fmt_ns,
    fmt_ratio,
    load_avg,
    measure,
    ratio,
    set_clock,
    table,
    verdict,
)
from google.genai import types

from tooling import tool

HERE = Path(__file__).resolve().parent
DEFAULT_ADK_VENV = HERE.parent / ".bench-venvs" / "adk"
NAMES = {key: func.__name__ for key, func in F.FUNCTIONS.items()}


def genai_declaration(func: Any) -> Any:
    """google-genai's declaration of ``func`` in its JSON Schema form (the one it
    recommends; the older form cannot take a pydantic model parameter such as f4's)."""
    return types.FunctionDeclaration.from_callable_with_api_option(
        callable=func, use_json_schema=True
    )


def bench_further(rounds: int, budget_ms: float, copies: int) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for key in F.FUNCTIONS:  # the first declaration of each kind: imports, caches
            tool(F.fresh(key)).to_gemini()
            genai_declaration(F.fresh(key))
        cases: dict[str, Case] = {}
        for key in F.FUNCTIONS:

            def setup(n: int, key: str = key) -> dict[str, Any]:
                return {"_fs": F.fresh_set(key, n)}

            cases[f"{key} ours"] = Case(
                "tool(_fs.pop()).to_gemini()", {"tool": tool}, setup, copies
            )
            cases[f"{key} genai"] = Case(
                "declare(_fs.pop())", {"declare": genai_declaration}, setup, copies
            )
        res = measure(cases, rounds=rounds, budget_ms=budget_ms)
    rows = []
    for key in F.FUNCTIONS:
        ours, base = res[f"{key} ours"], res[f"{key} genai"]
        r = ratio(ours, base)
        rows.append(
            [
                f"{key} {NAMES[key]}",
                fmt_ns(ours),
                fmt_ns(base),
                fmt_ratio(r),
                "≤ 1.00×",
                verdict(None if r is None else r <= 1.0),
            ]
        )
    return table(
        "1. One more declaration: tool(f).to_gemini() vs FunctionDeclaration.from_callable",
        ["case", "ours", "google-genai", "ratio", "target", "ok?"],
        rows,
        [
            "each on a freshly compiled function; imports and first builds paid before.",
            "ours: signature, docstring (descriptions, diagnostics), parameters and response"
            " schemas, Gemini declaration; the arguments model is made on the first call.",
            "google-genai: from_callable_with_api_option(callable=f, use_json_schema=True).",
        ],
    )


def _memory(python: str, impl: str, count: int) -> int:
    out = subprocess.run(
        [python, str(HERE / "_declarations_side.py"), impl, str(count)],
        cwd=str(HERE),
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
        if impl != "adk"
        else {k: v for k, v in os.environ.items() if k != "PYTHONPATH"},
    )
    return int(json.loads(out.stdout.strip().splitlines()[-1])["bytes"])


def bench_memory(adk_venv: Path, count: int, runs: int) -> str:
    def median(impl: str, python: str) -> float:
        values = sorted(_memory(python, impl, count) for _ in range(runs))
        return float(values[len(values) // 2])

    ours = median("ours", sys.executable)
    genai = median("genai", sys.executable)
    adk_python = adk_venv / "bin" / "python"
    adk = median("adk", str(adk_python)) if adk_python.exists() else None
    rows = [
        [
            f"{count} tools vs google-adk",
            f"{ours / count / 1024:.1f} KiB",
            "n/a" if adk is None else f"{adk / count / 1024:.1f} KiB",
            fmt_ratio(ratio(ours, adk)),
            "≤ 2.00×",
            verdict(None if adk is None else ours / adk <= 2.0),
        ],
        [
            f"{count} tools vs google-genai",
            f"{ours / count / 1024:.1f} KiB",
            f"{genai / count / 1024:.1f} KiB",
            fmt_ratio(ratio(ours, genai)),
            "—",
            "",
        ],
    ]
    notes = [
        "per tool: tracemalloc's net growth over the declarations, divided by the count;"
        f" median of {runs} fresh interpreters per side.",
        "ours keeps each tool and its to_gemini() declaration; google-adk its FunctionTool"
        " and _get_declaration(); google-genai the FunctionDeclaration only.",
    ]
    if adk is None:
        notes.append(f"google-adk: n/a (no venv at {adk_venv}; bench_tooling.py --adk builds it).")
    return table(
        f"2. Memory held by {count} declared tools",
        ["case", "ours", "baseline", "ratio", "target", "ok?"],
        rows,
        notes,
    )


def main() -> int:
    parser = base_parser(
        "Benchmark declaring tools against google-genai and google-adk.",
        adk_venv=DEFAULT_ADK_VENV,
        only_example="1",
    )
    opts = parser.parse_args()
    set_clock(opts.clock)
    only = {s.strip() for s in opts.only.split(",") if s.strip()}
    rounds, budget, copies, runs = (7, 4.0, 3, 1) if opts.quick else (15, 8.0, 6, 3)
    started = time.perf_counter()
    print(
        f"declarations benchmark ({'quick' if opts.quick else 'full'}):"
        f" Python {platform.python_version()}, pydantic {pydantic.VERSION},"
        f" {os.cpu_count()} CPUs, {load_avg()}, {opts.clock} clock\n",
        flush=True,
    )
    if not only or "1" in only:
        print(bench_further(rounds, budget, copies), flush=True)
    if not only or "2" in only:
        adk_venv = Path("/nonexistent") if opts.no_adk else opts.adk_venv
        print(bench_memory(adk_venv, 500, runs), flush=True)
    print(f"total time {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
