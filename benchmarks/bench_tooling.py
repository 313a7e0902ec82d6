"""How much ``tooling`` costs, as ratios to baselines measured in the same run.

    .venv/bin/python benchmarks/bench_tooling.py              # under a minute
    .venv/bin/python benchmarks/bench_tooling.py --quick      # ~10 s, rougher numbers
    .venv/bin/python benchmarks/bench_tooling.py --adk        # build google-adk's venv if needed
    .venv/bin/python benchmarks/bench_tooling.py --clock cpu  # steadier on a busy machine
    .venv/bin/python benchmarks/bench_tooling.py --profile    # cProfile of run() and cold build
    .venv/bin/python benchmarks/bench_tooling.py --only 2,4   # some sections only

Sections: 1 decoration, 2 cold build, 3 warm export fetch, 4 run() per call, 5 sync tools
in a worker thread, 6 import time, 8 a call with ``auth=`` and a cached token, 7 google-adk
(in its own venv, made on demand with ``--adk`` at ``.bench-venvs/adk``, then used by every
full run; never in CI). The six functions are in ``_functions.py``; the harness
(generated loops, interleaved rounds, medians) in ``_timing.py``. Numbers are medians;
``ok?`` compares with the design's targets. This is a script, not a test: nothing here
fails a build.
"""

from __future__ import annotations

import cProfile
import functools
import inspect
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

import _functions as F
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
    set_clock,
    table,
    verdict,
)
from pydantic import create_model, validate_call

import tooling
from tooling import ToolContext, tool
from tooling._workers.threads import default_executor

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_ADK_VENV = ROOT / ".bench-venvs" / "adk"

NAMES = {key: func.__name__ for key, func in F.FUNCTIONS.items()}
SYNC_KEYS = [k for k, f in F.FUNCTIONS.items() if not inspect.iscoroutinefunction(f)]
ASYNC_KEYS = [k for k, f in F.FUNCTIONS.items() if inspect.iscoroutinefunction(f)]
EXPORT_STMTS = {
    "to_gemini()": "t.to_gemini()",
    "to_gemini(legacy=True)": "t.to_gemini(legacy=True)",
    "to_openai()": "t.to_openai()",
    "to_openai(strict=True)": "t.to_openai(strict=True)",
    "to_anthropic()": "t.to_anthropic()",
    "to_mcp()": "t.to_mcp()",
}


@dataclass(frozen=True)
class Config:
    rounds: int  # interleaved rounds per measurement (median taken)
    budget_ms: float  # time per round per calibrated case
    thread_budget_ms: float  # the same for thread hops (noisier, fewer per ms)
    copies: int  # fresh functions built per round of a cold build
    import_runs: int  # fresh interpreters per import case
    adk_rounds: int  # alternating subprocess pairs (ours, adk)
    adk_inner: tuple[int, int, float]  # copies, rounds, budget_ms inside each subprocess


FULL = Config(
    rounds=15,
    budget_ms=8,
    thread_budget_ms=20,
    copies=6,
    import_runs=11,
    adk_rounds=3,
    adk_inner=(4, 5, 6),
)
QUICK = Config(
    rounds=9,
    budget_ms=2.5,
    thread_budget_ms=6,
    copies=2,
    import_runs=5,
    adk_rounds=2,
    adk_inner=(2, 3, 3),
)


# -- helpers ----------------------------------------------------------------------------------


def plain_wrap(func: Any) -> Any:
    """The cheapest decorator that keeps a function's identity: a ``functools.wraps`` shim."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)

    return wrapper


def pydantic_floor(func: Any) -> dict[str, Any]:
    """What pydantic alone needs for the same signature: a model and its JSON Schema."""
    fields: dict[str, Any] = {}
    for p in inspect.signature(func).parameters.values():
        fields[p.name] = (p.annotation, ... if p.default is inspect.Parameter.empty else p.default)
    model = create_model(f"{func.__name__}_args", **fields)
    return model.model_json_schema()


def available_exports() -> dict[str, str]:
    """Which exporters work now; the rest get ``n/a`` and the error's name."""
    probe = tool(F.fresh("f4"))
    broken: dict[str, str] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, stmt in EXPORT_STMTS.items():
            try:
                eval(stmt, {"t": probe})
            except Exception as exc:
                broken[name] = f"{type(exc).__name__}: {exc}"[:80]
    return broken


# -- 1. decoration ----------------------------------------------------------------------------


