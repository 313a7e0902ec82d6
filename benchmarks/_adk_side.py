"""One round of the google-adk comparison, for one side, printed as JSON.

Run by ``bench_tooling.py --adk`` in alternating subprocesses::

    <project venv>/bin/python benchmarks/_adk_side.py --impl ours
    <adk venv>/bin/python     benchmarks/_adk_side.py --impl adk

For each of the six functions of ``_functions.py`` it measures a cold build (a freshly
defined function made into a tool plus its Gemini declaration: ``tool(f).to_gemini()``
here, ``FunctionTool(f)._get_declaration()`` in google-adk) and one call with valid
arguments (``await tool.run(args)`` vs ``await FunctionTool.run_async(args=...,
tool_context=...)``), inside one event loop.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from typing import Any

import _functions as F
from _timing import Case, dist_version, loop, measure, set_clock


def _ours(copies: int, rounds: int, budget_ms: float) -> dict[str, Any]:
    from tooling import tool

    notes: list[str] = []
    gemini = True
    try:
        tool(F.fresh("f1")).to_gemini()  # also imports google.genai, outside the timing
    except Exception as exc:  # the exporter may not exist yet
        gemini = False
        notes.append(f"ours: to_gemini() failed ({type(exc).__name__}); cold build is .spec only")
    build = "tool(_fs.pop()).to_gemini()" if gemini else "tool(_fs.pop()).spec"

    results: dict[str, Any] = {}
    for key, func in F.FUNCTIONS.items():
        inline = tool(func, run_in_thread=False)
        _ = inline.spec
        cases = {
            "cold": Case(
                build, {"tool": tool}, setup=lambda n, k=key: {"_fs": F.fresh_set(k, n)}, n=copies
            ),
            "run": Case("await t.run(a)", {"t": inline, "a": F.ARGS[key]}),
        }
        loop().run_until_complete(inline.run(F.ARGS[key]))
        results[key] = measure(cases, rounds=rounds, budget_ms=budget_ms)
    return {"results": results, "notes": notes, "version": dist_version("agent-tooling")}


def _adk(copies: int, rounds: int, budget_ms: float) -> dict[str, Any]:
    from google.adk.agents import LlmAgent
    from google.adk.agents.invocation_context import InvocationContext
    from google.adk.features import FeatureName, override_feature_enabled
    from google.adk.sessions import InMemorySessionService
    from google.adk.tools import FunctionTool
    from google.adk.tools.tool_context import ToolContext

    async def make_context() -> Any:
        # The lightest real ToolContext: an in-memory session and a bare invocation.
        service = InMemorySessionService()
        session = await service.create_session(app_name="bench", user_id="bench")
        agent = LlmAgent(name="bench_agent", model="gemini-2.0-flash")
        invocation = InvocationContext(
            session_service=service, invocation_id="bench-inv", agent=agent, session=session
        )
        return ToolContext(invocation, function_call_id="bench-call")

    ctx = loop().run_until_complete(make_context())
    FunctionTool(F.fresh("f1"))._get_declaration()  # warm lazy imports outside the timing

    results: dict[str, Any] = {}
    for key, func in F.FUNCTIONS.items():
        adk_tool = FunctionTool(func)
        args = F.ARGS[key]
        loop().run_until_complete(adk_tool.run_async(args=args, tool_context=ctx))
        cases = {
            "cold": Case(
                "FunctionTool(_fs.pop())._get_declaration()",
                {"FunctionTool": FunctionTool},
                setup=lambda n, k=key: {"_fs": F.fresh_set(k, n)},
                n=copies,
            ),
            "run": Case(
                "await t.run_async(args=a, tool_context=c)", {"t": adk_tool, "a": args, "c": ctx}
            ),
        }
        results[key] = measure(cases, rounds=rounds, budget_ms=budget_ms)
        # The same call with google-adk's own (experimental, off by default) validation.
        override_feature_enabled(FeatureName.FUNCTION_TOOL_ARG_VALIDATION, True)
        try:
            loop().run_until_complete(adk_tool.run_async(args=args, tool_context=ctx))
            validated = Case(
                "await t.run_async(args=a, tool_context=c)", {"t": adk_tool, "a": args, "c": ctx}
            )
            results[key]["run_validated"] = measure(
                {"v": validated}, rounds=rounds, budget_ms=budget_ms
            )["v"]
        finally:
            override_feature_enabled(FeatureName.FUNCTION_TOOL_ARG_VALIDATION, False)
    return {"results": results, "notes": [], "version": dist_version("google-adk")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--impl", choices=("ours", "adk"), required=True)
    parser.add_argument("--copies", type=int, default=6, help="fresh functions built per round")
    parser.add_argument("--rounds", type=int, default=3, help="rounds inside this process")
    parser.add_argument("--budget-ms", type=float, default=15.0, help="time per round per case")
    parser.add_argument("--clock", choices=("wall", "cpu"), default="wall")
    opts = parser.parse_args()
    set_clock(opts.clock)
    warnings.simplefilter("ignore")
    run = _ours if opts.impl == "ours" else _adk
    json.dump(run(opts.copies, opts.rounds, opts.budget_ms), sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
