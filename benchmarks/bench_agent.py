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
import BaseModel, TypeAdapter, validate_call`` in fresh interpreters; 3 each model
adapter's call (OpenAI Responses, Chat Completions, Anthropic) against the SDK's own bare
request with the same payload, on a loopback server. Both sides of
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
    Case,
    base_parser,
    fmt_ns,
    fmt_ratio,
    import_section,
    load_avg,
    loop,
    measure,
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
    adapter_calls: int  # model calls of each side per adapter case


FULL = Config(pairs=3, rounds=7, runs_one=20, runs_fifty=4, import_runs=11, adapter_calls=300)
QUICK = Config(pairs=1, rounds=3, runs_one=8, runs_fifty=2, import_runs=5, adapter_calls=60)


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


# -- 3. model adapters ---------------------------------------------------------------------------


def bench_adapters(cfg: Config) -> str:
    """Each adapter's model call against the SDK's own bare request, on a loopback server.

    Both sides send the same payload (what the adapter builds, computed once for the bare
    side) to the same server with the same kind of client; the difference is what the
    adapter adds: the history and declarations built, the reply read into our types.
    """
    sys.path.insert(0, str(ROOT))  # tests/_providers.py: the loopback server
    from agent_core import Content, LlmRequest, Part
    from agent_core.models.anthropic import AnthropicModel
    from agent_core.models.openai import OpenAIModel
    from tests import _providers as fake
    from tooling import FunctionTool

    def is_even(number: int) -> bool:
        """Tell whether a whole number is even."""
        return number % 2 == 0

    def generate_random_number(max_value: int = 100) -> int:
        """Pick a random whole number from 0 to max_value."""
        return 4

    tools = {f.__name__: FunctionTool(f) for f in (is_even, generate_random_number)}
    history = [
        Content("user", [Part.from_text("A random number, and is 5 even?")]),
        Content(
            "model",
            [
                Part.from_function_call("generate_random_number", {}, id="call_1"),
                Part.from_function_call("is_even", {"number": 5}, id="call_2"),
            ],
        ),
        Content(
            "user",
            [
                Part.from_function_response("generate_random_number", {"result": 4}, id="call_1"),
                Part.from_function_response("is_even", {"result": False}, id="call_2"),
            ],
        ),
    ]
    request = LlmRequest(
        model=fake.MODEL, contents=history, system_instruction="Check numbers.", tools=tools
    )
    calls = [fake.Call("call_3", "is_even", '{"number": 4}')]
    ev = loop()
    rows: list[list[str]] = []
    work: list[list[str]] = []

    async def bare_reply(create: Any, body: dict[str, Any]) -> Any:
        return await create(**body)

    with fake.serving() as server:
        server.record = False
        for dialect in fake.DIALECTS:
            model: Any = dialect.model(server)
            if isinstance(model, OpenAIModel):
                import openai

                client: Any = openai.AsyncOpenAI(api_key="sk-test", base_url=model.base_url)
                create = (
                    client.responses.create
                    if model.api == "responses"
                    else client.chat.completions.create
                )
            else:
                assert isinstance(model, AnthropicModel)
                import anthropic

                client = anthropic.AsyncAnthropic(api_key="sk-test", base_url=model.base_url)
                create = client.messages.create
            body = model.request_body(request)
            streamed = {**body, "stream": True}
            if model.__class__.__name__ == "OpenAIModel" and model.api == "chat":
                streamed["stream_options"] = {"include_usage": True}

            async def ours(stream: bool, model: Any = model) -> None:
                async for _ in model.generate_content_async(request, stream=stream):
                    pass

            async def bare(stream: bool, create: Any = create, body: Any = body) -> None:
                if not stream:
                    await create(**body)
                    return
                events = await create(**streamed)
                async for _ in events:
                    pass

            for stream in (False, True):
                server.always = (
                    dialect.streamed(text="Checking.", calls=calls)
                    if stream
                    else dialect.turn(text="Checking.", calls=calls)
                )
                got = _alternate(ev, ours, bare, stream, cfg.adapter_calls)
                r = ratio(got["ours"], got["bare"])
                rows.append(
                    [
                        f"{dialect.name}{', streamed' if stream else ''}",
                        fmt_ns(got["ours"]),
                        fmt_ns(got["bare"]),
                        fmt_ns(got["ours_fast"]),
                        fmt_ns(got["bare_fast"]),
                        fmt_ratio(r),
                        "≤ 1.20×",
                        verdict(None if r is None else r <= 1.2),
                    ]
                )
            # What the adapter itself adds, without the network: the request built, the
            # reply read (the SDK's own parsing of the same reply is in both sides above).
            server.always = dialect.turn(text="Checking.", calls=calls)
            reply = ev.run_until_complete(bare_reply(create, body))
            read = model._wire.read_response if isinstance(model, OpenAIModel) else None
            if read is None:
                from agent_core.models.anthropic import read_response as read
            cases = {
                "build": Case("model.request_body(request)", {"model": model, "request": request}),
                "read": Case("read(reply)", {"read": read, "reply": reply}),
            }
            cost = measure(cases, rounds=cfg.rounds, budget_ms=50)
            work.append([dialect.name, fmt_ns(cost["build"]), fmt_ns(cost["read"])])
            ev.run_until_complete(model.aclose())
            ev.run_until_complete(client.close())
    text = table(
        "3. Model adapters: one model call vs the SDK's bare request (loopback server)",
        ["API", "ours", "SDK bare", "ours p10", "bare p10", "ratio", "target", "ok?"],
        rows,
        [
            "ours = generate_content_async (history, declarations and settings built, the"
            " reply read into an LlmResponse); SDK bare = the SDK's create() with the same"
            " payload, prepared beforehand; streamed: every event read.",
            f"{cfg.adapter_calls} calls of each, alternating ours/bare on one client each;"
            " medians (ratio of medians) and 10th percentiles. The server is a thread of this"
            " process, so its time is in both sides alike; wall clock.",
            "the request: an instruction, 2 tools, 3 turns of history (2 calls, 2 responses);"
            " the reply: text and one call.",
        ],
    )
    text += "\n" + table(
        "3b. What the adapter adds per call, without the network (medians)",
        ["API", "build the request", "read the reply"],
        work,
        [
            "build = request_body(): settings, history, declarations (cached per tool);"
            " read = the SDK's parsed reply into an LlmResponse.",
        ],
    )
    return text


def _alternate(ev: Any, ours: Any, bare: Any, stream: bool, calls: int) -> dict[str, float]:
    """Per-call wall times of ``ours`` and ``bare``, alternating, after a warm-up."""
    times: dict[str, list[float]] = {"ours": [], "bare": []}

    async def run() -> None:
        for _ in range(5):
            await ours(stream)
            await bare(stream)
        for i in range(calls):
            pair = [("ours", ours), ("bare", bare)]
            for name, fn in pair if i % 2 else reversed(pair):
                started = time.perf_counter_ns()
                await fn(stream)
                times[name].append(time.perf_counter_ns() - started)

    ev.run_until_complete(run())
    out: dict[str, float] = {}
    for name, values in times.items():
        values.sort()
        out[name] = statistics.median(values)
        out[f"{name}_fast"] = values[len(values) // 10]
    return out


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
    if wanted("3"):
        show(bench_adapters(cfg))
    if opts.profile:
        print(profile_hot_spots())
    print(f"total time {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