def bench_decoration(cfg: Config) -> str:
    cases: dict[str, Case] = {}
    for key, func in F.FUNCTIONS.items():
        cases[f"{key} ours"] = Case("tool(f)", {"tool": tool, "f": func})
        cases[f"{key} base"] = Case("wrap(f)", {"wrap": plain_wrap, "f": func})
    res = measure(cases, rounds=cfg.rounds, budget_ms=cfg.budget_ms)
    lazy = tool(F.fresh("f6"))._cell.spec is None
    rows = []
    for key in F.FUNCTIONS:
        ours, base = res[f"{key} ours"], res[f"{key} base"]
        rows.append(
            [
                f"{key} {NAMES[key]}",
                fmt_ns(ours),
                fmt_ns(base),
                fmt_ratio(ratio(ours, base)),
                "—",
                "",
            ]
        )
    return table(
        "1. Decoration: tool(f) vs a functools.wraps wrapper",
        ["case", "ours", "baseline", "ratio", "target", "ok?"],
        rows,
        [
            "spec built at decoration: "
            + ("no (lazy, as designed)" if lazy else "YES (should be lazy)"),
            "tool(f) does the cheap checks only: signature, kinds, annotations present, name.",
        ],
    )


# -- 2. cold build ----------------------------------------------------------------------------


def bench_cold(cfg: Config, gemini_ok: bool) -> tuple[str, dict[str, float]]:
    # Pay the one-time imports (google.genai, exporter modules) outside the timing.
    if gemini_ok:
        tool(F.fresh("f1")).to_gemini()
    pydantic_floor(F.fresh("f1"))
    cases: dict[str, Case] = {}
    for key in F.FUNCTIONS:

        def setup(n: int, key: str = key) -> dict[str, Any]:
            return {"_fs": F.fresh_set(key, n)}

        if gemini_ok:
            cases[f"{key} full"] = Case(
                "tool(_fs.pop()).to_gemini()", {"tool": tool}, setup, cfg.copies
            )
        cases[f"{key} spec"] = Case("tool(_fs.pop()).spec", {"tool": tool}, setup, cfg.copies)
        cases[f"{key} floor"] = Case(
            "floor(_fs.pop())", {"floor": pydantic_floor}, setup, cfg.copies
        )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = measure(cases, rounds=cfg.rounds, budget_ms=cfg.budget_ms)
    rows = []
    for key in F.FUNCTIONS:
        full = res.get(f"{key} full")
        spec, floor = res[f"{key} spec"], res[f"{key} floor"]
        r_full, r_spec = ratio(full, floor), ratio(spec, floor)
        ok = None if r_full is None else r_full <= 1.3
        rows.append(
            [
                f"{key} {NAMES[key]}",
                fmt_ns(full),
                fmt_ns(spec),
                fmt_ns(floor),
                fmt_ratio(r_full),
                fmt_ratio(r_spec),
                "≤ 1.30×",
                verdict(ok),
            ]
        )
    notes = [
        "ours = tool(f) + spec (args model, parameters and response schema, docstring)"
        " + to_gemini(); 'no gemini' = the same without to_gemini();",
        "floor = inspect.signature -> pydantic.create_model"
        " -> model_json_schema(), no docstring, no response schema.",
        f"each build uses a function freshly compiled from source ({cfg.copies} per round).",
    ]
    if not gemini_ok:
        notes.append(
            "to_gemini() is not available yet: 'ours' shows n/a; the ratio uses no-gemini only."
        )
    text = table(
        "2. Cold build on a fresh function vs the pydantic floor",
        [
            "case",
            "ours",
            "ours, no gemini",
            "pydantic floor",
            "ratio",
            "ratio, no gemini",
            "target",
            "ok?",
        ],
        rows,
        notes,
    )
    return text, {k: v for k, v in res.items() if k.endswith(" full") or k.endswith(" spec")}


# -- 3. warm export fetch -----------------------------------------------------------------------


def bench_warm(cfg: Config, broken: dict[str, str]) -> str:
    t = tool(F.FUNCTIONS["f4"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name, stmt in EXPORT_STMTS.items():
            if name not in broken:
                eval(stmt, {"t": t})
    vc = validate_call(F.is_even)
    cases = {"validate_call": Case("vc(number=4)", {"vc": vc})}
    for name, stmt in EXPORT_STMTS.items():
        if name not in broken:
            cases[name] = Case(stmt, {"t": t})
    cases["spec property"] = Case("t.spec", {"t": t})
    res = measure(cases, rounds=cfg.rounds, budget_ms=cfg.budget_ms)
    base = res["validate_call"]
    rows = []
    for name in [*EXPORT_STMTS, "spec property"]:
        ours = res.get(name)
        r = ratio(ours, base)
        target = "—" if name == "spec property" else "≤ 1.00×"
        ok = None if r is None or name == "spec property" else r <= 1.0
        rows.append([f"f4 {name}", fmt_ns(ours), fmt_ns(base), fmt_ratio(r), target, verdict(ok)])
    notes = ["baseline: one call of pydantic.validate_call(is_even)(number=4)."]
    notes += [f"{name}: n/a ({err})" for name, err in broken.items()]
    return table(
        "3. Warm fetch of a cached export vs one validate_call call",
        ["case", "ours", "baseline", "ratio", "target", "ok?"],
        rows,
        notes,
    )


# -- 4. run() ---------------------------------------------------------------------------------


def bench_run(cfg: Config) -> tuple[str, dict[str, float]]:
    cases: dict[str, Case] = {}
    for key, func in F.FUNCTIONS.items():
        args = F.ARGS[key]
        is_async = key in ASYNC_KEYS
        t = tool(func) if is_async else tool(func, run_in_thread=False)
        loop().run_until_complete(t.run(args))  # builds the spec
        vc = validate_call(func)
        aw = "await " if is_async else ""
        cases[f"{key} direct"] = Case(f"{aw}f(**a)", {"f": func, "a": F.DIRECT_ARGS[key]})
        cases[f"{key} vc"] = Case(f"{aw}vc(**a)", {"vc": vc, "a": args})
        cases[f"{key} run"] = Case("await t.run(a)", {"t": t, "a": args})
        if key in ("f4", "f6"):
            cases[f"{key} json"] = Case("await t.run(j)", {"t": t, "j": json.dumps(args)})
    res = measure(cases, rounds=cfg.rounds, budget_ms=cfg.budget_ms)
    rows = []
    for key in F.FUNCTIONS:
        is_async = key in ASYNC_KEYS
        limit = 1.5 if is_async else 3.0
        mode = "async" if is_async else "sync inline"
        for label, which in (("", "run"), (" (JSON text)", "json")):
            if f"{key} {which}" not in res:
                continue
            ours, vc, direct = res[f"{key} {which}"], res[f"{key} vc"], res[f"{key} direct"]
            r = ratio(ours, vc)
            rows.append(
                [
                    f"{key} {NAMES[key]}{label} [{mode}]",
                    fmt_ns(ours),
                    fmt_ns(vc),
                    fmt_ratio(r),
                    f"≤ {limit:.2f}×",
                    verdict(None if r is None else r <= limit),
                    fmt_ns(direct),
                    fmt_ratio(ratio(ours, direct)),
                ]
            )
    text = table(
        "4. await tool.run(args) vs pydantic.validate_call(f)(**args), one event loop",
        ["case", "ours", "validate_call", "ratio", "target", "ok?", "direct call", "ours/direct"],
        rows,
        [
            "sync tools here use run_in_thread=False (inline); section 5 covers the thread hop.",
            "ours also turns the result into the JSON-safe response dict; validate_call does not.",
            "(JSON text) rows pass the arguments as a JSON string (validated directly); the"
            " baseline is still validate_call with the dict.",
        ],
    )
    return text, res


# -- 8. auth: a call whose valid token is cached ------------------------------------------------


def bench_auth(cfg: Config) -> str:
    from pydantic import SecretStr

    from tooling import Scheduler, ToolCall
    from tooling.auth import (
        AccessToken,
        AuthConfig,
        ClientCredentialsFlow,
        InMemoryCredentialService,
        OAuth2Client,
        OAuth2Scheme,
        StoredCredential,
    )

    config = AuthConfig(
        scheme=OAuth2Scheme(flows=ClientCredentialsFlow(token_url="http://127.0.0.1:9/token")),
        credential=OAuth2Client(client_id="bench", client_secret=SecretStr("s")),
    )

    async def plain(q: str, tool_context: ToolContext) -> str:
        return q

    async def authed(q: str, tool_context: ToolContext) -> str:
        return q

    service = InMemoryCredentialService()
    token = AccessToken(token=SecretStr("t"), expires_at=time.time() + 86400)
    ev = loop()
    ev.run_until_complete(
        service.save_credential(
            config.key("", "anonymous"), StoredCredential(token=token, issued_at=time.time())
        )
    )
    without = Scheduler([tool(plain, run_in_thread=False)])
    with_auth = Scheduler(
        [tool(authed, run_in_thread=False, auth=config)], credential_service=service
    )
    calls_plain = [ToolCall(id="c", name="plain", args={"q": "x"})]
    calls_auth = [ToolCall(id="c", name="authed", args={"q": "x"})]
    (first,) = ev.run_until_complete(with_auth.dispatch(calls_auth))  # the token is cached now
    assert first.error is None, first.response
    cases = {
        "without": Case("await s.dispatch(c)", {"s": without, "c": calls_plain}),
        "with": Case("await s.dispatch(c)", {"s": with_auth, "c": calls_auth}),
    }
    res = measure(cases, rounds=cfg.rounds, budget_ms=cfg.budget_ms)
    extra = res["with"] - res["without"]
    rows = [
        [
            "one call, cached valid token",
            fmt_ns(res["with"]),
            fmt_ns(res["without"]),
            fmt_ns(extra),
            "≤ 5 µs",
            verdict(extra <= 5000),
        ]
    ]
    return table(
        "8. Scheduler.dispatch of one call: a tool with auth= (token cached) vs the same without",
        ["case", "with auth=", "without", "extra", "target", "ok?"],
        rows,
        ["both tools take a ToolContext; the token is valid for a day, so no request is made."],
    )


# -- 5. sync tools in a thread ------------------------------------------------------------------


def bench_thread(cfg: Config, run_res: dict[str, float]) -> str:
    pool = default_executor()
    ev = loop()
    cases: dict[str, Case] = {}
    for key in SYNC_KEYS:
        func, args = F.FUNCTIONS[key], F.ARGS[key]
        t = tool(func)
        ev.run_until_complete(t.run(args))
        call = functools.partial(func, **F.DIRECT_ARGS[key])
        cases[f"{key} run"] = Case("await t.run(a)", {"t": t, "a": args}, wall=True)
        cases[f"{key} hop"] = Case(
            "await ev.run_in_executor(pool, call)",
            {"ev": ev, "pool": pool, "call": call},
            wall=True,
        )
    res = measure(cases, rounds=cfg.rounds, budget_ms=cfg.thread_budget_ms)
    rows = []
    for key in SYNC_KEYS:
        ours, hop = res[f"{key} run"], res[f"{key} hop"]
        diff = ours - hop
        rows.append(
            [
                f"{key} {NAMES[key]} [thread]",
                fmt_ns(ours),
                fmt_ns(hop),
                f"{diff / 1000:+.2f} µs",
                "≤ +25 µs",
                verdict(diff <= 25_000),
            ]
        )
    inline = max(SYNC_KEYS, key=lambda k: run_res[f"{k} run"] / run_res[f"{k} vc"])
    r_in = run_res[f"{inline} run"] / run_res[f"{inline} vc"]
    rows.append(
        [
            f"worst sync inline: {inline} {NAMES[inline]}",
            fmt_ns(run_res[f"{inline} run"]),
            fmt_ns(run_res[f"{inline} vc"]),
            fmt_ratio(r_in),
            "≤ 3.00×",
            verdict(r_in <= 3.0),
        ]
    )
    for key in ASYNC_KEYS:
        r_as = run_res[f"{key} run"] / run_res[f"{key} vc"]
        rows.append(
            [
                f"async: {key} {NAMES[key]}",
                fmt_ns(run_res[f"{key} run"]),
                fmt_ns(run_res[f"{key} vc"]),
                fmt_ratio(r_as),
                "≤ 1.50×",
                verdict(r_as <= 1.5),
            ]
        )
    return table(
        "5. Sync tool in a worker thread vs a bare run_in_executor hop (same pool)",
        ["case", "ours", "baseline", "diff / ratio", "target", "ok?"],
        rows,
        [
            "thread rows: baseline = await loop.run_in_executor("
            "tooling._workers.threads.default_executor(),"
            " partial(f, **args)); the difference is what run() adds around the hop.",
            "last rows repeat section 4's inline/async ratios vs validate_call (baseline column).",
        ],
    )


# -- 6. import time -----------------------------------------------------------------------------


def bench_import(cfg: Config) -> str:
    # Run from benchmarks/, not the project root: import what is installed, as a user would.
    return import_section(
        "6. Import time in a fresh interpreter (wall time minus `python -c pass`)",
        "tooling",
        1.5,
        runs=cfg.import_runs,
        cwd=str(HERE),
        heavy={"google", "httpx", "requests", "openai", "mcp", "anyio"},
    )


# -- 7. google-adk ---------------------------------------------------------------------------


def ensure_adk_venv(path: Path) -> Path:
    """``python -m venv PATH`` + ``pip install google-adk``, unless PATH already has it."""
    python = path / "bin" / "python"
    if python.exists():
        probe = subprocess.run([str(python), "-c", "import google.adk.tools"], capture_output=True)
        if probe.returncode == 0:
            return python
    print(
        f"building google-adk's venv at {path} (once; takes a while) ...",
        file=sys.stderr,
        flush=True,
    )
    if not python.exists():
        base = getattr(sys, "_base_executable", None) or sys.executable
        subprocess.run([base, "-m", "venv", str(path)], check=True)
    pip = subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "google-adk"],
        capture_output=True,
        text=True,
    )
    if pip.returncode != 0:
        sys.stderr.write(pip.stdout[-4000:] + pip.stderr[-4000:])
        raise SystemExit(f"pip install google-adk into {path} failed")
    return python


def bench_adk(cfg: Config, adk_python: Path, clock: str) -> str:
    copies, inner_rounds, budget = cfg.adk_inner
    script = str(HERE / "_adk_side.py")
    flags = [
        "--copies",
        str(copies),
        "--rounds",
        str(inner_rounds),
        "--budget-ms",
        str(budget),
        "--clock",
        clock,
    ]

    def side(python: str, impl: str) -> dict[str, Any]:
        out = subprocess.run(
            [python, script, "--impl", impl, *flags],
            cwd=str(HERE),
            check=True,
            capture_output=True,
            text=True,
            timeout=600,
        )
        return json.loads(out.stdout.strip().splitlines()[-1])

    runs: dict[str, list[dict[str, Any]]] = {"ours": [], "adk": []}
    for _ in range(cfg.adk_rounds):  # alternate: ours, adk, ours, adk, ...
        runs["ours"].append(side(sys.executable, "ours"))
        runs["adk"].append(side(str(adk_python), "adk"))

    def med(impl: str, key: str, metric: str) -> float | None:
        values = [r["results"][key].get(metric) for r in runs[impl]]
        values = [v for v in values if v is not None]
        return statistics.median(values) if values else None

    cold_rows, run_rows = [], []
    for key in F.FUNCTIONS:
        oc, ac = med("ours", key, "cold"), med("adk", key, "cold")
        r = ratio(oc, ac)
        cold_rows.append(
            [
                f"{key} {NAMES[key]}",
                fmt_ns(oc),
                fmt_ns(ac),
                fmt_ratio(r),
                "≤ 1.00×",
                verdict(None if r is None else r <= 1.0),
            ]
        )
        orun, arun, aval = (
            med("ours", key, "run"),
            med("adk", key, "run"),
            med("adk", key, "run_validated"),
        )
        run_rows.append(
            [
                f"{key} {NAMES[key]}",
                fmt_ns(orun),
                fmt_ns(arun),
                fmt_ratio(ratio(orun, arun)),
                fmt_ns(aval),
                fmt_ratio(ratio(orun, aval)),
            ]
        )
    notes = sorted({n for r in runs["ours"] + runs["adk"] for n in r["notes"]})
    versions = f"agent-tooling {runs['ours'][0]['version']}, google-adk {runs['adk'][0]['version']}"
    common = [
        f"{cfg.adk_rounds} alternating subprocess pairs (ours, adk); medians; {versions}.",
        *notes,
    ]
    text = table(
        "7a. Cold build vs google-adk: tool(f).to_gemini() vs FunctionTool(f)._get_declaration()",
        ["case", "ours", "google-adk", "ratio", "target", "ok?"],
        cold_rows,
        [
            *common,
            "each build on a freshly compiled function (google-adk's lru_cache keyed by the"
            " function cannot apply); google-adk also deep-copies the declaration per call.",
        ],
    )
    text += "\n" + table(
        "7b. One call vs google-adk: await tool.run(args) vs await FunctionTool.run_async(...)",
        ["case", "ours", "google-adk", "ratio", "adk + arg validation", "ratio"],
        run_rows,
        [
            "both run sync functions inline on the event loop (ours: run_in_thread=False;"
            " google-adk's"
            " default without a tool thread pool in RunConfig).",
            "google-adk by default does not validate arguments (only converts pydantic-model"
            " parameters); 'adk + arg validation' turns on its experimental"
            " FUNCTION_TOOL_ARG_VALIDATION (a TypeAdapter per parameter).",
            "ours validates, rejects unknown keys, and makes the result a JSON-safe dict.",
            "ToolContext: a real one, on an InMemorySessionService session and a bare"
            " InvocationContext with an LlmAgent (no model call).",
        ],
    )
    return text


# -- profile ------------------------------------------------------------------------------------


def profile_hot_spots() -> str:
    """cProfile of run() (f6, inline) and of cold builds (f4, f6): the top entries."""
    out = []
    t = tool(F.configure_job, run_in_thread=False)
    args = F.ARGS["f6"]
    loop().run_until_complete(t.run(args))

    async def many_runs() -> None:
        for _ in range(20_000):
            await t.run(args)

    prof = cProfile.Profile()
    prof.enable()
    loop().run_until_complete(many_runs())
    prof.disable()
    out.append(
        profile_report(
            prof, "run(): 20,000 x await tool(configure_job, run_in_thread=False).run(args)"
        )
    )

    fresh = F.fresh_set("f4", 60) + F.fresh_set("f6", 60)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tool(F.fresh("f1")).to_gemini()
        prof = cProfile.Profile()
        prof.enable()
        for func in fresh:
            tool(func).to_gemini()
        prof.disable()
    out.append(profile_report(prof, "cold build: 120 x tool(fresh f4/f6).to_gemini()"))
    return "\n".join(out)


# -- main -------------------------------------------------------------------------------------


def main() -> int:
    parser = base_parser(
        "Benchmark tooling against its baselines.", adk_venv=DEFAULT_ADK_VENV, only_example="2,4"
    )
    parser.add_argument(
        "--adk", action="store_true", help="compare with google-adk (builds its venv on first use)"
    )
    opts = parser.parse_args()
    cfg = QUICK if opts.quick else FULL
    set_clock(opts.clock)
    only = {s.strip() for s in opts.only.split(",") if s.strip()}

    def wanted(section: str) -> bool:
        return not only or section in only

    started = time.perf_counter()
    load = load_avg()
    print(
        f"tooling benchmark ({'quick' if opts.quick else 'full'}):"
        f" Python {platform.python_version()},"
        f" pydantic {pydantic.VERSION}, {os.cpu_count()} CPUs, {load}, {opts.clock} clock,"
        f" medians of {cfg.rounds} interleaved rounds\n"
        f"tooling from {Path(tooling.__file__).parent}\n",
        flush=True,
    )
    broken = available_exports()
    run_res: dict[str, float] = {}
    mark = [time.perf_counter()]

    def show(text: str) -> None:
        now = time.perf_counter()
        print(f"{text.rstrip()}\n  (section took {now - mark[0]:.1f} s)\n", flush=True)
        mark[0] = now

    if wanted("1"):
        show(bench_decoration(cfg))
    if wanted("2"):
        show(bench_cold(cfg, "to_gemini()" not in broken)[0])
    if wanted("3"):
        show(bench_warm(cfg, broken))
    if wanted("4") or wanted("5"):
        text, run_res = bench_run(cfg)
        if wanted("4"):
            show(text)
    if wanted("5"):
        show(bench_thread(cfg, run_res))
    if wanted("6"):
        show(bench_import(cfg))
    if wanted("8"):
        show(bench_auth(cfg))
    if wanted("7"):
        in_ci = bool(os.environ.get("CI"))
        python = opts.adk_venv / "bin" / "python"
        if opts.no_adk:
            print("7. google-adk: skipped (--no-adk).\n")
        elif in_ci:
            print("7. google-adk: skipped in CI.\n")
        elif not opts.adk and not python.exists():
            print(f"7. google-adk: skipped (pass --adk to build its venv at {opts.adk_venv}).\n")
        elif not opts.adk and opts.quick:
            print("7. google-adk: skipped in a --quick run (pass --adk to include it).\n")
        else:
            show(bench_adk(cfg, ensure_adk_venv(opts.adk_venv), opts.clock))
    if opts.profile:
        print(profile_hot_spots())
    print(f"total time {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
